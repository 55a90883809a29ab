"""The RepoScan reader: what a careful model concludes from visible text alone.

The objective's goal (``parse_objective``), whether a search hit is valid (``judge_hit``) and which
words a searcher would try next (``expansion_terms``). The oracle (``family.oracle_steps``) and
SimLM's RepoScan mind both use it; neither sees the hidden valid sets.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from pushbench.tasks.reposcan.codeindex import tokenize

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
    return list(tokenize(qual.rsplit(".", 1)[-1]) + tokenize(module))
