"""The corpus README's figures, rendered from the build (``data/corpus/documents.jsonl``, the corpus
manifest and, for the worked examples' answers, their hidden files, as the tests read them) into
the README's generated blocks (``pushbench.tasks.readme_blocks``). No agent-facing code imports it.

Blocks: ``documents`` (documents per source kind and project), ``questions`` (the short questions
per entity kind and clue count), ``long`` (the long split: parts, clues, sim/perfect's build-time
path) and ``question <task id>`` (one question's clues, evidence and fit counts).
"""

from __future__ import annotations

import statistics
from collections import Counter
from functools import lru_cache
from typing import Any

from pushbench.tasks.base import TaskSpec, task_split

KINDS = {"docs": "documentation page sections", "docstring": "docstrings", "module": "module docstrings",
         "changelog": "changelog items", "readme": "README / CONTRIBUTING sections",
         "config": "configuration file sections"}
ENTITIES = {"api": "API objects", "release": "releases"}


@lru_cache(maxsize=1)
def _documents() -> tuple[Any, ...]:
    from pushbench.tasks.corpus.build import read_corpus
    from pushbench.tasks.corpus.family import corpus_path

    if not corpus_path().is_file():
        raise FileNotFoundError("no built corpus: run the `corpus` stage first")
    return tuple(read_corpus(corpus_path()))


@lru_cache(maxsize=1)
def _tasks() -> tuple[TaskSpec, ...]:
    from pushbench.tasks import load_tasks, manifest_path

    if not manifest_path("corpus").is_file():
        raise FileNotFoundError("no corpus manifest: run the `manifests@corpus` stage first")
    return tuple(load_tasks("corpus"))


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def _n(value: int) -> str:
    return f"{value:,}"


def documents_table(docs: tuple[Any, ...] | list[Any]) -> str:
    projects = list(dict.fromkeys(d.project for d in docs))
    counts = Counter((d.kind, d.project) for d in docs)
    kinds = [k for k in KINDS if any(kind == k for kind, _ in counts)]
    kinds += sorted({kind for kind, _ in counts} - set(kinds))
    lines = [_row(["documents (kind)", *projects, "all"]), _row(["---", *["---:"] * (len(projects) + 1)])]
    for kind in kinds:
        per = [counts[(kind, p)] for p in projects]
        lines.append(_row([f"{KINDS.get(kind, kind)} (`{kind}`)", *map(_n, per), _n(sum(per))]))
    totals = [sum(counts[(k, p)] for k in kinds) for p in projects]
    lines.append(_row(["**all**", *map(_n, totals), f"**{_n(len(docs))}**"]))
    return "\n".join(lines)


def questions_table(tasks: tuple[TaskSpec, ...] | list[TaskSpec]) -> str:
    counts = Counter((t.settings["entity"], int(t.settings["n_clues"])) for t in tasks)
    sizes = sorted({n for _, n in counts})
    entities = [e for e in ENTITIES if any(kind == e for kind, _ in counts)]
    lines = [_row(["questions about", *[f"{n} clues" for n in sizes], "all"]),
             _row(["---", *["---:"] * (len(sizes) + 1)])]
    for entity in entities:
        per = [counts[(entity, n)] for n in sizes]
        lines.append(_row([ENTITIES[entity], *map(_n, per), _n(sum(per))]))
    lines.append(_row(["**all**", *[_n(sum(counts[(e, n)] for e in entities)) for n in sizes], f"**{_n(len(tasks))}**"]))
    return "\n".join(lines)


def long_table(tasks: tuple[TaskSpec, ...] | list[TaskSpec]) -> str:
    """The long split: questions, parts, clues and chained clues per question, and sim/perfect's
    path (tool calls) as the build played it (``oracle_steps``)."""
    long = [t for t in tasks if task_split(t) == "long"]
    if not long:
        return "No long questions in the manifest."

    def spread(values: list[int]) -> str:
        return f"{statistics.median(values):g} ({min(values)}–{max(values)})"

    lines = [_row(["long questions", "parts", "clues (median, range)", "chained clues (`module_of`)",
                   "sim/perfect tool calls at build (median, range)", "budget"]),
             _row(["---:", "---:", "---:", "---:", "---:", "---:"]),
             _row([_n(len(long)), spread([int(t.settings["n_parts"]) for t in long]),
                   spread([int(t.settings["n_clues"]) for t in long]),
                   spread([t.settings["clue_kinds"].count("module_of") for t in long]),
                   spread([t.oracle_steps for t in long]), spread([t.budget for t in long])])]
    return "\n".join(lines)


def question_table(task: TaskSpec, hidden: dict[str, Any], docs: tuple[Any, ...] | list[Any]) -> str:
    """One question: its answer, and per clue its text, evidence document and the entities it fits."""
    titles = {d.id: d.title for d in docs}
    lines = [f"Answer `{hidden['answer']}`.", "",
             _row(["clue", "text", "evidence document", "its title", "entities it fits"]),
             _row(["---", "---", "---", "---", "---:"])]
    for k, text in enumerate(task.settings["clues"], 1):
        doc = hidden["evidence"][f"clue:{k}"]
        lines.append(_row([k, text, f"`{doc}`", f"`{titles[doc]}`", _n(hidden["clue_fits"][f"clue:{k}"])]))
    negatives = ", ".join(f"`{n['entity']}` (misses {n['misses']})" for n in hidden["hard_negatives"])
    lines += ["", f"Hard negatives: {negatives}." if negatives else "Hard negatives: none."]
    return "\n".join(lines)


def block(name: str, arg: str | None = None) -> str:
    from pushbench.tasks.readme_blocks import UnknownBlock
    from pushbench.verifier import load_hidden

    if name == "documents" and arg is None:
        return documents_table(_documents())
    if name == "questions" and arg is None:
        return questions_table([t for t in _tasks() if task_split(t) == "short"])
    if name == "long" and arg is None:
        return long_table(_tasks())
    if name == "question" and arg is not None:
        task = next((t for t in _tasks() if t.task_id == arg), None)
        if task is None:
            raise UnknownBlock(f"corpus README: no task {arg!r} in the corpus manifest")
        return question_table(task, load_hidden("corpus", arg), _documents())
    raise UnknownBlock(f"corpus README: unknown block {name!r}{f' {arg!r}' if arg else ''}")
