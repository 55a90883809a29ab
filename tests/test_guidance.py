"""SimLM's guidance vocabulary (``pushbench.guidance``, DESIGN §6.8): no guidance is silently invisible.

Every registered controller runs over each family it applies to (scripted episodes that reach every
branch, plus SimLM episodes), and MemGPT and the LangGraph store run under a small window; every
``[controller]``, ``[progress]`` and ``[memory]`` line the policy was shown, and every controller's
system note and memory prompt text, must be a form of the vocabulary that SimLM's minds read — or a
form named in ``NOT_READ_BY_SIMLM`` with the reason. Those entries are the lead's to decide: making
SimLM read one would change results. Each form's renderer and parser round-trip.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any, Callable

import pytest

from pushbench import guidance as g
from pushbench.backends.native import EpisodeRun, run_native, step, system_prompt
from pushbench.controllers import CONTROLLERS, Controller, make_controller
from pushbench.memory import make_memory
from pushbench.policies.base import text_message, tool_call_message
from pushbench.policies.sim import SimLM, get_profile
from pushbench.registry import MINDS
from pushbench.tasks import get_family, load_tasks

from agentkit import DEFAULT_TASK, ScriptedPolicy, make_env, page_ids
from dataops_kit import dataops_data, dataops_tasks, reference_action  # noqa: F401
from swe_toy import CLAMP_FAULT, toy_spec, write_toy

# Forms SimLM's minds do not act on (rendered for real models). Named so the lead can decide.
NOT_READ_BY_SIMLM = {
    "page-advanced": "StateQGP's notice that it advanced a repeated search; SimLM reads the page shown from "
                     "the search header after it, not the notice",
    "reading-instead": "StateQGP's notice that an all-duplicate submit became a read of the next page; SimLM "
                       "reads the page from the search header, not the notice",
    "removed-submitted": "StateQGP's count of duplicate ids it dropped; SimLM takes its own submit call as "
                         "submitted and reads the verdict lines",
    "nothing-sent": "StateQGP's refusal of an all-duplicate submit; SimLM sees no verdict lines and keeps "
                    "its own submit call as submitted",
    "checked-instead": "UnitQGP's notice that a submit ran the checker; SimLM reads the checker result and the "
                       "submit-now line, not the notice",
    "stale": "UnitQGP's stale-stretch redirect; SimLM reads only the Next line after it",
    "stale-submit": "UnitQGP's notice that it submitted a checker-passed unit; SimLM reads the submit verdict "
                    "that follows, not the notice",
    "item-rules": "StateQGP's system note; SimLM reads the system message only for memory notes and the "
                  "prompt rules of guidance.RULES",
    "unit-rules": "UnitQGP's system note; the work-unit minds read the system message only for memory notes and "
                  "the prompt rules of guidance.RULES",
    "memgpt-persona": "MemGPT's persona block (prompt rule); SimLM's memory skills act because the memory "
                      "tools are offered (memory_skills.offered), not on this text",
    "memgpt-rules": "MemGPT's memory instructions (prompt rule); SimLM's memory skills act because the "
                    "memory tools are offered, not on this text",
    "evicted-summary": "MemGPT's header over the summary; SimLM reads the summary's note lines below it "
                       "(guidance.note_facts), not the header",
    "condensed-summary": "the rolling summary's header; SimLM reads the quotations below it "
                         "(guidance.quoted_blocks, note_facts), not the header",
    "retrieved": "LangGraph store's header over retrieved items; SimLM reads the items' own lines, not the header",
    "acg-view": "ACG's header over its decision view; SimLM reads the quoted evidence lines below it "
                "(guidance.note_facts), not the header",
    "acg-requirement": "ACG's requirement line in the view (the task's own words); SimLM reads the task itself",
    "acg-unassigned": "ACG's header over associations without a requirement link; SimLM reads the quoted lines below",
    "acg-evidence": "ACG's provenance line of one unit (step, tool, arguments); SimLM reads the quoted unit text below",
    "acg-reference": "ACG's pointer to evidence expanded under another requirement; the evidence itself is read there",
}
# Fields of forms SimLM reads that it does not read itself (changing them changes nothing SimLM parses).
UNREAD_FIELDS = {
    "item-progress": "the target T of 'verified accepted V/T', 'ids submitted N', and the closing "
                     "final-blocked/target-reached field (SimLM reads V and the read: field)",
    "unit-progress": "the target T, attempted, pending, 'next: U' (guidance.NEXT: the work-unit mind defined "
                     "the regex but never used it) and the closing field (SimLM reads V and passed:)",
}
PREFIXES = ("[controller]", "[progress]", "[memory]")
Q, ONE_PAGE = "test httpbin", "pyopenssl"  # 5 pages; 1 page


# --------------------------------------------------------------------------- which forms SimLM reads


def sim_modules() -> list[Any]:
    """SimLM's modules: the package, its memory skills and summaries, and every registered mind with its bases."""
    mods = {importlib.import_module("pushbench.policies.sim"),
            importlib.import_module("pushbench.policies.sim.memory_skills"),
            importlib.import_module("pushbench.policies.sim.summary")}
    for name in MINDS:
        for cls in MINDS.load(name).__mro__:
            mods.add(sys.modules[cls.__module__])
    return sorted(mods, key=lambda m: m.__name__)


