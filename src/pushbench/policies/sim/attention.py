"""Bounded attention: which facts of the context SimLM recalls at a given step.

Each fact sits at a token offset in the context. Only the last ``window`` tokens are visible; a
fact before them is gone. Inside the visible span of ``n`` tokens a fact at relative position
``x`` (0 = the oldest visible token, 1 = the newest) is recalled through any of three channels,
combined as independent chances (a noisy OR):

    primacy   P(x) = primacy * exp(-x / primacy_span)            the start of the context
    recency   R(x) = recency * exp(-(1 - x) / recency_span)      the end of the context
    content   M(n) = middle * (n / 4096)**(-length_decay)  (at most 1)   anywhere, falling with length

    recall(x, n) = 1 - (1 - P(x)) * (1 - R(x)) * (1 - M(n))

so recall is U-shaped in position (Lost in the Middle: both ends well used, the middle worst) and
the middle sinks as the context grows (RULER, NoLiMa). The system prompt and the task text sit at
the start of the context and are subject to it like every other fact. The parameters of each
profile are fitted to published measurements by the ``calibrate`` stage (``pushbench.calibration``).
Draws are deterministic in (profile seed, episode seed, step).
"""

from __future__ import annotations

import zlib

import numpy as np

from pushbench.policies.sim.profiles import Profile


def stable_uniform(*parts: object) -> float:
    """A uniform draw in [0, 1) fixed by its parts (stable across processes, unlike hash())."""
    return zlib.crc32(repr(parts).encode()) / 2**32


REFERENCE_LENGTH = 4096  # tokens at which ``middle`` is the content recall (RULER's shortest length)


def length_term(profile: Profile, visible: float | np.ndarray) -> np.ndarray:
    """M(n): the recall any visible fact has whatever its position, in a context of ``visible`` tokens."""
    ratio = np.maximum(np.asarray(visible, dtype=np.float64), 1.0) / REFERENCE_LENGTH
    return np.minimum(1.0, profile.middle * ratio ** (-profile.length_decay))


def position_curve(profile: Profile, rel: np.ndarray, visible: float) -> np.ndarray:
    """Recall at relative positions ``rel`` (0 oldest visible, 1 newest) of a ``visible``-token span."""
    rel = np.clip(np.asarray(rel, dtype=np.float64), 0.0, 1.0)
    primacy = profile.primacy * np.exp(-rel / profile.primacy_span)
    recency = profile.recency * np.exp(-(1.0 - rel) / profile.recency_span)
    content = length_term(profile, visible)
    return 1.0 - (1.0 - primacy) * (1.0 - recency) * (1.0 - content)


def recall_probability(profile: Profile, offsets: np.ndarray, total: int) -> np.ndarray:
    offsets = np.asarray(offsets)
    start = max(0, total - profile.window)
    visible = max(1, total - start)
    prob = position_curve(profile, (offsets - start) / visible, float(visible))
    prob[offsets < start] = 0.0  # more than `window` tokens back: gone
    return prob


def recalled_mask(profile: Profile, offsets: np.ndarray, total: int, seed: int, step: int) -> np.ndarray:
    if profile.middle >= 1.0 and profile.length_decay == 0.0 and profile.window >= total:
        return np.ones(len(offsets), dtype=bool)
    draws = np.random.default_rng([profile.seed, seed, step]).random(len(offsets))
    return draws < recall_probability(profile, offsets, total)


def recalls(profile: Profile, offset: int, total: int, *key: object) -> bool:
    """Whether one fact at ``offset`` (the task text, a prompt rule) is recalled now; ``key`` (e.g.
    seed, "rule", step) fixes the draw, independent of ``recalled_mask``'s draws for the facts."""
    prob = float(recall_probability(profile, np.array([offset]), total)[0])
    return prob >= 1.0 or stable_uniform(profile.seed, "recalls", *key) < prob
