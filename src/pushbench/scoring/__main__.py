"""``python -m pushbench.scoring EXPERIMENT``: the DVC stage score@EXPERIMENT (data/runs/EXPERIMENT/)."""

import os
import sys

from pushbench import config
from pushbench.scoring import score_run

known = sorted(config.params("experiments"))
if len(sys.argv) != 2 or sys.argv[1] not in known:
    sys.exit(f"usage: python -m pushbench.scoring EXPERIMENT; experiments in params.yaml: {', '.join(known)}")
print(f"scored {sys.argv[1]} -> {os.path.relpath(score_run(config.RUNS / sys.argv[1]), config.ROOT)}")
