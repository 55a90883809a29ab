from pushbench.cli import app

app()
