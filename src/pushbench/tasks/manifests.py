"""Build every registered family's manifests (agent-visible) and hidden answers (verifier-only).

``python -m pushbench.tasks.manifests`` builds the families ``run.workers`` at a time, each in its
own process (the DVC pipeline has one stage per family instead).
"""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from pushbench import config
from pushbench.tasks import FAMILIES, get_family, manifest_path, write_manifest
from pushbench.tasks.base import TaskSpec
from pushbench.verifier import write_hidden


def build_family(name: str, data_root: Path | None = None, snapshot_root: Path | None = None) -> list[TaskSpec]:
    data_root = data_root or config.DATA
    family = get_family(name)
    built = family.build(config.params(name), snapshot_root=snapshot_root)
    hidden_root = data_root / "hidden"
    stale = hidden_root / name
    if stale.is_dir():  # a rebuild leaves no answers of tasks that no longer exist
        for old in stale.glob("*.json"):
            old.unlink()
    for task in built:
        write_hidden(name, task.spec.task_id, task.hidden, hidden_root)
    specs = [t.spec for t in built]
    write_manifest(manifest_path(name, data_root / "manifests"), specs)
    return specs


def build_all(families: list[str] | None = None, data_root: Path | None = None,
              snapshot_root: Path | None = None, jobs: int = 1) -> dict[str, list[TaskSpec]]:
    names = families or sorted(FAMILIES)
    if jobs <= 1 or len(names) == 1:
        return {name: build_family(name, data_root, snapshot_root) for name in names}
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {name: pool.submit(build_family, name, data_root, snapshot_root) for name in names}
        return {name: future.result() for name, future in futures.items()}


USAGE = "usage: python -m pushbench.tasks.manifests [FAMILY ...]  (default: every family: {families})"


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE.format(families=", ".join(sorted(FAMILIES))))
        return 0
    unknown = [a for a in argv if a not in FAMILIES]
    if unknown:
        print(f"error: unknown task family {unknown[0]!r}; known: {', '.join(sorted(FAMILIES))}", file=sys.stderr)
        return 2
    jobs = int(config.params("run.workers"))
    for family, specs in build_all(argv or None, jobs=jobs).items():
        print(f"{family}: {len(specs)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