def sim_reads(form: g.Form) -> bool:
    """Does some SimLM module hold one of the form's readers (the very object, imported from guidance)?"""
    return any(value is reader for mod in sim_modules() for value in vars(mod).values() for reader in form.readers)


def test_the_allow_list_names_exactly_the_forms_simlm_does_not_read() -> None:
    assert set(NOT_READ_BY_SIMLM) <= set(g.FORMS)
    for name, form in g.FORMS.items():
        assert sim_reads(form) == bool(form.readers), f"{name}: its readers are not what SimLM's minds import"
        why = "allow-listed but SimLM reads it" if form.readers else "SimLM does not read it: name it with a reason"
        assert (name in NOT_READ_BY_SIMLM) == (not form.readers), f"{name}: {why}"


# --------------------------------------------------------------------------- round trips

PAGES = [("test httpbin", [1, 2], 5), ("idna", [1], 1)]
ROUND_TRIPS: list[tuple[str, str, tuple[Any, ...], Callable[[str], Any], Any]] = [
    # (form, rendered, pattern groups, what SimLM's reader makes of it, expected)
    ("final-blocked", g.final_blocked(3, 10), ("3", "10"), lambda t: t.startswith(g.BLOCKED_MARK), True),
    ("item-progress", g.item_progress(3, 10, 12, PAGES),
     ("3", "10", "12", '"test httpbin" p1,2/5; "idna" p1/1', g.PROGRESS_OPEN),
     lambda t: (g.PROGRESS.match(t).groups(), g.progress_read(t)),
     (("3", "10"), {"test httpbin": (2, 5), "idna": (1, 1)})),
    ("item-progress", g.item_progress(10, 10), ("10", "10", None, None, g.PROGRESS_DONE), g.progress_read, {}),
    ("unit-progress", g.unit_progress(1, 3, ["U01"], [("U02", "FAIL"), ("U03", "not run")], ["U04"], "U02"),
     ("1", "3", "U01", "U02 (checker FAIL), U03 (checker not run)", "U04", "U02", g.PROGRESS_OPEN),
     g.progress_passed, ["U01"]),
    ("unit-progress", g.unit_progress(0, 3, [], [], ["U01", "U02"], None),
     ("0", "3", "none", "none", "U01,U02", None, g.PROGRESS_OPEN), g.progress_passed, []),
    ("all-pages-read", g.all_pages_read(4, ONE_PAGE), ("4", ONE_PAGE), lambda t: g.ALL_READ.match(t).groups(),
     ("4", ONE_PAGE)),
    ("page-advanced", g.page_advanced(1, Q, 2), ("1", Q, "2"), None, None),
    ("reading-instead", g.reading_instead(3, Q), ("3", Q), None, None),
    ("removed-submitted", g.removed_submitted(2), ("2",), None, None),
    ("nothing-sent", g.NOTHING_SENT, (), None, None),
    ("buffered-hits", g.buffered_hits("[1] pkg.mod.fn\n    L3: def fn():"), (), lambda t: g.BUFFER_MARK in t, True),
    ("next-unit", g.next_unit("U01", "csv_field", "What is `x`?"), ("U01", "csv_field", "What is `x`?"),
     lambda t: g.UNIT_LINE.match(t).groups(), ("U01", "csv_field", "What is `x`?")),
    ("all-accepted", g.ALL_ACCEPTED, (), lambda t: t == g.ALL_ACCEPTED, True),
    ("submit-now", g.submit_now("U01"), ("U01",), lambda t: g.SUBMIT_NOW.match(t).group(1), "U01"),
    ("check-next", g.check_next("run_tests", "U01"), ("U01",), lambda t: g.CHECK_NOW.match(t).group(1), "U01"),
    ("already-accepted", g.already_accepted("U01"), ("U01",), lambda t: g.ALREADY_ACCEPTED.match(t).group(1), "U01"),
    ("checked-instead", g.checked_instead("U01", "run_checker"), ("U01", "run_checker"), None, None),
    ("failed-unchanged", g.failed_unchanged("U01", "run_tests"), ("U01", "run_tests"),
     lambda t: g.FAILED_UNCHANGED.match(t).group(1), "U01"),
    ("repeated-call", g.REPEATED, (), lambda t: g.REPEATED in t.splitlines(), True),
    ("stale", g.stale(8), ("8",), None, None),
    ("stale-submit", g.stale_submit(8, "U02"), ("8", "U02"), None, None),
    ("item-rules", g.ITEM_RULES, (), None, None),
    ("unit-rules", g.UNIT_RULES, (), None, None),
    ("rule-submitted-list", g.RULE_SUBMITTED_LIST, (), g.prompt_rules, ["submitted-list"]),
    ("rule-status-final", g.status_before_final(50), ("50",), g.prompt_rules, ["status-final"]),
    ("rule-unit-verified", g.UNIT_VERIFIED_DATAOPS, (), g.prompt_rules, ["unit-verified"]),
    ("rule-unit-verified", g.UNIT_VERIFIED_SWE, (), g.prompt_rules, ["unit-verified"]),
    ("memgpt-persona", g.MEMGPT_PERSONA, (), None, None),
    ("memgpt-rules", g.MEMGPT_RULES, (), None, None),
    ("memory-warning", g.MEMORY_WARNING, (), lambda t: t.startswith(g.WARNING_CUE), True),
    ("summary-request", g.SUMMARY_SYSTEM, (), lambda t: bool(g.SUMMARY_CUE.search(t)), True),
    ("evicted-summary", g.evicted_summary(12, 40, g.count_note(3, 10)), ("12", "40"),
     lambda t: [f for line in t.splitlines() for f in g.note_facts(line)], [("count", "", 3)]),
    ("condensed-summary", g.condensed_summary(12, 3000, g.quoted("submit U02: accepted (checker passed).")),
     ("12", "3000"), lambda t: [f for line in t.splitlines() for f in g.note_facts(line)], [("done", "U02", 0)]),
    ("condense-request", g.condense_request(900), ("900",), lambda t: g.SUMMARY_LIMIT.match(t).group(1), "900"),
    ("core-block", g.core_block("progress", g.count_note(3, 10), 2_000),
     ("progress", "33", "2000", g.count_note(3, 10)),
     lambda t: g.PROGRESS_BLOCK.search(t).group(1), g.count_note(3, 10)),
    ("memory-stats", g.memory_stats(7, 2), ("7", "2"), lambda t: g.ARCHIVE_SIZE.search(t).group(1), "2"),
    ("quoted-recall", g.quoted("  accepted  pkg.mod.fn"), ("  accepted  pkg.mod.fn",), g.note_facts,
     [("done", "pkg.mod.fn", 0)]),
    ("quoted-recall", g.quoted("submit U02: accepted (checker passed)."), ("submit U02: accepted (checker passed).",),
     g.note_facts, [("done", "U02", 0)]),
    ("quoted-recall", g.quoted("submit U02: rejected (checker failed)."), ("submit U02: rejected (checker failed).",),
     g.note_facts, []),
    ("quoted-recall", g.quoted(f'search "{Q}": page 2 of 5 (44 results)'), (f'search "{Q}": page 2 of 5 (44 results)',),
     g.note_facts, [("page", Q, 2005)]),
    ("retrieved", g.RETRIEVED, (), None, None),
    ("retrieved-item", g.retrieved_item(3, "tool", "status: 1 accepted"), ("3", "tool"), g.retrieved_items,
     [(3, "tool", "status: 1 accepted")]),
    ("acg-view", g.acg_view(12, 9, 140), ("12", "9", "140"), None, None),
    ("acg-requirement", g.acg_requirement("unit:U01", "unit", "U01 [csv_field] What is\n `x`?"),
     ("unit:U01", "unit", "U01 [csv_field] What is `x`?"), None, None),
    ("acg-unassigned", g.ACG_UNASSIGNED, (), None, None),
    ("acg-evidence", g.acg_evidence(7, 3, [5, 9], 'search {"page": 1, "query": "x"}'),
     ("7", "step 3", "5, 9", 'search {"page": 1, "query": "x"}'), None, None),
    ("acg-evidence", g.acg_evidence(8, None, [], "run_checker {}"), ("8", "current event", None, "run_checker {}"),
     None, None),
    ("acg-reference", g.acg_reference(7), ("7",), None, None),
    ("count-note", g.count_note(3, 10), ("3",), g.note_facts, [("count", "", 3)]),
    ("read-note", g.read_note([(Q, (2, 5)), (ONE_PAGE, (1, 1))]), (f'"{Q}" p2/5; "{ONE_PAGE}" p1/1',), g.note_facts,
     [("page", Q, 2005), ("page", ONE_PAGE, 1001)]),
    ("submitted-note", g.submitted_note(["a.b", "c.d"]), ("a.b, c.d",), g.note_facts,
     [("done", "a.b", 0), ("done", "c.d", 0)]),
    ("pending-note", g.pending_note(["U02", "U04"]), ("U02, U04",), g.note_facts,
     [("pending", "U02", 0), ("pending", "U04", 0)]),
]


