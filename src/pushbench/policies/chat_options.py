"""The chat policy's settings: ``ChatOptions`` (defaults in params.yaml ``chat:``) and ``ChatStats``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pushbench import config

DEFAULT_MAX_TOKENS = 1024  # tokens per reply: a tool call needs far fewer; 0 sends no limit


def default_cache_dir() -> Path:
    return config.DATA / "cache" / "responses"


@dataclass
class ChatOptions:
    base_url: str | None = None  # default: $OPENAI_BASE_URL, else the SDK's default endpoint
    request_timeout: float = 60.0  # seconds per HTTP attempt
    max_retries: int = 8  # transport retries per call before the episode fails
    call_deadline: float = 300.0  # seconds one call may take, every attempt and wait included
    episode_deadline: float = 3600.0  # seconds of model calls per episode, waits included
    backoff: float = 0.5  # first wait without Retry-After; doubles per retry
    backoff_max: float = 60.0  # no single wait is longer (Retry-After included)
    cache: bool = True
    cache_dir: Path | None = None  # default: data/cache/responses
    context_window: int | None = None  # default: the sim-* profile's window, else 128k tokens
    temperature: float | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS  # reply tokens per call; the prompt leaves room for them
    api_key: str | None = None  # default: $OPENAI_API_KEY (a placeholder for a local base URL)

    def __post_init__(self) -> None:
        positive = ("request_timeout", "call_deadline", "episode_deadline")
        for name in positive:
            if not getattr(self, name) > 0:
                raise ValueError(f"chat option {name} must be > 0, got {getattr(self, name)}")
        if self.max_retries < 0 or self.max_tokens < 0:
            raise ValueError("chat options max_retries and max_tokens must be >= 0")
        if self.context_window is not None and self.context_window <= self.max_tokens:
            raise ValueError(f"context_window ({self.context_window}) must exceed max_tokens ({self.max_tokens}): "
                             "the prompt needs room beside the reply")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ValueError(f"temperature must be between 0 and 2, got {self.temperature}")

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> "ChatOptions":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise ValueError(f"unknown chat policy option(s) {unknown}; known: {sorted(known)}")
        return cls(**{k: v for k, v in kwargs.items() if v is not None})


def param_defaults() -> dict[str, Any]:
    """The ``chat:`` defaults of params.yaml (empty when there is no such block)."""
    try:
        return dict(config.params("chat") or {})
    except (KeyError, OSError):
        return {}


@dataclass
class ChatStats:
    requests: int = 0  # HTTP attempts sent
    retries: int = 0  # attempts that failed with a transport fault and were retried
    cache_hits: int = 0
    waited_seconds: float = 0.0
    faults: dict[str, int] = field(default_factory=dict)
    length_cuts: int = 0  # replies the server cut at max_tokens (finish_reason "length")
    stop: str | None = None  # why the policy ended the episode (context_overflow, max_tokens, deadline)
    input_tokens: int = 0  # usage of the responses received over HTTP (cache hits cost nothing)
    output_tokens: int = 0
    cached_tokens: int = 0  # input tokens the provider answered from its prompt cache

    def add_usage(self, input_tokens: int, output_tokens: int, cached_tokens: int) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cached_tokens += cached_tokens

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["waited_seconds"] = round(self.waited_seconds, 3)
        return data
