"""The verifier: the only code that opens ``data/hidden/``.

It owns a task's hidden answers, judges submissions (accepted / rejected / duplicate), counts
distinct accepted items, and keeps an append-only event log: one ``call`` record per tool call,
one ``verdict`` record per judged item, one ``end`` record. Metrics are computed from this log
alone (``pushbench.scoring``), never from what the agent claims.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Literal

from pushbench import config

Verdict = Literal["accepted", "rejected", "duplicate"]


def hidden_path(family: str, task_id: str, root: Path | None = None) -> Path:
    return (root or config.HIDDEN) / family / f"{task_id}.json"


def write_hidden(family: str, task_id: str, answers: dict[str, Any], root: Path | None = None) -> Path:
    path = hidden_path(family, task_id, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(answers, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    return path


def load_hidden(family: str, task_id: str, root: Path | None = None) -> dict[str, Any]:
    path = hidden_path(family, task_id, root)
    if not path.is_file():
        raise FileNotFoundError(f"no hidden answers for {family}/{task_id}; build the manifests first")
    return json.loads(path.read_text(encoding="utf-8"))


class Verifier:
    """Judges submitted items for one episode and logs every event."""

    def __init__(self, task_id: str, target: int, accepts: Callable[[str], bool],
                 sink: Callable[[dict[str, Any]], None] | None = None, retry_rejected: bool = False):
        # retry_rejected: work units may be fixed and resubmitted; a repeat of an accepted unit
        # is still a duplicate. Item-set tasks count any repeat as a duplicate.
        self.retry_rejected = retry_rejected
        self.task_id = task_id
        self.target = target
        self._accepts = accepts
        self._sink = sink
        self.events: list[dict[str, Any]] = []
        self.accepted: set[str] = set()
        self._submitted: set[str] = set()
        self.ended = False

    @classmethod
    def for_item_set(cls, family: str, task_id: str, target: int, root: Path | None = None,
                     **kwargs: Any) -> "Verifier":
        """A verifier whose hidden answer is a set of valid identifiers (``{"valid": [...]}``)."""
        valid = frozenset(load_hidden(family, task_id, root)["valid"])
        return cls(task_id, target, valid.__contains__, **kwargs)

    def _log(self, record: dict[str, Any]) -> None:
        record = {"seq": len(self.events), **record}
        self.events.append(record)
        if self._sink:
            self._sink(record)

    @property
    def valid_count(self) -> int:
        return len(self.accepted)

    def record_call(self, step: int, tool: str, args: Any, ok: bool, error: str | None = None,
                    info: dict[str, Any] | None = None) -> None:
        self._log({"kind": "call", "step": step, "tool": tool, "args": args, "ok": ok,
                   "error": error, **({"info": info} if info else {})})

    def judge(self, step: int, item: str, passed: bool | None = None) -> Verdict:
        """Judge one item. ``passed`` overrides the hidden check (work units judged by a checker)."""
        repeat = item in (self.accepted if self.retry_rejected else self._submitted)
        if repeat:
            verdict: Verdict = "duplicate"
        else:
            self._submitted.add(item)
            ok = self._accepts(item) if passed is None else passed
            verdict = "accepted" if ok else "rejected"
            if ok:
                self.accepted.add(item)
        self._log({"kind": "verdict", "step": step, "item": item, "verdict": verdict,
                   "valid_count": self.valid_count})
        return verdict

    def end(self, step: int, reason: str, reported: int | None = None) -> None:
        if self.ended:
            return
        self.ended = True
        self._log({"kind": "end", "step": step, "reason": reason, "reported": reported,
                   "valid_count": self.valid_count, "target": self.target})
