"""On-disk cache of model responses, keyed by the sha256 of the full request.

The key covers everything that can change an answer: the endpoint (base URL), the model, the
messages, the tool schemas and every sampling parameter including the seed. A hit returns the
stored assistant message and usage, so rerunning a finished grid makes no requests and spends no
tokens. Entries are one JSON file each (``<dir>/<key[:2]>/<key>.json``), written atomically, so
concurrent episodes and processes can share a cache folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson


def request_key(base_url: str, body: dict[str, Any]) -> str:
    canonical = orjson.dumps({"base_url": base_url, "request": body}, option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(canonical).hexdigest()


@dataclass
class CachedResponse:
    message: dict[str, Any]
    input_tokens: int
    output_tokens: int


class ResponseCache:
    def __init__(self, root: Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedResponse | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return CachedResponse(data["message"], int(data["input_tokens"]), int(data["output_tokens"]))
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError):  # a damaged entry is a miss, and is replaced
            return None

    def put(self, key: str, response: CachedResponse) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"message": response.message, "input_tokens": response.input_tokens,
                "output_tokens": response.output_tokens}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as sink:
                json.dump(data, sink, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
