"""The native backend: a plain loop of policy -> controller -> environment -> controller -> memory.

This is the one loop every policy runs through: SimLM in worker processes, API models in the
runner's threads (``runner/api_exec.py``), Ray's workers, and the LangGraph backend's nodes (which
call ``take_turn``, ``control`` and ``apply``). So an API model is offered the memory's tools, its
memory's own requests (summaries) go to the same model, its views are recorded and the controller
acts on it exactly as for SimLM.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pushbench.controllers import Controller, Intercept
from pushbench.memory import ContextBuilder, Event
from pushbench.memory.base import (MAX_MEMORY_CALLS_PER_STEP, SideLLM, bind_llm, bind_requirements,
                                   handle_memory_call, memory_tools)
from pushbench.memory.viewlog import ViewLog
from pushbench.policies.base import Policy, PolicyStop, Turn
from pushbench.tools.base import Environment, Observation, ToolCall, ToolError

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
    views: ViewLog = field(init=False)  # the context each external turn was sent (the viewer's pages)

    def __post_init__(self) -> None:
        self.views = ViewLog(self.transcript)


def system_prompt(controller: Controller) -> str:
    note = controller.system_note()
    return f"{SYSTEM_PROMPT} {note}".strip()


def start_memory(memory: ContextBuilder, controller: Controller, env: Environment) -> None:
    """Open the memory on the task and hand it the task's requirements (every backend does this)."""
    memory.start(system_prompt(controller), env.task.objective)
    bind_requirements(memory, env.requirements())


def call_origins(env: Environment, call: ToolCall) -> list[str]:
    """The requirement ids a call serves (``Environment.action_origins``); arguments that are not
    a JSON object serve none."""
    args = decode(call).arguments
    return list(env.action_origins(call.name, args)) if isinstance(args, dict) else []


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


def as_executed(env: Environment, call: ToolCall) -> ToolCall:
    """The decoded call with its arguments as ``env.execute`` leaves them (schema defaults filled
    in, integers coerced: ``Environment.parse_arguments``, the step ``execute`` takes), for a replay
    that executes nothing: the origin it builds then holds what the live loop's held. Arguments
    the environment refuses stay as its parsing left them, as in the live run."""
    call = decode(call)
    if call.name in env.tools:
        try:
            env.parse_arguments(call)
        except ToolError:
            pass
    return call


def call_origin(env: Environment, executed: ToolCall, call_id: str) -> dict[str, Any]:
    """The origin of an executed call's observation: the call as executed (``as_executed``, for a
    replay) and the requirement ids it serves."""
    return {"tool": executed.name, "arguments": executed.arguments, "call_id": call_id,
            "requirements": call_origins(env, executed)}


def memory_origin(call: ToolCall) -> dict[str, Any]:
    """The origin of a memory tool call's reply: the call as the model wrote it, decoded afresh (the
    memory's own validation fills defaults into the copy it was handed)."""
    return {"tool": call.name, "arguments": decode(call).arguments, "call_id": call.call_id, "internal": True}


@dataclass
class Decision:
    """What the controller made of a turn: end the episode, refuse it with a text, or execute a call."""

    kind: str  # "end" | "refuse" | "execute"
    call: ToolCall | None = None
    text: str = ""


def record_turn(run: EpisodeRun, memory: ContextBuilder, turn: Turn) -> None:
    """Count the model call and put its message into the history."""
    run.llm_calls += 1
    run.input_tokens += turn.input_tokens
    run.output_tokens += turn.output_tokens
    memory.ingest(Event(run.env.steps + 1, "action", turn.message))
    run.transcript.append(turn.message)


def take_turn(run: EpisodeRun, policy: Policy, memory: ContextBuilder, tools: list[dict[str, Any]],
              seed: int) -> Turn:
    """The policy's next external action; a memory's own tool calls before it are answered here."""
    bind_llm(memory, side_llm(run, policy, seed))
    extra = memory_tools(memory)
    offered = tools + extra if extra else tools
    for _ in range(MAX_MEMORY_CALLS_PER_STEP):
        turn, view = act(run, policy, memory, offered, seed)
        record_turn(run, memory, turn)
        reply = handle_memory_call(memory, decode(turn.call)) if extra and turn.call else None
        if reply is None:
            run.views.record(view)
            return turn
        assert turn.call is not None
        message = {"role": "tool", "tool_call_id": turn.call.call_id, "content": reply}
        memory.ingest(Event(run.env.steps, "memory", message, memory_origin(turn.call)))
        run.transcript.append(message)
    turn, view = act(run, policy, memory, tools, seed)  # memory tools withdrawn
    record_turn(run, memory, turn)
    run.views.record(view)
    return turn


