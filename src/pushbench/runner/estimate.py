"""A grid's model calls, tokens and cost before it runs: an estimate, never a measurement.

Each episode of the grid is looked up in the recorded runs (``data/runs/*/episodes.jsonl``): the
same task, controller, memory and seed played by a SimLM profile (the grid's own profile for a
``sim/*`` model; params.yaml ``estimate.like``, ``sim/base``, standing in for any other model),
else the mean of that task, controller and memory over the recorded seeds. An episode no run
holds comes from the family's stated model (params.yaml ``estimate.families``): a share of the
step budget, one call per step, each call's input growing by a fixed number of tokens up to the
model's context window. Cost is the tokens at the price table's list prices (``pushbench.prices``),
with no provider prompt caching; a model without a price has no cost.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from pushbench import config
from pushbench.prices import PriceTable
from pushbench.runner.grid import EpisodeSpec, Grid
from pushbench.tasks.base import TaskSpec

Usage = tuple[float, float, float]  # llm_calls, input_tokens, output_tokens


@dataclass(frozen=True)
class FamilyModel:
    budget_fraction: float
    calls_per_step: float
    first: int  # input tokens of the first call
    growth: int  # input tokens each step adds to the context
    output_per_call: int

    def episode(self, budget: int, window: int) -> Usage:
        steps = max(1, round(self.budget_fraction * budget))
        calls = steps * self.calls_per_step
        context = sum(min(window, self.first + k * self.growth) for k in range(steps))
        return calls, context * self.calls_per_step, calls * self.output_per_call


@dataclass
class ModelEstimate:
    model: str
    episodes: int = 0
    recorded: int = 0  # episodes taken from recorded SimLM runs (the rest: the family model)
    llm_calls: float = 0.0
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost_usd: float | None = None

    def add(self, usage: Usage, recorded: bool) -> None:
        self.episodes += 1
        self.recorded += recorded
        self.llm_calls += usage[0]
        self.input_tokens += usage[1]
        self.output_tokens += usage[2]


@dataclass
class Estimate:
    models: list[ModelEstimate]
    like: str
    runs: list[str] = field(default_factory=list)  # the run folders that held matching episodes
    prices: PriceTable = field(default_factory=PriceTable)


def family_model(family: str) -> FamilyModel:
    try:
        return FamilyModel(**config.params(f"estimate.families.{family}"))
    except KeyError:
        raise ValueError(f"params.yaml has no estimate model for family {family!r} (estimate.families)") from None


def stand_in(model: str, like: str) -> str:
    """The SimLM profile whose recorded episodes stand in for ``model``."""
    return model if model.startswith("sim/") else like


def recorded(runs: Path, family: str, models: set[str]) -> tuple[dict[tuple, Usage], dict[tuple, Usage], list[str]]:
    """Recorded episodes of ``models`` in the family: by (task, controller, memory, model, seed),
    the means over seeds by (task, controller, memory, model), and the run folders that held any."""
    exact: dict[tuple, Usage] = {}
    seeds: dict[tuple, list[Usage]] = defaultdict(list)
    used = []
    for path in sorted(runs.glob("*/episodes.jsonl")):
        found = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if f'"family": "{family}"' not in line:  # most lines are other families' (a cheap test first)
                continue
            row = json.loads(line)
            if row.get("family") != family or row.get("model") not in models or row.get("input_tokens") is None:
                continue
            usage = (float(row["llm_calls"]), float(row["input_tokens"]), float(row["output_tokens"]))
            key = (row["task_id"], row["controller"], row["memory"], row["model"])
            exact.setdefault((*key, int(row["seed"])), usage)
            seeds[key].append(usage)
            found = True
        if found:
            used.append(shown(path.parent))
    means = {key: tuple(fmean(u[i] for u in values) for i in range(3)) for key, values in seeds.items()}
    return exact, means, used  # type: ignore[return-value]


def shown(path: Path) -> str:
    """A path as the user should read it: relative to the project root when inside it."""
    try:
        return str(path.resolve().relative_to(config.ROOT))
    except ValueError:
        return str(path)


def window_of(model: str, options: dict[str, Any]) -> int:
    from pushbench.policies.chat import window_for

    if model.startswith("sim/"):
        from pushbench.policies.sim.profiles import get_profile

        return get_profile(model).window
    return int(options.get("context_window") or window_for(model.split("/")[-1]))


def estimate(grid: Grid, tasks: list[TaskSpec], prices: PriceTable, runs: Path | None = None,
             like: str | None = None, options: dict[str, Any] | None = None,
             skip: set[str] | None = None) -> Estimate:
    """The grid's episodes (less those in ``skip``, already done) estimated per model."""
    like = like or str(config.params("estimate.like"))
    exact, means, used = recorded(runs or config.RUNS, grid.family, {stand_in(m, like) for m in grid.models})
    modelled = family_model(grid.family)
    budgets = {t.task_id: t.budget for t in tasks}
    out = {m: ModelEstimate(m) for m in grid.models}
    for spec in grid.episodes_of(tasks):
        if skip and spec.episode_id in skip:
            continue
        hit = _recorded(spec, like, exact, means)
        usage = hit or modelled.episode(budgets[spec.task_id], window_of(spec.model, options or {}))
        out[spec.model].add(usage, hit is not None)
    for item in out.values():
        price = prices.lookup(item.model)
        if price is not None:
            item.cost_usd = price.cost(round(item.input_tokens), round(item.output_tokens))
    return Estimate(list(out.values()), like, used, prices)


def _recorded(spec: EpisodeSpec, like: str, exact: dict[tuple, Usage], means: dict[tuple, Usage]) -> Usage | None:
    key = (spec.task_id, spec.controller, spec.memory, stand_in(spec.model, like))
    return exact.get((*key, spec.seed)) or means.get(key)
