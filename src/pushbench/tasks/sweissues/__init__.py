"""SWE issues (``family.py``, README.md): its declaration, read by shared code without importing the family."""

from pushbench.tasks.base import Declaration, Deliverable, MindSpec

FAMILY = Declaration(
    family="pushbench.tasks.sweissues.family:SweIssuesFamily",
    mind=MindSpec("pushbench.tasks.sweissues.mind:SweIssuesMind",  # SWE-lite's, one symptom at a time
                  {"list_units", "read_file", "search_files", "edit", "run_tests", "submit", "final"}),
    deliverable=Deliverable(("submit",), or_any=("edit",)),  # the repair submitted, or any edit in the repository
    evidence="pushbench.replay.recall.evidence:UNITS",  # its one issue I01 is the unit
)