@pytest.mark.parametrize("name,text,groups,read,expected", ROUND_TRIPS, ids=[r[0] for r in ROUND_TRIPS])
def test_every_form_round_trips(name: str, text: str, groups: tuple[Any, ...], read: Any, expected: Any) -> None:
    assert [f.name for f in g.forms_of(text)] == [name]  # one form, unambiguously
    assert g.FORMS[name].pattern.match(text).groups() == groups
    if read is not None:
        assert read(text) == expected


def test_every_form_has_a_round_trip() -> None:
    assert {r[0] for r in ROUND_TRIPS} == set(g.FORMS)
    assert g.read_note([]) == ""
    assert g.item_progress(0, 5, None, []) == "[progress] verified accepted 0/5 · " + g.PROGRESS_OPEN


def test_quoted_blocks_unquote_each_run_of_quoted_lines() -> None:
    page = ["U01 iris.csv: rows 1-2 of 150 (page 1 of 75)", "columns: a,b", "row 1: 1,2", "", "row 2: 3,4"]
    text = "\n".join(["(E4 · step 2 · inspect {})", *map(g.quoted, page), "(E5 · step 3 · status {})",
                      g.quoted("status: 1 accepted"), "plain line", "|   12| x = 1", "|", "| row 9: 1,2 [...]"])
    assert g.quoted_blocks(text) == ["\n".join(page), "status: 1 accepted", "  12| x = 1\n"]
    assert g.quoted_blocks("no quotation\n|not a quote") == []
    assert g.quoted_blocks(g.quoted("row 1: 1" + g.QUOTE_CUT)) == []  # only a line cut short: nothing shown


