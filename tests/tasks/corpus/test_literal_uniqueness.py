"""Every corpus question has exactly one answer under a literal reading of its clue texts.

This test reads the clues the way an agent who sees only the objective would, with its own small
matcher: no code of the generator (``questions.py``, ``releases.py``) nor of the reader's rules
(``reader.py``) is used, so a rule the generator applies but the clue text does not state shows up
here as a second answer. The readings, one per clue sentence:

- "a docstring document of it uses the words A and B": some document titled ``<name> (… docstring)``
  has both words among its words (runs of letters, any case);
- "its signature has a parameter named P": the ``def``/``class`` line of its docstring document
  lists a parameter P (stars dropped);
- "it is defined in the module whose docstring begins Q": its docstring document's ``module:`` line
  names a module whose module docstring's words start with Q's words;
- "a P changelog item of a release from Y names it in code": some item of a P release dated in Y
  has its last name component as an identifier inside a code span or an ``.. auto…::`` directive;
- "the P documentation page titled T names it in code": likewise, in some section of P's page T;
- "one of its changelog items uses the words A and B" / "names X in code": some item of the release;
- (a long question's part) "it is defined in the module that defines the answer to part K": its
  ``module:`` line names a module the ``module:`` line of part K's one literal answer names.

An entity is every dotted name a docstring document's title shows (API questions) or every
``project version`` a changelog item's title shows (release questions).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

_SENTENCES = {
    "terms": r'a docstring document of it uses the words "(?P<a>[^"]+)" and "(?P<b>[^"]+)"',
    "param": r'its signature has a parameter named "(?P<a>[^"]+)"',
    "module": r'it is defined in the module whose docstring begins "(?P<a>.+)"',
    "changelog": r"a (?P<a>\S+) changelog item of a release from (?P<b>\d{4}) names it in code",
    "page": r'the (?P<a>\S+) documentation page titled "(?P<b>.+)" names it in code',
    "item_terms": r'one of its changelog items uses the words "(?P<a>[^"]+)" and "(?P<b>[^"]+)"',
    "item_names": r'one of its changelog items names "(?P<a>[^"]+)" in code',
    "module_of": r"it is defined in the module that defines the answer to part (?P<a>\d+)",  # long questions
}
_LINE = re.compile(r"^- clue:\d+: (.*)$", re.M)
_PART = re.compile(r" \(part \d+ of \d+\)$")
_API_TITLE = re.compile(r"^(\S+) \((?:function|class|method) docstring\)$")
_MODULE_TITLE = re.compile(r"^(\S+) \(module docstring\)$")
_ITEM_TITLE = re.compile(r"^(\S+) (\S+) changelog \(released (\d{4})-\d{2}-\d{2}\), item \d+$")
_SPAN = re.compile(r"(`+)(.+?)\1")
_DIRECTIVE = re.compile(r"^\.\. auto[a-z]+:: *(\S+)", re.M)


def literal_clue(text: str) -> tuple[str, dict[str, str]]:
    for kind, pattern in _SENTENCES.items():
        if m := re.fullmatch(pattern, text.strip()):
            return kind, m.groupdict()
    raise AssertionError(f"a clue sentence this reading does not know: {text!r}")


@lru_cache(maxsize=None)  # every clue reads every document again: each text is read once
def letter_words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z]+", text.lower()))


@lru_cache(maxsize=None)
def code_identifiers(text: str) -> frozenset[str]:
    spans = [m.group(2) for m in _SPAN.finditer(text)] + _DIRECTIVE.findall(text)
    return frozenset(ident for span in spans for ident in re.findall(r"[A-Za-z_]\w*", span))


@dataclass
class Corpus:
    """What the documents literally show, indexed for the clue readings above."""

    docstrings: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # name -> texts
    modules: dict[str, str] = field(default_factory=dict)  # module -> its docstring's text
    items: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # release -> item texts
    changelog: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    pages: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def of(cls, docs: list[Any]) -> "Corpus":
        corpus = cls()
        for d in docs:
            title = _PART.sub("", d.title)
            if m := _API_TITLE.match(title):
                corpus.docstrings[m.group(1)].append(d.text)
            elif m := _MODULE_TITLE.match(title):
                corpus.modules[m.group(1)] = corpus.modules.get(m.group(1), "") + "\n" + d.text  # parts in order
            elif m := _ITEM_TITLE.match(title):
                corpus.items[f"{m.group(1)} {m.group(2)}"].append(d.text)
                corpus.changelog[(m.group(1), m.group(3))].append(d.text)
            elif title.split(" ", 2)[1:2] == ["docs:"]:
                project, _, rest = title.split(" ", 2)
                corpus.pages[(project, rest.split(" > ", 1)[0])].append(d.text)
        return corpus

    def module_of(self, name: str) -> frozenset[str]:
        return _module_lines(tuple(self.docstrings[name]))

    def parameters(self, name: str) -> frozenset[str]:
        return _parameters(tuple(self.docstrings[name]))

    def fits(self, kind: str, v: dict[str, str]) -> set[str]:
        """Every entity the clue's literal reading admits."""
        if kind == "terms":
            return {n for n, texts in self.docstrings.items()
                    if any({v["a"], v["b"]} <= letter_words(t) for t in texts)}
        if kind == "param":
            return {n for n in self.docstrings if v["a"] in self.parameters(n)}
        if kind == "module":
            quote = re.findall(r"\w+", v["a"])
            begun = {m for m, t in self.modules.items() if re.findall(r"\w+", t)[:len(quote)] == quote}
            return {n for n in self.docstrings if self.module_of(n) & begun}
        if kind in ("changelog", "page"):
            texts = (self.changelog if kind == "changelog" else self.pages).get((v["a"], v["b"]), [])
            named = set().union(*map(code_identifiers, texts)) if texts else set()
            return {n for n in self.docstrings if n.rsplit(".", 1)[-1] in named}
        if kind == "item_terms":
            return {r for r, texts in self.items.items() if any({v["a"], v["b"]} <= letter_words(t) for t in texts)}
        return {r for r, texts in self.items.items() if any(v["a"] in code_identifiers(t) for t in texts)}


