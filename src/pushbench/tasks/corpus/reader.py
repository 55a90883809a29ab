"""What a careful reader concludes from corpus text: clue sentences, and whether a document shows
that a candidate entity meets a clue. The question generator proves uniqueness with these rules
and SimLM's mind applies them (with profile noise) to documents it has read, so the two agree.

Clue kinds (each clue's evidence is one document, every clue of a question a different one):

- ``terms``: a docstring document of the entity uses two given words;
- ``param``: the entity's signature (first line of its docstring document) has a given parameter;
- ``module``: the entity is defined in the module whose docstring begins with a given quote;
- ``changelog``: a changelog item of a given project, released in a given year, names it in code;
- ``page``: a given project's documentation page names it in code (or an ``auto*`` directive);
- ``module_of`` (the long split, ``long.py``): it is defined in the module that defines the answer
  to an earlier part of the question (met as ``module`` is, once that answer's module is known).

"Names it" means its last name component appears as an identifier inside a code span
(````x```` / ```x```, roles included) or an ``.. auto*::`` directive, never as a plain word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

WORD = re.compile(r"[a-z][a-z]{3,}")
_CODE = re.compile(r"`+([^`\n]+)`+")
_AUTO = re.compile(r"^\.\. auto\w+:: (\S+)", re.M)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r" \(part \d+ of \d+\)$")
DOCSTRING_TITLE = re.compile(r"^(\S+) \((function|class|method) docstring\)$")
MODULE_TITLE = re.compile(r"^(\S+) \(module docstring\)$")
CHANGELOG_TITLE = re.compile(r"^(\w+) (\S+) changelog \(released (\d{4})-\d\d-\d\d\), item \d+$")
DOCS_TITLE = re.compile(r"^(\w+) docs: (.+?)(?: > .*)?$")
MODULE_LINE = re.compile(r"^module: (\S+)$", re.M)

TEMPLATES = {
    "terms": 'a docstring document of it uses the words "{a}" and "{b}"',
    "param": 'its signature has a parameter named "{a}"',
    "module": 'it is defined in the module whose docstring begins "{a}"',
    "changelog": "a {a} changelog item of a release from {b} names it in code",
    "page": 'the {a} documentation page titled "{b}" names it in code',
    "item_terms": 'one of its changelog items uses the words "{a}" and "{b}"',
    "item_names": 'one of its changelog items names "{a}" in code',
    "module_of": "it is defined in the module that defines the answer to part {a}",  # long split: a chained clue
}
RELEASE_KINDS = ("item_terms", "item_names")  # clues about a release (answer: "project version")
HEAD_KINDS = ("terms", "param", *RELEASE_KINDS)  # clues searched first, without a candidate
_PARSE = {kind: re.compile("^" + re.escape(t).replace(r"\{a\}", "(.+?)").replace(r"\{b\}", "(.+?)") + "$")
          for kind, t in TEMPLATES.items()}
CLUE_LINE = re.compile(r"^- (clue:\d+): (.+)$")


@dataclass(frozen=True)
class Clue:
    kind: str
    a: str
    b: str = ""

    def text(self) -> str:
        return TEMPLATES[self.kind].format(a=self.a, b=self.b)


def parse_clue(text: str) -> Clue | None:
    for kind, pattern in _PARSE.items():
        if m := pattern.match(text.strip()):
            return Clue(kind, m.group(1), m.group(2) if pattern.groups > 1 else "")
    return None


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def named(text: str) -> set[str]:
    """Identifiers a text names in code: code spans and ``auto*`` directives."""
    spans = _CODE.findall(text) + _AUTO.findall(text)
    return {ident for span in spans for ident in _IDENT.findall(span)}


def short_name(name: str) -> str:
    return name.rsplit(".", 1)[-1]


@lru_cache(maxsize=1 << 16)  # the mind asks for the same few hundred titles millions of times
def base_title(title: str) -> str:
    return _PART.sub("", title)


def quote_of(module_doc: str, n_words: int = 10) -> str:
    """The quote a module clue gives: the first words of the module's docstring, on one line."""
    kept = [w for w in module_doc.split() if re.search(r"\w", w)]
    return " ".join(kept[:n_words]).replace('"', "'")


def starts_with_quote(text: str, quote: str) -> bool:
    return quote_of(text, len(quote.split())) == quote


def supports(clue: Clue, title: str, text: str, candidate: str) -> bool:
    """Does this document show that ``candidate`` (a dotted name) meets ``clue``?

    A ``module`` clue is met by the module document itself (candidate = the module's name), and by a
    docstring document whose ``module:`` line names that module.
    """
    title = base_title(title)
    short = short_name(candidate)
    if clue.kind in ("terms", "param"):
        m = DOCSTRING_TITLE.match(title)
        if not m or m.group(1) != candidate:
            return False
        if clue.kind == "terms":
            found = words(text)
            return clue.a in found and clue.b in found
        head = text.split("\n", 1)[0]
        return clue.a in set(_IDENT.findall(head.partition("(")[2]))
    if clue.kind == "module":
        m = MODULE_TITLE.match(title)
        return bool(m and m.group(1) == candidate and starts_with_quote(text, clue.a))
    if clue.kind == "changelog":
        m = CHANGELOG_TITLE.match(title)
        return bool(m and m.group(1) == clue.a and m.group(3) == clue.b and short in named(text))
    if clue.kind == "page":
        m = DOCS_TITLE.match(title)
        return bool(m and m.group(1) == clue.a and m.group(2) == clue.b and short in named(text))
    if clue.kind in RELEASE_KINDS and release_of(title) == candidate:
        return clue.a in named(text) if clue.kind == "item_names" else {clue.a, clue.b} <= words(text)
    return False


def release_of(title: str) -> str | None:
    """``flask 2.0.1`` for a changelog item of that release."""
    m = CHANGELOG_TITLE.match(base_title(title))
    return f"{m.group(1)} {m.group(2)}" if m else None


def year_of(title: str) -> str | None:
    m = CHANGELOG_TITLE.match(base_title(title))
    return m.group(3) if m else None


def module_of(text: str) -> str | None:
    """The ``module:`` line of a docstring document."""
    m = MODULE_LINE.search(text)
    return m.group(1) if m else None


def clue_query(clue: Clue, candidate: str | None = None, module: str | None = None) -> str:
    """The search a careful agent runs for a clue: the clue's own words, plus the candidate's
    name (or the module found so far) where the clue is about a named thing. For a release clue
    ``module`` is the candidate release's year, as its changelog titles show it."""
    if clue.kind in RELEASE_KINDS:
        body = f"{clue.a} {clue.b}" if clue.kind == "item_terms" else clue.a
        if candidate is None:
            return f"{body} changelog"
        return f"{candidate.split()[0]} {body} changelog {module or ''}".strip()
    if clue.kind == "module":
        return clue.a
    if clue.kind in ("terms", "param"):
        head = f"{module} " if module else ""
        body = f"{clue.a} {clue.b}" if clue.kind == "terms" else f"parameter {clue.a}"
        return f"{head}{body} docstring"
    name = short_name(candidate or "")
    if clue.kind == "changelog":
        return f"{name} {clue.a} changelog {clue.b}"
    return f"{name} {clue.b}"
