"""Environment base: turns one model tool call into one observation, never raising.

Every call costs one step of the budget. An unknown tool, arguments that are not a JSON object,
a schema violation or text that cannot be encoded as UTF-8 (a lone surrogate such as
``"\\ud800"``, valid JSON; anywhere in the arguments) is refused before the handler runs, so no
tool ever writes half of an argument; that and a handler's ``ToolError`` become an error
observation (an invalid action). The verifier logs each call either way. Any other exception
inside a handler is a bug of the tool, not a mistake of the agent: the agent sees a short error,
the call is logged with
``info["tool_failure"]`` (counted as ``tool_failures``, not ``invalid_actions``) and its traceback
is kept in ``Environment.tool_failures`` for the trace. With ``PUSHBENCH_RAISE_TOOL_ERRORS=1`` (the
test suite sets it) the exception is re-raised instead, so a handler bug fails a test.
"""

from __future__ import annotations

import json
import os
import re
import traceback
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, cast

import fastjsonschema

from pushbench.requirements import Requirement, requirement_argument, validate_origins

MAX_ARGUMENT_CHARS = 8_000  # larger argument payloads are refused before parsing
MAX_ARGUMENT_DEPTH = 32  # lists/objects nested deeper are refused (no tool takes more than 2 levels)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
RAISE_TOOL_ERRORS = "PUSHBENCH_RAISE_TOOL_ERRORS"  # "1": a handler's exception propagates (tests)


class ToolError(Exception):
    """A bad call: the message goes back to the agent as the observation."""


class PreconditionError(ToolError):
    """A well-formed call the tool refuses because of the state (an out-of-stock item, a coupon
    that does not apply): a *precondition rejection* (ACG App. C), not an interface error. The
    agent sees ``REJECTED: <message>``; the call is logged with ``info["rejection"] = "precondition"``
    and, like any refused call, has no effect and counts as an invalid action."""


PRECONDITION = "precondition"  # info["rejection"] of a call a tool refused because of state


@dataclass
class ToolCall:
    name: str
    arguments: str | dict[str, Any]  # JSON text as a model wrote it, or already parsed
    call_id: str = ""


@dataclass
class Observation:
    text: str
    ok: bool = True
    done: bool = False
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[..., Observation]

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


def tool(description: str, **properties: dict[str, Any]) -> Callable[[Callable], Callable]:
    """Mark an Environment method as a tool; keyword args are its JSON-schema properties.

    A property is required unless it has a ``default``.
    """
    def mark(method: Callable) -> Callable:
        required = [k for k, v in properties.items() if "default" not in v]
        cast(Any, method).__tool__ = (description, {"type": "object", "properties": properties,
                                         "required": required, "additionalProperties": False})
        return method
    return mark


@lru_cache(maxsize=256)
def _compiled(schema_json: str) -> Callable[[Any], Any]:
    return fastjsonschema.compile(json.loads(schema_json))


def _validator(schema: dict[str, Any]) -> Callable[[Any], Any]:
    """A compiled JSON-schema check (compiled once per distinct schema)."""
    return _compiled(json.dumps(schema, sort_keys=True))


def _traceback(err: BaseException) -> str:
    """The handler's traceback with file names relative to the package (no absolute paths in traces)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frames = traceback.extract_tb(err.__traceback__)
    for frame in frames:
        inside = os.path.abspath(frame.filename).startswith(package + os.sep)
        frame.filename = os.path.relpath(frame.filename, os.path.dirname(package)) if inside \
            else os.path.basename(frame.filename)
    return "".join(traceback.format_list(frames) + traceback.format_exception_only(type(err), err))


def nesting_depth(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (iterative: no recursion limit to hit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_ARGUMENT_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def has_control_chars(text: str) -> bool:
    return bool(_CONTROL.search(text))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unencodable_at(value: Any, where: str = "") -> str | None:
    """The path (``new``, ``ids[2]``, ``meta.key``) of the first string in ``value`` -- keys
    included -- that has no UTF-8 encoding (a lone surrogate), or None."""
    if isinstance(value, str):
        return None if _encodable(value) else (where or "arguments")
    if isinstance(value, dict):
        for key, item in value.items():
            name = str(key) if _encodable(str(key)) else ascii(str(key))
            path = f"{where}.{name}" if where else name
            if not _encodable(str(key)):
                return f"{path} (the key)"
            if (found := unencodable_at(item, path)) is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if (found := unencodable_at(item, f"{where}[{i}]")) is not None:
                return found
    return None


def _loggable(value: Any) -> Any:
    """What the event log keeps of a call's arguments: unencodable text as ASCII-escaped JSON."""
    if isinstance(value, str):
        return value[:500] if _encodable(value) else ascii(value)[:500]
    if nesting_depth(value) > MAX_ARGUMENT_DEPTH:
        return f"(arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels; not kept)"
    return value if unencodable_at(value) is None else json.dumps(value, default=str)[:500]


