"""DataOps-lite units: question texts, fixture files, paged views, the reader and the checkers.

A unit is described three ways:
- its *recipe* (manifest settings): which data set, row and column, or which metadata field is
  broken and how — enough to render the unit's fixture files;
- its *title* (the agent sees it in ``list_units``): the full instruction, one line;
- its *expected* state (``data/hidden/dataops``): the answer value, or the reference text of the
  repaired file. Only the checkers use it.
The *reader* (``next_view``/``derive``) is what a careful agent concludes from the pages it has
seen; the oracle and SimLM both use it, so every unit is solvable from visible text alone.
"""

from __future__ import annotations

import email.parser
import re
import tomllib
from dataclasses import dataclass
from typing import Any

from pushbench.tasks.dataops import data as src

CSV_FIELD, METADATA, CONSISTENCY = "csv_field", "metadata_repair", "consistency"
KINDS = (CSV_FIELD, METADATA, CONSISTENCY)

TEMPLATES: dict[str, str] = {
    "csv": "In {csv}, what is the value of column `{col}` in data row {row} (rows numbered from 1)? "
           "Answer with the value as written.",
    "class": "How many samples in {csv} have target {target} ({label})? The count in the CSV must agree "
             "with the class distribution stated in {doc}; answer with the number.",
    "instances": "How many samples (data rows) does {csv} hold? The CSV must agree with the number of "
                 "instances stated in {doc}; answer with the number.",
    "attributes": "How many numeric predictive attributes (columns other than `target`) does {csv} have? "
                  "The CSV must agree with the number of attributes stated in {doc}; answer with the number.",
    "version": "Which version of {repo} do PKG-INFO and {truth} describe? The two must agree; answer with "
               "the version string.",
    "requires": "Which Python versions does {repo} require? PKG-INFO (`Requires-Python`) and pyproject.toml "
                "(`requires-python`) must agree; answer with the specifier as written.",
    "wrong": "In {file} of {repo}, the `{field}` field is wrong: make it equal `{key}` in {truth}, changing nothing "
             "else (use edit).",
    "missing": "In {file} of {repo}, the `{field}` field is missing: add it as a `{field}: <value>` line with the value "
               "of `{key}` in {truth}, changing nothing else (use edit).",
}
FORM_KIND = {"csv": CSV_FIELD, "class": CONSISTENCY, "instances": CONSISTENCY, "attributes": CONSISTENCY,
             "version": CONSISTENCY, "requires": CONSISTENCY, "wrong": METADATA, "missing": METADATA}


