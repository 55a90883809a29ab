"""Black-box agents: launch an external agent CLI against the PushBench MCP server and score it.

``launcher`` starts one episode (MCP configuration, prompt, time limit), ``scoring`` turns the
server's verifier log into an ``episodes.jsonl`` row, ``grid`` runs the paper's black-box grid,
``standin`` is the offline SimLM-driven MCP client, ``prompts`` holds the default and checklist
prompts. This package imports no MCP code itself, so the CLI stays quick to start.
"""
