"""SimLM's guidance vocabulary: the text forms through which controllers, memories and prompts steer
the model, each with the renderer that writes it and the parser SimLM reads it with (DESIGN §6.8).

SimLM sees only message text (§6.1), so help reaches it only in a form one of its minds parses.
Controllers and memories render through the functions here; SimLM's minds (``tasks/*/mind.py``,
``policies/sim/units.py``, ``policies/sim/memory_skills.py``) parse through the patterns and helpers
here. ``FORMS`` lists every form with a ``pattern`` that ``match``es its rendered text (a block
such as the buffered hits up to its first line's end; groups give the rendered values back) and its
``readers``: the objects of this module SimLM's minds read it with (empty: SimLM does not act on
that form; it is there for real models, and ``tests/test_guidance.py`` names each such form with
the reason).

Forms: item-set progress block and redirects (StateQGP), unit progress block and redirects
(UnitQGP), the blocked-final notice (every gating controller), controller prompt rules (system
notes), MemGPT's warning, summary, core blocks, statistics, quoted recall and prompt rules,
LangGraph-store's retrieval header, ACG's decision-view framing, and the memory notes SimLM itself
writes into memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

SEP = " · "  # between the fields of a progress block

# --- the blocked-final notice (base.final_gate: gated, stateqgp*, unitqgp) --------------------------
BLOCKED_MARK = "[controller] final blocked"  # SimLM: a line starting with it, or the latest text holding it
BLOCKED = re.compile(r"^\[controller\] final blocked: the verifier has accepted (\d+) of the target (\d+)\.")


def final_blocked(verified: int, target: int) -> str:
    return (f"{BLOCKED_MARK}: the verifier has accepted {verified} of the target {target}. "
            f"The episode continues; keep working toward {target}.")


# --- progress blocks (the last line of every observation under stateqgp* and unitqgp) --------------
PROGRESS = re.compile(r"^\[progress\] verified accepted (\d+)/(\d+)")  # SimLM: the verified count
PROGRESS_OPEN, PROGRESS_DONE = "final is blocked until the target is verified", "target reached"
READ = re.compile(r'"([^"]*)" p([\d,]+)/(\d+)')  # one query's pages in the read field
PASSED = re.compile(r"passed: ([\w.,-]+)")
NEXT = re.compile(r"next: ([\w.-]+)")  # the unit progress block's next unit (SimLM does not read it)
_TAIL = rf"({PROGRESS_OPEN}|{PROGRESS_DONE})$"
ITEM_PROGRESS = re.compile(r"^\[progress\] verified accepted (\d+)/(\d+)(?: · ids submitted (\d+))?"
                           r"(?: · read: (.*?))? · " + _TAIL)
UNIT_PROGRESS = re.compile(r"^\[progress\] verified accepted (\d+)/(\d+) · passed: ([\w.,-]+) · "
                           r"attempted: (.*?) · pending: ([\w.,-]+)(?: · next: ([\w.-]+))? · " + _TAIL)


def _progress(verified: int, target: int, fields: list[str]) -> str:
    tail = PROGRESS_OPEN if verified < target else PROGRESS_DONE
    return SEP.join([f"[progress] verified accepted {verified}/{target}", *fields, tail])


def item_progress(verified: int, target: int, submitted: int | None = None,
                  read: Iterable[tuple[str, Iterable[int], int]] | None = None) -> str:
    """StateQGP's block: verified count, ids submitted (dedupe on), pages read per query (page memory on)."""
    fields = [] if submitted is None else [f"ids submitted {submitted}"]
    items = list(read or [])
    if items:
        fields.append("read: " + "; ".join(f'"{q}" p{",".join(map(str, pages))}/{total}' for q, pages, total in items))
    return _progress(verified, target, fields)


def unit_progress(verified: int, target: int, passed: list[str], attempted: list[tuple[str, str]],
                  pending: list[str], next_unit: str | None) -> str:
    """UnitQGP's block; ``attempted`` holds (unit, checker state: PASS, FAIL or not run)."""
    fields = ["passed: " + (",".join(passed) or "none"),
              "attempted: " + (", ".join(f"{u} (checker {c})" for u, c in attempted) or "none"),
              "pending: " + (",".join(pending) or "none")]
    if next_unit:
        fields.append(f"next: {next_unit}")
    return _progress(verified, target, fields)


def progress_read(line: str) -> dict[str, tuple[int, int]]:
    """The read field of an item progress block: query -> (highest page read, pages)."""
    return {q: (max(map(int, p.split(","))), int(t)) for q, p, t in READ.findall(line)}


