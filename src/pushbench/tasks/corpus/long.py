"""The long-horizon split of corpus: chained questions of 8 parts (issue 30; params ``corpus.long``).

A long question asks for one API object per part, all defined in one module. Part 1 names the
module by the start of its docstring (a ``module`` clue); every later part replaces that clue by
``module_of``: "it is defined in the module that defines the answer to part k-1", so its search
starts from what the earlier part found (clue 1 finds A; A's docstring document names the module
in which B is searched). Each part is a question of the short kind (``questions.compose``: weak
clues, unique together over the whole corpus, every evidence document among the top hits of the
search a careful reader runs for it); ``module_of`` fits exactly what the module clue it replaces
fits, so each part stays unique. The answer names every part's object, in order, in one call at
the end: what was found early is needed then.

Length by need: per module a search and an open for its quote; per part a head search, the
candidates' docstrings opened in turn, and a search and opens per changelog or page clue. A search
shows its ``top_k`` (40) hits with their whole text, as a search API returning contents does: about
3.5k tokens, most of a run's transcript. Each question is played by sim/perfect at build time
(``perfect.py``): it is kept only if answered correctly in [``min_oracle_steps``,
``max_oracle_fraction`` x budget] tool calls, the path ``oracle_steps`` records, with a final
transcript of at least ``min_transcript_tokens``; the build fails when fewer than ``tasks`` pass.
"""

from __future__ import annotations

import random
from typing import Any

from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.tasks.corpus.answers import normalise_parts
from pushbench.tasks.corpus.index import CorpusIndex
from pushbench.tasks.corpus.questions import Catalogue, Question, compose, names_answer
from pushbench.tasks.corpus.perfect import perfect_path
from pushbench.tasks.corpus.reader import Clue

OBJECTIVE = (
    "Find one Python API object (a function, class or method of {projects}) for each of the {m} parts "
    "below: the one that meets every clue of its part. Each clue is shown by a different document of "
    "the corpus; a clue may refer to the answer of an earlier part.\n{parts}\n"
    "Use search(query) to find documents (the top {top_k}, each with its id, title and text, up to its "
    "first {snippet_chars} characters), get_document(doc_id, page) to read one, and answer(text, "
    "confidence) once, which ends the episode: the {m} objects' dotted names in part order, separated by '; ' (like a.b.f; a.b.C.g), each "
    "exactly as the title of its docstring document shows it, and your confidence from 0 to 1 that all "
    "are right. You have {budget} actions.")


def objective_text(parts: list[list[str]], top_k: int, budget: int, projects: str, snippet_chars: int) -> str:
    lines, k = [], 0
    for p, clues in enumerate(parts, 1):
        lines.append(f"Part {p}:")
        for text in clues:
            k += 1
            lines.append(f"- clue:{k}: {text}")
    return OBJECTIVE.format(projects=projects, m=len(parts), parts="\n".join(lines), top_k=top_k, budget=budget,
                            snippet_chars=f"{snippet_chars:,}")


def module_question(cat: Catalogue, index: CorpusIndex, name: str, params: dict[str, Any], seed: int) -> Question | None:
    """A question of the short kind about ``name`` with a module clue among its clues, or None."""
    for n in (int(c) for c in params["clue_counts"]):
        for trial in range(int(params["trials"])):
            q = compose(cat, index, cat.entities[name], n, params, random.Random(f"{seed}:corpus-long:{name}:{n}:{trial}"))
            if q and any(o.clue.kind == "module" for o in q.clues):
                return q
    return None


def module_pool(cat: Catalogue, index: CorpusIndex, params: dict[str, Any], seed: int) -> dict[str, list[Question]]:
    """Per module with enough of them, the questions (with a module clue) of its entities."""
    need = max(int(k) for k in params["per_module"])
    pool = {}
    for module in sorted(m for m, names in cat.by_module.items() if len(names) >= need):
        names = sorted(cat.by_module[module])
        random.Random(f"{seed}:corpus-long:{module}").shuffle(names)
        made = [q for name in names[: int(params["entities_per_module"])]
                if (q := module_question(cat, index, name, params, seed))]
        if len(made) >= need:
            pool[module] = made
    return pool


