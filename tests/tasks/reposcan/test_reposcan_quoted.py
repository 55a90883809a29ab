"""RepoScan's SimLM judges search hits quoted in a memory's message as it judges hits on a page:
where the quotation sits; quoted headers and verdicts stay memory notes."""

from __future__ import annotations

from pushbench import guidance as g
from pushbench.policies.sim import get_profile
from pushbench.tasks.reposcan.mind import HIT_INVALID, HIT_VALID, MEM_DONE, MEM_PAGE, PAGE, RepoScanMind

TASK = "Find 10 distinct test functions in the `requests` repository that take the `httpbin` fixture as a parameter."
PAGE_TEXT = ('search "test httpbin": page 2 of 5 (44 results)\n[1] tests.test_a.test_x\n    L3: def test_x(httpbin):\n'
             "[2] tests.test_a.helper\n    L9: def helper(session):")


def facts(messages: list[dict]) -> list[tuple[int, int, str]]:
    mind = RepoScanMind(get_profile("perfect"), 11)
    mind.reader.update(messages, [])
    f = mind.reader.facts
    return [(int(k), int(o), f.names[int(key)]) for k, o, key in zip(f.array("kind"), f.array("offset"), f.array("key"))]


def context(content: str) -> list[dict]:
    return [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": TASK},
            {"role": "user", "content": content}]


def test_quoted_hits_are_judged_like_hits_on_a_page() -> None:
    direct = facts(context(PAGE_TEXT))
    quoted = facts(context("\n".join([g.acg_view(3, 1, 1), g.ACG_UNASSIGNED,
                                      g.acg_evidence(0, 1, [], 'search {"page": 2, "query": "test httpbin"}'),
                                      *map(g.quoted, PAGE_TEXT.splitlines())])))
    judged = {(k, uid) for k, _, uid in direct if k in (HIT_VALID, HIT_INVALID)}
    assert judged == {(HIT_VALID, "tests.test_a.test_x"), (HIT_INVALID, "tests.test_a.helper")}
    assert {(k, uid) for k, _, uid in quoted if k in (HIT_VALID, HIT_INVALID)} == judged
    assert {k for k, _, _ in quoted} == {HIT_VALID, HIT_INVALID, MEM_PAGE}  # the header is a note, not the page
    assert PAGE in {k for k, _, _ in direct}
    assert len({o for _, o, _ in quoted}) == 1  # all at the quotation's place
    assert facts(context(g.acg_view(3, 0, 1))) == []


def test_a_quoted_hit_with_its_verdict_is_done() -> None:
    text = "\n".join(map(g.quoted, [*PAGE_TEXT.splitlines(), "submit: 1 accepted, 0 rejected, 0 duplicate",
                                    "  accepted  tests.test_a.test_x"]))
    got = {(k, uid) for k, _, uid in facts(context(text))}
    assert {(HIT_VALID, "tests.test_a.test_x"), (MEM_DONE, "tests.test_a.test_x")} <= got
