"""The verdict's pytest plugin, loaded by every SWE test run with ``-p pushbench_verdict`` (``runs``).

It runs inside the jail, in the test process (stdlib and pytest only; never imported on the host).
At import, before any conftest or code under test is imported, it takes the report file's in-jail
name from ``PUSHBENCH_VERDICT_REPORT`` (removing it from the environment), opens the file and
unlinks its name, so later code finds neither the variable nor the file; the host reads what was
written through a descriptor it opened before the run. The report is one JSON object: each
reported node id's outcome (``passed``, ``failed``, ``error``, ``skipped``, ``xfailed``,
``xpassed``), whether the session was interrupted (``pytest.exit``, a keyboard interrupt) and the
session's exit status; it is written only by ``pytest_sessionfinish``, so a process that leaves
early (``os._exit``) leaves an empty report. What a forger inside the process can still do is in
docs/threat-model.md.
"""

import json
import os

_NAME = os.environ.pop("PUSHBENCH_VERDICT_REPORT", "")
_OUT = None
if _NAME:
    try:
        _OUT = open(_NAME, "w", encoding="utf-8")
        os.unlink(_NAME)
    except OSError:
        _OUT = None
_WORST = ("passed", "xpassed", "skipped", "xfailed", "failed", "error")  # later = worse
_OUTCOMES: dict[str, str] = {}
_STATE = {"interrupted": False}


def _outcome(report):
    xfail = hasattr(report, "wasxfail")
    if report.when in ("setup", "teardown"):
        if report.failed:
            return "error"
        if report.skipped:
            return "xfailed" if xfail else "skipped"
        return "passed"
    if report.passed:
        return "xpassed" if xfail else "passed"
    if report.skipped:
        return "xfailed" if xfail else "skipped"
    return "failed"


def pytest_runtest_logreport(report):
    outcome = _outcome(report)
    if report.when != "call" and outcome == "passed":
        return  # a test is passed only by its call phase (a run stopped in the call leaves none)
    known = _OUTCOMES.get(report.nodeid, "passed")
    _OUTCOMES[report.nodeid] = max(known, outcome, key=_WORST.index)


def pytest_collectreport(report):
    if report.failed:
        _OUTCOMES[report.nodeid or "<collection>"] = "error"


def pytest_keyboard_interrupt(excinfo):
    _STATE["interrupted"] = True  # pytest.exit() too


def pytest_sessionfinish(session, exitstatus):
    if _OUT is None or _OUT.closed:
        return
    json.dump({"finished": True, "interrupted": _STATE["interrupted"] or bool(session.shouldstop),
               "exitstatus": int(exitstatus), "outcomes": _OUTCOMES}, _OUT, sort_keys=True)
    _OUT.close()  # closed here: an open file at exit prints a ResourceWarning naming it into the output


def pytest_unconfigure(config):
    if _OUT is not None and not _OUT.closed:
        _OUT.close()  # a session that never finished leaves an empty report
