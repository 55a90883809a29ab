"""docs/adding-a-family.md works as written, and a new family leaves every other family's stages alone.

On a scratch copy of the repository whose `dvc.lock` is first made current (placeholders for the
pipeline's outputs, `dvc commit`), the test copies every code block of the guide into the file its
first line names (a `# params.yaml: experiments` line merges the block into that key), runs the
guide's commands, and checks what they print and write: the family builds its manifests, plays
under SimLM with its own mind, scores, and `summarize` shows its own metric. `dvc status` then lists
only the new family's stages and the two that read every result.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "adding-a-family.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```\n", re.M | re.S)
NEW_STAGES = {"manifests@pyfiles", "runs@pyfiles-main", "score@pyfiles-main", "aggregate", "viewer"}
pytestmark = pytest.mark.slow


def snippets(kind: str) -> list[str]:
    return [body for lang, body in FENCE.findall(GUIDE.read_text(encoding="utf-8")) if lang == kind]


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def env_for(copy: Path) -> dict[str, str]:
    """The copy's own package (its src first on the path), data and tools."""
    return {**os.environ, "PUSHBENCH_ROOT": str(copy), "PYTHONPATH": str(copy / "src"),
            "PATH": f"{sys.prefix}/bin:{os.environ['PATH']}"}


def sh(copy: Path, command: str) -> subprocess.CompletedProcess:
    done = subprocess.run(["bash", "-c", command], cwd=copy, env=env_for(copy), capture_output=True, text=True)
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def stale(copy: Path) -> set[str]:
    return set(json.loads(sh(copy, ".venv/bin/dvc status --json").stdout or "{}"))


def placeholders(copy: Path) -> None:
    """Stand-ins for every pipeline output and dependency the copy lacks (DVC hashes them, never reads them)."""
    from dvc.repo import Repo

    for stage in Repo(str(copy)).index.stages:
        for item in [*stage.deps, *stage.outs]:
            path = Path(item.fs_path)
            if item.__class__.__name__ == "ParamsDependency" or path.exists():
                continue
            if path.suffix in (".json", ".jsonl", ".ipynb"):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("" if path.suffix == ".jsonl" else "{}")
            else:
                path.mkdir(parents=True)
                (path / "placeholder").write_text("x")


def follow(copy: Path, block: str) -> None:
    """Put one code block of the guide where its first line says."""
    first, _, body = block.partition("\n")
    where = first.removeprefix("# ").strip()
    if not where.endswith(".yaml") and ": " not in where:
        (copy / where).parent.mkdir(parents=True, exist_ok=True)
        (copy / where).write_text(block, encoding="utf-8")
        return
    name, _, key = where.partition(": ")
    document = yaml.safe_load((copy / name).read_text(encoding="utf-8"))
    node = document
    for part in key.split(".") if key else []:
        node = node[part]
    added = yaml.safe_load(body)
    node.extend(added) if isinstance(node, list) else node.update(added)
    (copy / name).write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


def scratch_copy(dest: Path) -> None:
    """The repository's tracked files and the snapshots, with a current dvc.lock."""
    for rel in tracked_files():
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    shutil.copytree(ROOT / "snapshots/src", dest / "snapshots/src")
    (dest / ".venv").symlink_to(Path(sys.prefix))
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    placeholders(dest)
    sh(dest, ".venv/bin/dvc commit -f -q")


def test_the_guide_names_a_file_for_every_code_block() -> None:
    blocks = snippets("python") + snippets("yaml")
    assert len(blocks) == 9 and len(snippets("bash")) == 2
    assert all(block.startswith(("# src/pushbench/tasks/pyfiles/", "# params.yaml", "# dvc.yaml: ")) for block in blocks)


def test_following_the_guide_adds_a_family_that_plays_scores_and_leaves_the_others_current(tmp_path: Path) -> None:
    if not (ROOT / "snapshots/src/requests").is_dir() or not (ROOT / "snapshots/src/flask").is_dir():
        pytest.skip("the guide's family reads the requests and flask snapshots: run `pushbench snapshots fetch`")
    root = tmp_path / "copy"
    scratch_copy(root)  # its dvc.lock is current: `dvc status` reports nothing
    for block in snippets("python") + snippets("yaml"):
        follow(root, block)
    assert stale(root) == NEW_STAGES  # no other family's stage, nothing upstream

    # 3. Build and try it
    build, show, try_call, run, summary = (sh(root, line) for line in snippets("bash")[0].splitlines() if line)
    assert "pyfiles: 4 tasks" in build.stdout
    assert json.loads(show.stdout)["target"] == 3
    assert try_call.stdout.startswith("files: page 1 of 2 (34 Python files)")
    assert (root / "data/hidden/pyfiles/pyfiles-requests-n003.json").is_file()
    rows = [json.loads(line) for line in (root / "data/runs/pyfiles-try/scored.jsonl").read_text().splitlines()]
    assert len(rows) == 16 and {r["model"] for r in rows} == {"sim/base", "sim/perfect"}
    assert all(r["success"] and r["pages_read"] >= 1 for r in rows if r["model"] == "sim/perfect")
    assert "pages_read" in summary.stdout and "pages_read" in run.stdout

    # 5. Put it in the pipeline: its stages run; building or removing a family outside the pipeline
    # (the example rows, which `make test` builds) touches no stage
    for command in snippets("bash")[1].splitlines():
        sh(root, command)
    table = json.loads((root / "data/runs/pyfiles-main/summary.json").read_text())
    assert len(table) == 4 and all("pages_read" in row for row in table)
    sh(root, ".venv/bin/pushbench manifests build --family rows")
    shutil.rmtree(root / "src/pushbench/tasks/rows")
    assert stale(root) == {"aggregate", "viewer"}

    # editing a family touches only its own stages (and recall, which replays one of its runs)
    with (root / "src/pushbench/tasks/planning/__init__.py").open("a") as declaration:
        declaration.write("# an edit\n")
    found = stale(root)
    planning = {s for s in found if "planning" in s}
    assert found == planning | {"recall", "aggregate", "viewer"}
    assert {"manifests@planning", "runs@planning-acg", "score@planning-acg"} <= planning
