"""The work-unit families' shared fuzz part (DataOps-lite, SWE-lite): units and their accounting."""

from __future__ import annotations

import re
from typing import Any

from pushbench.tools.base import Observation

from fuzz_strategies import Pool
from fuzzkit import Episode, FamilyFuzz

UNIT_LINE = re.compile(r"^(\S+) \[[a-z_]+\] ", re.M)


class UnitFuzz(FamilyFuzz):
    """Accepted units are units the agent submitted (each at most once); hidden values of a unit
    (``secrets``) appear only where the agent saw or wrote them."""

    status_pattern = re.compile(
        r"status: (\d+) units accepted \(verified\) of target (\d+); (\d+) of (\d+) steps used\.")
    # the checker's own output about a unit is checked for that unit's hidden values only
    scoped_tools: tuple[str, ...] = ()

    def secrets(self, env: Any) -> dict[str, list[str]]:
        """unit id -> its hidden values."""
        raise NotImplementedError

    def harvest(self, name: str, obs: Observation, pool: Pool) -> None:
        for unit in UNIT_LINE.findall(obs.text):
            pool.add("unit", unit)

    def hits(self, env: Any, name: str, args: dict[str, Any] | None, text: str) -> list[str]:
        secrets = self.secrets(env)
        if name in self.scoped_tools and args and isinstance(args.get("unit"), str):
            secrets = {args["unit"]: secrets.get(args["unit"], [])}
        found = []
        for values in secrets.values():
            for value in values:
                if value in text and re.search(r"(?<![\w.])" + re.escape(value) + r"(?![\w.])", text):
                    found.append(value)
        return found

    def check_accounting(self, env: Any, episode: Episode) -> None:
        submitted = {a.get("unit") for a in episode.submitted}
        assert env.verifier.accepted <= submitted & set(env.records), "an accepted unit was never submitted"
        assert env.verifier.valid_count <= len(submitted & set(env.records))
        assert episode.accepted_lines == env.verifier.valid_count
        assert set(env.passed_units()) == env.verifier.accepted
