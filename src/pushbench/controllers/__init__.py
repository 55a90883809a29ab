"""Controllers by name: ``standard``, ``gated``, ``stateqgp`` and its ablation variants."""

from __future__ import annotations

from typing import Callable

from pushbench.controllers.base import Controller, Intercept
from pushbench.controllers.gated import GatedController
from pushbench.controllers.stateqgp import StateQGPController
from pushbench.controllers.unitqgp import UnitQGPController

CONTROLLERS: dict[str, Callable[[], Controller]] = {
    "standard": Controller,
    "gated": GatedController,
    "stateqgp": lambda: StateQGPController("stateqgp"),
    "stateqgp-dedupe": lambda: StateQGPController("stateqgp-dedupe", dedupe=True, pages=False, buffer=False),
    "stateqgp-pages": lambda: StateQGPController("stateqgp-pages", dedupe=False, pages=True, buffer=False),
    "stateqgp-nobuffer": lambda: StateQGPController("stateqgp-nobuffer", dedupe=True, pages=True, buffer=False),
    "unitqgp": UnitQGPController,
}


def make_controller(name: str) -> Controller:
    """A fresh controller (controllers keep per-episode state)."""
    if name not in CONTROLLERS:
        raise KeyError(f"unknown controller {name!r}; known: {', '.join(CONTROLLERS)}")
    return CONTROLLERS[name]()


__all__ = ["CONTROLLERS", "Controller", "Intercept", "make_controller"]
