"""QGP-SWE-lite (``family.py``, README.md): its declaration, read by shared code without importing the family."""

from pushbench.tasks.base import TARGET, Declaration, Deliverable, MindSpec

FAMILY = Declaration(
    family="pushbench.tasks.swe.family:SweFamily",
    mind=MindSpec("pushbench.tasks.swe.mind:SweMind",
                  {"list_units", "read_file", "search_files", "edit", "run_tests", "submit", "status", "final"}),
    deliverable=Deliverable(("submit",), TARGET, or_any=("edit",)),  # N submits, or any edit in the repository
    roles={"units"},
    evidence="pushbench.replay.recall.evidence:UNITS",
)
