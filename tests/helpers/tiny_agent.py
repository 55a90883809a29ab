"""A small MCP agent for the declaration tests (a "fifth product" and the generic --agent-cmd path).

``tiny_agent.py --config FILE --base-url URL --model M --prompt-file P [--tool-prefix X]`` reads
the MCP server from FILE (an ``mcpServers`` JSON file, or a YAML file ``servers: {name: {command,
args, env}}`` as its own config format), lists the server's tools with the official SDK client,
offers them to a chat-completions endpoint as ``X<tool>`` (default: the bare name) with the
``openai`` client, and loops call -> tool -> call until a text reply. It writes
the environment it saw (HOME, provider variables present) to ``seen-env.json`` in its cwd.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import anyio
import openai
import yaml
from mcp import Client, StdioServerParameters
import mcp_types as types

PROVIDER_PREFIXES = ("ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_")


def server(config: Path) -> tuple[str, StdioServerParameters]:
    data = json.loads(config.read_text()) if config.suffix == ".json" else yaml.safe_load(config.read_text())
    servers = data.get("mcpServers") or data.get("servers")
    name, entry = next(iter(servers.items()))
    return name, StdioServerParameters(command=entry["command"], args=list(entry["args"]), env=entry.get("env") or None)


async def run(args: argparse.Namespace) -> None:
    _, params = server(Path(args.config))
    chat = openai.OpenAI(base_url=args.base_url, api_key="unused", max_retries=2)
    async with Client(params, mode="legacy") as client:
        listed = (await client.list_tools()).tools
        named = {args.tool_prefix + t.name: t.name for t in listed}
        tools = [{"type": "function", "function": {"name": args.tool_prefix + t.name,
                                                   "description": t.description or "", "parameters": t.input_schema}}
                 for t in listed]
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a tiny agent."},
                                          {"role": "user", "content": Path(args.prompt_file).read_text()}]
        for _ in range(500):
            reply = chat.chat.completions.create(model=args.model, messages=messages, tools=tools).choices[0].message
            messages.append(reply.model_dump(exclude_none=True))
            if not reply.tool_calls:
                return
            for call in reply.tool_calls:
                result = await client.call_tool(named[call.function.name], json.loads(call.function.arguments))
                text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="sim-base")
    parser.add_argument("--prompt-file", required=True)
    parser.add_argument("--tool-prefix", default="")
    args = parser.parse_args()
    seen = {"HOME": os.environ.get("HOME"), "PUSHBENCH_SIM_URL": os.environ.get("PUSHBENCH_SIM_URL"),
            "provider": sorted(k for k in os.environ if k.startswith(PROVIDER_PREFIXES))}
    Path("seen-env.json").write_text(json.dumps(seen, sort_keys=True))
    anyio.run(run, args)


if __name__ == "__main__":
    main()