# --------------------------------------------------------------------------- episodes


class Recorder:
    """A policy that records every message list it is shown (the memory's view) and delegates."""

    def __init__(self, inner: Any, window: int | None = None):
        self.inner, self.name = inner, getattr(inner, "name", "recorder")
        self.context_window = window or inner.context_window
        self.seen: list[list[dict[str, Any]]] = []

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Any:
        self.seen.append([dict(m) for m in messages])
        return self.inner.act(messages, tools, seed)


class Scripted:
    """A scripted episode through the native step: ``do(tool, **args)`` or ``stop()``, views recorded."""

    def __init__(self, env: Any, controller: str, seen: list[list[dict[str, Any]]]):
        self.env, self.controller = env, make_controller(controller)
        self.memory = make_memory("full")
        self.memory.start(system_prompt(self.controller), env.task.objective)
        self.run, self.tools, self.seen = EpisodeRun(env), env.schemas(), seen

    def send(self, message: dict[str, Any]) -> str:
        if self.env.done:  # e.g. a final or a stop the controller let through
            return ""
        before = len(self.run.transcript)
        policy = Recorder(ScriptedPolicy([message]))
        step(self.run, policy, self.controller, self.memory, self.tools, 0)
        self.seen += policy.seen
        new = self.run.transcript[before:]
        return new[-1]["content"] if len(new) == 2 else ""

    def do(self, tool: str, **args: Any) -> str:
        return self.send(tool_call_message(tool, args, f"c{len(self.run.transcript)}"))

    def early_final(self) -> None:
        """A final at the start, where the controller gates it (``standard`` would end the episode)."""
        if type(self.controller).on_stop is not Controller.on_stop:
            self.do("final", count=self.env.task.target)

    def stop(self) -> str:
        return self.send(text_message("I will stop here."))

    def finish(self, count: int) -> None:
        """Stop, then call final below the target (gating controllers refuse both), then end."""
        self.stop()
        self.do("final", count=count)
        self.send(text_message("done"))  # the last observation reaches a view
        if not self.env.done:
            self.env.end("test")


