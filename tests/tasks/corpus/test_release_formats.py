"""Release headings are read by their format, never by the project's name (issue 33 item 3)."""

from __future__ import annotations

import pytest

from pushbench.tasks.corpus.family import objective_text, project_list
from pushbench.tasks.corpus.sources import _releases, release_heading


@pytest.mark.parametrize("line, nxt, found", [
    ("pytest 8.3.3 (2024-09-09)", "=========================", ("8.3.3", "2024-09-09")),
    ("anyproj 1.2 (2020-01-02)", "------------------------", ("1.2", "2020-01-02")),
    ("2.32.3 (2024-05-29)", "-------------------", ("2.32.3", "2024-05-29")),
    ("Version 8.1.7", "-------------", ("8.1.7", "")),
    ("## 1.4.0 (2021-03-04)", "", ("1.4.0", "2021-03-04")),
    ("## [0.9.1] - 2019-12-31", "", ("0.9.1", "2019-12-31")),
    ("### v2.0.0 - 2022-06-01", "", ("2.0.0", "2022-06-01")),
    ("2.6", "===", None),  # a bare version: its items stay with the release above (as pytest's oldest)
    ("Bug Fixes", "---------", None),
    ("pytest 8.3.3 (2024-09-09)", "some text", None),  # an rst title needs its underline
])
def test_each_common_heading_form(line: str, nxt: str, found) -> None:
    assert release_heading(line, nxt) == found


def test_a_flask_style_changelog_of_any_project_dates_its_releases() -> None:
    text = "Version 2.0\n-----------\n\nReleased 2021-05-11\n\n-   Item one.\n\nVersion 1.9\n-----------\n\n-   Old.\n"
    assert [(v, d) for v, d, _ in _releases(text)] == [("2.0", "2021-05-11"), ("1.9", "")]


def test_the_objectives_name_the_configured_projects() -> None:
    assert project_list(["requests", "flask", "pytest"]) == "requests, flask or pytest"
    assert project_list(["click"]) == "click"
    assert "(a function, class or method of click, attrs or toml)" in objective_text([], 5, 100, "api",
                                                                                      ["click", "attrs", "toml"])
