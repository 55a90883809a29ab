"""Corpus research (a BrowseComp-Plus analogue): name the one API object (or release) of the pinned
snapshots that meets 2-4 clues, each shown by a different document of a fixed corpus, with
search(query), get_document(doc_id, page) and answer(text, confidence).

The corpus is the DVC stage ``corpus`` (``build.py``: ``data/corpus/documents.jsonl``); the
questions come from ``questions.py`` and ``releases.py`` (uniqueness proven there). Answers, evidence documents and
hard negatives go to ``data/hidden/corpus/`` only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from pushbench import config
from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.tasks.corpus.answers import normalise
from pushbench.verifier import Verifier, load_hidden

TOOLS = ["answer", "get_document", "search"]
OBJECTIVE = (
    "Find the one Python API object (a function, class or method of {projects}) that "
    "meets every clue below; each clue is shown by a different document of the corpus.\n{clues}\n"
    "Use search(query) to find documents (the top {top_k}, each with its id, title and the start of its "
    "text), get_document(doc_id, page) to read one, and answer(text, confidence) once, which ends the "
    "episode: the object's dotted name exactly as the title of its docstring document shows it (like "
    "package.module.Class.method), and your confidence from 0 to 1 that it is right. "
    "You have {budget} actions.")


RELEASE_OBJECTIVE = (
    "Find the one release of {projects} that meets every clue below; each clue is shown "
    "by a different changelog item of the corpus.\n{clues}\n"
    "Use search(query) to find documents (the top {top_k}, each with its id, title and the start of its "
    "text), get_document(doc_id, page) to read one, and answer(text, confidence) once, which ends the "
    "episode: the project and version exactly as its changelog item titles show them (like "
    "project 1.2.3), and your confidence from 0 to 1 that it is right. You have {budget} actions.")


def corpus_path() -> Path:
    from pushbench.tasks.corpus.build import CORPUS_DIR, DOCUMENTS

    return CORPUS_DIR / DOCUMENTS


def objective_text(clues: list[str], top_k: int, budget: int, entity: str = "api",
                   projects: list[str] | None = None) -> str:
    """The question; it names the configured projects (params ``corpus.projects``), in their order."""
    lines = "\n".join(f"- clue:{k}: {text}" for k, text in enumerate(clues, 1))
    template = RELEASE_OBJECTIVE if entity == "release" else OBJECTIVE
    return template.format(clues=lines, top_k=top_k, budget=budget, projects=project_list(projects))


def project_list(projects: list[str] | None = None) -> str:
    """``["requests", "flask", "pytest"]`` -> "requests, flask or pytest"."""
    names = list(projects if projects is not None else config.params("corpus.projects"))
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def entity_kind(question: Any) -> str:
    from pushbench.tasks.corpus.releases import Release

    return "release" if isinstance(question.entity, Release) else "api"


def interleave(questions: list[Any]) -> list[Any]:
    """Questions in turns of clue count and entity kind (4 api, 4 release, 3 api, ...), so any prefix
    of the manifest mixes them."""
    groups: dict[tuple[int, str], list[Any]] = {}
    for q in questions:
        groups.setdefault((len(q.clues), entity_kind(q)), []).append(q)
    order = sorted(groups, reverse=True)
    return [q for rank in range(max(map(len, groups.values()), default=0))
            for n in order if rank < len(groups[n]) for q in [groups[n][rank]]]


class CorpusFamily:
    name = "corpus"

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]:
        """Questions over the built corpus (``snapshot_root`` is unused: the corpus stage read it)."""
        from pushbench.tasks.corpus.build import read_corpus
        from pushbench.tasks.corpus.index import index_for
        from pushbench.tasks.corpus.questions import generate
        from pushbench.tasks.corpus.questions import names_answer
        from pushbench.tasks.corpus.releases import names_release

        docs = read_corpus(corpus_path())
        index = index_for(corpus_path(), docs)
        seed = int(params.get("seed", config.params("seed")))
        tasks = []
        projects = list(params["projects"])
        made = generate(docs, index, params, seed, objective_text([], 5, 100, projects=projects),
                        objective_text([], 5, 100, "release", projects))
        for i, q in enumerate(interleave(made), 1):
            clues = [o.clue.text() for o in q.clues]
            kinds = [o.clue.kind for o in q.clues]
            budget = int(params["budget"])
            entity = entity_kind(q)
            objective = objective_text(clues, int(params["top_k"]), budget, entity, projects)
            if names_release(objective, q.entity) if entity == "release" else names_answer(objective, q.entity):
                raise AssertionError(f"question {i} names its answer")
            task_id = f"corpus-{i:03d}-c{len(clues)}"
            settings = {"entity": entity, "clues": clues, "clue_kinds": kinds, "n_clues": len(clues),
                        "page_chars": params["page_chars"], "snippet_chars": params["snippet_chars"],
                        "top_k": params["top_k"]}
            spec = TaskSpec(task_id=task_id, family="corpus", repo="+".join(params["projects"]),
                            predicate="+".join(kinds), objective=objective, target=1, budget=budget,
                            tools=TOOLS, oracle_steps=2 * len(clues) + 1, settings=settings)
            hidden = {"task_id": task_id, "answer": q.entity.name, "valid": [normalise(q.entity.name)],
                      "evidence": {f"clue:{k}": o.evidence for k, o in enumerate(q.clues, 1)},
                      "clue_fits": {f"clue:{k}": len(o.fits) for k, o in enumerate(q.clues, 1)},
                      "hard_negatives": q.negatives}
            tasks.append(BuiltTask(spec=spec, hidden=hidden))
        if params.get("long"):  # the long-horizon split (long.py), in the same manifest
            from pushbench.tasks.corpus import long
            from pushbench.tasks.corpus.questions import Catalogue

            tasks += long.build(Catalogue(docs), index, {**params, **params["long"]}, seed, project_list(projects))
        return tasks

    def episode_metrics(self, events: list[dict[str, Any]], task: TaskSpec) -> dict[str, Any]:
        """Evidence recall, search calls, documents opened, answer confidence and its calibration error;
        for a long question also ``parts_correct``, the share of its parts answered right."""
        calls = [e for e in events if e["kind"] == "call" and e["ok"]]
        opened = {(e.get("info") or {}).get("doc_id") for e in calls if e["tool"] == "get_document"}
        evidence = {(e.get("info") or {}).get("doc_id") for e in calls
                    if e["tool"] == "get_document" and (e.get("info") or {}).get("evidence")}
        answer = next((e.get("info") or {} for e in calls if e["tool"] == "answer"), None)
        n_evidence = int(task.settings["n_clues"])
        confidence = answer.get("confidence") if answer else None
        correct = bool(answer and answer.get("correct"))
        parts = int(task.settings.get("n_parts", 0))
        long = {"parts_correct": round(int(answer.get("parts_correct", 0)) / parts, 6) if answer else 0.0} if parts else {}
        return {"answered": answer is not None, "n_clues": n_evidence, **long,
                "search_calls": sum(1 for e in calls if e["tool"] == "search"),
                "documents_opened": len(opened - {None}),
                "evidence_recall": round(len(evidence - {None}) / n_evidence, 6),
                "confidence": confidence,
                "calibration_error": round(abs(float(cast(float, confidence)) - float(correct)), 6) if answer else None}

    def warm(self, tasks: list[TaskSpec]) -> None:
        """Build the corpus index (the runner, before forking)."""
        _index()

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> Any:
        from pushbench.tasks.corpus.env import CorpusEnv

        hidden = load_hidden("corpus", task.task_id, hidden_root)
        valid = frozenset(hidden["valid"])
        verifier = Verifier(task.task_id, task.target, valid.__contains__, sink=sink)
        parts = tuple(normalise(p) for p in hidden.get("parts", ()))
        return CorpusEnv(task, verifier, _index(), set(hidden["evidence"].values()), parts)


def _index() -> Any:
    from pushbench.tasks.corpus.build import read_corpus
    from pushbench.tasks.corpus.index import index_for

    index = _INDEX.get("index")
    if index is None:
        index = _INDEX["index"] = index_for(corpus_path(), read_corpus(corpus_path()))
    return index


_INDEX: dict[str, Any] = {}  # the process's index (building it takes about 2 s)
