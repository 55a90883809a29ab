"""Hypothesis strategies for tool calls: valid, near-valid and hostile names and arguments.

A call is drawn against one environment's real tool schemas (``Environment.tools``), so "valid"
means valid per that schema. String fields are filled from a ``Pool`` of plausible values the
earlier observations of the same episode showed (ids, paths, lines, words), from hostile text
(path traversal, absolute paths, control characters, lone surrogates, very long strings) or from
random text; numbers range over valid, edge and absurd values; whole argument payloads may be
wrong types, deeply nested, NaN/Infinity JSON text or not JSON at all.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Callable

from hypothesis import strategies as st

# Method names of Environment that are not tools: calling them by name must be "unknown tool".
NOT_TOOLS = ("execute", "end", "refuse", "claim_final", "parse_arguments", "schemas", "describe_tool", "tools",
             "check_unit", "unit", "resolve", "verifier", "__init__", "__class__", "id_problem")
UNKNOWN_TOOLS = ("", " ", "SEARCH", "search ", "submit\x00", "../status", "status\n", "list units",
                 "read-file", "\ud800", "a" * 300, "tool.status", "functions.submit", "💥")
HOSTILE_TEXT = (
    "", " ", "\t", "\n", "..", "../", "../../etc/passwd", "a/../../b", "./x", "x/./y", "x//y",
    "/etc/passwd", "/", "~/.ssh/id_rsa", "~", "C:\\Windows\\win.ini", "C:/x", "\\\\server\\share",
    "..\\..\\x", "%2e%2e%2f", "link", "tests/link", "src/..", "data/hidden", "../data/hidden/x.json",
    "/proc/self/environ", "\x00", "a\x00b", "\x1b[31mred", "\r\n", "\x7f", "\u202egnp.exe", "\ufeff",
    "\ud800", "\udfff", "x\ud800y", "\ud83d", "é", "ß", "İ", "💥", "NaN", "Infinity", "-Infinity",
    "1e309", "null", "true", "{}", "[]", "%s%s%n", "${HOME}", "$(id)", "`id`", "; rm -rf /",
    "' OR 1=1 --", "<script>", "{{7*7}}", "r0001\n", " r0001", "R0001", "r00001", "r-001", "r٠٠٠١",
    "U01 ", "u01", "U00", "U99", "U01/..", "x.py::", "::f", "a.py::f()", "/abs.py::f", "../x.py::f",
)
NUMBERS = (0, -1, 1, 2, 3, 7, 9, 10, 11, 99, 100, 101, 1_000, 1_001, 10_000, 100_000, 100_001,
           1_000_000, 1_000_001, 2**31, 2**63, -(2**63), 10**30)
SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff")


class Pool:
    """Plausible values seen in this episode's observations, by kind (``id``, ``path``, ...)."""

    def __init__(self) -> None:
        self.values: dict[str, list[str]] = defaultdict(list)
        self._seen: dict[str, set[str]] = defaultdict(set)

    def add(self, kind: str, value: str) -> None:
        if value and value not in self._seen[kind] and len(self.values[kind]) < 400:
            self._seen[kind].add(value)
            self.values[kind].append(value)

    def pick(self, draw: Draw, kind: str) -> str | None:
        values = self.values.get(kind)
        return values[draw(INDEX) % len(values)] if values else None


Draw = Callable[[st.SearchStrategy[Any]], Any]
# Every strategy is built once at import: building (and validating) strategies per draw costs far
# more than the calls being fuzzed.
INDEX = st.integers(0, 2**16)
ROLL = st.integers(0, 99)
LONG_TEXT = st.tuples(st.sampled_from((199, 200, 201, 300, 301, 2_000, 4_001, 8_001, 20_000)),
                      st.sampled_from(("a", "/", ".", "é", "\n", "r0001 "))).map(lambda t: t[1] * t[0])
WITH_SURROGATE = st.tuples(st.text(max_size=4), st.sampled_from(SURROGATES), st.text(max_size=4)).map("".join)
HOSTILE = st.one_of(st.sampled_from(HOSTILE_TEXT), LONG_TEXT, st.text(max_size=12),
                    st.text(st.characters(codec="ascii"), max_size=20), WITH_SURROGATE)
MUTATIONS = st.sampled_from(("prefix", "abs", "suffix", "cut", "upper", "space", "dup", "sur", "nul", "dot"))
JSON_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.sampled_from(NUMBERS), st.floats(), st.text(max_size=6)),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=6)


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


WRONG = st.one_of(st.none(), st.booleans(), st.sampled_from(NUMBERS), st.floats(),
                  st.sampled_from((1.5, 2.0, -0.0, 1e308, float("nan"), float("inf"))),
                  st.sampled_from((1, 2, 10, 50, 200, 400)).map(nested), JSON_VALUE, HOSTILE)
BAD_INTEGERS = st.sampled_from((-1, 0, -(10**9), 10**12, 2**63, 2.0, 3.5, float("nan"), float("inf"), True))
BAD_ARRAYS = st.one_of(st.lists(st.one_of(HOSTILE, WRONG), max_size=4),
                       st.sampled_from((20, 21, 200, 201)).map(lambda n: [f"r{i:04d}" for i in range(n)]))