def build(cat: Catalogue, index: CorpusIndex, params: dict[str, Any], seed: int, projects: str) -> list[BuiltTask]:
    """The long tasks: ``params`` is ``corpus`` with its ``long`` block merged over it. Each takes
    ``per_module`` parts from each of two modules, interleaved; a module's first part names it by its
    docstring's start, its later parts by ``module_of`` that first part (early evidence, needed late)."""
    rng = random.Random(f"{seed}:corpus-long")
    budget, top_k = int(params["budget"]), int(params["top_k"])
    lo, hi = int(params["min_oracle_steps"]), float(params["max_oracle_fraction"]) * budget
    pool = module_pool(cat, index, params, seed)
    pairs = [(a, b) for a in sorted(pool) for b in sorted(pool) if a < b]
    rng.shuffle(pairs)
    tasks: list[BuiltTask] = []
    for a, b in pairs * int(params["draws"]):
        if len(tasks) >= int(params["tasks"]):
            break
        k = [int(x) for x in params["per_module"]]
        qa, qb = rng.sample(pool[a], k[0]), rng.sample(pool[b], k[1])
        parts = [q for pair in zip(qa, qb) for q in pair]
        modules = [m for pair in zip([a] * k[0], [b] * k[1]) for m in pair]
        first = {a: 1, b: 2}
        texts = [[o.clue.text() if o.clue.kind != "module" or p + 1 == first[modules[p]]
                  else Clue("module_of", str(first[modules[p]])).text() for o in q.clues]
                 for p, q in enumerate(parts)]
        objective = objective_text(texts, top_k, budget, projects, int(params["snippet_chars"]))
        if any(names_answer(objective, q.entity) for q in parts):
            continue
        task = _task(len(tasks) + 1, modules, parts, texts, objective, params)
        steps, correct, tokens = perfect_path(task.spec, task.hidden["valid"][0], index,
                                              set(task.hidden["evidence"].values()), seed, int(hi))
        if correct and lo <= steps <= hi and tokens >= int(params["min_transcript_tokens"]):
            tasks.append(BuiltTask(spec=task.spec.model_copy(update={"oracle_steps": steps}), hidden=task.hidden))
    if len(tasks) < int(params["tasks"]):
        raise RuntimeError(f"corpus long split: only {len(tasks)} of {params['tasks']} questions fit the perfect "
                           "path's bounds; raise draws or loosen the settings")
    return tasks


def _task(i: int, modules: list[str], parts: list[Question], texts: list[list[str]], objective: str,
          params: dict[str, Any]) -> BuiltTask:
    task_id = f"corpus-long-{i:02d}-p{len(parts)}"
    clues = [t for part in texts for t in part]
    kinds = ["module_of" if t.startswith("it is defined in the module that defines") else o.clue.kind
             for t, o in zip(clues, [o for q in parts for o in q.clues])]
    part_of = [p for p, part in enumerate(texts, 1) for _ in part]
    settings = {"split": "long", "entity": "api", "clues": clues, "clue_kinds": kinds, "n_clues": len(clues),
                "n_parts": len(parts), "part_of": part_of, "page_chars": params["page_chars"],
                "snippet_chars": params["snippet_chars"], "top_k": params["top_k"]}
    spec = TaskSpec(task_id=task_id, family="corpus", repo="+".join(params["projects"]), predicate="long+" + "+".join(kinds),
                    objective=objective, target=1, budget=int(params["budget"]), tools=["answer", "get_document", "search"],
                    oracle_steps=0, settings=settings)  # set from the measured path
    answer = "; ".join(q.entity.name for q in parts)
    evidence = [o.evidence for q in parts for o in q.clues]
    fits = [len(o.fits) for q in parts for o in q.clues]
    hidden = {"task_id": task_id, "answer": answer, "parts": [q.entity.name for q in parts], "modules": modules,
              "valid": [normalise_parts(answer)],
              "evidence": {f"clue:{k}": e for k, e in enumerate(evidence, 1)},
              "clue_fits": {f"clue:{k}": n for k, n in enumerate(fits, 1)},
              "hard_negatives": [{**n, "part": str(p)} for p, q in enumerate(parts, 1) for n in q.negatives]}
    return BuiltTask(spec=spec, hidden=hidden)