def progress_passed(line: str) -> list[str]:
    """The passed field of a unit progress block."""
    m = PASSED.search(line)
    return m.group(1).split(",") if m and m.group(1) != "none" else []


# --- item-set redirects and notices (StateQGP) -----------------------------------------------------
ALL_READ = re.compile(r'^\[controller\] all (\d+) pages of "(.*)" were already read')
PAGE_ADVANCED = re.compile(r'^\[controller\] page (\d+) of "(.*)" was already read; showing page (\d+)\.$')
READING_INSTEAD = re.compile(r'^\[controller\] nothing new to submit; reading page (\d+) of "(.*)" instead\.$')
REMOVED = re.compile(r"^\[controller\] removed (\d+) id\(s\) already submitted\.$")
NOTHING_SENT = "[controller] all ids in this submit were already submitted; nothing was sent."
BUFFER_MARK = "[controller] unsubmitted hits"  # SimLM: the latest observation holds it
BUFFER = re.compile(r"^\[controller\] unsubmitted hits from pages you read earlier \(submit any that qualify\):$", re.M)


def all_pages_read(pages: int, query: str) -> str:
    return f'[controller] all {pages} pages of "{query}" were already read; try a different query.'


def page_advanced(page: int, query: str, shown: int) -> str:
    return f'[controller] page {page} of "{query}" was already read; showing page {shown}.'


def reading_instead(page: int, query: str) -> str:
    return f'[controller] nothing new to submit; reading page {page} of "{query}" instead.'


def removed_submitted(dropped: int) -> str:
    return f"[controller] removed {dropped} id(s) already submitted."


def buffered_hits(body: str) -> str:
    """Found-but-unsubmitted hits shown again; ``body`` is the family's own hit format."""
    return f"{BUFFER_MARK} from pages you read earlier (submit any that qualify):\n{body}"


# --- work-unit redirects and notices (UnitQGP) -----------------------------------------------------
# SimLM reads a backlog line (``U01 [kind] title``, tools/units.py) and the next-unit line alike, and
# the next-unit line's unit (NEXT_UNIT) when it picks another unit after a repeat refusal.
UNIT_LINE = re.compile(r"^(?:\[controller\] Next: )?([A-Za-z0-9_.-]+) \[(\w+)\] (.+)$")
NEXT_UNIT = re.compile(r"^\[controller\] Next: ([A-Za-z0-9_.-]+) \[(\w+)\] (.+)$")
ALL_ACCEPTED = "[controller] every unit is accepted; call final with the verified count."
SUBMIT_NOW = re.compile(r"^\[controller\] (\S+) passed its checker: submit")
CHECK_NOW = re.compile(r"^\[controller\] next: \w+\((\S+)\) before submitting")
ALREADY_ACCEPTED = re.compile(r"^\[controller\] (\S+) is already accepted; nothing more to do there\.$")
CHECKED_INSTEAD = re.compile(r"^\[controller\] (\S+) was not checked since its last change: ran (\w+)\(\1\) "
                             r"instead of submitting\. Submit it once it passes\.$")
FAILED_UNCHANGED = re.compile(r"^\[controller\] (\S+)'s last checker run failed and nothing changed since; "
                              r"fix it \(answer or edit\), then run (\w+)\(\1\)\.$")
REPEATED = "[controller] this repeats your previous call exactly; its result is above."
STALE = re.compile(r"^\[controller\] no unit was accepted in the last (\d+) steps\.$")
STALE_SUBMIT = re.compile(r"^\[controller\] no unit was accepted in the last (\d+) steps; submitting (\S+), "
                          r"which passed its checker\.$")


def next_unit(unit: str, kind: str, title: str) -> str:
    return f"[controller] Next: {unit} [{kind}] {title}"


def submit_now(unit: str) -> str:
    return f"[controller] {unit} passed its checker: submit({unit}) now."


def check_next(checker: str, unit: str) -> str:
    return f"[controller] next: {checker}({unit}) before submitting."


def already_accepted(unit: str) -> str:
    return f"[controller] {unit} is already accepted; nothing more to do there."


def checked_instead(unit: str, checker: str) -> str:
    return (f"[controller] {unit} was not checked since its last change: ran {checker}({unit}) instead of "
            "submitting. Submit it once it passes.")


