"""Source-grounded units: granularity, occurrences, validated origins."""

from __future__ import annotations

from pushbench.memory.acg.units import REGION_LINES, UnitStore, origin_requirements, records
from pushbench.memory.base import Event

SEARCH = ('search "test get": page 1 of 3 (25 results)\n[1] tests.test_api.test_get\n    L12: def test_get(httpbin):\n'
          "    L13:     r = get(httpbin)\n[2] tests.test_api.test_post\n    L40: def test_post():\n"
          "[progress] verified accepted 0/10 · final is blocked until the target is verified")


def obs(step: int, text: str, tool: str = "search", reqs=None, **args) -> Event:
    origin = {"tool": tool, "arguments": args, "call_id": f"c{step}"}
    if reqs is not None:
        origin["requirements"] = reqs
    return Event(step, "observation", {"role": "tool", "tool_call_id": f"c{step}", "content": text}, origin)


def test_records_are_hits_verdicts_and_file_regions_without_guidance_lines() -> None:
    assert records(SEARCH) == ['search "test get": page 1 of 3 (25 results)',
                               "[1] tests.test_api.test_get\n    L12: def test_get(httpbin):\n    L13:     r = get(httpbin)",
                               "[2] tests.test_api.test_post\n    L40: def test_post():"]
    assert records("submit: 2 accepted\n  accepted  a.b\n  duplicate  c.d") == [
        "submit: 2 accepted", "  accepted  a.b", "  duplicate  c.d"]
    page = "U01 data.csv: lines 1-30 of 90 (page 1 of 3)\n" + "\n".join(f"{i:4d}| row {i}" for i in range(1, 31))
    regions = records(page)
    assert len(regions) == 3 and all(r.startswith("U01 data.csv: lines 1-30") for r in regions)
    assert [len(r.splitlines()) - 1 for r in regions] == [REGION_LINES, REGION_LINES, 30 - 2 * REGION_LINES]


def test_identical_content_from_distinct_events_keeps_both_occurrences() -> None:
    store = UnitStore()
    first, new1 = store.add_observation(1, obs(1, SEARCH, query="test get", page=1), [])
    again, new2 = store.add_observation(3, obs(2, SEARCH, query="test get", page=1), [])
    assert first == again and new2 == [] and len(new1) == 3
    unit = store.units[first[1]]
    assert [(o.event, o.step, o.call_id) for o in unit.occurrences] == [(1, 1, "c1"), (3, 2, "c2")]
    assert unit.first.tool == "search" and unit.first.arguments == '{"page": 1, "query": "test get"}'
    assert store.by_event == {1: first, 3: again}


def test_unknown_ambiguous_or_missing_origins_stay_unassigned() -> None:
    known = ["count", "unit:U01", "unit:U02"]
    assert origin_requirements({"requirements": ["unit:U01", "nope", "U02", 3, "unit:U01"]}, known) == ("unit:U01",)
    assert origin_requirements({}, known) == ()  # an old trace without origins
    assert origin_requirements({"requirements": "unit:U01"}, known) == ()  # not a list: ignored
    store = UnitStore()
    ids, _ = store.add_observation(0, obs(0, "checker U03: PASS", "run_checker", ["unit:U03"], unit="U03"), known)
    assert store.units[ids[0]].requirements() == ()  # U03 is no requirement of this task
    ids, _ = store.add_observation(1, obs(1, "checker U01: PASS", "run_checker", ["unit:U01"], unit="U01"), known)
    assert store.units[ids[0]].requirements() == ("unit:U01",)


def test_table_pages_are_regions_that_keep_the_header_and_columns() -> None:
    page = "U02 d.csv: rows 1-20 of 442 (page 1 of 23)\ncolumns: age,sex,bmi\n" + "\n".join(
        f"row {i}: {i},1,2" for i in range(1, 21))
    regions = records(page)
    assert len(regions) == 2
    for region in regions:
        assert region.splitlines()[:2] == ["U02 d.csv: rows 1-20 of 442 (page 1 of 23)", "columns: age,sex,bmi"]
    assert regions[1].splitlines()[2] == f"row {REGION_LINES + 1}: {REGION_LINES + 1},1,2"
