"""The native backend: a plain loop of policy -> controller -> environment -> controller -> memory."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pushbench.controllers import Controller, Intercept
from pushbench.memory import ContextBuilder, Event
from pushbench.policies.base import Policy
from pushbench.tools.base import Environment, Observation, ToolCall

SYSTEM_PROMPT = (
    "You are an autonomous agent working in a tool environment. Call exactly one tool per turn. "
    "Keep working until the verifier confirms the target; budget is counted in tool calls."
)


@dataclass
class EpisodeRun:
    env: Environment
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    transcript: list[dict[str, Any]] = field(default_factory=list)  # every message, stored once


def system_prompt(controller: Controller) -> str:
    note = controller.system_note()
    return f"{SYSTEM_PROMPT} {note}".strip()


def decode(call: ToolCall) -> ToolCall:
    """Parse JSON-object arguments for the controller; anything else stays raw for the env to refuse."""
    if isinstance(call.arguments, str):
        try:
            parsed = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError:
            return call
        if isinstance(parsed, dict):
            return ToolCall(call.name, parsed, call.call_id)
    return call


def step(run: EpisodeRun, policy: Policy, controller: Controller, memory: ContextBuilder,
         tools: list[dict[str, Any]], seed: int) -> None:
    """One policy turn and its consequence (used by the native loop and the LangGraph nodes)."""
    env = run.env
    turn = policy.act(memory.render(policy.context_window), tools, seed)
    run.llm_calls += 1
    run.input_tokens += turn.input_tokens
    run.output_tokens += turn.output_tokens
    memory.ingest(Event(env.steps + 1, "action", turn.message))
    run.transcript.append(turn.message)
    if turn.call is None:
        block = controller.on_stop(env)
        if block is None:
            env.end("give_up")
            return
        obs = env.refuse(ToolCall("(stop)", str(turn.message.get("content") or "")), block.text, controller.name)
        reply = {"role": "user", "content": obs.text}
        origin = {"controller": controller.name}
    else:
        call = decode(turn.call)
        decision = controller.before(call, env)
        if isinstance(decision, Intercept):
            obs = env.refuse(call, decision.text, controller.name)
            executed = call
        else:
            obs = env.execute(decision)
            executed = decision
        if not obs.done or executed.name != "final":
            obs = controller.after(executed, obs, env)
        reply = {"role": "tool", "tool_call_id": turn.call.call_id, "content": obs.text}
        origin = {"tool": executed.name, "arguments": executed.arguments, "call_id": turn.call.call_id}
    memory.ingest(Event(env.steps, "observation", reply, origin))
    run.transcript.append(reply)


def run_native(env: Environment, policy: Policy, controller: Controller, memory: ContextBuilder,
               seed: int) -> EpisodeRun:
    memory.start(system_prompt(controller), env.task.objective)
    run = EpisodeRun(env)
    tools = env.schemas()
    while not env.done:
        step(run, policy, controller, memory, tools, seed)
    return run
