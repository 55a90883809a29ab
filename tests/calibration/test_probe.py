"""The recall probe: SimLM answers a position question from what its reader recalls."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pushbench.calibration.probe import TOOLS, ProbeMind, build_context, layout, question, run_probe
from pushbench.policies.sim.attention import recall_probability
from pushbench.policies.sim.profiles import PROFILES


def test_simlm_answers_the_probe_from_the_messages() -> None:
    context = build_context(10, 147, 1)
    turn = ProbeMind(PROFILES["perfect"], 0).act(question(context, 4), TOOLS)
    assert turn.call is not None and turn.call.name == "answer"
    assert '"value": "%s"' % context.values[3] in turn.call.arguments  # full recall: always right


def test_a_forgotten_document_gets_no_answer() -> None:
    profile = replace(PROFILES["base"], primacy=0.0, recency=0.0, middle=0.0)
    context = build_context(10, 147, 1)
    assert run_probe(profile, context, 5, 10, seed=1) == 0.0
    turn = ProbeMind(profile, 0).act(question(context, 5), TOOLS)
    assert '"unknown"' in turn.call.arguments


def test_probe_accuracy_matches_the_recall_probability() -> None:
    profile = PROFILES["mini"]
    context = build_context(20, 147, 2)
    lay = layout(context, profile)
    assert np.all(np.diff(lay.offsets) > 100) and lay.total > lay.offsets[-1]  # one message per document
    expected = recall_probability(profile, lay.offsets, lay.total)
    for position in (1, 10, 20):
        acc = run_probe(profile, context, position, 400, seed=position)
        assert acc == pytest.approx(expected[position - 1], abs=0.08)


def test_bad_probe_requests_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="outside 1..10"):
        question(build_context(10, 147, 1), 11)
    with pytest.raises(ValueError, match="at least 1 document"):
        build_context(0, 147, 1)
