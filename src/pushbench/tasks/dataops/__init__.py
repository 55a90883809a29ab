"""QGP-DataOps-lite (``family.py``, README.md): its declaration, read by shared code without importing the family."""

from pushbench.tasks.base import TARGET, Declaration, Deliverable, MindSpec

FAMILY = Declaration(
    family="pushbench.tasks.dataops.family:DataOpsFamily",
    mind=MindSpec("pushbench.tasks.dataops.mind:DataOpsMind",
                  {"list_units", "inspect", "answer", "edit", "run_checker", "submit", "status", "final"}),
    deliverable=Deliverable(("submit",), TARGET, or_any=("answer", "edit")),  # N submits, or any answer/edit
    roles={"units"},
    evidence="pushbench.replay.recall.evidence:UNITS",
)
