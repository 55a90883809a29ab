"""The item-set families' shared fuzz part (RepoScan, rows): hidden valid ids and their accounting."""

from __future__ import annotations

import re
from typing import Any

from pushbench.tasks import get_family
from pushbench.verifier import load_hidden

from fuzzkit import Episode, FamilyFuzz


class ItemFuzz(FamilyFuzz):
    """A valid id may appear in an observation only once a reading tool showed it, or as an echo of
    what the agent itself wrote; the accepted set is exactly the valid ids of accepted submits."""

    token = re.compile(r"")  # an id as it can appear in text (maximal match, word-bounded)
    status_pattern = re.compile(r"status: (\d+) accepted \(verified\) of target (\d+); (\d+) of (\d+) steps used\.")
    weights = {"submit": 30, "status": 8, "final": 1}

    def __init__(self, task: Any):
        super().__init__(task)
        self.valid = frozenset(load_hidden(self.family, task.task_id)["valid"])

    def make_env(self, budget: int) -> Any:
        task = self.task.model_copy(update={"budget": budget})
        return get_family(self.family).environment(task)

    def hits(self, env: Any, name: str, args: dict[str, Any] | None, text: str) -> list[str]:
        return [t for t in self.token.findall(text) if t in self.valid]

    def check_accounting(self, env: Any, episode: Episode) -> None:
        submitted = {i for args in episode.submitted for i in args.get("ids", [])}
        assert env.verifier.accepted == submitted & self.valid, "accepted set != valid ids submitted"
        assert env.verifier.valid_count <= len(submitted & self.valid)
        assert episode.accepted_lines == env.verifier.valid_count