def failed_unchanged(unit: str, checker: str) -> str:
    return (f"[controller] {unit}'s last checker run failed and nothing changed since; fix it (answer or edit), "
            f"then run {checker}({unit}).")


def stale(steps: int) -> str:
    return f"[controller] no unit was accepted in the last {steps} steps."


def stale_submit(steps: int, unit: str) -> str:
    return f"[controller] no unit was accepted in the last {steps} steps; submitting {unit}, which passed its checker."


# --- prompt rules: controllers' system notes -------------------------------------------------------
ITEM_RULES = ("A progress controller tracks verified progress: every tool result ends with a "
              "[progress] line, and final is only accepted once the verified count reaches the target.")
UNIT_RULES = ("A backlog controller tracks the units: every tool result ends with a [progress] block "
              "(passed, attempted and pending units, and the next unit), a submit of a unit changed since "
              "its last checker run runs the checker first, and final is only accepted once the verified "
              "count reaches the target.")

# --- prompt rules SimLM acts on (the black-box checklist, the work-unit families' objectives) ------
# A rule is read where it sits (a fact at its offset, under bounded attention) and followed with the
# profile's follow_guidance when recalled (policies/sim/units.py, tasks/reposcan/mind.py).
RULE_SUBMITTED_LIST = "Keep a written list of every identifier you have submitted; never submit an identifier twice."
RULE_STATUS_FINAL = re.compile(r"Do not stop, and do not call final, before status\(\) reports at least (\d+) "
                               r"accepted \(verified\)\.")
UNIT_VERIFIED_DATAOPS = "a unit counts only if its checker passes at submit"  # DataOps-lite's objective
UNIT_VERIFIED_SWE = "accepted only if its tests pass"  # SWE-lite's objective
RULE_UNIT_VERIFIED = re.compile(f"(?:{re.escape(UNIT_VERIFIED_DATAOPS)}|{re.escape(UNIT_VERIFIED_SWE)})")
RULES = {"submitted-list": re.compile(re.escape(RULE_SUBMITTED_LIST)), "status-final": RULE_STATUS_FINAL,
         "unit-verified": RULE_UNIT_VERIFIED}


def status_before_final(target: int) -> str:
    return f"Do not stop, and do not call final, before status() reports at least {target} accepted (verified)."


def prompt_rules(text: str) -> list[str]:
    """The rules (names of ``RULES``) a prompt text states, in ``RULES`` order."""
    return [name for name, pattern in RULES.items() if pattern.search(text)]


# --- MemGPT: prompt rules, warning, summary, core blocks, statistics, quoted recall -----------------
MEMGPT_PERSONA = ("I am a careful, persistent agent. I keep my progress block current (verified count, "
                  "searches and pages read), archive the ids I submit, and check memory before resubmitting.")
MEMGPT_RULES = (
    "Memory: your context holds the most recent messages only; when it is full, older messages are "
    "evicted and replaced by a summary you write. Core memory (below) is always visible; edit it with "
    "core_memory_append and core_memory_replace (each block has a character limit). Save what you will "
    "need later (verified progress, what you submitted, which search pages you read) before it is "
    "evicted. archival_memory_insert stores a passage and archival_memory_search finds passages; "
    "conversation_search finds earlier messages, including evicted ones. Memory tools do not use the "
    "step budget.")
MEMORY_WARNING = ("[memory] Warning: the conversation history will soon reach its maximum length and older "
                  "messages will be evicted. Save any important information to core or archival memory now.")
WARNING_CUE = "[memory] Warning:"  # SimLM: the latest message starts with it
SUMMARY_SYSTEM = (
    "Your job is to summarize a history of previous messages in a conversation between you (an agent) "
    "and a tool environment. These messages are about to be evicted from your context. Write, in the "
    "first person, what you will need to continue the task: the verified progress, the identifiers you "
    "submitted, and the searches and pages you read. Only output the summary.")
SUMMARY_REQUEST = "Summarize the messages above now (they will be evicted)."
SUMMARY_CUE = re.compile(r"summari[sz]e a history of previous messages", re.I)  # SimLM: a summary request
EVICTED = re.compile(r"^\[memory\] (\d+) earlier messages were evicted from the context \((\d+) messages so far; "
                     r"search them with conversation_search\)\. Summary you wrote when they were evicted:$", re.M)
