"""The HTTP pieces serve-sim's routes share: OpenAI-shaped error bodies and a request's identity."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from fastapi.responses import Response


TRANSPORT_KEYS = ("stream", "stream_options")  # how the answer is sent, not what it is


def request_hash(body: dict[str, Any]) -> str:
    """The request's identity for the seeded draws: a streamed request gets the answer its
    non-streamed twin gets."""
    content = {k: v for k, v in body.items() if k not in TRANSPORT_KEYS}
    return hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _error(status: int, message: str, kind: str, code: str | None = None,
           headers: dict[str, str] | None = None, param: str | None = None) -> Response:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def _bad(message: str, param: str, code: str | None = None) -> Response:
    return _error(400, message, "invalid_request_error", code, param=param)
