"""Policies by model name ``provider/name``, providers registered in ``pushbench.registry.PROVIDERS``:
``sim/<profile>`` (offline SimLM), ``openai/<model>`` (any OpenAI-compatible endpoint) and
``litellm/<provider>/<model>`` (every provider LiteLLM reaches; the litellm extra)."""

from __future__ import annotations

from typing import Any

from pushbench.policies.base import Policy, Turn
from pushbench.registry import PROVIDERS, UnknownName


def make_policy(model: str, **options: Any) -> Policy:
    """``options`` configure API models (``ChatOptions``: base_url, request_timeout, cache, ...);
    SimLM runs in process and ignores them."""
    provider, _, name = model.partition("/")
    if provider not in PROVIDERS or not name:
        raise UnknownName(f"unknown model {model!r}: use sim/<profile> (mini, base, pro, perfect), "
                          "openai/<model> (any OpenAI-compatible endpoint, see --base-url) or "
                          "litellm/<provider>/<model>; "
                          f"known providers: {', '.join(PROVIDERS)}")
    if PROVIDERS.entry(provider).meta.get("api"):
        return PROVIDERS.make(provider, name, **options)
    return PROVIDERS.make(provider, name)


def is_api_model(model: str) -> bool:
    """Models served over HTTP (run with async concurrency rather than worker processes)."""
    provider = model.partition("/")[0]
    return provider in PROVIDERS and bool(PROVIDERS.entry(provider).meta.get("api"))


__all__ = ["Policy", "Turn", "is_api_model", "make_policy"]
