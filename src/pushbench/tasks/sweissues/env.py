"""The one-issue environment: SWE-lite's tools, checked by the union of the hunks' tests.

Everything but the checker and the requirements is ``SweEnv``'s (paths confined to the copy,
tests reset before every check, the jail, atomic edits). ``status`` is not offered: with one
issue the submit verdict is the whole count.
"""

from __future__ import annotations

from typing import Any

from pushbench.requirements import Requirement, validate_origins
from pushbench.tasks.swe.env import SweEnv
from pushbench.tasks.swe.runs import Workspace, run_tests
from pushbench.tools.units import CheckResult


class SweIssueEnv(SweEnv):
    status = None  # type: ignore[assignment]  # not a tool here (see the module note)

    def __init__(self, task: Any, verifier: Any, workspace: Workspace, tests: tuple[str, ...]):
        super().__init__(task, verifier, workspace, {})
        self.tests = tests  # env-internal: which tests decide the issue; never shown as such

    def check_unit(self, unit_id: str) -> CheckResult:
        tests = list(self.tests)
        reset = self.workspace.reset_tests(tests)
        run = run_tests(self.workspace, tests)
        verdict = "all of the issue's tests pass" if run.passed else "the issue's tests fail"
        note = ""
        if reset:
            note = (f"note: {', '.join(reset)} reset to the original before this run (edits to tests, "
                    "conftest.py and test configuration never count; fix the library code)\n")
        return CheckResult(run.passed, f"{note}{verdict}\n{run.shown()}")

    def requirements(self) -> list[Requirement]:
        """One per hunk: the symptoms it causes must be gone, accepted only with the whole issue."""
        unit = next(iter(self.records))
        return [Requirement(h["id"], f"{unit}: {h['symptom']} (accepted only if run_tests({unit}) passes "
                            "at submit)", "hunk") for h in self.task.settings["hunks"]]

    def action_origins(self, tool: str, arguments: Any) -> tuple[str, ...]:
        """A call naming the issue serves every hunk: which hunk an edit repairs is the verifier's
        knowledge, not the call's."""
        if tool not in self.tools:
            return ()
        named = arguments.get("unit") if isinstance(arguments, dict) else None
        reqs = self.requirements()
        mapped = [r.id for r in reqs] if named in self.records and "unit" in self.tools[tool].parameters["properties"] else []
        return validate_origins([*mapped, *super(SweEnv, self).action_origins(tool, arguments)], reqs)