def _pattern(template: str) -> re.Pattern[str]:
    """The template as an anchored regex; a placeholder used twice must repeat its first match."""
    seen: set[str] = set()

    def group(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in seen:
            return f"(?P={name})"
        seen.add(name)
        return f"(?P<{name}>.+?)"

    return re.compile("^" + re.sub(r"\\\{(\w+)\\\}", group, re.escape(template)) + "$")


_PATTERNS = {form: _pattern(t) for form, t in TEMPLATES.items()}


@dataclass(frozen=True)
class Question:
    form: str
    args: tuple[tuple[str, str], ...]

    def __getitem__(self, key: str) -> str:
        return dict(self.args)[key]

    @property
    def kind(self) -> str:
        return FORM_KIND[self.form]


def title_of(form: str, **args: Any) -> str:
    return TEMPLATES[form].format(**args)


def parse_title(title: str) -> Question | None:
    for form, pattern in _PATTERNS.items():
        if m := pattern.match(title.strip()):
            return Question(form, tuple(sorted(m.groupdict().items())))
    return None


# --- fixture files from a recipe ------------------------------------------------------------------

def truth_text(root: str, repo: str, truth: str) -> str:
    if truth == "pyproject.toml":
        return src.project_table(root, repo)
    if truth == "PKG-INFO":
        return src.pkg_info(root, repo)
    return src.snapshot_file(root, repo, truth)


def corrupt(text: str, target_file: str, field: str, mode: str, wrong: str) -> str:
    """The broken target file: the field's line replaced by a wrong value, or removed."""
    lines = text.splitlines()
    if target_file == "PKG-INFO":
        idx = next(i for i, line in enumerate(lines) if line.startswith(field + ": "))
        new = f"{field}: {wrong}"
    else:
        idx = next(i for i, line in enumerate(lines) if re.match(rf"^{re.escape(field)}\s*=", line))
        new = f'{field} = "{wrong}"'
    if mode == "missing":
        del lines[idx]
    else:
        lines[idx] = new
    return "\n".join(lines) + "\n"


def unit_files(recipe: dict[str, Any], root: str) -> dict[str, str]:
    """Every fixture file of one unit (relative path -> text), as the agent's copy starts."""
    form = recipe["form"]
    if form in ("csv", "class", "instances", "attributes"):
        ds = src.DATASETS[recipe["dataset"]]
        files = {ds.csv_name: src.csv_text(ds.name)}
        if form != "csv":
            files[ds.doc] = src.doc_text(ds.name)
        return files
    repo = recipe["repo"]
    files = {"PKG-INFO": src.pkg_info(root, repo), recipe["truth"]: truth_text(root, repo, recipe["truth"])}
    if form in ("wrong", "missing"):
        target = recipe["file"]
        files[target] = corrupt(truth_text(root, repo, target), target, recipe["field"], form, recipe.get("wrong", ""))
    return files


# --- paged views (the env renders them; the reader parses them) -----------------------------------

_VIEW_HEAD = re.compile(r"^(\S+) (\S+): (rows|lines) (\d+)-(\d+) of (\d+) \(page (\d+) of (\d+)\)$")


def page_count(total: int, size: int) -> int:
    return max(1, -(-total // size))


def render_view(unit: str, path: str, text: str, page: int, rows: int, lines: int) -> str | None:
    """One page of a file as the agent sees it; None when the page does not exist."""
    body = text.splitlines()
    if path.endswith(".csv"):
        header, data = body[0], body[1:]
        pages = page_count(len(data), rows)
        if page > pages:
            return None
        lo, hi = (page - 1) * rows, min(page * rows, len(data))
        out = [f"{unit} {path}: rows {lo + 1}-{hi} of {len(data)} (page {page} of {pages})", f"columns: {header}"]
        out += [f"row {i + 1}: {data[i]}" for i in range(lo, hi)]
        return "\n".join(out)
    pages = page_count(len(body), lines)
    if page > pages:
        return None
    lo, hi = (page - 1) * lines, min(page * lines, len(body))
    out = [f"{unit} {path}: lines {lo + 1}-{hi} of {len(body)} (page {page} of {pages})"]
    out += [f"{i + 1:4d}| {body[i]}" for i in range(lo, hi)]
    return "\n".join(out)


@dataclass(frozen=True)
class View:
    unit: str
    path: str
    page: int
    pages: int
    total: int
    lines: tuple[str, ...]  # the page's body lines as shown


def parse_view(text: str) -> View | None:
    rows = text.splitlines()
    if not rows or not (m := _VIEW_HEAD.match(rows[0])):
        return None
    body = []
    for line in rows[1:]:
        if line.startswith("["):  # a controller's note appended to the observation
            break
        body.append(line)
    return View(m.group(1), m.group(2), int(m.group(7)), int(m.group(8)), int(m.group(6)), tuple(body))


# --- the reader ----------------------------------------------------------------------------------

Views = dict[tuple[str, int], View]  # (path, page) -> view, for one unit


def file_lines(views: Views, path: str) -> list[str]:
    """Visible lines of a text file (numbering stripped), from every page seen, in order."""
    out = []
    for (p, _), view in sorted(views.items()):
        if p == path:
            out += [line[6:] if len(line) > 5 and line[4:6] == "| " else line.split("| ", 1)[-1]
                    for line in view.lines]
    return out


def csv_row(views: Views, path: str, row: int) -> tuple[list[str], list[str]] | None:
    for (p, _), view in views.items():
        if p != path:
            continue
        columns = next((line[len("columns: "):].split(",") for line in view.lines if line.startswith("columns: ")), [])
        for line in view.lines:
            if line.startswith(f"row {row}: "):
                return columns, line.split(": ", 1)[1].split(",")
    return None


def _truth_value(q: Question, views: Views) -> str | None:
    truth, key = q["truth"], q["key"]
    lines = file_lines(views, truth)
    if truth.endswith(".py"):
        return src.py_value(lines, key)
    if truth.endswith(".toml"):
        return src.toml_value(lines, key)
    return src.header_value(lines, key)


def _class_from_doc(q: Question, lines: list[str]) -> str | None:
    label = re.escape(q["label"])
    for line in lines:
        for pattern in (rf"\b{label} \((\d+)\)", rf"(\d+) - {label}\b", r"\((\d+) in each of"):
            if m := re.search(pattern, line, re.I):
                return m.group(1)
    return None


def _class_from_csv(q: Question, views: Views) -> str | None:
    seen = [v for (p, _), v in views.items() if p == q["csv"]]
    if not seen or len({v.page for v in seen}) < seen[0].pages:
        return None
    rows = [line for v in seen for line in v.lines if line.startswith("row ")]
    return str(sum(1 for r in rows if r.rsplit(",", 1)[-1].strip() == q["target"]))


def _target_line(q: Question, views: Views) -> str | None:
    field, lines = q["field"], file_lines(views, q["file"])
    if q["file"] == "PKG-INFO":
        return next((line for line in lines if line.startswith(field + ": ")), None)
    return next((line for line in lines if re.match(rf"^{re.escape(field)}\s*=", line)), None)


def derive(q: Question, views: Views) -> tuple[str, ...] | None:
    """The action a careful reader takes from what it has seen: ("answer", value) or
    ("edit", path, old, new); None while the evidence is not visible yet."""
    if q.form == "csv":
        found = csv_row(views, q["csv"], int(q["row"]))
        if found and q["col"] in found[0] and len(found[1]) == len(found[0]):
            return ("answer", found[1][found[0].index(q["col"])])
        return None
    if q.form == "class":
        value = _class_from_doc(q, file_lines(views, q["doc"])) or _class_from_csv(q, views)
        return ("answer", value) if value else None
    if q.form in ("instances", "attributes"):
        return _csv_shape(q, views)
    if q.form in ("version", "requires"):
        value = src.header_value(file_lines(views, "PKG-INFO"), "Version" if q.form == "version" else "Requires-Python")
        return ("answer", value) if value else None
    value = _truth_value(q, views)
    if value is None:
        return None
    old = _target_line(q, views)
    if q.form == "missing" and old is None:  # not added yet: insert it after the first line
        first = file_lines(views, q["file"])[:1]
        return ("edit", q["file"], first[0], f"{first[0]}\n{q['field']}: {value}") if first else None
    if old is None:
        return None
    new = f"{q['field']}: {value}" if q["file"] == "PKG-INFO" else f'{q["field"]} = "{value}"'
    return ("edit", q["file"], old, new)


def _csv_shape(q: Question, views: Views) -> tuple[str, ...] | None:
    view = next((v for (p, _), v in views.items() if p == q["csv"]), None)
    if view is None:
        return None
    if q.form == "instances":
        return ("answer", str(view.total))
    columns = next((line[len("columns: "):].split(",") for line in view.lines if line.startswith("columns: ")), None)
    return ("answer", str(len([c for c in columns if c != "target"]))) if columns else None


def next_view(q: Question, views: Views, pages: dict[str, int], page_rows: int) -> tuple[str, int] | None:
    """The next page a careful reader inspects for this unit (None when nothing more helps)."""
    if q.form == "csv":
        want = (q["csv"], page_count(int(q["row"]), page_rows))
        return want if want not in views else None
    order: list[str]
    if q.form == "class":
        order = [q["doc"], q["csv"]]
    elif q.form in ("instances", "attributes"):
        order = [q["csv"]]
    elif q.form in ("version", "requires"):
        order = ["PKG-INFO"]
    else:
        order = [q["truth"], q["file"]] if _truth_value(q, views) is None else [q["file"]]
    for path in order:
        if _path_done(q, path, views):
            continue
        for page in range(1, pages.get(path, 1) + 1):
            if (path, page) not in views:
                return path, page
    return None


def _path_done(q: Question, path: str, views: Views) -> bool:
    if q.form == "class" and path == q["doc"]:
        return _class_from_doc(q, file_lines(views, path)) is not None
    if q.form in ("wrong", "missing") and path == q["truth"]:
        return _truth_value(q, views) is not None
    if q.form == "wrong" and path == q["file"]:
        return _target_line(q, views) is not None
    if q.form == "missing" and path == q["file"]:
        return bool(file_lines(views, path)) and _target_line(q, views) is not None
    return False


# --- checkers ------------------------------------------------------------------------------------

def normalize(value: str) -> str:
    return value.strip().strip("`'\"").strip()


def same_value(given: str, expected: str) -> bool:
    a, b = normalize(given), normalize(expected)
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a == b
    return abs(x - y) <= 1e-9 * max(1.0, abs(y))


def check_answer(given: str | None, expected: str) -> tuple[bool, str]:
    if given is None:
        return False, "no answer has been given for this unit yet (use answer)."
    if same_value(given, expected):
        return True, f"the answer {normalize(given)!r} matches the checked source."
    return False, f"the answer {normalize(given)[:60]!r} does not match the checked source."


def _headers(text: str) -> list[tuple[str, str]]:
    return sorted(email.parser.HeaderParser().parsestr(text).items())


def check_file(path: str, text: str, reference: str, field: str) -> tuple[bool, str]:
    """Does the repaired file equal the reference (parsed: header fields, or TOML data)?"""
    if path == "PKG-INFO":
        got, want = _headers(text), _headers(reference)
        mine = [v for k, v in got if k == field]
        if mine != [v for k, v in want if k == field]:
            state = "is missing" if not mine else ("appears more than once" if len(mine) > 1 else "has the wrong value")
            return False, f"{path}: the `{field}` field {state}."
        if got != want:
            return False, f"{path}: fields other than `{field}` differ from the original metadata."
        return True, f"{path}: `{field}` is correct and the other fields are unchanged."
    try:
        got_toml, want_toml = tomllib.loads(text), tomllib.loads(reference)
    except tomllib.TOMLDecodeError as err:
        return False, f"{path} is not valid TOML: {err}"
    if got_toml.get("project", {}).get(field) != want_toml["project"].get(field):
        return False, f"{path}: `{field}` in [project] has the wrong value."
    if got_toml != want_toml:
        return False, f"{path}: values other than `{field}` differ from the original."
    return True, f"{path}: `{field}` is correct and the rest is unchanged."


def check_state(expected: dict[str, Any], answer: str | None, files: dict[str, str]) -> tuple[bool, str]:
    """The unit's checker over its current state: the answer given, or the repaired file's text."""
    if "expected" in expected:
        return check_answer(answer, expected["expected"])
    path = expected["file"]
    if path not in files:
        return False, f"{path} no longer exists."
    return check_file(path, files[path], expected["reference"], expected["field"])
