"""QGP-RepoScan: collect N distinct code locations that satisfy a predicate, via code search.

Three predicate families, each decidable from what a search hit shows:
- ``fixture``: test functions that take a given fixture as a parameter (the signature shows it);
- ``documented``: non-test functions or methods that have a docstring (its first line is shown);
- ``calls``: test functions whose body calls a given API (query-matching body lines show it).
Hidden valid sets come from the AST. The module also holds the family's *reader*: what a careful
model concludes from a hit's visible text, used by the oracle and by SimLM alike.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.codeindex import CodeUnit, load_units, tokenize
from pushbench.search import CodeSearch, search_for
from pushbench.snapshots import snapshot_dir
from pushbench.tasks import register_family
from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.verifier import Verifier

PREDICATES = ("fixture", "documented", "calls")
TOOLS = ["search", "submit", "status", "final"]
# Words a searcher would not add to a query: test boilerplate and English function words.
STOP_TOKENS = set("""test tests testing self cls init py src the and with for from not are has have
    should can does that this into when then than its was were will also only all any get set""".split())


@dataclass(frozen=True)
class Goal:
    """What the objective asks for, as a reader of the objective text understands it."""

    repo: str
    predicate: str
    arg: str
    target: int

    @property
    def seed_query(self) -> str:
        if self.predicate == "documented":
            return "return the"  # words docstrings are made of
        return f"test {self.arg.rstrip('.')}"  # both families ask for test functions


OBJECTIVES = {
    "fixture": "Find {n} distinct test functions in the `{repo}` repository that take the `{arg}` "
               "fixture as a parameter.",
    "documented": "Find {n} distinct functions or methods in the `{repo}` repository that have a "
                  "docstring and are not tests (their names do not start with `test`).",
    "calls": "Find {n} distinct test functions in the `{repo}` repository whose body calls "
             "`{arg}` (any call whose name starts with `{arg}`).",
}
HOW = (" Use search(query, page) to find candidates, submit(ids) to have them checked, status() to "
       "see the verified count, and final(count) when at least {n} are accepted. Identifiers look "
       "like `path/to/file.py::Class.function`, exactly as search shows them.")


def objective_text(goal: Goal) -> str:
    return OBJECTIVES[goal.predicate].format(n=goal.target, repo=goal.repo, arg=goal.arg) + \
        HOW.format(n=goal.target)


def parse_objective(text: str) -> Goal | None:
    """Recover the goal from objective text (what any reader of the prompt can do)."""
    for predicate, template in OBJECTIVES.items():
        pattern = re.escape(template).replace(r"\{n\}", r"(?P<n>\d+)").replace(
            r"\{repo\}", r"(?P<repo>[\w.-]+)").replace(r"\{arg\}", r"(?P<arg>[^`]+)", 1).replace(
            r"\{arg\}", r"(?P=arg)")
        match = re.search(pattern, text)
        if match:
            arg = match.groupdict().get("arg") or ""
            return Goal(match["repo"], predicate, arg, int(match["n"]))
    return None


# --- ground truth from the AST (builder only) -------------------------------------------------

def _calls_prefix(node: ast.AST, prefix: str) -> bool:
    return any(isinstance(n, ast.Call) and ast.unparse(n.func).startswith(prefix) for n in ast.walk(node))


def holds(goal: Goal, unit: CodeUnit) -> bool:
    node = unit.node
    if goal.predicate == "fixture":
        args = node.args.args + node.args.posonlyargs + node.args.kwonlyargs if unit.kind == "function" else []
        return unit.is_test and any(a.arg == goal.arg for a in args)
    if goal.predicate == "documented":
        return unit.kind == "function" and not unit.is_test and unit.doc is not None
    if goal.predicate == "calls":
        return unit.is_test and _calls_prefix(node, goal.arg)
    raise ValueError(f"unknown predicate {goal.predicate!r}")


# --- the reader: conclusions from visible text only -------------------------------------------

_LINE_NO = re.compile(r"^L?(\d+):\s?")
DOC_OPENERS = ('"""', "'''", 'r"""', "r'''")


def judge_hit(goal: Goal, uid: str, lines: list | tuple) -> bool | None:
    """Is this hit valid, judging only by its identifier and snippet? None when undecidable.

    ``lines`` are the snippet's lines, as text or as (line number, text) pairs; numbers let the
    reader tell a docstring (right under the signature) from a string later in the body.
    """
    pairs = tuple((n, t) if isinstance(n, int) else (0, t) for n, t in
                  (line if isinstance(line, (tuple, list)) else (None, line) for line in lines))
    return _judge(goal, uid, pairs)


@lru_cache(maxsize=65_536)
def _judge(goal: Goal, uid: str, lines: tuple[tuple[int, str], ...]) -> bool | None:
    name = uid.rsplit("::", 1)[-1].rsplit(".", 1)[-1]
    text = "\n".join(t for _, t in lines)
    match = re.search(r"\bdef\s+" + re.escape(name) + r"\s*\((.*?)\)\s*(?:->[^:]*)?:", text, re.S)
    if match is None:
        return False  # a class, or a hit whose signature is not shown as this function
    is_test = name.startswith("test")
    if goal.predicate == "fixture":
        params = [p.split(":")[0].split("=")[0].strip(" *\n") for p in match.group(1).split(",")]
        return is_test and goal.arg in params
    if goal.predicate == "documented":
        return not is_test and _docstring_follows(lines, text[: match.end()].count("\n"))
    if goal.predicate == "calls":
        if not is_test:
            return False
        call = re.compile(r"(?<![\w.])" + re.escape(goal.arg) + r"[\w.]*\s*\(")
        return True if call.search(text[match.end():]) else None
    return None


