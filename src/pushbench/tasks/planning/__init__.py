"""Constrained planning (``family.py``, README.md): its declaration, read by shared code without importing the family."""

from pushbench.tasks.base import Declaration, Deliverable, MindSpec

FAMILY = Declaration(
    family="pushbench.tasks.planning.family:PlanningFamily",
    mind=MindSpec("pushbench.tasks.planning.mind:PlanningMind",
                  {"add", "apply_coupon", "check", "coupons", "details", "remove", "remove_coupon", "route", "search",
                   "submit", "user_info"}),
    deliverable=Deliverable(("submit",)),  # a submitted cart or plan
    evidence="pushbench.replay.recall.evidence:PLANNING",
)
