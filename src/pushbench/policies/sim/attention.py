"""Bounded attention: which facts of the context SimLM recalls at a given step.

Each fact sits at a token offset in the context. Its recall probability falls with its distance
from the end (recency), never below a floor inside the window, dips for facts in the middle of a
long context, and is zero beyond the window. Draws are deterministic in (seed, step, fact index).
"""

from __future__ import annotations

import zlib

import numpy as np

from pushbench.policies.sim.profiles import Profile


def stable_uniform(*parts: object) -> float:
    """A uniform draw in [0, 1) fixed by its parts (stable across processes, unlike hash())."""
    return zlib.crc32(repr(parts).encode()) / 2**32


def recall_probability(profile: Profile, offsets: np.ndarray, total: int) -> np.ndarray:
    distance = total - offsets
    if np.isinf(profile.recency_tokens):
        recency = np.ones_like(distance, dtype=np.float64)
    else:
        recency = np.exp(-distance / profile.recency_tokens)
    prob = profile.recall_floor + (1.0 - profile.recall_floor) * recency
    if profile.middle_dip > 0 and total > 0:
        rel = offsets / total
        strength = profile.middle_dip * min(1.0, total / profile.long_context)
        prob = prob * (1.0 - strength * 4.0 * rel * (1.0 - rel))
    prob[distance > profile.window] = 0.0
    return prob


def recalled_mask(profile: Profile, offsets: np.ndarray, total: int, seed: int, step: int) -> np.ndarray:
    if profile.recall_floor >= 1.0 and profile.window >= total:
        return np.ones(len(offsets), dtype=bool)
    draws = np.random.default_rng([profile.seed, seed, step]).random(len(offsets))
    return draws < recall_probability(profile, offsets, total)