def _docstring_follows(lines: tuple[tuple[int, str], ...], sig_last: int) -> bool:
    """The line shown right after the signature opens a string, and (when numbered) sits directly
    under it rather than further down the body."""
    if sig_last + 1 >= len(lines):
        return False
    number, text = lines[sig_last + 1]
    if not text.lstrip().lower().startswith(DOC_OPENERS):
        return False
    sig_number = lines[sig_last][0]
    return not (number and sig_number) or number - sig_number <= 2


def expansion_terms(goal: Goal, valid_names: Counter[str], used: set[str]) -> list[str]:
    """Follow-up queries a careful searcher forms: the seed plus words common among valid hits."""
    seed = set(tokenize(goal.seed_query))
    ranked = sorted(((-c, t) for t, c in valid_names.items()
                     if t not in seed and t not in STOP_TOKENS and len(t) >= 3 and not t.isdigit()))
    queries = [f"{goal.seed_query} {t}" for _, t in ranked]
    return [q for q in queries if q not in used]


def name_tokens(uid: str) -> list[str]:
    """Words of a hit's function name and module: what a searcher reuses in the next query."""
    path, qual = uid.split("::", 1)
    module = path.rsplit("/", 1)[-1].removesuffix(".py")
    return tokenize(qual.rsplit(".", 1)[-1]) + tokenize(module)


def oracle_steps(goal: Goal, search: CodeSearch) -> int:
    """Tool calls a reader with perfect judgment and memory needs: natural queries, pages in rank
    order, one submit per page that has new valid hits, then final."""
    found: set[str] = set()
    names: Counter[str] = Counter()
    used: set[str] = set()
    steps = 0
    query: str | None = goal.seed_query
    while query is not None:
        used.add(query)
        page_no, pages = 1, 1
        while page_no <= pages and len(found) < goal.target:
            page = search.page(query, page_no)
            pages, steps = page.pages, steps + 1
            new = []
            for hit in page.hits:
                if judge_hit(goal, hit.uid, hit.snippet) and hit.uid not in found:
                    new.append(hit.uid)
                    names.update(name_tokens(hit.uid))
            if new:
                found.update(new)
                steps += 1
            page_no += 1
        if len(found) >= goal.target:
            return steps + 1
        options = expansion_terms(goal, names, used)
        query = options[0] if options else None
    raise ValueError(f"{goal}: natural queries reach only {len(found)} valid items")


@register_family("reposcan")
class RepoScanFamily:
    name: str

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]:
        tasks = []
        for repo, repo_params in sorted(params["repos"].items()):
            tree = snapshot_dir(repo, snapshot_root or config.SNAPSHOT_SRC)
            units = load_units(tree)
            search = search_for(tree, params["max_results"], params["page_size"])
            for predicate in PREDICATES:
                arg = "" if predicate == "documented" else repo_params[predicate]
                valid = sorted(u.uid for u in units if holds(Goal(repo, predicate, arg, 0), u))
                if len(valid) < params["min_valid"]:
                    raise ValueError(f"{repo}/{predicate}: {len(valid)} valid items < {params['min_valid']}")
                for target in params["targets"]:
                    tasks.append(self._task(Goal(repo, predicate, arg, target), valid, search, params))
        return tasks

    def _task(self, goal: Goal, valid: list[str], search: CodeSearch, params: dict[str, Any]) -> BuiltTask:
        budget = int(params["budgets"][goal.target])
        task_id = f"reposcan-{goal.repo}-{goal.predicate}-n{goal.target:03d}"
        objective = objective_text(goal)
        if parse_objective(objective) != goal:
            raise AssertionError(f"{task_id}: objective text does not carry its goal")
        steps = oracle_steps(goal, search)
        if steps > params["max_oracle_fraction"] * budget:
            raise ValueError(f"{task_id}: oracle needs {steps} steps, over "
                             f"{params['max_oracle_fraction']:.0%} of the budget {budget}")
        spec = TaskSpec(task_id=task_id, family="reposcan", repo=goal.repo, predicate=goal.predicate,
                        objective=objective, target=goal.target, budget=budget, tools=TOOLS,
                        oracle_steps=steps,
                        settings={"page_size": params["page_size"], "max_results": params["max_results"],
                                  "max_submit": params["max_submit"], "predicate_arg": goal.arg})
        return BuiltTask(spec=spec, hidden={"task_id": task_id, "valid": valid})

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> Any:
        from pushbench.tools.reposcan import RepoScanEnv

        tree = snapshot_dir(task.repo, snapshot_root or config.SNAPSHOT_SRC)
        search = search_for(tree, task.settings["max_results"], task.settings["page_size"])
        verifier = Verifier.for_item_set("reposcan", task.task_id, task.target, hidden_root, sink=sink)
        return RepoScanEnv(task, search, verifier)
