"""QGP-Rows, the worked example family (``family.py``, README.md): its declaration, read by shared
code without importing the family."""

from pushbench.tasks.base import Declaration, Deliverable

FAMILY = Declaration(
    family="pushbench.tasks.rows.family:RowsFamily",
    mind=None,  # SimLM has no mind for this family: sim/* models refuse its tasks
    deliverable=Deliverable(("submit",)),
    summary=("status_calls",),
    evidence="pushbench.replay.recall.evidence:ROWS",
)
