"""SimLM as the model inside an agent product: which of the product's tools are the task's.

An agent product (Claude Code, Codex CLI) sends its own system prompt and its whole tool list:
its built-in tools beside the MCP server's, which it names ``mcp__<server>__<tool>``. SimLM reads
the task's tools by their bare names, so this module picks, among the tool groups (one per MCP
server, plus the unprefixed tools), the one whose bare names a SimLM mind declares (the same
``mind_name`` declaration an in-process episode uses). The product's other tools are ignored;
tool calls in the history are renamed to the bare names and SimLM's answer back to the product's.
When no group holds a known family, SimLM answers in plain text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pushbench.policies.base import Turn
from pushbench.policies.sim import mind_name
from pushbench.tokens import count_tokens

_MCP_NAME = re.compile(r"^mcp__(?P<server>.+?)__(?P<tool>.+)$")
# The environment's words when an episode is over (final, budget spent, calls after the end). An
# in-process episode stops there; inside a product SimLM only sees the text, and stops on it.
_ENDED = re.compile(r"\bepisode (?:has )?end(?:s|ed)\b")
ENDED_REPLY = "The episode has ended."
NO_TOOLS_REPLY = ("SimLM (a simulator, not a real model) has no reader for these tools; it can only "
                  "work on a PushBench task's tools.")


@dataclass
class ToolView:
    """The task's tools in chat form under bare names, and the product's name for each."""

    tools: list[dict[str, Any]]
    product_names: dict[str, str] = field(default_factory=dict)  # bare -> product name

    @property
    def bare_names(self) -> dict[str, str]:
        return {product: bare for bare, product in self.product_names.items()}


def _split(name: str) -> tuple[str, str]:
    m = _MCP_NAME.match(name)
    return (m["server"], m["tool"]) if m else ("", name)


def task_view(tools: list[dict[str, Any]]) -> ToolView | None:
    """The tool group SimLM has a mind for (chat-form tools in, chat-form tools out), or None."""
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    for tool in tools:
        fn = tool.get("function") or {}
        name = fn.get("name")
        if isinstance(name, str):
            server, bare = _split(name)
            groups.setdefault(server, {})[bare] = {"type": "function", "function": {**fn, "name": bare}}
    for server in sorted(groups):
        bare_tools = list(groups[server].values())
        try:
            mind_name(bare_tools)
        except ValueError:
            continue
        prefix = f"mcp__{server}__" if server else ""
        return ToolView(bare_tools, {bare: prefix + bare for bare in groups[server]})
    return None


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
        if message.get("role") == "tool" and _ENDED.search(message.get("content") or ""):
            return True
    return False


def merge_user_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive user messages as one, and consecutive system messages as one: products send
    their context (environment, reminders) as separate user messages before the task itself, and
    SimLM reads the task from the first user message."""
    out: list[dict[str, Any]] = []
    for message in messages:
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
