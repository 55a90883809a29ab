"""The generated viewer in a real browser: Debian's Chromium, driven by Playwright, from file://.

Screenshots go to data/tmp/viewer-screenshots/ (not committed); docs/img/viewer.png is one of them.
"""

from __future__ import annotations

import base64
import gzip
import json
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from pushbench import config

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = config.ROOT / "data" / "tmp" / "viewer-screenshots"

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(`apt-get install -y chromium`, as `make install` does)")


@pytest.fixture(scope="module")
def page(small_site: Path) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (requirements.lock)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.errors = errors
        yield page
        browser.close()
    assert not errors, errors


def index_rows(site: Path) -> list[dict[str, Any]]:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    data = json.loads(text[len("PB.index("): -3])
    return [dict(zip(data["columns"], r)) for r in data["rows"]]


def episode(site: Path, row: dict[str, Any]) -> dict[str, Any]:
    text = (site / row["file"]).read_text(encoding="utf-8")
    _, packed = json.loads("[" + text[len("PB.episode("): -3] + "]")
    return json.loads(gzip.decompress(base64.b64decode(packed)))


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))


def test_index_rows_and_a_filter(page: Any, small_site: Path) -> None:
    rows = index_rows(small_site)
    page.goto((small_site / "index.html").as_uri())
    page.wait_for_selector("#episodes")
    assert page.locator("tr.episode-row").count() == len(rows) == 8
    assert page.locator("#count").inner_text() == "8 of 8 episodes"
    assert page.locator("#summary tbody tr").count() == 4  # four conditions
    shot(page, "index.png")
    page.select_option("#filter-memory", "memgpt")
    page.select_option("#filter-controller", "gated")
    expected = [r for r in rows if r["memory"] == "memgpt" and r["controller"] == "gated"]
    assert page.locator("tr.episode-row").count() == len(expected) == 2
    assert page.locator("#count").inner_text() == "2 of 8 episodes"
    page.locator('th[data-col="valid_count"]').click()
    shown = [int(x) for x in page.locator("tr.episode-row td:nth-child(10)").all_inner_texts()]
    assert shown == sorted(r["valid_count"] for r in expected)
    assert "memory=memgpt" in page.url and "controller=gated" in page.url  # the filters are in the URL
    page.reload()
    page.wait_for_selector("#episodes")
    assert page.locator("#count").inner_text() == "2 of 8 episodes"  # ... so a reload or a link keeps them
    assert page.locator("#filter-memory").input_value() == "memgpt"
    page.select_option("#filter-memory", "")
    page.select_option("#filter-controller", "")
    assert page.locator("#count").inner_text() == "8 of 8 episodes" and "memory=" not in page.url


def known_step(site: Path) -> tuple[dict[str, Any], dict[str, Any], int, dict[str, Any]]:
    """An episode and its first step with a verdict."""
    for row in index_rows(site):
        data = episode(site, row)
        for number, turn in enumerate(data["turns"], 1):
            if turn["verdicts"]:
                return row, data, number, turn
    raise AssertionError("no verdict in the small run")


def test_episode_page_shows_a_known_verdict_and_the_count_plot(page: Any, small_site: Path) -> None:
    row, data, number, turn = known_step(small_site)
    page.goto((small_site / "index.html").as_uri() + "#ep=" + f"small/{row['episode_id']}".replace("|", "%7C"))
    page.wait_for_selector("#timeline")
    cells = page.locator(f"#turn-{number} td.verdicts").inner_text()
    accepted = sum(1 for _, v in turn["verdicts"] if v == "accepted")
    assert f"{accepted} accepted" in cells
    plot = page.locator("#count-plot")
    assert plot.is_visible()
    assert plot.locator("path.count-line").count() == 1 and plot.locator("line.target-line").count() == 1
    assert f"target {row['target']}" in plot.text_content()
    if row["reported_count"] is not None:
        assert f"reported {row['reported_count']}" in plot.text_content()
    ticks = plot.locator("text.y-tick").all_text_contents()  # the verified count is labelled, not only the steps
    assert {"0", str(row["target"]), str(row["valid_count"])} == set(ticks)
    assert plot.locator("text.y-label").text_content() == "verified"
    shot(page, "episode.png")