def reposcan_script(ep: Scripted) -> None:
    env = ep.env
    ep.do("search", query=Q, page=1)
    ep.do("search", query=Q, page=1)  # a repeated page
    ids = page_ids(env, Q, 1)
    ep.do("search", query=Q, page=3)  # page 1 left unsubmitted
    ep.do("submit", ids=ids[:3])
    ep.do("submit", ids=ids[:5])  # three already submitted
    ep.do("submit", ids=ids[:3])  # all already submitted: the next unseen page instead
    ep.do("search", query=ONE_PAGE, page=1)
    ep.do("search", query=ONE_PAGE, page=1)  # every page of the query read
    ep.do("submit", ids=ids[:3])  # all submitted, nothing left to read of the last query


def rows_script(ep: Scripted) -> None:
    page = ep.do("rows", page=1)
    ids = re.findall(r"^(r\d{4}),", page, re.M)
    ep.do("submit", ids=ids[:3])
    ep.do("submit", ids=ids[:5])
    ep.do("submit", ids=ids[:3])
    ep.do("rows", page=1)


def fix(ep: Scripted, unit: str) -> None:
    action = reference_action(ep.env, unit)
    if action[0] == "answer":
        ep.do("answer", unit=unit, value=action[1])
    else:
        ep.do("edit", unit=unit, path=action[1], old=action[2], new=action[3])


