"""``python -m pushbench.calibration``: the DVC stage ``calibrate`` (params.yaml ``calibration:``).

Writes data/calibration/fitted.json (the recall parameters the SimLM profiles read) and
data/calibration/probe.json (every published point beside the fitted curve and SimLM's probe).
"""

import os
import sys

from pushbench import config
from pushbench.calibration.stage import Settings, run

try:
    settings = Settings.from_params(config.params("calibration"), config.ROOT)
    outputs = run(settings, config.ROOT / "data" / "calibration")
except (KeyError, ValueError, OSError) as exc:
    sys.exit(f"calibrate: {exc}")
for path in outputs:
    print(f"wrote {os.path.relpath(path, config.ROOT)}")
