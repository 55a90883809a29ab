"""The SWE-lite reader: what a careful engineer concludes from text it has seen.

Inputs are only agent-visible text: a test run's output (``--tb=short``), search results and the
numbered lines of files it read. From a failure it takes
- the failing tests and the ``E`` lines of the first failure (the assertion message or exception),
- the traceback frames of all failures: ``path:line: in function`` and the source line under each;
and from these the *suspects*: functions to look at, in order — frames inside the library (not
the tests), deepest first, then the names the failing test line calls.
``rank_repairs`` orders the single-line repairs of a function (``faults.repair_candidates``)
by that evidence: lines the traceback points at, then the fault kinds the message suggests
(``None`` where a value was expected suggests a lost return value, ``True``/``False`` a wrong
condition, numbers an off-by-one), then source order. The builder keeps only units whose true
repair a reader finds within the first few tries; the oracle and SimLM use the same ranking.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from pushbench.tasks.swe.faults import LineEdit, functions, parse_python, repair_candidates

_FRAME = re.compile(r"^([\w./-]+\.py):(\d+): in (\w+)$")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S.*?)(?: - .*)?$")
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_READ_LINE = re.compile(r"^ *(\d+)\| ?(.*)$")
_READ_HEAD = re.compile(r"^\S+ lines (\d+)-(\d+) of (\d+)$")
END_OF_FILE = "#<end of file>"  # a sentinel line after the last one: a function can end at EOF
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\(")
NOT_SUSPECTS = frozenset("""assert isinstance len str int repr dict list set tuple type getattr setattr hasattr
    print sorted range enumerate zip bytes float bool object super open iter next callable raises warns
    approx fixture parametrize mark param skip fail xfail""".split())
DEFAULT_ORDER = ("cmp", "return", "not", "andor", "bool", "offby1")
CUE_ORDER = {
    "none": ("return", "cmp", "not", "andor", "bool", "offby1"),
    "bool": ("cmp", "not", "andor", "bool", "return", "offby1"),
    "number": ("offby1", "cmp", "return", "not", "andor", "bool"),
}


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str
    code: tuple[str, ...]  # the source line(s) shown under the frame


@dataclass(frozen=True)
class Evidence:
    failing: tuple[str, ...]
    frames: tuple[Frame, ...]
    errors: tuple[str, ...]  # the "E" lines, without the marker

    @property
    def cue(self) -> str | None:
        text = " ".join(self.errors[:6])
        if re.search(r"\bNone\b|NoneType", text):
            return "none"
        if re.search(r"\b(True|False)\b", text):
            return "bool"
        if re.search(r"(?<![\w.])\d+(?![\w.])", text):
            return "number"
        return None


def is_test_path(path: str) -> bool:
    head = path.split("/", 1)[0]
    return head in ("tests", "testing") or path.rsplit("/", 1)[-1].startswith(("test_", "conftest"))


def read_failure(output: str) -> Evidence:
    """Failing tests, the traceback frames of every failure section (in order) and the error
    lines of the first one."""
    failing, frames, errors = [], [], []
    in_failures, sections = False, 0
    code: list[str] = []
    current: tuple[str, int, str] | None = None

    def close() -> None:
        nonlocal current
        if current:
            frames.append(Frame(*current, tuple(code)))
        current = None

    for line in output.splitlines():
        if m := _FAILED.match(line):
            failing.append(m.group(1))
            continue
        if line.startswith("___") and line.rstrip().endswith("___"):
            close()
            sections += 1
            in_failures = True
            continue
        if line.startswith("====="):
            close()
            in_failures = "FAILURES" in line or "ERRORS" in line
            continue
        if not in_failures:
            continue
        if m := _FRAME.match(line):
            close()
            current, code = (m.group(1), int(m.group(2)), m.group(3)), []
        elif line.startswith("E   ") or line == "E":
            if sections == 1:
                errors.append(line[1:].strip())
        elif line.startswith("    ") and current:
            code.append(line.strip())
    close()
    return Evidence(tuple(failing), tuple(frames), tuple(e for e in errors if e))


def suspects(evidence: Evidence) -> list[str]:
    """Function names worth reading, most likely first."""
    names: list[str] = []
    for frame in reversed(evidence.frames):  # deepest first
        if not is_test_path(frame.path) and frame.function not in names:
            names.append(frame.function)
    for frame in evidence.frames:  # the first failure's test line first
        if is_test_path(frame.path):
            for line in frame.code:
                for name in _CALL.findall(line):
                    if name not in names and name not in NOT_SUSPECTS and not name.startswith("test"):
                        names.append(name)
    return names


def test_suspects(lines: dict[int, str], failing_line: int) -> list[str]:
    """Names called in the test's own lines up to the failing one, nearest first (what a reader
    of the test body adds when the failing line itself names no library function)."""
    names: list[str] = []
    for number in sorted((n for n in lines if n <= failing_line), reverse=True):
        text = lines[number]
        if _DEF.match(text):
            break  # the start of the test function
        for name in _CALL.findall(text):
            if name not in names and name not in NOT_SUSPECTS and not name.startswith("test"):
                names.append(name)
    return names


def rank_repairs(candidates: list[LineEdit], evidence: Evidence, path: str) -> list[LineEdit]:
    hot = {f.line for f in evidence.frames if f.path == path}
    order = CUE_ORDER.get(evidence.cue or "", DEFAULT_ORDER)

    def score(edit: LineEdit) -> tuple[int, int, int, int]:
        near = 0 if edit.lineno in hot else 1 if any(0 < h - edit.lineno <= 3 for h in hot) else 2
        return near, order.index(edit.op), edit.lineno, edit.col
    return sorted(candidates, key=score)


# --- reading code the way the agent sees it ----------------------------------------------------

def parse_read(text: str) -> dict[int, str]:
    """Numbered lines from a read_file observation (plus the end-of-file sentinel when shown)."""
    lines = {}
    rows = text.splitlines()
    for line in rows[1:] if rows and _READ_HEAD.match(rows[0]) else rows:
        if m := _READ_LINE.match(line):
            lines[int(m.group(1))] = m.group(2)
    if rows and (head := _READ_HEAD.match(rows[0])) and head.group(2) == head.group(3):
        lines[int(head.group(3)) + 1] = END_OF_FILE
    return lines


def numbered(text: str) -> dict[int, str]:
    """A whole file as the reader would hold it after reading all of it."""
    lines = {i + 1: line for i, line in enumerate(text.split("\n"))}
    lines[len(lines) + 1] = END_OF_FILE
    return lines


def function_block(lines: dict[int, str], name: str) -> tuple[int, int] | None:
    """(first, last) line of ``def name`` if the whole function is among the lines seen; else None."""
    for number in sorted(lines):
        m = _DEF.match(lines[number])
        if not m or m.group(2) != name:
            continue
        indent, last = len(m.group(1)), number
        nxt = number + 1
        while nxt in lines:
            text = lines[nxt]
            if text.strip() and len(text) - len(text.lstrip()) <= indent and not text.lstrip().startswith((")", "]", "}")):
                return number, last
            if text.strip():
                last = nxt
            nxt += 1
        return None  # the function runs past what was read
    return None


def visible_repairs(lines: dict[int, str], name: str) -> list[LineEdit] | None:
    """Repair candidates for ``def name`` from the lines seen (file line numbers), or None."""
    block = function_block(lines, name)
    if block is None:
        return None
    first, last = block
    body = [lines.get(n, "") for n in range(first, last + 1)]
    try:
        tree = parse_python(textwrap.dedent("\n".join(body)))
    except SyntaxError:
        return None
    found = [f for f in functions(tree) if f.qualname == name]
    if not found:
        return None
    pad = len(body[0]) - len(body[0].lstrip())
    dedented = textwrap.dedent("\n".join(body)).split("\n")
    out = []
    for edit in repair_candidates(found[0].node, dedented):
        number = first + edit.lineno - 1
        out.append(LineEdit(number, lines[number], " " * pad + edit.new, edit.op, edit.col + pad))
    return out
