"""SimLM's incremental reading of the context: facts with token offsets, parsed once per message.

``ContextReader`` keeps a ``FactStore`` in step with the message list a model receives. While the
list only grows, only the new messages are parsed. When a context builder rewrote earlier messages
(ACG's decision view, memgpt's blocks, a rolling summary: a changed message before the recent
turns), the reading is rebuilt as a fresh reading of the new list would be: a fresh state, every
fact in context order.

A mind whose parse is *replayable* (``Mind.parse_replayable``, the contract below) is rebuilt
cheaply: each stretch of messages the previous reading parsed from the same state after the same
number of assistant turns is copied from it, its facts shifted to their new offsets, and only the
rest is parsed; a rewrite then costs the changed messages, not the whole context. A copy is exact:
it is taken only where the pickled state before the stretch equals, byte for byte, the state the
fresh reading has there, and only within a stretch no ``act`` changed the state in between (a
mind may keep notes of its own in ``reader.state``, which a rebuild drops, as a fresh reading
would). A state that cannot be pickled turns the copying off for that reader.

The replayable-parse contract (``_parse(reader, message, offset, step)``):
- it changes nothing but ``reader.facts`` (through ``add``) and ``reader.state``;
- what it does depends only on the message, ``step``, ``reader.state`` and the mind's fixed
  profile and seed; ``offset`` is only the base of the offsets it gives facts; it never reads facts;
- it keeps ``reader.state`` picklable and never changes a value a fact's ``payload`` holds.
Fact key ids (``facts.keys``) are labels: compare them for equality only; ``keys`` may also name
keys of messages no longer in the context. The declaration is per class: a subclass that parses
differently is not replayable until it declares so itself.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable

import numpy as np

from pushbench.tokens import count_message_tokens

_EMPTY_STATE = pickle.dumps({}, protocol=pickle.HIGHEST_PROTOCOL)


class Mind:
    """The base of a family's SimLM mind: a profile, the episode seed and a reader that parses each
    new message into facts (``_parse``, the family's own). ``act(messages, tools)`` is the family's."""

    parse_replayable = False  # declare True on the class once its _parse keeps the contract above

    def __init__(self, profile: Any, seed: int):
        self.profile = profile
        self.seed = seed
        self.reader = ContextReader(self._parse, replayable=type(self).__dict__.get("parse_replayable", False))

    def _parse(self, reader: "ContextReader", message: dict[str, Any], offset: int, step: int) -> None:
        raise NotImplementedError  # pragma: no cover - every family's mind parses its own messages


class FactStore:
    """Append-only columns of facts (numpy, grown by doubling); ``kind`` codes are the reader's.
    A fact may carry a ``payload``: an object its parse made (a parsed page), read, never changed."""

    COLUMNS = ("kind", "offset", "step", "key", "aux")

    def __init__(self, capacity: int = 256, labels: "FactStore | None" = None) -> None:
        self._data = {c: np.zeros(capacity, dtype=np.int64) for c in self.COLUMNS}
        self.size = 0
        self.keys: dict[str, int] = labels.keys if labels else {}  # shared: the same key keeps its id
        self.names: list[str] = labels.names if labels else []
        self.payloads: list[Any] = []

    def intern(self, text: str) -> int:
        idx = self.keys.get(text)
        if idx is None:
            idx = self.keys[text] = len(self.names)
            self.names.append(text)
        return idx

    def _reserve(self, size: int) -> None:
        capacity = len(self._data["kind"])
        if size > capacity:
            while capacity < size:
                capacity *= 2
            self._data = {c: np.concatenate([a, np.zeros(capacity - len(a), dtype=np.int64)])
                          for c, a in self._data.items()}

    def add(self, kind: int, offset: int, step: int, key: str = "", aux: int = 0, payload: Any = None) -> None:
        if self.size == len(self._data["kind"]):
            self._reserve(self.size + 1)
        i = self.size
        data = self._data
        data["kind"][i], data["offset"][i], data["step"][i] = kind, offset, step
        data["key"][i], data["aux"][i] = self.intern(key), aux
        self.payloads.append(payload)
        self.size += 1

    def extend(self, other: "FactStore", start: int, end: int, shift: int) -> None:
        """Append ``other``'s facts ``start:end`` (same key labels), their offsets moved by ``shift``."""
        n = end - start
        self._reserve(self.size + n)
        for column in self.COLUMNS:
            self._data[column][self.size:self.size + n] = other._data[column][start:end]
        self._data["offset"][self.size:self.size + n] += shift
        self.payloads.extend(other.payloads[start:end])
        self.size += n

    def array(self, column: str) -> np.ndarray:
        return self._data[column][: self.size]

    def payload(self, index: int) -> Any:
        return self.payloads[index]

    def __len__(self) -> int:
        return self.size


def _frozen(value: Any) -> Any:
    """A hashable stand-in of a JSON-like message (equal messages give equal stand-ins)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


_UNSET = object()  # a message's stand-in not computed yet (only a rebuild needs them)


def _stand_in(message: dict[str, Any]) -> Any:
    try:
        frozen = _frozen(message)
        hash(frozen)
        return frozen
    except TypeError:
        return None


class _Layout:
    """Per message of a reading: its token offset, its first fact, the assistant turns and the
    pickled state before it, the state after it, and its stretch (no ``act`` change inside one)."""

    def __init__(self) -> None:
        self.offsets: list[int] = []
        self.fact_starts: list[int] = []
        self.turns: list[int] = []
        self.before: list[bytes] = []
        self.after: list[bytes] = []
        self.stretch: list[int] = []
        self.frozen: list[Any] = []  # each message's stand-in (_frozen), computed when first needed


class _Unpicklable(Exception):
    """The state cannot be pickled: copying is off for this reader."""


def _dumps(state: dict[str, Any]) -> bytes:
    try:
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise _Unpicklable(str(exc)) from exc


class ContextReader:
    """Keeps a FactStore in step with a growing (or rewritten) message list."""

    def __init__(self, parse: Callable[["ContextReader", dict[str, Any], int, int], None], replayable: bool = False):
        self._parse = parse
        self.replayable = replayable
        self.reset()

    def reset(self) -> None:
        self.facts = FactStore(labels=getattr(self, "facts", None) if self.replayable else None)
        self.seen: list[dict[str, Any]] = []
        self.total_tokens = 0
        self.assistant_turns = 0
        self.state: dict[str, Any] = {}
        self._layout = _Layout()
        self._stretch = 0

    def update(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        n = len(self.seen)
        if len(messages) < n or messages[:n] != self.seen:
            if self.replayable and self._rebuilt(messages, tools):
                return
            self.reset()
            n = 0
        if n == 0:  # a fresh or rebuilt reading starts after the tool schemas
            self.total_tokens = count_message_tokens([], tools)
        rest = messages[n:]
        if self.replayable and rest:
            rest = self._append(rest)
        for message in rest:
            self._read(message)

    def _read(self, message: dict[str, Any]) -> None:
        self._parse(self, message, self.total_tokens, self.assistant_turns)
        if message.get("role") == "assistant":
            self.assistant_turns += 1
        self.total_tokens += count_message_tokens([message]) - 3  # reply priming counted once
        self.seen.append(message)

    # --- replayable readings ---------------------------------------------------------------------
    def _append(self, new: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Parse new messages on the live state, as a plain reading does, recording their layout; a
        live state unlike the last one recorded (``act`` changed it) starts a new stretch. Returns
        the messages left unread if the state cannot be pickled (copying is then off)."""
        last = self._layout.after[-1] if self._layout.after else _EMPTY_STATE
        read = len(self.seen)
        try:
            live = _dumps(self.state)
            if live != last:
                self._stretch += 1
                last = live
            for message in new:
                last = self._read_recorded(message, last)
        except _Unpicklable:
            self.replayable = False
            return new[len(self.seen) - read:]
        return []

    def _read_recorded(self, message: dict[str, Any], before: bytes) -> bytes:
        """Read one message from the state ``before`` (pickled) and record its layout."""
        layout = self._layout
        offset, first, turns = self.total_tokens, self.facts.size, self.assistant_turns
        self._read(message)
        after = _dumps(self.state)
        after = before if after == before else after
        layout.offsets.append(offset)
        layout.fact_starts.append(first)
        layout.turns.append(turns)
        layout.before.append(before)
        layout.after.append(after)
        layout.stretch.append(self._stretch)
        layout.frozen.append(_UNSET)
        return after

    def _rebuilt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> bool:
        """A fresh reading of ``messages`` that copies every stretch it can from the previous one;
        False (and copying off) if the state cannot be pickled."""
        old = (self.facts, self.seen, self._layout, self.total_tokens, self.assistant_turns)
        self.reset()
        self.total_tokens = count_message_tokens([], tools)
        index = self._index(old, messages)
        state, live, i = _EMPTY_STATE, True, 0  # live: self.state is the unpickled ``state``
        try:
            while i < len(messages):
                k, length = self._match(old, index, messages, i, state)
                if length:
                    state, live = self._copy(old, messages, i, k, length, state), False
                    i += length
                    continue
                if not live:
                    self.state, live = pickle.loads(state), True
                state = self._read_recorded(messages[i], state)
                i += 1
        except _Unpicklable:
            self.replayable = False
            return False
        if not live:
            self.state = pickle.loads(state)
        return True

    @staticmethod
    def _index(old: tuple, messages: list[dict[str, Any]]) -> tuple[bool, dict[Any, list[int]]]:
        """Where each message of the previous reading sits: by object when the new list shares the
        previous one's objects (a memory re-rendering in the same process), else by value (a list of
        copies, e.g. a request received over HTTP)."""
        seen, layout = old[1], old[2]
        if messages and seen and messages[0] is seen[0]:
            return True, {id(m): [k] for k, m in enumerate(seen)}
        index: dict[Any, list[int]] = {}
        for k, frozen in enumerate(layout.frozen):
            if frozen is _UNSET:
                frozen = layout.frozen[k] = _stand_in(seen[k])
            if frozen is not None:
                index.setdefault(frozen, []).append(k)
        return False, index

    def _match(self, old: tuple, index: tuple[bool, dict[Any, list[int]]], messages: list[dict[str, Any]], i: int,
               state: bytes) -> tuple[int, int]:
        """(k, length): the previous reading's messages ``k:k+length`` equal ``messages[i:i+length]``,
        were read from this very state after as many assistant turns, in one stretch; (0, 0) if none."""
        seen, layout = old[1], old[2]
        by_object, positions = index
        key = id(messages[i]) if by_object else _stand_in(messages[i])
        for k in positions.get(key, ()) if key is not None else ():
            if layout.turns[k] != self.assistant_turns or layout.before[k] != state or messages[i] != seen[k]:
                continue
            stretch, length = layout.stretch[k], 1
            while (i + length < len(messages) and k + length < len(seen) and layout.stretch[k + length] == stretch
                   and (messages[i + length] is seen[k + length] or messages[i + length] == seen[k + length])):
                length += 1
            return k, length
        return 0, 0

    def _copy(self, old: tuple, messages: list[dict[str, Any]], i: int, k: int, length: int, state: bytes) -> bytes:
        """Copy the previous reading's messages ``k:k+length`` (now at ``i``); returns the state after."""
        facts, seen, layout, total, turns = old
        end = k + length
        fact_end = layout.fact_starts[end] if end < len(seen) else facts.size
        first_fact, base = layout.fact_starts[k], self.facts.size
        shift = self.total_tokens - layout.offsets[k]
        self.facts.extend(facts, first_fact, fact_end, shift)
        new = self._layout
        new.offsets += [o + shift for o in layout.offsets[k:end]]
        new.fact_starts += [s - first_fact + base for s in layout.fact_starts[k:end]]
        new.turns += layout.turns[k:end]
        new.before += [state, *layout.before[k + 1:end]]
        new.after += layout.after[k:end]
        new.stretch += [self._stretch] * length
        new.frozen += layout.frozen[k:end]
        self.total_tokens = (layout.offsets[end] if end < len(seen) else total) + shift
        self.assistant_turns = layout.turns[end] if end < len(seen) else turns
        self.seen += messages[i:i + length]
        return layout.after[end - 1]
