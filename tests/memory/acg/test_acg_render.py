"""The renderer's properties: within budget, whole blocks only, shared units expanded once, omitted units kept."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pushbench import guidance as g
from pushbench.memory.acg.render import Renderer, evidence_lines
from pushbench.memory.base import Event
from pushbench.policies.base import tool_call_message
from pushbench.memory.acg.views import DecisionView, RequirementView
from pushbench.tokens import count_message_tokens

from acg_kit import REQUIREMENTS, fed


@dataclass
class Parsed:
    sections: list[str] = field(default_factory=list)  # requirement ids in order, "assoc" for associations
    blocks: list[tuple[str, int, str, list[str]]] = field(default_factory=list)  # (section, unit, kind, body)


def parse(text: str) -> Parsed:
    lines = text.splitlines()
    assert g.ACG_VIEW.match(lines[0]), lines[0]
    out = Parsed()
    for line in lines[1:]:
        if m := g.ACG_REQUIREMENT.match(line):
            out.sections.append(m.group(1))
        elif line == g.ACG_UNASSIGNED:
            out.sections.append("assoc")
        elif m := g.ACG_EVIDENCE.match(line):
            out.blocks.append((out.sections[-1], int(m.group(1)), "evidence", []))
        elif m := g.ACG_REFERENCE.match(line):
            out.blocks.append((out.sections[-1], int(m.group(1)), "reference", []))
        else:
            assert line.startswith("| "), f"a line outside any block: {line!r}"
            out.blocks[-1][3].append(line)
    return out


def check(memory, budget: int) -> Parsed | None:
    view = memory.decision_view()
    out = Renderer().render(view, memory.store, memory.current_event, budget)
    if out.text is None:
        assert out.tokens == 0
        return None
    tokens = count_message_tokens([{"role": "user", "content": out.text}])
    assert tokens <= out.tokens <= budget and out.tokens - tokens <= 1  # never over budget; the bound is tight
    parsed = parse(out.text)
    for section, unit, kind, body in parsed.blocks:  # whole blocks only
        full = [g.quoted(x) for x in memory.store.units[unit].text.splitlines()]
        if kind == "evidence":
            assert body == full or (section == "assoc" and body == full[:1]), (unit, body)
        else:
            assert body == []
    shown = [u for _, u, kind, _ in parsed.blocks if kind == "evidence"]
    assert len(shown) == len(set(shown))  # each unit expanded (or, as an association, shortened) once
    assert sorted(shown) == sorted(out.expanded + out.shortened)
    assert all(section == "assoc" for section, u, kind, _ in parsed.blocks if u in out.shortened)
    for k, (_, unit, kind, _) in enumerate(parsed.blocks):  # a reference points at a unit expanded above
        if kind == "reference":
            assert unit in [u for _, u, kd, _ in parsed.blocks[:k] if kd == "evidence"]
    known = {r.id for r in REQUIREMENTS}
    for section, unit, kind, _ in parsed.blocks:  # evidence sits only under requirements it is linked to
        if section != "assoc":
            assert section in known and section in memory.store.units[unit].requirements()
    return parsed


def test_property_views_over_random_episodes_and_budgets() -> None:
    rnd = random.Random(13)
    shown = 0
    for seed in range(30):
        memory = fed(seed, rnd.randint(5, 60))
        for budget in [0, 10, 60, 200, 800, 2_500, 5_000] + [rnd.randint(1, 5_000) for _ in range(4)]:
            parsed = check(memory, budget)
            shown += parsed is not None
    assert shown > 200


def test_shared_evidence_is_expanded_once_and_referenced_elsewhere() -> None:
    memory = fed(1, 40)
    view = memory.decision_view()
    unit = view.requirements[0].history[0] if view.requirements[0].history else view.unassigned[0]
    shared = DecisionView(view.step, [RequirementView(REQUIREMENTS[0], [], [unit]),
                                      RequirementView(REQUIREMENTS[1], [], [unit])], [])
    out = Renderer().render(shared, memory.store, memory.current_event, 5_000)
    assert out.expanded == [unit] and out.referenced == [unit]
    assert out.text.count(g.acg_reference(unit)) == 1


def test_tight_budgets_keep_current_event_evidence_first_and_shorten_associations() -> None:
    memory = fed(4, 50)
    memory.ingest(Event(51, "action", tool_call_message("run_checker", {"unit": "U01"}, "c51")))
    memory.ingest(Event(51, "observation", {"role": "tool", "tool_call_id": "c51", "content": "U01 ok"},
                        {"tool": "run_checker", "arguments": {"unit": "U01"}, "call_id": "c51",
                         "requirements": ["unit:U01"]}))
    view = memory.decision_view()
    current = view.requirements[0].current
    history = [u for rv in view.requirements for u in rv.history]
    assert len(current) == 1 and history and view.unassigned
    renderer = Renderer()
    cost = {u: renderer.cost(evidence_lines(memory.store.units[u], memory.current_event)) for u in history + current}
    larger = [u for u in history if cost[u] >= cost[current[0]]]  # if one of these fits, the current one fits first
    assert larger
    full = Renderer().render(view, memory.store, memory.current_event, 5_000)
    assert not full.shortened and not full.omitted
    tight_seen = 0
    for budget in range(40, full.tokens, 10):
        out = Renderer().render(view, memory.store, memory.current_event, budget)
        if out.text is None:
            continue
        if any(u in out.expanded for u in larger):
            assert current[0] in out.expanded, budget  # current-event evidence went in first
        assert set(out.shortened) <= set(view.unassigned)
        tight_seen += bool(out.shortened)
    assert tight_seen  # associations were shortened under tight budgets


def test_omitted_units_stay_in_memory_for_later_decisions() -> None:
    memory = fed(6, 60)
    small = Renderer().render(memory.decision_view(), memory.store, memory.current_event, 150)
    assert small.omitted
    big = Renderer().render(memory.decision_view(), memory.store, memory.current_event, 5_000)
    assert set(small.omitted) <= set(big.expanded + big.shortened + big.omitted)
    assert set(small.omitted) & set(big.expanded)  # what did not fit then is shown when there is room
    assert all(memory.store.units[u].occurrences for u in small.omitted)
