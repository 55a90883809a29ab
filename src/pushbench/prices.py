"""Model list prices in US dollars per million tokens: a dated table in params.yaml (``prices``) or
a file the user passes (``--prices FILE``, the same shape in YAML or JSON).

A model is looked up by its full name (``openai/gpt-4o-mini``), then without its provider
(``gpt-4o-mini``; for ``litellm/anthropic/claude-x`` also ``anthropic/claude-x``), then by its last
part (``claude-x``). Cached input tokens (a provider's prompt cache) cost ``cached_input`` when the
table gives it, else the input price. A model the table does not name has no price: its cost is
unknown (``None``), never zero.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pushbench import config

PER = 1_000_000  # prices are per million tokens


class PriceError(ValueError):
    """A price table that cannot be read (its message says which entry and why)."""


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached_input: float | None = None

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(max(0, cached_tokens), input_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return ((input_tokens - cached) * self.input + cached * cached_price + output_tokens * self.output) / PER


@dataclass(frozen=True)
class PriceTable:
    models: dict[str, Price] = field(default_factory=dict)
    as_of: str = ""  # when the prices were read (they change: check the provider's page)
    source: str = ""

    def lookup(self, model: str) -> Price | None:
        for name in candidates(model):
            if name in self.models:
                return self.models[name]
        return None

    def label(self) -> str:
        return f"list prices as of {self.as_of or 'an unknown date'}" + (f" ({self.source})" if self.source else "")

    @classmethod
    def parse(cls, data: Any, where: str) -> "PriceTable":
        if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
            raise PriceError(f"{where}: a price table is a mapping with `models: {{NAME: {{input, output, "
                             "cached_input}}}}` (US dollars per million tokens)")
        models = {}
        for name, entry in data["models"].items():
            try:
                models[str(name)] = Price(float(entry["input"]), float(entry["output"]),
                                          None if entry.get("cached_input") is None else float(entry["cached_input"]))
            except (TypeError, KeyError, ValueError):
                raise PriceError(f"{where}: the price of {name!r} needs numbers `input` and `output` "
                                 "(and optionally `cached_input`), in US dollars per million tokens") from None
            if min(models[str(name)].input, models[str(name)].output, models[str(name)].cached_input or 0) < 0:
                raise PriceError(f"{where}: the price of {name!r} is negative")
        return cls(models, str(data.get("as_of") or ""), str(data.get("source") or ""))


def candidates(model: str) -> list[str]:
    """The names a model is looked up by, most specific first."""
    parts = model.split("/")
    names = [model, "/".join(parts[1:]), parts[-1]]
    return [n for i, n in enumerate(names) if n and n not in names[:i]]


def load_prices(path: Path | None = None) -> PriceTable:
    """The table of ``path`` (YAML or JSON), else params.yaml's ``prices`` (empty when absent)."""
    if path is None:
        try:
            return PriceTable.parse(config.params("prices"), "params.yaml prices")
        except KeyError:
            return PriceTable()
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text) if Path(path).suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise PriceError(f"{path}: not valid {'JSON' if Path(path).suffix == '.json' else 'YAML'}: {err}") from None
    return PriceTable.parse(data, str(path))