@lru_cache(maxsize=None)
def _module_lines(texts: tuple[str, ...]) -> frozenset[str]:
    return frozenset(m.group(1) for t in texts if (m := re.search(r"^module: (\S+)$", t, re.M)))


@lru_cache(maxsize=None)
def _parameters(texts: tuple[str, ...]) -> frozenset[str]:
    heads = [t.split("\n", 1)[0] for t in texts]
    inside = [h[h.index("(") + 1: h.rindex(")")] for h in heads if "(" in h]
    return frozenset(p.strip().lstrip("*") for params in inside for p in params.split(",") if p.strip())


def answers_under_literal_reading(corpus: Corpus, objective: str, earlier: list[set[str]] | None = None) -> set[str]:
    clues = [literal_clue(text) for text in _LINE.findall(objective)]
    assert clues, "an objective without clue lines"
    found: set[str] | None = None
    for kind, values in clues:
        if kind == "module_of":  # the module of an earlier part's answer (unique, or nothing fits)
            before = (earlier or [])[int(values["a"]) - 1]
            modules = set().union(*map(corpus.module_of, before)) if len(before) == 1 else set()
            fits = {n for n in corpus.docstrings if corpus.module_of(n) & modules}
        else:
            fits = corpus.fits(kind, values)
        found = fits if found is None else found & fits
    return found or set()


def parts_under_literal_reading(corpus: Corpus, objective: str) -> list[set[str]]:
    """A long question's parts (``Part k:`` blocks), each read literally, in order."""
    blocks = re.split(r"^Part \d+:$", objective.split("\nUse search(")[0], flags=re.M)[1:]
    found: list[set[str]] = []
    for block in blocks:
        found.append(answers_under_literal_reading(corpus, block, found))
    return found