SMALL_TEXT = st.text(max_size=30)
EXTRA_KEYS = st.sampled_from(("extra", "", "PATH", "__class__", "page ", "ids\x00"))
RAW_ARGUMENTS = st.sampled_from((
    "", "   ", "null", "[]", "[1, 2]", "\"text\"", "42", "{", "{\"a\": }", "{'page': 1}",
    "{\"page\": NaN}", "{\"page\": Infinity}", "{\"page\": -Infinity}", "{\"count\": 1e400}",
    "{\"ids\": [\"\\ud800\"]}", "{\"query\": \"\\u0000\"}", "{\"path\": \"\\ud800\"}",
    "{\"unit\": \"U01\", \"unit\": \"U02\"}", "\ufeff{}", "{}" + " " * 8_001, "{\"a\": 1}" * 3,
    "{\"x\": " + "[" * 400 + "]" * 400 + "}"))
SHAPES = st.sampled_from(("valid", "valid", "valid", "valid", "valid", "near", "near", "near", "raw", "wrong"))


NEW_TEXT = st.one_of(st.sampled_from(("", "x", "None", "0", "MIT", "1.0", "\n", "\t", "return None", "pass",
                                       "raise SystemExit(1)", "import os; os.remove('x')")),
                     st.text(st.characters(codec="utf-8"), max_size=20), LONG_TEXT)


def mutate(value: str, how: str) -> str:
    """A plausible value, altered: traversed, made absolute, cut, padded, doubled, poisoned."""
    return {"prefix": "../" + value, "abs": "/" + value, "suffix": value + "\n", "cut": value[: len(value) // 2],
            "upper": value.upper(), "space": f" {value} ", "dup": value + value, "sur": value + "\ud800",
            "nul": value + "\x00", "dot": value + "/."}[how]


def valid_value(draw: Draw, prop: dict[str, Any], pool: Pool, kind: str) -> Any:
    """A value valid per the property's schema (strings mostly from the pool when it has some)."""
    typ = prop.get("type")
    if typ == "integer":
        lo, hi = prop.get("minimum", -10), prop.get("maximum", 10**6)
        roll = draw(ROLL)
        return lo + draw(INDEX) % 13 if roll < 70 else (lo if roll < 80 else hi if roll < 85 else
                                                        lo + draw(INDEX) * 7919 % (hi - lo + 1))
    if typ == "array":
        lo = prop.get("minItems", 0)
        size = lo + draw(INDEX) % (8 if draw(ROLL) < 85 else max(1, prop.get("maxItems", 5) + 2 - lo))
        items = prop.get("items", {"type": "string"})
        if pool.values.get(kind) and draw(ROLL) < 85:
            return [pool.pick(draw, kind) for _ in range(size)]
        return [valid_value(draw, items, pool, kind) for _ in range(size)]
    if typ == "string":
        plausible = pool.pick(draw, kind)
        if plausible is not None and draw(ROLL) < 80:
            return plausible
        text = draw(SMALL_TEXT)
        lo, hi = prop.get("minLength", 0), prop.get("maxLength", 200)
        return (text + "x" * lo)[:hi]
    return draw(JSON_VALUE)


def near_value(draw: Draw, prop: dict[str, Any], pool: Pool, kind: str) -> Any:
    """Near-valid or hostile: wrong types, edge numbers, traversal, control characters, surrogates."""
    roll, typ = draw(ROLL), prop.get("type")
    if roll < 30:
        return draw(WRONG)
    if typ == "string":
        plausible = pool.pick(draw, kind)
        if plausible is not None and roll < 65:
            return mutate(plausible, draw(MUTATIONS))
        return draw(HOSTILE)
    if typ == "integer":
        return draw(BAD_INTEGERS)
    if typ == "array":
        return draw(BAD_ARRAYS)
    return draw(WRONG)


def arguments(draw: Draw, parameters: dict[str, Any], pool: Pool, kinds: dict[str, str]) -> Any:
    """One call's arguments: a dict (valid per schema, or near-valid: keys missing, extra, values
    hostile), its JSON text (NaN/Infinity included), raw text that is not an object, or a non-dict."""
    shape = draw(SHAPES)
    if shape == "raw":
        return draw(RAW_ARGUMENTS)
    if shape == "wrong":
        return draw(WRONG)
    args: dict[str, Any] = {}
    required = set(parameters.get("required", ()))
    for name, prop in parameters.get("properties", {}).items():
        roll = draw(ROLL)
        if shape == "valid" and (name in required or roll < 50):
            args[name] = valid_value(draw, prop, pool, kinds.get(name, name))
        elif shape == "near" and roll < 90:
            maker = near_value if roll < 45 else valid_value
            args[name] = maker(draw, prop, pool, kinds.get(name, name))
    if shape == "near" and draw(ROLL) < 15:
        args[draw(EXTRA_KEYS)] = draw(WRONG)
    if draw(ROLL) < 30:
        return json.dumps(args, allow_nan=True)  # NaN/Infinity become the JSON text the parser accepts
    return args


NAMES_ROLL = st.integers(0, 19)
NOT_TOOL = st.sampled_from(NOT_TOOLS)
UNKNOWN = st.sampled_from(UNKNOWN_TOOLS)


def tool_name(draw: Draw, names: list[str], weights: dict[str, int]) -> str:
    """Mostly a real tool (by weight), sometimes a method that is not a tool or a garbled name.

    Hypothesis favours small choices, so the common outcomes sit at the small values: the
    heaviest tool first, garbled names at the top of the roll."""
    roll = draw(NAMES_ROLL)
    if roll == 19:
        return draw(NOT_TOOL)
    if roll == 18:
        return draw(UNKNOWN) if draw(ROLL) < 50 else mutate(names[draw(INDEX) % len(names)], draw(MUTATIONS))
    ranked = sorted(names, key=lambda n: (-weights.get(n, 1), n))
    pick = draw(INDEX) % sum(weights.get(n, 1) for n in ranked)
    for name in ranked:
        pick -= weights.get(name, 1)
        if pick < 0:
            return name
    return ranked[-1]