class Environment:
    """Base for a family's environment: subclasses define ``@tool`` methods and ``status_text``."""

    def __init__(self, task: Any, verifier: Any):
        self.task = task
        self.verifier = verifier
        self.steps = 0
        self.done = False
        self.termination: str | None = None
        self.tool_failures: list[dict[str, Any]] = []  # handler exceptions, with tracebacks (for the trace)
        self.tools: dict[str, ToolSpec] = {}
        for name in dir(type(self)):
            method = getattr(type(self), name)
            if hasattr(method, "__tool__"):
                description, params = method.__tool__
                self.tools[name] = ToolSpec(name, self.describe_tool(name, description), params,
                                            getattr(self, name))
        self._validators = {n: _validator(s.parameters) for n, s in self.tools.items()}

    def describe_tool(self, name: str, description: str) -> str:
        """A tool's description as the model sees it (a base class may fill in words)."""
        return description

    def schemas(self) -> list[dict[str, Any]]:
        return [self.tools[name].schema() for name in sorted(self.tools)]

    def requirements(self) -> list[Requirement]:
        """The task's requirements with ids (``pushbench.requirements``); a family declares them."""
        return []

    def action_origins(self, tool: str, arguments: Any) -> tuple[str, ...]:
        """The requirement ids a call of ``tool`` with ``arguments`` serves, validated against
        ``requirements()``: here only the optional ``requirement`` argument; a family adds its
        deterministic mapping. A tool this environment lacks serves nothing."""
        if tool not in self.tools:
            return ()
        return validate_origins(requirement_argument(arguments), self.requirements())

    def execute(self, call: ToolCall) -> Observation:
        if self.done:
            return Observation("ERROR: the episode has ended; no further calls are executed.", ok=False, done=True)
        self.steps += 1
        logged: Any = call.arguments
        info: dict[str, Any] | None = None
        try:
            spec = self.tools.get(call.name)
            if spec is None:
                raise ToolError(f"unknown tool {ascii(call.name[:100])}; available tools: {', '.join(sorted(self.tools))}")
            args = self.parse_arguments(call)
            logged = args
            obs = spec.handler(**args)
        except PreconditionError as err:
            obs = Observation(f"REJECTED: {err}", ok=False)
            info = {"rejection": PRECONDITION}
        except ToolError as err:
            obs = Observation(f"ERROR: {err}", ok=False)
        except Exception as err:  # a handler bug must not end the episode: report it as a failed call
            if os.environ.get(RAISE_TOOL_ERRORS) == "1":
                raise
            obs = Observation(f"ERROR: the tool failed ({type(err).__name__}); the call had no effect.", ok=False)
            info = {"tool_failure": type(err).__name__}
            self.tool_failures.append({"step": self.steps, "tool": call.name[:100], "traceback": _traceback(err)})
        self.verifier.record_call(self.steps, _loggable(call.name[:100]), _loggable(logged), obs.ok,
                                  None if obs.ok else obs.text, info or obs.payload.get("log"))
        if not self.done and self.steps >= self.task.budget:
            self.end("budget")
            obs.text += f"\n[The step budget of {self.task.budget} tool calls is used up; the episode ends.]"
        obs.done = self.done
        return obs

    def parse_arguments(self, call: ToolCall) -> dict[str, Any]:
        """The handler's keyword arguments for ``call`` of a tool this environment has (``ToolError``
        when they are not valid). Arguments that are already a JSON object (a decoded call, as the
        backends pass it) are completed in place: the schema validator fills in the defaults of the
        properties the call left out, and integral numbers of integer properties become ints. So
        the call's origin, built after ``execute``, holds the arguments as executed; a replay that
        executes nothing rebuilds them with this (``backends.native.as_executed``)."""
        raw = call.arguments
        if isinstance(raw, str):
            if len(raw) > MAX_ARGUMENT_CHARS:
                raise ToolError(f"arguments are {len(raw)} characters; the limit is {MAX_ARGUMENT_CHARS}")
            try:
                raw = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as err:
                raise ToolError(f"arguments are not valid JSON ({err.msg} at position {err.pos})") from None
            except RecursionError:
                raise ToolError(f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels") from None
        if nesting_depth(raw) > MAX_ARGUMENT_DEPTH:
            raise ToolError(f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels")
        if not isinstance(call.arguments, str) and len(json.dumps(raw, default=str)) > MAX_ARGUMENT_CHARS:
            raise ToolError(f"arguments exceed {MAX_ARGUMENT_CHARS} characters")
        if not isinstance(raw, dict):
            raise ToolError("arguments must be a JSON object")
        if (where := unencodable_at(raw)) is not None:
            raise ToolError(f"argument {where} holds text that cannot be encoded as UTF-8 (a lone surrogate "
                            "such as \\ud800); send valid Unicode text. The call had no effect.")
        try:
            self._validators[call.name](raw)
        except fastjsonschema.JsonSchemaValueException as err:
            raise ToolError(f"invalid arguments for {call.name}: {err.message[:200]}") from None
        properties = self.tools[call.name].parameters["properties"]
        for key, value in raw.items():  # JSON Schema calls 2.0 an integer; handlers get a real int
            if properties.get(key, {}).get("type") == "integer" and isinstance(value, float):
                raw[key] = int(value)
        defaults = {k: v["default"] for k, v in properties.items() if "default" in v}
        return {**defaults, **raw}

    def refuse(self, call: ToolCall, text: str, by: str) -> Observation:
        """An action a controller intercepted: it still costs a step and is logged."""
        if self.done:
            return Observation("ERROR: the episode has ended; no further calls are executed.", ok=False, done=True)
        self.steps += 1
        args = call.arguments if isinstance(call.arguments, dict) else str(call.arguments)
        self.verifier.record_call(self.steps, _loggable(call.name[:100]), _loggable(args), True, None,
                                  {"intercepted_by": by})
        obs = Observation(text)
        if self.steps >= self.task.budget:
            self.end("budget")
            obs.text += f"\n[The step budget of {self.task.budget} tool calls is used up; the episode ends.]"
        obs.done = self.done
        return obs

    def claim_final(self, count: int) -> Observation:
        """What every family's ``final(count)`` tool does: end the episode with the agent's claim."""
        self.end("final", reported=count)
        return Observation(f"final: episode ended; you reported {count}.", done=True)

    def end(self, reason: str, reported: int | None = None) -> None:
        if not self.done:
            self.done = True
            self.termination = reason
            self.verifier.end(self.steps, reason, reported)
