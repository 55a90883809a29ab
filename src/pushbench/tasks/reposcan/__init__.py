"""QGP-RepoScan (``family.py``, README.md): its declaration, read by shared code without importing the family."""

from pushbench.tasks.base import Declaration, Deliverable, MindSpec

FAMILY = Declaration(
    family="pushbench.tasks.reposcan.family:RepoScanFamily",
    mind=MindSpec("pushbench.tasks.reposcan.mind:RepoScanMind", {"search", "submit", "status", "final"}),
    deliverable=Deliverable(("submit",)),  # at least one submit of ids
    roles={"paged-search"},
    summary=("repeated_searches",),
    evidence="pushbench.replay.recall.evidence:REPOSCAN",
)
