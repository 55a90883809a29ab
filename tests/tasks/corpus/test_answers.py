"""Answer normalisation: exact match after it."""

from __future__ import annotations

import pytest

from pushbench.tasks.corpus.answers import matches, normalise


@pytest.mark.parametrize("given", ["requests.sessions.Session.request", "  `requests.sessions.Session.request()`  ",
                                   '"Requests.Sessions.Session.Request"', "requests . sessions.Session .request",
                                   "requests.sessions.Session.request( )"])
def test_the_same_answer_in_other_spellings_matches(given: str) -> None:
    assert matches(given, "requests.sessions.Session.request")


@pytest.mark.parametrize("given", ["requests.Session.request", "Session.request", "requests.sessions.Session",
                                   "", "   ", "``"])
def test_other_names_and_empty_answers_do_not(given: str) -> None:
    assert not matches(given, "requests.sessions.Session.request")


def test_normalise_is_idempotent() -> None:
    once = normalise(" `Flask.App.Route()` ")
    assert once == "flask.app.route" and normalise(once) == once


def test_release_answers() -> None:
    assert matches("Flask v2.0.1", "flask 2.0.1") and matches(" `pytest 8.3.3` ", "pytest 8.3.3")
    assert not matches("flask 2.0", "flask 2.0.1") and not matches("2.0.1", "flask 2.0.1")
