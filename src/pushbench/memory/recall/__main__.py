"""The ``recall`` DVC stage: evidence recall of every memory over the ACG comparison runs.

For each run named in ``params.yaml`` ``recall.runs``, an even sample of its episodes (every k-th
by id, ``recall.episodes`` in all) is replayed through each memory of ``recall.memories`` at
``recall.budget`` tokens; ``data/results/recall.jsonl`` gets one sorted-key row per (run, family,
memory, action bucket) with the decisions, needed and recalled evidence units and the share.
No model is involved: this measures the memories themselves.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from rich.progress import track

from pushbench import config
from pushbench.memory.recall import BUCKETS, RecallResult, run_recall


def sampled_ids(run_dir: Path, episodes: int) -> list[str]:
    ids = sorted(json.loads(line)["episode_id"] for line in
                 (run_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines() if line.strip())
    stride = max(1, math.ceil(len(ids) / max(1, episodes)))
    return ids[::stride][:episodes]


def rows_of(run: str, family: str, result: RecallResult) -> list[dict]:
    frame = result.frame()
    lows = {f"{low}+" if high is None else f"{low}-{high}": low for low, high in BUCKETS}
    out = []
    for (memory, bucket), group in frame.groupby(["memory", "bucket"], sort=True):
        needed, recalled = int(group.needed.sum()), int(group.recalled.sum())
        out.append({"run": run, "family": family, "memory": memory, "bucket": bucket,
                    "first_action": lows[bucket], "decisions": len(group), "needed": needed,
                    "recalled": recalled, "share": round(recalled / needed, 6) if needed else None,
                    "budget": result.budget})
    return out


def main() -> Path:
    settings = config.params("recall")
    rows: list[dict] = []
    for run in track(settings["runs"], description="recall", disable=not os.isatty(2)):
        run_dir = config.RUNS / run
        family = config.params(f"experiments.{run}.family")
        keep = set(sampled_ids(run_dir, int(settings["episodes"])))
        result = run_recall(run_dir, list(settings["memories"]), int(settings["budget"]), select=keep.__contains__)
        rows += rows_of(run, family, result)
    out = config.RESULTS / "recall.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return out


if __name__ == "__main__":
    print(f"evidence recall -> {os.path.relpath(main(), config.ROOT)}")