CORE_BLOCK = re.compile(r'<(\w+) characters="(\d+)/(\d+)">\n(.*?)\n</\1>', re.S)
PROGRESS_BLOCK = re.compile(r'<progress characters="\d+/\d+">\n(.*?)\n</progress>', re.S)  # SimLM: its notes
MEMORY_STATS = re.compile(r"^### Memory\n(\d+) messages are stored in recall memory \(conversation_search\); "
                          r"(\d+) passages in archival memory \(archival_memory_search\)\.\nCore memory blocks:$")
ARCHIVE_SIZE = re.compile(r"(\d+) passages in archival memory")  # SimLM: is there anything to search?
QUOTED = re.compile(r"^\| (.*)$")  # a line of an earlier message quoted by conversation_search
QUOTED_VERDICT = re.compile(r"^\| +(?:accepted|rejected|duplicate) +(\S+)$")  # SimLM: an id that had a verdict
QUOTED_UNIT_VERDICT = re.compile(r"^\| +submit (\S+): (?:accepted|duplicate)\b")  # SimLM: a unit accepted before
QUOTED_PAGE = re.compile(r'^\| +search "(.*)": page (\d+) of (\d+) \(\d+ results\)$')  # SimLM: a page read


def evicted_summary(evicted: int, total: int, summary: str) -> str:
    return (f"[memory] {evicted} earlier messages were evicted from the context ({total} messages so far; "
            f"search them with conversation_search). Summary you wrote when they were evicted:\n{summary}")


def core_block(label: str, value: str, limit: int) -> str:
    return f'<{label} characters="{len(value)}/{limit}">\n{value}\n</{label}>'


def memory_stats(messages: int, passages: int) -> str:
    return (f"### Memory\n{messages} messages are stored in recall memory (conversation_search); "
            f"{passages} passages in archival memory (archival_memory_search).\nCore memory blocks:")


def quoted(line: str) -> str:
    return "| " + line


QUOTE_CUT = " [...]"  # ends a quoted line where the quotation was cut short


def quoted_blocks(text: str) -> list[str]:
    """The texts quoted in ``text``: each run of consecutive ``| `` lines, unquoted (SimLM reads a
    quotation as the text it quotes). A bare ``|`` is a quoted empty line; a last line cut short
    (ending in ``QUOTE_CUT``) is dropped, as its end is not shown."""
    blocks: list[list[str]] = []
    run: list[str] | None = None
    for line in text.splitlines():
        if line == "|" or line.startswith("| "):
            if run is None:
                run = []
                blocks.append(run)
            run.append(line[2:])
        else:
            run = None
    for block in blocks:
        if block[-1].endswith(QUOTE_CUT):
            block.pop()
    return ["\n".join(block) for block in blocks if block]


# --- the rolling summary (memory/summary.py): its request and the summary message ------------------
# The request's system message is SUMMARY_SYSTEM (SimLM: a summary request); its last message asks
# for a size the summary must keep to, which SimLM reads with SUMMARY_LIMIT.
CONDENSED = re.compile(r"^\[memory\] Summary of the (\d+) earlier messages of this episode, written by you when "
                       r"the history passed (\d+) tokens; the recent messages follow\.$", re.M)
SUMMARY_LIMIT = re.compile(r"^Summarize the messages above now in at most (\d+) tokens")  # SimLM: its size limit


def condense_request(limit: int) -> str:
    return (f"Summarize the messages above now in at most {limit} tokens; they will be replaced by your "
            "summary. Quote facts you will need with a leading '| '.")


def condensed_summary(messages: int, threshold: int, summary: str) -> str:
    return (f"[memory] Summary of the {messages} earlier messages of this episode, written by you when the "
            f"history passed {threshold} tokens; the recent messages follow.\n{summary}")


# --- LangGraph store: the retrieved-items message --------------------------------------------------
RETRIEVED = "[memory] Retrieved from the long-term store (for the task and the latest event):"
RETRIEVED_ITEM = re.compile(r"^\(memory from step (-?\d+), (\w+)\)$", re.M)


def retrieved_item(step: int, role: Any, text: str) -> str:
    return f"(memory from step {step}, {role})\n{text}"


def retrieved_items(text: str) -> list[tuple[int, str, str]]:
    """(step, role, text) of each item of a retrieved-items message, in order (SimLM reads an item
    as the earlier message it shows); a last line cut short (ending in ``QUOTE_CUT``) is dropped."""
    heads = list(RETRIEVED_ITEM.finditer(text))
    items = []
    for k, head in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        lines = text[head.end():end].strip("\n").split("\n")
        if lines and lines[-1].endswith(QUOTE_CUT):
            lines.pop()
        items.append((int(head.group(1)), head.group(2), "\n".join(lines)))
    return items


