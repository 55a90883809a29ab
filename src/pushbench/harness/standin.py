"""The offline stand-in agent: an MCP client driven by SimLM (its results are SimLM's, not a real model's).

``python -m pushbench.harness.standin --model sim/base`` reads the MCP configuration and prompt
the harness provides (``PUSHBENCH_MCP_CONFIG``, ``PUSHBENCH_PROMPT``, ``PUSHBENCH_SEED``), starts or
connects to the server with the official SDK client, lists its tools, turns them into OpenAI
tool schemas and loops ``SimLM.act`` -> ``call_tool`` until SimLM stops, the episode ends or a
turn cap is hit. Like a chat agent product, it keeps the whole transcript as its context. It
writes its LLM-call and token counts to ``PUSHBENCH_AGENT_REPORT`` when that is set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

from pushbench.backends.native import SYSTEM_PROMPT
from pushbench.harness.mcp_server import META_DONE, SERVER_NAME
from pushbench.policies import make_policy
from pushbench.policies.base import Policy

MAX_TURNS = 2_000  # a guard only: the server's step budget ends every episode well before


@dataclass
class Usage:
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


def openai_tools(tools: list[types.Tool]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                              "parameters": t.input_schema}} for t in tools]


def server_target(config_path: Path, name: str = SERVER_NAME) -> StdioServerParameters | str:
    """The server entry of an ``mcpServers`` config: stdio parameters or a streamable-HTTP URL."""
    servers = json.loads(config_path.read_text(encoding="utf-8")).get("mcpServers", {})
    if name not in servers:
        raise ValueError(f"{config_path} has no mcpServers entry {name!r}")
    entry = servers[name]
    if entry.get("url"):
        return str(entry["url"])
    return StdioServerParameters(command=entry["command"], args=list(entry.get("args", [])),
                                 env=dict(entry.get("env") or {}) or None, cwd=entry.get("cwd"))


def result_text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def parse_arguments(raw: str | dict[str, Any]) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


async def run_agent(client: Client, policy: Policy, prompt: str, seed: int, usage: Usage) -> None:
    tools = openai_tools((await client.list_tools()).tools)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                      {"role": "user", "content": prompt}]
    for _ in range(MAX_TURNS):
        turn = policy.act(messages, tools, seed)
        usage.llm_calls += 1
        usage.input_tokens += turn.input_tokens
        usage.output_tokens += turn.output_tokens
        messages.append(turn.message)
        if turn.call is None:
            return  # SimLM answered in text: it stops
        arguments = parse_arguments(turn.call.arguments)
        if arguments is None:  # a client cannot send non-object arguments over MCP
            messages.append({"role": "tool", "tool_call_id": turn.call.call_id,
                             "content": "ERROR: the tool arguments are not a JSON object."})
            continue
        result = await client.call_tool(turn.call.name, arguments)
        messages.append({"role": "tool", "tool_call_id": turn.call.call_id, "content": result_text(result)})
        if (result.meta or {}).get(META_DONE):
            return


async def main_async(model: str, config_path: Path, prompt: str, seed: int, report: Path | None) -> None:
    policy = make_policy(model)
    usage = Usage()
    try:
        async with Client(server_target(config_path), mode="legacy") as client:
            await run_agent(client, policy, prompt, seed, usage)
    finally:
        if report is not None:
            report.write_text(json.dumps({"model": model, **asdict(usage)}, sort_keys=True) + "\n",
                              encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pushbench.harness.standin",
                                     description="Offline SimLM stand-in for an MCP agent CLI.")
    parser.add_argument("--model", default="sim/base", help="a SimLM profile, sim/<profile>")
    parser.add_argument("--mcp-config", default=os.environ.get("PUSHBENCH_MCP_CONFIG"))
    parser.add_argument("--prompt", default=os.environ.get("PUSHBENCH_PROMPT"))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("PUSHBENCH_SEED", "0")))
    parser.add_argument("--report", default=os.environ.get("PUSHBENCH_AGENT_REPORT") or None)
    args = parser.parse_args(argv)
    if not args.mcp_config or not args.prompt:
        parser.error("an MCP config and a prompt are required (flags or PUSHBENCH_MCP_CONFIG / PUSHBENCH_PROMPT)")
    if not args.model.startswith("sim/"):
        parser.error(f"the stand-in runs SimLM only (sim/<profile>), not {args.model!r}")
    try:
        anyio.run(main_async, args.model, Path(args.mcp_config), args.prompt, args.seed,
                  Path(args.report) if args.report else None)
    except (OSError, ValueError, KeyError) as err:
        print(f"standin: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
