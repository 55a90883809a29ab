"""Execution backends, registered by name in ``pushbench.registry.BACKENDS``: ``native`` (a plain
loop, the one every policy runs through) and ``langgraph`` (a StateGraph with a checkpointer,
imported only when used)."""

from pushbench.registry import BACKENDS


def get_backend(name: str):
    """The backend's run function: ``run(env, policy, controller, memory, seed, **options)``."""
    return BACKENDS.load(name)


__all__ = ["BACKENDS", "get_backend"]
