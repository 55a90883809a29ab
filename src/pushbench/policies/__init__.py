"""Policies by model name: ``sim/<profile>`` (offline SimLM), ``openai/<model>`` (chat policy)."""

from __future__ import annotations

from typing import Any

from pushbench.policies.base import Policy, Turn


def make_policy(model: str, **options: Any) -> Policy:
    """``options`` configure API models (``ChatOptions``: base_url, request_timeout, cache, ...);
    SimLM runs in process and ignores them."""
    provider, _, name = model.partition("/")
    if provider == "sim" and name:
        from pushbench.policies.sim import SimLM

        return SimLM(name)
    if provider == "openai" and name:
        from pushbench.policies.chat import ChatOptions, ChatPolicy

        return ChatPolicy(name, ChatOptions.from_kwargs(**options))
    raise ValueError(f"unknown model {model!r}: use sim/<profile> (mini, base, pro, perfect) "
                     "or openai/<model> (any OpenAI-compatible endpoint, see --base-url)")


def is_api_model(model: str) -> bool:
    """Models served over HTTP (run with async concurrency rather than worker processes)."""
    return model.partition("/")[0] == "openai"


__all__ = ["Policy", "Turn", "is_api_model", "make_policy"]
