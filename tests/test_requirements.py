"""The requirement contract: ids, origin validation (unknown or ambiguous stays unassigned)."""

from __future__ import annotations

import pytest

from pushbench.requirements import Requirement, requirement_argument, validate_origins

REQS = [Requirement("count", "10 accepted", "count"), Requirement("distinct", "no repeats", "distinct"),
        Requirement("unit:U01", "U01 passes", "unit"), Requirement("unit:U02", "U02 passes", "unit")]


def test_known_ids_pass_in_order_without_repeats() -> None:
    assert validate_origins(["unit:U02", "count", "unit:U02", "count"], REQS) == ("unit:U02", "count")


def test_unknown_ids_and_non_strings_are_dropped() -> None:
    assert validate_origins(["unit:U09", "predicate", "", None, 3, ["count"], {"id": "count"}], REQS) == ()


def test_a_bare_unit_name_matches_its_only_requirement() -> None:
    assert validate_origins(["U01"], REQS) == ("unit:U01",)
    assert validate_origins(["U01", "unit:U01"], REQS) == ("unit:U01",)


def test_an_ambiguous_name_stays_unassigned() -> None:
    reqs = REQS + [Requirement("clue:U01", "a clue", "clue")]
    assert validate_origins(["U01"], reqs) == ()  # unit:U01 or clue:U01: neither is chosen
    assert validate_origins(["U01", "unit:U01"], reqs) == ("unit:U01",)  # the full id is not ambiguous


def test_a_partial_name_is_not_a_match() -> None:
    assert validate_origins(["U0", "nit:U01", "UNIT:U01", "u01"], REQS) == ()


def test_no_requirements_means_no_origins() -> None:
    assert validate_origins(["count"], []) == ()


@pytest.mark.parametrize("arguments, expected", [
    ({"requirement": "count"}, ["count"]),
    ({"requirement": ["count", "unit:U01"]}, ["count", "unit:U01"]),
    ({"requirement": None}, []),
    ({"unit": "U01"}, []),
    ("not a dict", []),
    (None, []),
])
def test_the_requirement_argument(arguments, expected) -> None:
    assert requirement_argument(arguments) == expected


def test_requirements_are_frozen_values() -> None:
    req = Requirement("count", "10 accepted", "count")
    assert req == Requirement("count", "10 accepted", "count")
    with pytest.raises(AttributeError):
        req.id = "other"  # type: ignore[misc]
