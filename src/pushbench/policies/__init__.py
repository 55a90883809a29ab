"""Policies by model name: ``sim/<profile>`` (offline SimLM); API models arrive with the chat policy."""

from __future__ import annotations

from pushbench.policies.base import Policy, Turn


def make_policy(model: str) -> Policy:
    provider, _, name = model.partition("/")
    if provider == "sim" and name:
        from pushbench.policies.sim import SimLM

        return SimLM(name)
    raise ValueError(f"unknown model {model!r}: use sim/<profile> (mini, base, pro, perfect)")


__all__ = ["Policy", "Turn", "make_policy"]
