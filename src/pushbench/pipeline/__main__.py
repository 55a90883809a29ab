"""``python -m pushbench.pipeline [--jobs N]``: ``dvc repro`` with up to N stage commands at once
(default params ``run.stages``). ``make repro`` calls it; plain ``dvc repro`` gives the same bytes."""

from __future__ import annotations

import argparse
import sys

from pushbench import config
from pushbench.pipeline.repro import main

parser = argparse.ArgumentParser(prog="python -m pushbench.pipeline", description=__doc__)
parser.add_argument("--jobs", type=int, default=None, help="stage commands at once (default: params run.stages)")
args = parser.parse_args()
jobs = args.jobs if args.jobs is not None else int(config.params("run.stages"))
if jobs < 1:
    sys.exit(f"error: --jobs must be at least 1 (got {jobs})")
sys.exit(main(jobs))
