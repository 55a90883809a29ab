"""A tiny hand-written snapshot for SWE-lite tests: one library module, its tests, one fault.

``toy`` ships ``src/toy/mathx.py`` (``clamp`` and ``mean``) and tests; the unit ``U01`` flips the
comparison in ``clamp`` (``<`` -> ``>=``), which ``tests/test_mathx.py::test_clamp`` catches. A
second test file prints the environment of the test process (for the secrets test).
"""

from __future__ import annotations

from pathlib import Path

from pushbench.tasks.base import TaskSpec
from pushbench.tasks.swe.units import UnitFault

MATHX = '''\
def clamp(value, low, high):
    """Limit value to [low, high]."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def mean(values):
    total = sum(values)
    count = len(values)
    result = total / count
    return result
'''
TESTS = '''\
from toy.mathx import clamp, mean


def test_clamp():
    assert clamp(5, 0, 10) == 5
    assert clamp(-3, 0, 10) == 0
    assert clamp(12, 0, 10) == 10


def test_mean():
    assert mean([1, 2, 3]) == 2
'''
ENV_TEST = '''\
import json
import os


def test_show_environment():
    print("ENVIRONMENT " + json.dumps(dict(os.environ), sort_keys=True))
    assert False, "shown on purpose"
'''
FILES = {"src/toy/__init__.py": "", "src/toy/mathx.py": MATHX, "tests/test_mathx.py": TESTS,
         "tests/test_env.py": ENV_TEST, "pyproject.toml": "[tool.pytest.ini_options]\n"}
CLAMP_FAULT = UnitFault(unit="toy-01", repo="toy", path="src/toy/mathx.py", function="clamp", op="cmp", lineno=3,
                        original="    if value < low:", broken="    if value >= low:",
                        tests=("tests/test_mathx.py::test_clamp",), rank=1)
ENV_UNIT = UnitFault(unit="toy-02", repo="toy", path="src/toy/mathx.py", function="mean", op="return", lineno=14,
                     original="    return result", broken="    return result", tests=("tests/test_env.py",), rank=1)


def write_toy(root: Path) -> Path:
    """A snapshot root holding the ``toy`` repository; returns the root."""
    for rel, text in FILES.items():
        path = root / "toy" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def toy_spec(units: int = 1, budget: int = 30) -> TaskSpec:
    rows = [{"id": "U01", "kind": "assertion", "title": "`tests/test_mathx.py::test_clamp` fails: assert 0 == 5"},
            {"id": "U02", "kind": "assertion", "title": "`tests/test_env.py::test_show_environment` fails"}][:units]
    return TaskSpec(task_id="swe-toy-n1-a", family="swe", repo="toy", predicate="repair",
                    objective="Repair 1 issues in the `toy` repository.", target=1, budget=budget,
                    tools=["list_units", "read_file", "search_files", "edit", "run_tests", "submit", "status", "final"],
                    oracle_steps=8, settings={"units": rows, "read_lines": 120})


def clamp_env(snapshots: Path):
    """A SWE-lite environment over the toy snapshot with the clamp fault injected (close its workspace)."""
    from pushbench.tasks.swe.env import SweEnv
    from pushbench.tasks.swe.runs import Workspace
    from pushbench.tasks.swe.units import inject
    from pushbench.verifier import Verifier

    spec = toy_spec(1, budget=50)
    ws = Workspace("toy", snapshots)
    inject(ws, [CLAMP_FAULT])
    return SweEnv(spec, Verifier(spec.task_id, spec.target, lambda _: False, retry_rejected=True), ws,
                  {"U01": CLAMP_FAULT})


def released(ws) -> bool:
    """Nothing of the episode remains: the copy is removed, or idle in the pool exactly as the snapshot."""
    from pushbench.tasks.swe.pool import is_idle

    if ws.closed:
        return not ws.base.exists()
    return (is_idle(ws) and not ws.written and (ws._layout(), ws.digest()) == ws._pristine
            and not any(ws.home.iterdir()))


def probe(out: str) -> str:
    """What code planted in the toy library reported (the message of the RuntimeError it raised)."""
    import re

    found = re.search(r"^E +RuntimeError: PROBE (.*)$", out, re.M)
    assert found, out
    return found.group(1)
