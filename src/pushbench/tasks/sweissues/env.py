"""The issue environment: SWE-lite's tools, each issue checked by the union of its hunks' tests.

Everything but the checker and the requirements is ``SweEnv``'s (paths confined to the copy,
tests reset before every check, the jail, atomic edits). ``status`` is not offered: the submit
verdicts say what was accepted. A short task holds one issue (``I01``); a long one several, each
with its own union of tests. A long task's tools show more, as real tools do: a run shows pytest's
full report (up to ``shown_chars``; a short task shows SWE-lite's head and tail), files are read
page by page (``read_lines`` a page, said in read_file's description), and an edit's result shows
``edit_context`` lines of the file around the change. A short task's tools are SWE-lite's, byte for byte.
"""

from __future__ import annotations

import re
from typing import Any, cast

from pushbench.requirements import Requirement, validate_origins
from pushbench.tasks.swe.env import SweEnv
from pushbench.tasks.swe.runs import SHOWN_CHARS, Workspace, run_tests
from pushbench.tools.base import Observation, tool
from pushbench.tools.units import CheckResult

_CHANGED = re.compile(r"^edit: (\S+) changed at line (\d+);")


class SweIssueEnv(SweEnv):
    status = None  # type: ignore[assignment]  # not a tool here (see the module note)

    def __init__(self, task: Any, verifier: Any, workspace: Workspace,
                 tests: tuple[str, ...] | dict[str, tuple[str, ...]]):
        super().__init__(task, verifier, workspace, {})
        # env-internal: which tests decide each issue; never shown as such
        self.tests = dict(tests) if isinstance(tests, dict) else {next(iter(self.records)): tuple(tests)}
        self.shown_chars = int(task.settings.get("shown_chars", SHOWN_CHARS))

    def describe_tool(self, name: str, description: str) -> str:
        """read_file's page is the task's (``read_lines``; SWE-lite's 120 for a short task); a long
        task's files are read page by page."""
        if name != "read_file":
            return description
        lines = int(self.task.settings.get("read_lines", 120))
        text = description.replace("at most 120 lines", f"at most {lines} lines")
        if self.task.settings.get("split") == "long":
            text += f" Files are read page by page: lines 1-{lines}, {lines + 1}-{2 * lines}, and so on."
        return text

    @tool(cast(Any, SweEnv.edit).__tool__[0], **cast(Any, SweEnv.edit).__tool__[1]["properties"])
    def edit(self, path: str, old: str, new: str, unit: str = "") -> Observation:
        """SweEnv's edit; a long task's result also shows the file around the change (``edit_context``
        lines before and after), as an editor does."""
        obs = super().edit(path, old, new, unit)
        context = int(self.task.settings.get("edit_context", 0))
        m = _CHANGED.match(obs.text)
        if not context or m is None:
            return obs
        lines = self.workspace.read(m.group(1)).split("\n")
        first, last = max(1, int(m.group(2)) - context), min(len(lines), int(m.group(2)) + new.count("\n") + context)
        window = "\n".join(f"{n:5d}| {lines[n - 1]}" for n in range(first, last + 1))
        return Observation(f"{obs.text}\nthe file around the change, lines {first}-{last}:\n{window}", payload=obs.payload)

    def check_unit(self, unit_id: str) -> CheckResult:
        tests = list(self.tests[unit_id])
        reset = self.workspace.reset_tests(tests)
        run = run_tests(self.workspace, tests)
        verdict = "all of the issue's tests pass" if run.passed else "the issue's tests fail"
        note = ""
        if reset:
            note = (f"note: {', '.join(reset)} reset to the original before this run (edits to tests, "
                    "conftest.py and test configuration never count; fix the library code)\n")
        return CheckResult(run.passed, f"{note}{verdict}\n{run.shown(self.shown_chars)}")

    def requirements(self) -> list[Requirement]:
        """One per hunk: the symptoms it causes must be gone, accepted only with its whole issue."""
        first = next(iter(self.records))
        out = []
        for hunk in self.task.settings["hunks"]:
            unit = hunk.get("issue", first)
            out.append(Requirement(hunk["id"], f"{unit}: {hunk['symptom']} (accepted only if run_tests({unit}) "
                                   "passes at submit)", "hunk"))
        return out

    def action_origins(self, tool: str, arguments: Any) -> tuple[str, ...]:
        """A call naming an issue serves every hunk of it: which hunk an edit repairs is the verifier's
        knowledge, not the call's."""
        if tool not in self.tools:
            return ()
        named = arguments.get("unit") if isinstance(arguments, dict) else None
        first = next(iter(self.records))
        mapped = []
        if named in self.records and "unit" in self.tools[tool].parameters["properties"]:
            mapped = [h["id"] for h in self.task.settings["hunks"] if h.get("issue", first) == named]
        return validate_origins([*mapped, *super(SweEnv, self).action_origins(tool, arguments)], self.requirements())
