"""``python -m pushbench.runner EXPERIMENT [--no-progress]``: the DVC stage runs@EXPERIMENT."""

import sys

from pushbench.runner.checks import GridError
from pushbench.runner.experiment import experiment_names, run_experiment
from pushbench.runner.lock import RunLocked

names = [a for a in sys.argv[1:] if not a.startswith("-")]
if len(names) != 1 or names[0] not in experiment_names():
    sys.exit(f"usage: python -m pushbench.runner EXPERIMENT [--no-progress]; experiments in params.yaml: "
             f"{', '.join(experiment_names())}")
try:
    run_experiment(names[0], progress="--no-progress" not in sys.argv)
except (RunLocked, GridError) as err:
    sys.exit(f"error: {err}")
