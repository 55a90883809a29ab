"""The recall probe: the question shape of the published measurements, posed to SimLM.

A context of ``n`` documents, each its own message and each stating the value of one key (the
key-value retrieval shape of Lost in the Middle; one document holds the answer, the others are
distractors), is followed by a question about the key of the document at one position. SimLM
answers it through the same path every family's mind uses: a ``Mind`` (``ProbeMind``, given the
messages and tool schemas as ``SimLM.act`` gives a family's mind) whose ``ContextReader`` parses
each message into facts with token offsets, and ``recalled_mask`` over them at the question step.
It is not a registered family mind: the probe is no task family (no environment, no verifier). A document it does not recall leaves it without an answer (``unknown``), which is wrong.

``layout`` reads a context once and returns where each document sits (token offset) and the
context's total length, which is all ``attention.recall_probability`` needs: ``fit.py`` uses it to
compute the expected accuracy exactly, ``run_probe`` draws real answers from SimLM to check it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from pushbench.policies.base import Turn, text_message, tool_call_message, turn_from_message
from pushbench.policies.sim.attention import recalled_mask
from pushbench.policies.sim.memory import ContextReader, Mind
from pushbench.policies.sim.profiles import Profile

DOC = 0
SYSTEM = "You are a careful assistant. Answer from the documents you were given."
TASK = ("Read the documents that follow. Afterwards you will be asked for the value of one key; "
        "answer with the answer tool.")
_DOC_LINE = re.compile(r"^Document (\d+): the value of key (\S+) is (\d+)\.$")
_QUESTION = re.compile(r"^Question: what is the value of key (\S+)\?$")
TOOLS = [{"type": "function", "function": {
    "name": "answer", "description": "Answer the question with the value you found.",
    "parameters": {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}}}]
_WORDS = ("river stone ledger harbor copper lantern meadow signal orchard quarry beacon timber "
          "valley cipher marble thread summit canvas market anchor garden basalt compass willow").split()


@dataclass(frozen=True)
class Context:
    messages: tuple[dict[str, Any], ...]  # system, task, one message per document
    keys: tuple[str, ...]  # document i's key
    values: tuple[str, ...]  # document i's value


def build_context(n_docs: int, doc_tokens: int, seed: int) -> Context:
    """``n_docs`` documents of about ``doc_tokens`` tokens, each stating one key's value; filler is
    deterministic in ``seed`` (the same documents for every position asked about)."""
    if n_docs < 1 or doc_tokens < 20:
        raise ValueError(f"a probe context needs at least 1 document of 20 tokens (got {n_docs} of {doc_tokens})")
    rng = np.random.default_rng([seed, n_docs, doc_tokens])
    keys = tuple(f"k{seed % 1000:03d}-{i:05d}-{int(rng.integers(10**6)):06d}" for i in range(n_docs))
    values = tuple(str(int(v)) for v in rng.integers(10**5, 10**6, n_docs))
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    filler_words = max(1, doc_tokens - 24)  # the key line takes about 24 tokens; the words ~1 each
    for i in range(n_docs):
        words = " ".join(rng.choice(_WORDS, filler_words))
        line = f"Document {i + 1}: the value of key {keys[i]} is {values[i]}."
        messages.append({"role": "user", "content": f"{words}.\n{line}"})
    return Context(tuple(messages), keys, values)


def question(context: Context, position: int) -> list[dict[str, Any]]:
    """The messages asking for the key of document ``position`` (1-based)."""
    if not 1 <= position <= len(context.keys):
        raise ValueError(f"position {position} is outside 1..{len(context.keys)}")
    ask = {"role": "user", "content": f"Question: what is the value of key {context.keys[position - 1]}?"}
    return [*context.messages, ask]


class ProbeMind(Mind):
    """SimLM on the probe: remembers documents as facts, answers from what it recalls."""

    def _parse(self, reader: ContextReader, message: dict[str, Any], offset: int, step: int) -> None:
        for line in (message.get("content") or "").splitlines():
            if m := _DOC_LINE.match(line):
                reader.facts.add(DOC, offset, step, m.group(2), int(m.group(3)))
            elif m := _QUESTION.match(line):
                reader.state["asked"] = m.group(1)

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        self.reader.update(messages, tools)
        asked = self.reader.state.get("asked")
        if asked is None:
            return Turn(text_message("I was not asked anything."), None)
        facts = self.reader.facts
        mask = recalled_mask(self.profile, facts.array("offset"), self.reader.total_tokens,
                             self.seed, self.reader.assistant_turns)
        hit = mask & (facts.array("key") == facts.keys.get(asked, -1))
        value = str(int(facts.array("aux")[hit][0])) if hit.any() else "unknown"
        return turn_from_message(tool_call_message("answer", {"value": value}, "call_0"))


@dataclass(frozen=True)
class Layout:
    offsets: np.ndarray  # token offset of each document, as SimLM's reader places it
    total: int  # the context's length at the question, in tokens


def layout(context: Context, profile: Profile) -> Layout:
    """Where each document sits once SimLM has read the context up to the question."""
    mind = ProbeMind(profile, 0)
    mind.reader.update(question(context, 1), TOOLS)
    return Layout(mind.reader.facts.array("offset").copy(), mind.reader.total_tokens)


def run_probe(profile: Profile, context: Context, position: int, repetitions: int, seed: int) -> float:
    """SimLM's accuracy on the document at ``position`` over ``repetitions`` request seeds."""
    messages = question(context, position)
    right = 0
    for rep in range(repetitions):
        turn = ProbeMind(profile, seed * 100_003 + rep).act(messages, TOOLS)
        args = turn.call.arguments if turn.call is not None else {}
        value = (json.loads(args) if isinstance(args, str) else args).get("value")
        right += int(value == context.values[position - 1])
    return right / repetitions