def idle(ep: Scripted, steps: int) -> None:
    for i in range(steps):  # looking around without unit work (alternating: no exact repeats)
        ep.do("status") if i % 2 else ep.do("list_units")


def dataops_script(ep: Scripted) -> None:
    env = ep.env
    units = list(env.records)
    wrong = next(u for u in units[1:] if env.records[u].info.kind == "csv_field")
    other = next(u for u in units[1:] if u != wrong)
    ep.do("list_units")
    ep.do("inspect", unit=units[0])
    ep.do("inspect", unit=units[0])  # an exact repeat
    fix(ep, units[0])
    ep.do("submit", unit=units[0])  # changed since its last check: the checker runs instead
    ep.do("submit", unit=units[0])
    ep.do("inspect", unit=units[0])  # already accepted
    ep.do("answer", unit=wrong, value="-12345")
    ep.do("run_checker", unit=wrong)
    ep.do("submit", unit=wrong)  # failed, unchanged
    idle(ep, 9)
    ep.do("inspect", unit=other)  # stale, nothing checker-passed
    fix(ep, other)
    ep.do("run_checker", unit=other)
    idle(ep, 9)
    ep.do("inspect", unit=wrong)  # stale, a checker-passed unit is submitted
    fix(ep, wrong)
    ep.do("run_checker", unit=wrong)
    ep.do("submit", unit=wrong)
    ep.do("inspect", unit=units[0])  # every unit accepted


def swe_script(ep: Scripted) -> None:
    ep.do("list_units")
    ep.do("list_units")  # an exact repeat
    ep.do("edit", unit="U01", path=CLAMP_FAULT.path, old=CLAMP_FAULT.broken, new=CLAMP_FAULT.original)
    ep.do("submit", unit="U01")  # the tests run instead (one real sandboxed run, then cached)
    ep.do("submit", unit="U01")


ITEM_SET, WORK_UNIT = ("reposcan", "rows"), ("dataops", "swe")


def families_of(controller: str) -> tuple[str, ...]:
    if controller == "unitqgp":
        return WORK_UNIT
    if controller.startswith("stateqgp"):
        return ITEM_SET
    return ITEM_SET + WORK_UNIT


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory, dataops_tasks, dataops_data, snapshot_root):  # noqa: F811
    """Makers of a fresh environment per family (real RepoScan, rows and DataOps tasks, the toy SWE repo)."""
    from pushbench.tasks.manifests import build_family
    from pushbench.tasks.swe.env import SweEnv
    from pushbench.tasks.swe.runs import Workspace
    from pushbench.tasks.swe.units import inject
    from pushbench.verifier import Verifier

    make_env(DEFAULT_TASK)  # skips without the RepoScan data
    rows_root = tmp_path_factory.mktemp("rows-data")
    build_family("rows", data_root=rows_root)
    rows_task = next(t for t in load_tasks("rows", rows_root / "manifests") if t.task_id.endswith("n005"))
    toy = write_toy(tmp_path_factory.mktemp("toy"))
    opened: list[Any] = []

    def swe() -> Any:
        spec = toy_spec(1, budget=40)
        ws = Workspace("toy", toy)
        inject(ws, [CLAMP_FAULT])
        opened.append(ws)
        return SweEnv(spec, Verifier(spec.task_id, spec.target, lambda _: False, retry_rejected=True), ws,
                      {"U01": CLAMP_FAULT})

    def dataops(task_id: str = "dataops-n03-b1") -> Any:
        spec = dataops_tasks[task_id].model_copy(update={"budget": 80})
        return get_family("dataops").environment(spec, snapshot_root=snapshot_root, hidden_root=dataops_data / "hidden")

    def sweissues() -> Any:
        env = get_family("sweissues").environment(load_tasks("sweissues")[0], snapshot_root=snapshot_root)
        opened.append(env.workspace)
        return env

    makers = {
        "reposcan": lambda task_id=DEFAULT_TASK: make_env(task_id),
        "rows": lambda: get_family("rows").environment(rows_task, hidden_root=rows_root / "hidden"),
        "dataops": dataops,
        "swe": swe,
        "corpus": lambda: get_family("corpus").environment(load_tasks("corpus")[0]),
        "planning": lambda: get_family("planning").environment(load_tasks("planning")[0]),
        "sweissues": sweissues,
    }
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PUSHBENCH_SWE_TEST_CACHE", str(tmp_path_factory.mktemp("swe-cache")))  # a test run once
        yield makers
    for ws in opened:
        ws.close()


