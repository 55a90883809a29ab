"""``python -m pushbench.runner EXPERIMENT [--no-progress] [--executor=local|ray]``: the DVC stage
runs@EXPERIMENT (the executor defaults to ``run.executor`` in params.yaml)."""

import sys

from pushbench.runner.checks import GridError
from pushbench.runner.experiment import experiment_names, run_experiment
from pushbench.runner.local import RunIncomplete
from pushbench.runner.lock import RunLocked
from pushbench.runner.ray_exec import EXECUTORS, RayExecutorError

names = [a for a in sys.argv[1:] if not a.startswith("-")]
executor = next((a.partition("=")[2] for a in sys.argv[1:] if a.startswith("--executor=")), None)
if len(names) != 1 or names[0] not in experiment_names() or executor not in (None, *EXECUTORS):
    sys.exit(f"usage: python -m pushbench.runner EXPERIMENT [--no-progress] [--executor={'|'.join(EXECUTORS)}]; "
             f"experiments in params.yaml: {', '.join(experiment_names())}")
try:
    run_experiment(names[0], progress="--no-progress" not in sys.argv, executor=executor)
except (RunLocked, GridError, RayExecutorError, RunIncomplete) as err:
    sys.exit(f"error: {err}")
