"""Usage of a run: model calls, HTTP requests, cache hits, tokens and cost, per episode and per
condition.

An episode's row holds its model calls and tokens (``llm_calls``, ``input_tokens``,
``output_tokens``: every call of the episode, whether the response came over HTTP or from the
response cache). Its trace's ``api`` block (API models only) adds what the client did: HTTP
``requests`` (retries included), ``cache_hits`` and ``cached_tokens`` (input tokens the provider
answered from its prompt cache). ``cost_usd`` is the episode's tokens at the price table's list
prices (``pushbench.prices``): what the episode costs to run without the response cache. It is
empty for a model the table does not price (SimLM among them), never zero.
"""

from __future__ import annotations

from typing import Any

from pushbench.prices import PriceTable

USAGE = ("llm_calls", "requests", "cache_hits", "input_tokens", "cached_tokens", "output_tokens", "cost_usd")
_COUNTS = USAGE[:-1]


def episode_usage(row: dict[str, Any], api: dict[str, Any] | None, prices: PriceTable) -> dict[str, Any]:
    """The usage columns a scored row adds to the runner's raw facts."""
    api = api or {}
    cached = int(api.get("cached_tokens") or 0)
    price = prices.lookup(str(row.get("model", "")))
    known = isinstance(row.get("input_tokens"), int) and isinstance(row.get("output_tokens"), int)
    cost = round(price.cost(row["input_tokens"], row["output_tokens"], cached), 6) if price and known else None
    return {"requests": int(api.get("requests") or 0), "cache_hits": int(api.get("cache_hits") or 0),
            "cached_tokens": cached, "cost_usd": cost}


def usage_summary(episodes: Any, by: list[str]) -> Any:
    """Per condition: the sums of the usage columns (``cost_usd`` empty if any episode's is), or
    None when the episodes carry no usage (rows scored before usage was recorded)."""
    present = [c for c in USAGE if c in episodes]
    if "input_tokens" not in present:
        return None
    grouped = episodes.groupby(by, sort=True)
    table = grouped[[c for c in present if c != "cost_usd"]].sum(min_count=1).reset_index()
    if "cost_usd" in present:
        cost = grouped["cost_usd"].agg(lambda s: s.sum() if s.notna().all() else None)
        table["cost_usd"] = cost.to_numpy()
    for column in _COUNTS:
        if column in table:
            table[column] = table[column].astype("Int64")
    return table


def totals(episodes: Any) -> dict[str, Any]:
    """One line of usage over all the episodes (the end of ``run`` and ``summarize``)."""
    out: dict[str, Any] = {"episodes": int(len(episodes))}
    for column in _COUNTS:
        if column in episodes:
            out[column] = int(episodes[column].fillna(0).sum())
    if "cost_usd" in episodes:
        cost = episodes["cost_usd"]
        out["cost_usd"] = round(float(cost.sum()), 4) if len(cost) and cost.notna().all() else None
        out["priced_episodes"] = int(cost.notna().sum())
    return out