# --- ACG: the decision view (memory/acg) -----------------------------------------------------------
# Framing lines for real models; SimLM reads the evidence lines under them as ordinary lines.
ACG_VIEW = re.compile(r"^\[memory\] Decision view at step (\d+): evidence from earlier steps, grouped by the "
                      r"requirement the action that produced it served \((\d+) of (\d+) stored units shown; "
                      r"the rest stay in memory\)\.$")
ACG_REQUIREMENT = re.compile(r"^\[memory\] requirement (\S+) \(([\w-]+)\): (.*)$")
ACG_UNASSIGNED = ("[memory] Associations with no requirement link (retrieved for the task and the latest "
                  "event; not evidence for any requirement):")
ACG_EVIDENCE = re.compile(r"^\(E(\d+) · (current event|step -?\d+)(?: \(also steps ([-\d, ]+)\))? · (.*)\)$")
ACG_REFERENCE = re.compile(r"^\(E(\d+) · shown above\)$")


def acg_view(step: int, shown: int, total: int) -> str:
    return (f"[memory] Decision view at step {step}: evidence from earlier steps, grouped by the requirement "
            f"the action that produced it served ({shown} of {total} stored units shown; the rest stay in memory).")


def acg_requirement(rid: str, kind: str, text: str) -> str:
    return f"[memory] requirement {rid} ({kind}): {' '.join(text.split())}"


def acg_evidence(unit: int, step: int | None, also: Iterable[int], source: str) -> str:
    """A unit's header: its id, the step that produced it (None: the current event), other steps, source."""
    where = "current event" if step is None else f"step {step}"
    others = ", ".join(map(str, also))
    return f"(E{unit} · {where}{f' (also steps {others})' if others else ''} · {source})"


def acg_reference(unit: int) -> str:
    return f"(E{unit} · shown above)"


# --- memory notes: what SimLM writes into core/archival memory and summaries, and reads back --------
NOTE_COUNT = re.compile(r"^progress: (\d+) accepted")
NOTE_IDS = re.compile(r"^submitted: (.+)$")
NOTE_PENDING = re.compile(r"^pending: (.+)$")  # work units not accepted yet (SimLM's unit notes)
NOTE_READ = re.compile(r"^read: (.+)$")
NOTE_READ_ITEM = re.compile(r'"([^"]*)" p(\d+)/(\d+)')


def count_note(count: int, target: int) -> str:
    return f"progress: {count} accepted of target {target}"


def read_note(pages: Iterable[tuple[str, tuple[int, int]]]) -> str:
    """``read: "q" pR/T; ...`` for (query, (highest page read, pages)); empty without pages."""
    items = list(pages)
    return "read: " + "; ".join(f'"{q}" p{r}/{t}' for q, (r, t) in items) if items else ""


def submitted_note(ids: Iterable[str]) -> str:
    return "submitted: " + ", ".join(ids)


def pending_note(units: Iterable[str]) -> str:
    return "pending: " + ", ".join(units)


def note_facts(line: str) -> list[tuple[str, str, int]]:
    """Facts in one line of a memory note: ("count", "", n), ("done", id, 0), ("pending", unit, 0),
    ("page", query, p*1000+t)."""
    if m := NOTE_COUNT.match(line):
        return [("count", "", int(m.group(1)))]
    if m := NOTE_IDS.match(line):
        return [("done", uid.strip(), 0) for uid in m.group(1).split(",") if uid.strip()]
    if m := NOTE_PENDING.match(line):
        return [("pending", unit.strip(), 0) for unit in m.group(1).split(",") if unit.strip()]
    if m := NOTE_READ.match(line):
        return [("page", q, int(p) * 1000 + int(t)) for q, p, t in NOTE_READ_ITEM.findall(m.group(1))]
    if m := QUOTED_VERDICT.match(line):
        return [("done", m.group(1), 0)]
    if m := QUOTED_UNIT_VERDICT.match(line):
        return [("done", m.group(1), 0)]
    if m := QUOTED_PAGE.match(line):
        return [("page", m.group(1), int(m.group(2)) * 1000 + int(m.group(3)))]
    return []


# --- the registry --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Form:
    name: str
    source: str  # "controller" | "memory" | "prompt" | "note" (SimLM's own memory notes)
    pattern: re.Pattern[str]  # ``match``es the rendered text (for a block: up to its first line's end)
    readers: tuple[Any, ...] = ()  # what SimLM's minds read it with (empty: SimLM does not read it)


