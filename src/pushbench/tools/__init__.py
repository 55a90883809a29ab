"""The agent-facing environments: tool schemas, argument checking, execution."""

from pushbench.tools.base import Environment, Observation, PreconditionError, ToolCall, ToolError, tool

__all__ = ["Environment", "Observation", "PreconditionError", "ToolCall", "ToolError", "tool"]
