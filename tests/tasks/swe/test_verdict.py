"""The verdict names every targeted test (issue 32): each reproduction of the issue is refused.

An agent plants code in the toy library with the environment's own ``edit`` tool (the clamp fault
stays unfixed, or is fixed while the planted code games the run) and asks the checker through
``submit``. Before the plugin report, each of these was accepted: ``pytest.xfail`` in the faulty
branch; ``pytest.skip`` or ``pytest.exit(returncode=0)`` in the code a targeted test runs; forged
``PASSED`` lines written to pytest's saved stdout and ``os._exit(0)`` at import; a test file
rewritten at import before collection. Files a run changes in the copy are restored by content,
a fixture replaced by a folder too. Real jailed runs of the toy snapshot (``swe_toy``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pushbench.sandbox import jail_problem
from pushbench.tasks.swe.env import SweEnv
from pushbench.tasks.swe.runs import verdict
from pushbench.tools import ToolCall

from swe_toy import CLAMP_FAULT

pytestmark = pytest.mark.skipif(jail_problem() is not None, reason=f"no bubblewrap jail here: {jail_problem()}")
HEAD = 'def clamp(value, low, high):\n    """Limit value to [low, high]."""\n'
INIT = "src/toy/__init__.py"
FIX = (CLAMP_FAULT.broken + "\n", CLAMP_FAULT.original + "\n")




def call(env: SweEnv, name: str, **args):
    return env.execute(ToolCall(name, json.dumps(args)))


def edit(env: SweEnv, path: str, old: str, new: str) -> None:
    result = call(env, "edit", path=path, old=old, new=new)
    assert result.ok, result.text


def in_clamp(env: SweEnv, body: str) -> None:
    """Put ``body`` at the start of ``clamp``, which the targeted test calls."""
    edit(env, "src/toy/mathx.py", HEAD, HEAD + "".join(f"    {line}\n" for line in body.strip().split("\n")))


def submitted(env: SweEnv) -> str:
    result = call(env, "submit", unit="U01")
    return result.text


def test_the_honest_fix_is_accepted(env: SweEnv) -> None:
    edit(env, "src/toy/mathx.py", *FIX)
    assert "accepted" in submitted(env)
    ran = call(env, "run_tests", unit="U01").text
    assert "verdict" not in ran and "ResourceWarning" not in ran  # the report's name never reaches the output


def test_xfail_in_the_faulty_branch_is_refused(env: SweEnv) -> None:
    in_clamp(env, 'import pytest\npytest.xfail("known issue")')
    text = submitted(env)
    assert "rejected" in text and "tests/test_mathx.py::test_clamp (xfailed)" in text


@pytest.mark.parametrize("body", ['import pytest\npytest.skip("later")',
                                  'import pytest\npytest.exit("stop", returncode=0)'])
def test_skip_or_exit_in_code_a_targeted_test_runs_is_refused(env: SweEnv, body: str) -> None:
    edit(env, "src/toy/mathx.py", *FIX)  # the fault is fixed, but the run is gamed
    in_clamp(env, body)
    assert "rejected" in submitted(env)


def test_forged_passed_lines_and_an_early_exit_are_refused(env: SweEnv) -> None:
    forge = ("import os\nfor fd in (1, 2, 3, 4, 5, 6):\n    try:\n"
             "        os.write(fd, b'\\nPASSED tests/test_mathx.py::test_clamp\\n1 passed\\n')\n"
             "    except OSError:\n        pass\nos._exit(0)\n")
    _replace_init(env, forge)
    text = submitted(env)
    assert "rejected" in text and "did not finish" in text


def _replace_init(env: SweEnv, text: str) -> None:
    env.workspace.write(INIT, text)  # the toy's __init__.py is empty: the edit tool needs an anchor


def test_a_test_file_rewritten_at_import_is_refused(env: SweEnv) -> None:
    rewrite = ("import pathlib\n"
               "p = pathlib.Path('tests/test_mathx.py')\n"
               "try:\n    p.write_text('def test_clamp():\\n    pass\\n')\n"
               "except OSError as err:\n    print('REWRITE REFUSED', err)\n")
    _replace_init(env, rewrite)
    text = submitted(env)
    assert "rejected" in text
    assert env.workspace.read("tests/test_mathx.py") == (Path(env.workspace.pristine) / "tests/test_mathx.py").read_text()


def test_a_fixture_rewritten_with_the_same_size_and_mtime_is_restored(env: SweEnv) -> None:
    ws = env.workspace
    target = ws.root / "pyproject.toml"
    before = target.read_bytes()
    stamp = target.stat()
    in_clamp(env, "import os\n"
                  "p = 'pyproject.toml'; st = os.stat(p); data = open(p, 'rb').read()\n"
                  "open(p, 'wb').write(data.upper()[:len(data)])\n"
                  "os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))")
    call(env, "run_tests", unit="U01")
    assert target.read_bytes() == before and target.stat().st_size == stamp.st_size


def test_a_fixture_replaced_by_a_folder_is_restored(env: SweEnv) -> None:
    ws = env.workspace
    before = (ws.root / "pyproject.toml").read_bytes()
    in_clamp(env, "import os\n"
                  "if os.path.isfile('pyproject.toml'):\n"
                  "    os.remove('pyproject.toml'); os.mkdir('pyproject.toml')")
    call(env, "run_tests", unit="U01")
    assert (ws.root / "pyproject.toml").is_file() and (ws.root / "pyproject.toml").read_bytes() == before
    edit(env, "src/toy/mathx.py", *FIX)
    edit(env, "src/toy/mathx.py", "if os.path.isfile('pyproject.toml'):", "if False:")
    assert "accepted" in submitted(env)  # the checker is not broken for the rest of the episode


@pytest.mark.parametrize("report, rc, reason", [
    (b"", 0, "did not finish"),
    (b'{"finished": true, "interrupted": true, "exitstatus": 0, "outcomes": {"t::a": "passed"}}', 0, "interrupted"),
    (b'{"finished": true, "interrupted": false, "exitstatus": 0, "outcomes": {"t::a": "passed"}}', 1, "interrupted"),
    (b'{"finished": true, "interrupted": false, "exitstatus": 0, "outcomes": {"t::b": "passed"}}', 0,
     "t::a (not reported)"),
    (b'{"finished": true, "interrupted": false, "exitstatus": 0, "outcomes": {"t::a[1]": "passed", '
     b'"t::a[2]": "skipped"}}', 0, "t::a (passed, skipped)"),
])
def test_the_rule_names_what_failed(report: bytes, rc: int, reason: str) -> None:
    passed, why = verdict(report, ["t::a"], rc)
    assert not passed and reason in why


def test_the_rule_accepts_every_instance_passed() -> None:
    report = b'{"finished": true, "interrupted": false, "exitstatus": 0, "outcomes": {"t::a[1]": "passed", "t::a[2]": "passed"}}'
    assert verdict(report, ["t::a"], 0) == (True, "")