def test_context_view_at_step_k_shows_the_trace_text(page: Any, small_site: Path) -> None:
    row, data, number, turn = known_step(small_site)
    k = number + 1  # the turn after the verdict: its view ends with the verdict's observation
    assert k <= len(data["turns"])
    key = f"small/{row['episode_id']}".replace("|", "%7C")
    page.goto((small_site / "index.html").as_uri() + f"#ep={key}&step={k}")
    page.wait_for_selector("#context-messages")
    verdict_text = data["messages"][turn["reply"]]["content"]
    messages = page.locator("#context-messages .msg pre").all_inner_texts()
    assert messages[-1] == verdict_text
    assert data["objective"] in messages[1]
    shot(page, "context.png")


def test_side_by_side_aligns_at_the_first_different_action(page: Any, small_site: Path) -> None:
    rows = index_rows(small_site)
    a = next(r for r in rows if r["controller"] == "standard" and r["memory"] == "full")
    b = next(r for r in rows if r["controller"] == "standard" and r["memory"] == "memgpt"
             and r["task_id"] == a["task_id"] and r["seed"] == a["seed"])
    ta, tb = episode(small_site, a)["turns"], episode(small_site, b)["turns"]
    first = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x["signature"] != y["signature"]), min(len(ta), len(tb)))
    keys = [f"small/{r['episode_id']}".replace("|", "%7C") for r in (a, b)]
    page.goto((small_site / "index.html").as_uri() + f"#cmp={keys[0]}&with={keys[1]}")
    page.wait_for_selector("#compare")
    if first < max(len(ta), len(tb)):
        assert page.locator("#first-diff").inner_text().endswith(f"first different action at turn {first + 1}")
        assert page.locator("tr.first-diff").get_attribute("id") == f"cmp-{first + 1}"
    shot(page, "compare.png")


def test_a_fork_is_shown_beside_its_parent(page: Any, small_run: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    from pushbench.replay.fork import run_forks
    from pushbench.scoring import score_run
    from pushbench.viewer import build_site

    parent = next(r for r in index_rows(small_run.parent / "site") if r["controller"] == "standard" and r["steps"] > 3)
    forks = tmp_path_factory.mktemp("forks") / "forks"
    run_forks(small_run, forks, "2", "stateqgp", None, None, parent["episode_id"], int(config.params("seed")))
    score_run(forks)
    site = forks.parent / "site"
    build_site([small_run, forks], site)
    fork = next(r for r in index_rows(site) if r["parent"] == parent["episode_id"])
    page.goto((site / "index.html").as_uri() + "#ep=" + f"forks/{fork['episode_id']}".replace("|", "%7C"))
    page.wait_for_selector("#parent")
    assert page.locator("#parent").inner_text().startswith(f"forked at step 2 from {parent['episode_id']}")
    page.locator("#parent a", has_text="side by side").click()
    page.wait_for_selector("#compare")
    text = page.locator("#first-diff").inner_text()
    turn = int(text.rsplit(" ", 1)[1]) if "first different" in text else None
    assert turn is None or turn >= 3  # the two replayed turns are the parent's
    shot(page, "fork.png")
    page.goto((site / "index.html").as_uri())  # the index: experiments by default, forks apart
    page.wait_for_selector("#episodes")
    rows = index_rows(site)
    experiments = [r for r in rows if not r["parent"]]
    assert page.locator("#filter-kind").input_value() == "experiment"
    assert page.locator("#count").inner_text() == f"{len(experiments)} of {len(rows)} episodes"
    page.select_option("#filter-kind", "fork")
    assert page.locator("#count").inner_text() == f"{len(rows) - len(experiments)} of {len(rows)} episodes"
    assert "kind=fork" in page.url
    page.select_option("#filter-kind", "")
    assert page.locator("#count").inner_text() == f"{len(rows)} of {len(rows)} episodes"
