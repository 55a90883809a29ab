"""What one run may spend and what it spent: the meter every API policy of the run charges.

``admit()`` comes before each HTTP request (retries included) and ``charge()`` after each response.
A cap (``--max-cost`` dollars, ``--max-total-tokens`` input + output tokens) is checked at each
``admit``: once what was spent reaches it, no new request starts and the run halts (``RunHalted``,
which is no episode outcome: the episode is left unwritten and a later run redoes it, its paid
calls answered by the response cache). Requests already in flight finish, so a run may pass its
cap by what those cost. Responses from the response cache cost nothing and are only counted.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from typing import Any

from pushbench.prices import PriceTable


class RunHalted(Exception):
    """No new model request in this run: a spend cap was reached, or the run was stopped."""

    def __init__(self, reason: str, detail: str):
        super().__init__(reason, detail)  # both in ``args``: it pickles (Ray's meter actor returns it)
        self.reason = reason  # "max_cost" | "max_total_tokens" | "endpoint_failing" | "interrupted"
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}"


@dataclass
class Spend:
    """Usage of one run's API calls (responses over HTTP; cache hits are counted apart)."""

    requests: int = 0  # HTTP attempts started (retries included)
    responses: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # input tokens the provider served from its prompt cache
    cost: float = 0.0  # US dollars at the price table's list prices, priced models only
    unpriced: list[str] = field(default_factory=list)  # models with no price: their cost is unknown

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cost": round(self.cost, 6)}


class Meter:
    """Thread-safe; one per run (``Meter()`` alone has no cap and only counts)."""

    def __init__(self, max_cost: float | None = None, max_total_tokens: int | None = None,
                 prices: PriceTable | None = None):
        self.max_cost, self.max_total_tokens = max_cost, max_total_tokens
        self.prices = prices or PriceTable()
        self.spend = Spend()
        self.halted: RunHalted | None = None
        self._lock = threading.Lock()

    def admit(self) -> None:
        """Before a request: raises ``RunHalted`` once the run is halted or a cap is reached."""
        with self._lock:
            if self.halted is None:
                self.halted = self._over_cap()
            if self.halted is not None:
                raise self.halted
            self.spend.requests += 1

    def _over_cap(self) -> RunHalted | None:
        spent = self.spend
        if self.max_cost is not None and spent.cost >= self.max_cost:
            return RunHalted("max_cost", f"the --max-cost cap of ${self.max_cost:,.2f} is reached "
                             f"(${spent.cost:,.4f} spent)")
        tokens = spent.input_tokens + spent.output_tokens
        if self.max_total_tokens is not None and tokens >= self.max_total_tokens:
            return RunHalted("max_total_tokens", f"the --max-total-tokens cap of {self.max_total_tokens:,} is "
                             f"reached ({tokens:,} input + output tokens spent)")
        return None

    def charge(self, model: str, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> None:
        price = self.prices.lookup(model)
        with self._lock:
            spent = self.spend
            spent.responses += 1
            spent.input_tokens += input_tokens
            spent.output_tokens += output_tokens
            spent.cached_tokens += cached_tokens
            if price is not None:
                spent.cost += price.cost(input_tokens, output_tokens, cached_tokens)
            elif model not in spent.unpriced:
                spent.unpriced.append(model)

    def hit(self) -> None:
        with self._lock:
            self.spend.cache_hits += 1

    def halt(self, reason: str, detail: str) -> None:
        """Stop the run: every later ``admit`` raises (the first cause is kept)."""
        with self._lock:
            if self.halted is None:
                self.halted = RunHalted(reason, detail)
