"""Forgetting grows with distance and with context length, as the calibration says (issue 30 item 5).

SimLM answers the calibration probe (``calibration/probe.py``: documents stating one key's value
each, then a question about one of them, given as messages to a ``Mind``) in contexts of 4k, 32k
and 128k tokens, about the document at five depths. For each calibrated profile its accuracy there
must match the fitted curve (``attention.recall_probability`` at the document's token offset)
within sampling error. So it falls with distance where the curve does: every pair of depths the
curve tells apart by 0.1 or more is ordered the same way (``sim/base``'s broad recency: the last
document beats the middle at every length; ``sim/mini``'s and ``sim/pro``'s recency is narrow, so
their middle and their last 500-token document are recalled alike, as fitted); beyond the window a
fact is gone. And it falls with length: the mean over depths drops from 4k to 32k to 128k for
every profile (content term and window), ``sim/mini``'s middle sinks; ``sim/base``'s content term
is nearly gone past about 6k tokens (``analysis.calibration.flat_from``), so inside its window its
recall barely moves with length, as the calibration figure shows.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pushbench.analysis.calibration import flat_from
from pushbench.calibration.probe import TOOLS, ProbeMind, build_context, question
from pushbench.policies.sim import PROFILES
from pushbench.policies.sim.attention import recall_probability

LENGTHS = (4_000, 32_000, 128_000)
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)  # of the documents: 0 the first, 1 the last (right before the question)
DOC_TOKENS = 500
ASKS = 300  # request seeds per point


def accuracy(profile, length: int, depth: float) -> tuple[float, float, int]:
    """(SimLM's accuracy, the calibrated recall, the document's distance from the question in tokens)."""
    context = build_context(max(2, length // DOC_TOKENS), DOC_TOKENS, seed=3)
    position = 1 + round(depth * (len(context.keys) - 1))
    messages = question(context, position)
    mind = ProbeMind(profile, 0)
    right = 0
    for seed in range(ASKS):  # one reading, many requests: only the recall draws change with the seed
        mind.seed = seed
        args = mind.act(messages, TOOLS).call.arguments
        right += (json.loads(args) if isinstance(args, str) else args)["value"] == context.values[position - 1]
    offset = int(mind.reader.facts.array("offset")[position - 1])
    total = mind.reader.total_tokens
    return right / ASKS, float(recall_probability(profile, np.array([offset]), total)[0]), total - offset


@pytest.fixture(scope="module")
def table() -> dict[tuple[str, int, float], tuple[float, float, int]]:
    return {(name, n, d): accuracy(PROFILES[name], n, d) for name in ("mini", "base", "pro")
            for n in LENGTHS for d in DEPTHS}


def test_simlm_recalls_each_fact_as_the_calibrated_curve_says(table) -> None:
    for (name, n, depth), (got, expected, _) in table.items():
        spread = 4 * math.sqrt(expected * (1 - expected) / ASKS) + 0.01
        assert abs(got - expected) <= spread, (name, n, depth, got, expected)
        if expected == 0.0:
            assert got == 0.0  # beyond the window: gone


def test_recall_falls_with_distance_where_the_calibration_says(table) -> None:
    for name in ("mini", "base", "pro"):
        for n in LENGTHS:
            points = [table[(name, n, d)] for d in DEPTHS]
            for a in points:  # every pair the calibrated curve tells apart is ordered the same way
                for b in points:
                    if a[1] - b[1] >= 0.1:
                        assert a[0] > b[0], (name, n, a, b)
            assert points[-1][0] > 0.5  # the last document, right before the question
    for n in LENGTHS:  # base's broad recency: the last document beats the one halfway back at every length
        assert table[("base", n, 1.0)][0] > table[("base", n, 0.5)][0] + 0.1
    # the window: past it a fact is gone, nearer ones are not
    assert table[("mini", 128_000, 0.75)][0] == 0.0 < table[("mini", 32_000, 0.75)][0]
    assert table[("base", 128_000, 0.5)][0] == 0.0 < table[("base", 128_000, 0.75)][0]


def test_recall_falls_with_context_length_where_the_calibration_says(table) -> None:
    def mean(name: str, n: int) -> float:
        return float(np.mean([table[(name, n, d)][0] for d in DEPTHS]))

    for name in ("mini", "base", "pro"):  # over depths: the content term and the window
        assert mean(name, 4_000) > mean(name, 32_000) > mean(name, 128_000), name
    assert table[("mini", 4_000, 0.5)][0] - table[("mini", 32_000, 0.5)][0] > 0.1  # mini's middle sinks
    # base is flat past ~6k tokens (its content term is below 0.05 there): inside its window the
    # middle moves little with length; mini's and pro's content terms keep falling
    assert flat_from(PROFILES["base"]) < 8_000 and flat_from(PROFILES["mini"]) is None and flat_from(PROFILES["pro"]) is None
    assert abs(table[("base", 4_000, 0.5)][1] - table[("base", 32_000, 0.5)][1]) < 0.05
