"""Mine the SWE-lite unit catalogue: ``python -m pushbench.tasks.swe.mine [--out PATH]``.

Writes ``tasks/swe/catalogue.json`` (see ``tasks/swe/units.py`` for the derivation). Deterministic in
the pinned snapshots, ``params.yaml`` (``seed``, ``swe.*``) and the test outcomes; takes a few
minutes on 2 cores (test runs are cached by exact tree state under ``data/tmp/``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from pushbench import config
from pushbench.tasks.swe.units import CATALOGUE, mine


def main() -> None:
    parser = argparse.ArgumentParser(description="Mine the SWE-lite unit catalogue from the snapshots.")
    parser.add_argument("--out", type=Path, default=CATALOGUE)
    args = parser.parse_args()
    p = config.params("swe")
    units = mine(int(config.params("seed")), p["per_module"], p["max_rank"], p["tries_per_function"],
                 p["units_per_repo"] + p["spare_units"], p["repos"])
    rows = [asdict(u) for u in units]
    args.out.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(units)} units -> {args.out}")


if __name__ == "__main__":
    main()