def act(run: EpisodeRun, policy: Policy, memory: ContextBuilder, tools: list[dict[str, Any]],
        seed: int) -> tuple[Turn, list[dict[str, Any]]]:
    """The policy's turn on the memory's view, and that view as sent (a builder may go on
    appending to the list it returned). A stop's last reply is kept with the view it answered."""
    view = memory.render(policy.context_window)
    sent = list(view)
    try:
        return policy.act(view, tools, seed), sent
    except PolicyStop as stop:
        if stop.turn is not None:
            run.views.record(sent)
        raise


def side_llm(run: EpisodeRun, policy: Policy, seed: int) -> SideLLM:
    """The policy for a memory's own requests (e.g. a summary): counted, reply kept in the transcript."""
    def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]], purpose: str) -> dict[str, Any]:
        turn = policy.act(messages, tools, seed)
        run.llm_calls += 1
        run.input_tokens += turn.input_tokens
        run.output_tokens += turn.output_tokens
        message = {**turn.message, "name": f"memory-{purpose}"}
        run.transcript.append(message)
        return message
    return ask


def control(turn: Turn, controller: Controller, env: Environment) -> Decision:
    """The controller's verdict on a turn (``on_stop`` for a text reply, ``before`` for a call)."""
    if turn.call is None:
        block = controller.on_stop(env)
        if block is None:
            return Decision("end")
        return Decision("refuse", ToolCall("(stop)", str(turn.message.get("content") or "")), block.text)
    call = decode(turn.call)
    decision = controller.before(call, env)
    if isinstance(decision, Intercept):
        return Decision("refuse", call, decision.text)
    return Decision("execute", decision)


def apply(run: EpisodeRun, turn: Turn, decision: Decision, controller: Controller,
          memory: ContextBuilder) -> None:
    """Carry out a decision on the environment and record the observation."""
    env = run.env
    if decision.kind == "end":
        env.end("give_up")
        return
    assert decision.call is not None
    if decision.kind == "refuse":
        obs = env.refuse(decision.call, decision.text, controller.name)
    else:
        obs = env.execute(decision.call)
    if turn.call is None:
        reply = {"role": "user", "content": obs.text}
        origin: dict[str, Any] = {"controller": controller.name, "requirements": []}
    else:
        executed = decision.call
        if not obs.done or executed.name != "final":
            obs = controller.after(executed, obs, env)
        reply = {"role": "tool", "tool_call_id": turn.call.call_id, "content": obs.text}
        origin = call_origin(env, executed, turn.call.call_id)
    memory.ingest(Event(env.steps, "observation", reply, origin))
    run.transcript.append(reply)


def step(run: EpisodeRun, policy: Policy, controller: Controller, memory: ContextBuilder,
         tools: list[dict[str, Any]], seed: int) -> None:
    """One policy turn and its consequence (the LangGraph nodes call the same three parts)."""
    turn = take_turn(run, policy, memory, tools, seed)
    apply(run, turn, control(turn, controller, run.env), controller, memory)


def stopped(run: EpisodeRun, memory: ContextBuilder, stop: PolicyStop) -> None:
    """The policy cannot go on (``PolicyStop``): keep its last reply, end with its reason."""
    if stop.turn is not None:
        record_turn(run, memory, stop.turn)
    run.env.end(stop.reason)


def run_native(env: Environment, policy: Policy, controller: Controller, memory: ContextBuilder,
               seed: int) -> EpisodeRun:
    start_memory(memory, controller, env)
    run = EpisodeRun(env)
    tools = env.schemas()
    while not env.done:
        try:
            step(run, policy, controller, memory, tools, seed)
        except PolicyStop as stop:
            stopped(run, memory, stop)
    return run