SIM_TASKS = {"reposcan": "reposcan-flask-calls-n025", "dataops": "dataops-n10-b1"}  # long enough to fill 6k tokens
SCRIPTS = {"reposcan": reposcan_script, "rows": rows_script, "dataops": dataops_script, "swe": swe_script}


@pytest.fixture(scope="module")
def emitted(envs: dict[str, Callable[[], Any]]) -> dict[tuple[str, str, str], list[list[dict[str, Any]]]]:
    """(controller, family, memory) -> every view the policy was shown: scripted and SimLM episodes."""
    views: dict[tuple[str, str, str], list[list[dict[str, Any]]]] = {}
    for controller in CONTROLLERS:
        for family in families_of(controller):
            seen = views.setdefault((controller, family, "full"), [])
            ep = Scripted(envs[family](), controller, seen)
            ep.early_final()
            SCRIPTS[family](ep)
            ep.finish(count=0)
            if family in SIM_TASKS:  # SimLM itself (it has no rows mind; its SWE runs are slow)
                policy = Recorder(SimLM("sim/mini"))
                run_native(envs[family](SIM_TASKS[family]), policy, make_controller(controller), make_memory("full"), 3)
                seen += policy.seen
    for family, controllers in (("reposcan", ("standard", "stateqgp")), ("dataops", ("unitqgp",))):
        for controller in controllers:
            for memory in ("memgpt", "langgraph-store", "acg", "summary"):
                policy = Recorder(SimLM("sim/mini"), window=6_000)  # a small window: warnings, evictions, retrieval
                run_native(envs[family](SIM_TASKS[family]), policy, make_controller(controller), make_memory(memory), 5)
                views[(controller, family, memory)] = policy.seen
    return views


def guidance_lines(views: list[list[dict[str, Any]]]) -> set[str]:
    return {line for view in views for m in view for line in str(m.get("content") or "").splitlines()
            if line.startswith(PREFIXES)}


def test_every_guidance_line_is_a_form_simlm_reads_or_a_named_exception(emitted) -> None:
    unknown, invisible = [], []
    for (controller, family, memory), views in emitted.items():
        for line in sorted(guidance_lines(views)):
            forms = g.forms_of(line)
            where = f"{controller} on {family} ({memory}): {line[:160]}"
            if not forms:
                unknown.append(where)
            elif not any(f.readers or f.name in NOT_READ_BY_SIMLM for f in forms):
                invisible.append(where)
    assert not unknown, "guidance outside pushbench.guidance (render it there):\n" + "\n".join(unknown)
    assert not invisible, "guidance SimLM cannot parse:\n" + "\n".join(invisible)