def test_every_question_has_exactly_its_answer_under_a_literal_reading(corpus_docs: list, corpus_tasks: list,
                                                                      corpus_hidden: dict) -> None:
    corpus = Corpus.of(corpus_docs)
    wrong = {}
    for t in corpus_tasks:
        if t.settings.get("n_parts"):  # a long question: each part has exactly its answer
            parts = parts_under_literal_reading(corpus, t.objective)
            if parts != [{name} for name in corpus_hidden[t.task_id]["parts"]]:
                wrong[t.task_id] = [sorted(p) for p in parts]
            continue
        found = answers_under_literal_reading(corpus, t.objective)
        if found != {corpus_hidden[t.task_id]["answer"]}:
            wrong[t.task_id] = sorted(found)
    assert not wrong, f"{len(wrong)} of {len(corpus_tasks)} questions: {wrong}"


def test_each_clue_fits_as_many_entities_as_the_generator_recorded(corpus_docs: list, corpus_tasks: list,
                                                                   corpus_hidden: dict) -> None:
    """The generator's own count of each clue's fits (hidden ``clue_fits``) is the literal count, so
    its weak-clue bounds and hard negatives hold for the clue texts as written."""
    corpus = Corpus.of(corpus_docs)
    cache: dict[str, int] = {}
    for t in corpus_tasks:
        counts = [cache.setdefault(text, len(corpus.fits(*literal_clue(text)))) for text in _LINE.findall(t.objective)
                  if not text.startswith("it is defined in the module that defines")]  # a long part's link:
        if t.settings.get("n_parts"):  # the generator's count is the module clue's it stands for (read above)
            kinds = t.settings["clue_kinds"]
            fits = corpus_hidden[t.task_id]["clue_fits"]
            recorded = [fits[f"clue:{k}"] for k, kind in enumerate(kinds, 1) if kind != "module_of"]
            assert counts == recorded, t.task_id
            continue
        assert counts == list(corpus_hidden[t.task_id]["clue_fits"].values()), t.task_id


def test_the_literal_matcher_reads_each_clue_sentence() -> None:
    docs = [_Doc("pkg.mod.Thing.fetch (method docstring)", "def fetch(self, url, *, retries)\nmodule: pkg.mod\n\n"
                 "Fetch a remote page, retrying on timeouts."),
            _Doc("other.fetch (function docstring)", "def fetch(path)\nmodule: other\n\nRead a local page."),
            _Doc("pkg.mod (module docstring)", "Remote things.\n~~~~~~\n\nMore."),
            _Doc("pkg 1.0 changelog (released 2020-01-02), item 1", "``Thing.fetch`` retries on timeouts."),
            _Doc("zed 2.0 changelog (released 2020-03-04), item 1", "Use :func:`fetch` for local pages."),
            _Doc("pkg docs: Guide > Remote (part 2 of 2)", ".. autofunction:: pkg.mod.Thing.fetch")]
    corpus = Corpus.of(docs)
    both = {"pkg.mod.Thing.fetch", "other.fetch"}
    assert corpus.fits(*literal_clue('a docstring document of it uses the words "page" and "retrying"')) == \
        {"pkg.mod.Thing.fetch"}
    assert corpus.fits(*literal_clue('its signature has a parameter named "retries"')) == {"pkg.mod.Thing.fetch"}
    assert corpus.fits(*literal_clue('it is defined in the module whose docstring begins "Remote things."')) == \
        {"pkg.mod.Thing.fetch"}
    assert corpus.fits(*literal_clue("a pkg changelog item of a release from 2020 names it in code")) == both
    assert corpus.fits(*literal_clue('the pkg documentation page titled "Guide" names it in code')) == both
    assert corpus.fits(*literal_clue('one of its changelog items names "fetch" in code')) == {"pkg 1.0", "zed 2.0"}
    assert corpus.fits(*literal_clue('one of its changelog items uses the words "local" and "pages"')) == {"zed 2.0"}
    assert answers_under_literal_reading(corpus, "Find it.\n- clue:1: its signature has a parameter named "
                                                 '"path"\n- clue:2: a pkg changelog item of a release from 2020 '
                                                 "names it in code") == {"other.fetch"}


@dataclass
class _Doc:
    title: str
    text: str
