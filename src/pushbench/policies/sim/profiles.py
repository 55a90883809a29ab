"""SimLM profiles: plain behavioural parameters, each with the reason it has its value.

None of these is fitted to a paper's numbers. ``mini``/``base``/``pro`` differ the way small,
mid and strong chat models differ in long-context use; ``perfect`` is the reference upper bound
(full recall, noiseless reader, no fatigue) that must solve every task within budget.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Profile:
    name: str
    seed: int
    window: int  # tokens visible at all; older text is gone
    recency_tokens: float  # recall decays as exp(-distance / recency_tokens)
    recall_floor: float  # recall within the window never drops below this
    middle_dip: float  # extra loss for facts in the middle of a long context (lost in the middle)
    long_context: int  # context length at which the middle dip reaches full strength
    false_positive: float  # reader calls an invalid hit valid
    false_negative: float  # reader misses a valid hit
    conflate: float  # counting from memory, a rejected/duplicate verdict is taken as progress
    patience: int  # steps without recalled progress before giving up
    fatigue: float  # patience shrinks by this fraction as the context fills the window
    follow_guidance: float  # obeys an explicit controller instruction
    claim_on_stop: float  # when giving up, calls final(believed count) rather than just stopping
    check_status: float  # calls status() before claiming completion
    pages_per_submit: int  # search pages read before submitting the candidates found
    skip_checker: float  # work units: submits right after an edit without running the checker
    # --- work-unit mechanisms (issue 19 items 3-5); values in WORK_UNIT_PRIORS below ---
    pass_as_done: float = 0.0  # work units: takes a passing checker run for the unit done (no submit)


PROFILES: dict[str, Profile] = {
    "mini": Profile(
        name="mini", seed=101,
        window=32_000,  # small models: short usable context
        recency_tokens=5_000,  # recall fades within a few tool results
        recall_floor=0.15, middle_dip=0.45, long_context=16_000,
        false_positive=0.08, false_negative=0.12,  # sloppier judgment of snippets
        conflate=0.5,  # often counts submissions as successes
        patience=8, fatigue=0.6,
        follow_guidance=0.7, claim_on_stop=0.8, check_status=0.1,
        pages_per_submit=2, skip_checker=0.5),
    "base": Profile(
        name="base", seed=202,
        window=64_000, recency_tokens=12_000,
        recall_floor=0.3, middle_dip=0.3, long_context=32_000,
        false_positive=0.04, false_negative=0.06,
        conflate=0.3, patience=12, fatigue=0.4,
        follow_guidance=0.85, claim_on_stop=0.7, check_status=0.3,
        pages_per_submit=2, skip_checker=0.3),
    "pro": Profile(
        name="pro", seed=303,
        window=128_000, recency_tokens=30_000,  # strong long-context recall
        recall_floor=0.5, middle_dip=0.15, long_context=64_000,
        false_positive=0.02, false_negative=0.03,
        conflate=0.1, patience=20, fatigue=0.2,
        follow_guidance=0.95, claim_on_stop=0.6, check_status=0.6,
        pages_per_submit=2, skip_checker=0.1),
    "perfect": Profile(
        name="perfect", seed=404,
        window=10**9, recency_tokens=float("inf"),
        recall_floor=1.0, middle_dip=0.0, long_context=10**9,
        false_positive=0.0, false_negative=0.0,
        conflate=0.0, patience=10**6, fatigue=0.0,
        follow_guidance=1.0, claim_on_stop=1.0, check_status=0.0,
        pages_per_submit=1, skip_checker=0.0),
}


# --- work-unit mechanisms (issue 19 items 3-5): documented priors, never fitted ----------------------
# Both apply only when the mind does not recall (or does not follow) the objective's rule that a
# unit counts only if its check passes at submit (guidance.RULE_UNIT_VERIFIED); skip_checker above is
# read the same way. The values order the profiles like the rest of the table: weaker models lose
# the instruction's point more often.
WORK_UNIT_PRIORS: dict[str, dict[str, float]] = {
    "mini": {"pass_as_done": 0.4},  # small models often stop at "the check passes" and move on
    "base": {"pass_as_done": 0.2},  # mid models mostly submit, sometimes forget after a pass
    "pro": {"pass_as_done": 0.1},  # strong models rarely treat a pass as a submit
    "perfect": {"pass_as_done": 0.0},  # the reference bound never does
}
PROFILES = {name: replace(p, **WORK_UNIT_PRIORS.get(name, {})) for name, p in PROFILES.items()}


def get_profile(name: str, **overrides: object) -> Profile:
    key = name.removeprefix("sim/").removeprefix("sim-")
    if key not in PROFILES:
        raise KeyError(f"unknown SimLM profile {name!r}; known: {', '.join('sim/' + p for p in PROFILES)}")
    return replace(PROFILES[key], **overrides) if overrides else PROFILES[key]
