"""Controllers, registered by name in ``pushbench.registry.CONTROLLERS``: ``standard``, ``gated``,
``stateqgp`` and its ablation variants, ``unitqgp``."""

from __future__ import annotations

from pushbench.controllers.base import Controller, Intercept
from pushbench.registry import CONTROLLERS


def make_controller(name: str) -> Controller:
    """A fresh controller (controllers keep per-episode state)."""
    return CONTROLLERS.make(name)


__all__ = ["CONTROLLERS", "Controller", "Intercept", "make_controller"]
