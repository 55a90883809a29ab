"""Prompt rules as guidance: SimLM acts on an instruction only when it recalls it where it sits.

A mind records each rule a prompt states (``guidance.prompt_rules``: the black-box checklist, a
family's objective, a system note) as a fact at the message's offset. At a step the rule is acted on
when that fact is recalled under the step's recall mask and a draw fixed by (seed, rule, step) falls
below the profile's ``follow_guidance`` — the same probability as a controller's instruction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pushbench.policies.sim.attention import stable_uniform


def follows_rule(mind: Any, recalled: np.ndarray, rule_kind: int, rule: str, step: int) -> bool:
    facts = mind.reader.facts
    key = facts.keys.get(rule, -1)
    if key < 0:
        return False
    held = bool((recalled & (facts.array("kind") == rule_kind) & (facts.array("key") == key)).any())
    return held and stable_uniform(mind.seed, "rule", rule, step) < mind.profile.follow_guidance