def test_system_notes_and_memory_prompts_are_forms(emitted) -> None:
    for controller in CONTROLLERS:
        note = make_controller(controller).system_note()
        assert not note or g.forms_of(note), f"{controller}'s system note is not a form: {note!r}"
    systems = {str(v[0].get("content")) for views in emitted.values() for v in views if v and v[0]["role"] == "system"}
    assert {f.name for s in systems for f in g.forms_of(s)} == {"summary-request"}  # MemGPT asked for a summary
    memgpt = [s for s in systems if g.MEMGPT_RULES in s]
    assert memgpt
    for content in memgpt:  # "{system}\n\n{rules}\n\n{stats}\n{blocks}"
        _, rules, tail = content.split("\n\n", 2)
        stats, _, blocks = tail.partition("Core memory blocks:\n")
        assert [f.name for f in g.forms_of(rules)] == ["memgpt-rules"]
        assert [f.name for f in g.forms_of(stats + "Core memory blocks:")] == ["memory-stats"]
        found = {m.group(1): m.group(4) for m in g.CORE_BLOCK.finditer(blocks)}
        assert set(found) == {"persona", "task", "progress"}
        assert [f.name for f in g.forms_of(found["persona"])] == ["memgpt-persona"]


def test_the_episodes_reach_every_controller_and_memory_form(emitted) -> None:
    seen = {f.name for views in emitted.values() for line in guidance_lines(views) for f in g.forms_of(line)}
    wanted = {n for n, f in g.FORMS.items() if f.source == "controller"}
    wanted |= {"memory-warning", "evicted-summary", "retrieved", "acg-view", "acg-unassigned", "condensed-summary"}
    assert wanted <= seen, f"never emitted: {sorted(wanted - seen)}"


# --------------------------------------------------------------------------- SimLM really ignores them


def parsed(mind_name: str, objective: str, system: str, tool: str) -> tuple[Any, ...]:
    """What a fresh mind's reader makes of a short context: fact columns (offsets aside) and state."""
    mind = MINDS.load(mind_name)(get_profile("sim/base"), 11)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": objective},
                tool_call_message("status", {}, "c0"), {"role": "tool", "tool_call_id": "c0", "content": tool}]
    mind.reader.update(messages, [])
    facts = mind.reader.facts
    return (tuple(tuple(facts.array(c).tolist()) for c in ("kind", "step", "key", "aux")), tuple(facts.names),
            repr(sorted(mind.reader.state.items(), key=lambda kv: kv[0])))


@pytest.fixture(scope="module")
def objectives(envs: dict[str, Callable[[], Any]]) -> dict[str, str]:
    made = {name: envs[name]() for name in MINDS}
    out = {name: env.task.objective for name, env in made.items()}
    for env in made.values():
        if not env.done:
            env.end("test")
    return out


def samples() -> dict[str, str]:
    return {r[0]: r[1] for r in reversed(ROUND_TRIPS)}


@pytest.mark.parametrize("name", sorted(NOT_READ_BY_SIMLM))
def test_allow_listed_forms_change_nothing_any_mind_parses(name: str, objectives: dict[str, str]) -> None:
    text = samples()[name].splitlines()[0]  # a block's own line, not what it frames
    base = "status: 0 accepted (verified) of target 10"
    for mind, objective in objectives.items():
        plain = parsed(mind, objective, "You are an agent.", base)
        assert parsed(mind, objective, "You are an agent.", f"{base}\n{text}") == plain, f"{mind} reads {name}"
        assert parsed(mind, objective, f"You are an agent. {text}", base) == plain, f"{mind} reads {name} (system)"


def test_unread_progress_fields_change_nothing_any_mind_parses(objectives: dict[str, str]) -> None:
    assert set(UNREAD_FIELDS) <= set(g.FORMS)
    item = [g.item_progress(3, 10, 12, PAGES), g.item_progress(3, 10, 40, PAGES), g.item_progress(3, 3, None, PAGES)]
    unit = [g.unit_progress(1, 3, ["U01"], [("U02", "FAIL")], ["U03"], "U02"),
            g.unit_progress(1, 3, ["U01"], [], ["U02", "U03"], None),
            g.unit_progress(1, 1, ["U01"], [("U03", "PASS")], [], "U03")]
    for mind, objective in objectives.items():
        for variants in (item, unit):
            results = {parsed(mind, objective, "You are an agent.", v) for v in variants}
            assert len(results) == 1, f"{mind} reads a field listed in UNREAD_FIELDS"