def _exact(text: str) -> re.Pattern[str]:
    return re.compile(f"^{re.escape(text)}$")


FORMS: dict[str, Form] = {f.name: f for f in (
    Form("final-blocked", "controller", BLOCKED, (BLOCKED_MARK,)),
    Form("item-progress", "controller", ITEM_PROGRESS, (PROGRESS, progress_read)),
    Form("unit-progress", "controller", UNIT_PROGRESS, (PROGRESS, progress_passed)),
    Form("all-pages-read", "controller", ALL_READ, (ALL_READ,)),
    Form("page-advanced", "controller", PAGE_ADVANCED),
    Form("reading-instead", "controller", READING_INSTEAD),
    Form("removed-submitted", "controller", REMOVED),
    Form("nothing-sent", "controller", _exact(NOTHING_SENT)),
    Form("buffered-hits", "controller", BUFFER, (BUFFER_MARK,)),
    Form("next-unit", "controller", NEXT_UNIT, (UNIT_LINE, NEXT_UNIT)),
    Form("all-accepted", "controller", _exact(ALL_ACCEPTED), (ALL_ACCEPTED,)),
    Form("submit-now", "controller", SUBMIT_NOW, (SUBMIT_NOW,)),
    Form("check-next", "controller", CHECK_NOW, (CHECK_NOW,)),
    Form("already-accepted", "controller", ALREADY_ACCEPTED, (ALREADY_ACCEPTED,)),
    Form("checked-instead", "controller", CHECKED_INSTEAD),
    Form("failed-unchanged", "controller", FAILED_UNCHANGED, (FAILED_UNCHANGED,)),
    Form("repeated-call", "controller", _exact(REPEATED), (REPEATED,)),
    Form("stale", "controller", STALE),
    Form("stale-submit", "controller", STALE_SUBMIT),
    Form("item-rules", "prompt", _exact(ITEM_RULES)),
    Form("unit-rules", "prompt", _exact(UNIT_RULES)),
    Form("rule-submitted-list", "prompt", re.compile(re.escape(RULE_SUBMITTED_LIST) + "$"), (prompt_rules,)),
    Form("rule-status-final", "prompt", re.compile(RULE_STATUS_FINAL.pattern + "$"), (prompt_rules,)),
    Form("rule-unit-verified", "prompt", re.compile(f"^{RULE_UNIT_VERIFIED.pattern}$"), (prompt_rules,)),
    Form("memgpt-persona", "prompt", _exact(MEMGPT_PERSONA)),
    Form("memgpt-rules", "prompt", _exact(MEMGPT_RULES)),
    Form("memory-warning", "memory", _exact(MEMORY_WARNING), (WARNING_CUE,)),
    Form("summary-request", "memory", _exact(SUMMARY_SYSTEM), (SUMMARY_CUE,)),
    Form("evicted-summary", "memory", EVICTED),
    Form("condensed-summary", "memory", CONDENSED),
    Form("condense-request", "memory", SUMMARY_LIMIT, (SUMMARY_LIMIT,)),
    Form("core-block", "memory", CORE_BLOCK, (PROGRESS_BLOCK,)),
    Form("memory-stats", "memory", MEMORY_STATS, (ARCHIVE_SIZE,)),
    Form("quoted-recall", "memory", QUOTED, (note_facts, quoted_blocks)),  # verdicts, headers; quoted pages
    Form("retrieved", "memory", _exact(RETRIEVED)),
    Form("retrieved-item", "memory", RETRIEVED_ITEM, (retrieved_items,)),
    Form("acg-view", "memory", ACG_VIEW),
    Form("acg-requirement", "memory", ACG_REQUIREMENT),
    Form("acg-unassigned", "memory", _exact(ACG_UNASSIGNED)),
    Form("acg-evidence", "memory", ACG_EVIDENCE),
    Form("acg-reference", "memory", ACG_REFERENCE),
    Form("count-note", "note", NOTE_COUNT, (note_facts,)),
    Form("read-note", "note", NOTE_READ, (note_facts,)),
    Form("submitted-note", "note", NOTE_IDS, (note_facts,)),
    Form("pending-note", "note", NOTE_PENDING, (note_facts,)),
)}


def forms_of(text: str) -> list[Form]:
    """The forms whose pattern matches ``text`` (a line, or a block from its first line)."""
    return [f for f in FORMS.values() if f.pattern.match(text)]
