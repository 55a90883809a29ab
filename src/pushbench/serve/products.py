"""SimLM as the model inside an agent product: which of the product's tools are the task's.

An agent product sends its own system prompt and its whole tool list: its built-in tools beside
the MCP server's, under its own names for them (Claude Code ``mcp__<server>__<tool>``, Codex a
Responses ``namespace`` read as ``mcp__<server>__<tool>``, opencode ``<server>_<tool>``, Gemini
CLI ``mcp_<server>_<tool>``). SimLM reads the task's tools by their bare names, so this module
picks the tool group (the tools under one prefix: the product's declared one, else each candidate)
whose bare names a SimLM mind declares (the same ``mind_name`` declaration an in-process episode
uses). The product's other tools are ignored; tool calls in the history are renamed to the bare
names and SimLM's answer back to the product's. When no group holds a known family, SimLM answers
in plain text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pushbench.policies.base import Turn
from pushbench.policies.sim import mind_name
from pushbench.tokens import count_tokens

# The environment's words when an episode is over (final, budget spent, calls after the end), on the
# last line of a tool result, after any closing tags a product wraps results in (Gemini CLI's
# </untrusted_context>). An in-process episode stops there; a client that keeps asking only sees
# the text, so SimLM stops on it.
_ENDED = re.compile(r"\bepisode (?:has )?end(?:s|ed)\b[^\n]*$")
_TAG_LINES = re.compile(r"(?:\n[ \t]*</?[A-Za-z][\w:.-]*>[ \t]*)+$")
ENDED_REPLY = "The episode has ended."
NO_TOOLS_REPLY = ("SimLM (a simulator, not a real model) works only on a PushBench task's tools, and this "
                  "request offers none of them.")


@dataclass
class ToolView:
    """The task's tools in chat form under bare names, and the product's name for each."""

    tools: list[dict[str, Any]]
    product_names: dict[str, str] = field(default_factory=dict)  # bare -> product name
    prefix: str = ""

    @property
    def bare_names(self) -> dict[str, str]:
        return {product: bare for bare, product in self.product_names.items()}


def candidate_prefixes(names: Iterable[str]) -> list[str]:
    """Where a product's MCP prefix may end: "" and each name's every prefix ending in ``_``
    (``mcp__s__t``, ``mcp_s_t``, ``s_t`` and ``<namespace>__t`` all split there), longest first."""
    found = {""}
    for name in names:
        found.update(name[: i + 1] for i, char in enumerate(name[:-1]) if char == "_")
    return sorted(found, key=lambda p: (-len(p), p))


def task_view(tools: list[dict[str, Any]], prefixes: Sequence[str] = ()) -> ToolView | None:
    """The tool group SimLM has a mind for (chat-form tools in, chat-form tools out), or None.

    A group is the tools whose names start with one prefix, read without it. With declared
    ``prefixes`` (the product's ``tool_names``) only those are tried; otherwise every candidate."""
    named = [(fn["name"], fn) for fn in (t.get("function") or {} for t in tools) if isinstance(fn.get("name"), str)]
    for prefix in prefixes or candidate_prefixes(name for name, _ in named):
        group = {name[len(prefix):]: {"type": "function", "function": {**fn, "name": name[len(prefix):]}}
                 for name, fn in named if name.startswith(prefix) and len(name) > len(prefix)}
        if not group:
            continue
        try:
            mind_name(list(group.values()))
        except ValueError:
            continue
        return ToolView(list(group.values()), {bare: prefix + bare for bare in group}, prefix)
    return None


def readable(tools: list[dict[str, Any]]) -> bool:
    """Does a SimLM mind read these tools as they are (bare names, memory tools aside)?"""
    try:
        mind_name(tools)
    except ValueError:
        return False
    return True


def to_bare(messages: list[dict[str, Any]], view: ToolView) -> list[dict[str, Any]]:
    """The history with the product's tool-call names replaced by the task's bare names."""
    rename = view.bare_names
    out = []
    for message in messages:
        calls = message.get("tool_calls")
        if calls:
            message = {**message, "tool_calls": [
                {**c, "function": {**c["function"], "name": rename.get(c["function"]["name"], c["function"]["name"])}}
                for c in calls]}
        out.append(message)
    return out


def to_product(message: dict[str, Any], view: ToolView) -> dict[str, Any]:
    calls = message.get("tool_calls")
    if not calls:
        return message
    names = view.product_names
    return {**message, "tool_calls": [
        {**c, "function": {**c["function"], "name": names.get(c["function"]["name"], c["function"]["name"])}}
        for c in calls]}


def episode_ended(messages: list[dict[str, Any]]) -> bool:
    """Does a tool result after the last assistant turn say the episode is over?"""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return False
        text = _TAG_LINES.sub("", text_of(message.get("content")).rstrip())
        if message.get("role") == "tool" and _ENDED.search(text):
            return True
    return False


def merge_user_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Contents as text, and consecutive user messages as one, and consecutive system messages as
    one: products send their context (environment, reminders) as separate user messages before
    the task itself (some as lists of text parts), and SimLM reads the task from the first user
    message."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message.get("content"), list):
            message = {**message, "content": text_of(message["content"])}
        role = message.get("role")
        if out and role in ("user", "system") and out[-1].get("role") == role and not out[-1].get("tool_calls"):
            joined = "\n\n".join(t for t in (out[-1].get("content") or "", message.get("content") or "") if t)
            out[-1] = {"role": role, "content": joined}
        else:
            out.append(message)
    return out


def text_turn(messages: list[dict[str, Any]], text: str = NO_TOOLS_REPLY) -> Turn:
    """The plain text reply to a request whose tools hold no known family."""
    return Turn({"role": "assistant", "content": text}, None,
                input_tokens=count_tokens(json.dumps(messages, sort_keys=True, default=str)),
                output_tokens=count_tokens(text))


def text_of(content: Any) -> str:
    """The text of a message content: a string, or a list of blocks with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content
                         if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""
