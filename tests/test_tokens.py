"""Tests for pushbench.tokens: offline o200k_base token counting."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import tiktoken

from pushbench import tokens

# Reference o200k_base ids, as published for tiktoken's o200k_base (and reproduced by
# independent tokenizers' test suites).
REFERENCE_IDS = {
    "hello world": [24912, 2375],
    "Hello, world!": [13225, 11, 2375, 0],
    " 日本語とEnglish 12345!\n": [17428, 40909, 5330, 28881, 220, 7633, 2548, 4175],
    "a\n\n": [64, 279],
    "<|endoftext|>": [27, 91, 419, 1440, 919, 91, 29],  # special-token text counted as ordinary text
}


@pytest.fixture(scope="module")
def canonical_tiktoken_bytes() -> bytes:
    """The exact bytes of o200k_base.tiktoken, rebuilt from the shipped vocabulary."""
    data = tokens._tiktoken_text(tokens.load_mergeable_ranks())
    assert hashlib.sha256(data).hexdigest() == tokens.O200K_BASE_SHA256
    return data


@pytest.mark.parametrize(("text", "ids"), sorted(REFERENCE_IDS.items()))
def test_reference_ids_and_counts(text: str, ids: list[int]) -> None:
    assert tokens.encoding().encode_ordinary(text) == ids
    assert tokens.count_tokens(text) == len(ids)


def test_hello_world_is_two_tokens() -> None:
    assert tokens.count_tokens("hello world") == 2


def test_empty_string_is_zero() -> None:
    assert tokens.count_tokens("") == 0


def test_encoding_is_cached_and_is_o200k_base() -> None:
    enc = tokens.encoding()
    assert enc is tokens.encoding()
    assert isinstance(enc, tiktoken.Encoding)
    assert enc.name == "o200k_base"
    assert enc.n_vocab == 200019
    assert enc.decode(enc.encode_ordinary("round trip ✓ 日本")) == "round trip ✓ 日本"


def test_constants_match_tiktokens_own_o200k_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our pattern, special tokens and hash are the ones tiktoken_ext/openai_public.py uses."""
    from tiktoken_ext import openai_public

    seen: dict[str, object] = {}

    def fake_load(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen["path"], seen["hash"] = blobpath, expected_hash
        return tokens.load_mergeable_ranks()  # offline: no download

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", fake_load)
    spec = openai_public.o200k_base()
    assert str(seen["path"]).endswith("/o200k_base.tiktoken")
    assert seen["hash"] == tokens.O200K_BASE_SHA256
    assert spec["pat_str"] == tokens.O200K_BASE_PAT_STR
    assert spec["special_tokens"] == dict(tokens.O200K_BASE_SPECIAL_TOKENS)
    reference = tiktoken.Encoding(**spec)
    sample = "Tool call: {\"x\": 12345}\n\n  Ünïcödé — 日本語 <|endofprompt|> don't"
    assert tokens.encoding().encode_ordinary(sample) == reference.encode_ordinary(sample)


def test_message_counting_adds_overhead() -> None:
    assert tokens.count_message_tokens([]) == 3  # reply priming only
    one = [{"role": "user", "content": "hello world"}]
    assert tokens.count_message_tokens(one) == 3 + 2 + 3
    two = one + [{"role": "assistant", "content": "Hello, world!"}]
    assert tokens.count_message_tokens(two) == 3 + 2 + 3 + 4 + 3
    assert tokens.count_message_tokens([{"role": "assistant", "content": None}]) == 3 + 3
    parts = [{"role": "user", "content": [{"type": "text", "text": "hello world"}]}]
    assert tokens.count_message_tokens(parts) == tokens.count_message_tokens(one)


def test_message_counting_includes_tool_calls_and_tools() -> None:
    arguments = '{"path": "src/a.py"}'
    call = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": arguments}}
    messages = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    expected_call = tokens.count_tokens("read_file") + tokens.count_tokens(arguments)
    assert expected_call > 0
    assert tokens.count_message_tokens(messages) == 3 + expected_call + 3

    tool = {
        "type": "function",
        "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}},
    }
    schema_text = json.dumps(tool, ensure_ascii=False, separators=(",", ":"))
    assert tokens.count_message_tokens(messages, tools=[tool]) == (
        3 + expected_call + 3 + tokens.count_tokens(schema_text)
    )


def test_unsupported_content_is_rejected() -> None:
    with pytest.raises(TypeError):
        tokens.count_message_tokens([{"role": "user", "content": 42}])


def test_valid_tiktoken_file_loads(tmp_path: Path, canonical_tiktoken_bytes: bytes) -> None:
    path = tmp_path / "o200k_base.tiktoken"
    path.write_bytes(canonical_tiktoken_bytes)
    assert tokens.load_mergeable_ranks(path) == tokens.load_mergeable_ranks()


def test_corrupted_tiktoken_file_fails_hash_check(
    tmp_path: Path, canonical_tiktoken_bytes: bytes
) -> None:
    path = tmp_path / "o200k_base.tiktoken"
    # Swap the ranks of two tokens: still a well-formed file, but not o200k_base.
    corrupted = canonical_tiktoken_bytes.replace(b" 0\n", b" X\n", 1)
    corrupted = corrupted.replace(b" 1\n", b" 0\n", 1).replace(b" X\n", b" 1\n", 1)
    assert corrupted != canonical_tiktoken_bytes
    path.write_bytes(corrupted)
    with pytest.raises(tokens.VocabularyHashError, match="failed sha256 verification") as info:
        tokens.load_encoding(path)
    assert tokens.O200K_BASE_SHA256 in str(info.value)
    assert str(path) in str(info.value)


def test_corrupted_shipped_vocab_fails_hash_check(tmp_path: Path) -> None:
    data = bytearray(tokens.default_vocab_path().read_bytes())
    data[6] ^= 0x01  # flip a bit in the first token's bytes ("!" becomes " ")
    path = tmp_path / "o200k.vocab"
    path.write_bytes(bytes(data))
    with pytest.raises(tokens.VocabularyHashError, match="failed sha256 verification"):
        tokens.load_encoding(path)


def test_truncated_shipped_vocab_fails_clearly(tmp_path: Path) -> None:
    path = tmp_path / "o200k.vocab"
    path.write_bytes(tokens.default_vocab_path().read_bytes()[:-3])
    with pytest.raises(tokens.VocabularyHashError, match="truncated or malformed"):
        tokens.load_mergeable_ranks(path)


def test_missing_vocabulary_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(tokens.VocabularyError, match="quicktok-v1"):
        tokens.default_vocab_path()


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(tokens.VocabularyError, match="cannot read"):
        tokens.load_mergeable_ranks(tmp_path / "absent.tiktoken")
