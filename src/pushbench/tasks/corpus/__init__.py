"""Corpus research (``family.py``, README.md): its declaration, read by shared code without importing the family."""

from pushbench.tasks.base import Declaration, Deliverable, MindSpec

FAMILY = Declaration(
    family="pushbench.tasks.corpus.family:CorpusFamily",
    mind=MindSpec("pushbench.tasks.corpus.mind:CorpusMind", {"search", "get_document", "answer"}),
    deliverable=Deliverable(("answer",)),  # an answer
    evidence="pushbench.replay.recall.evidence:CORPUS",
)
