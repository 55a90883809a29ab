"""The one writer and the one reader of traces (gzip JSON, one file per episode in ``traces/``)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import orjson

from pushbench.log.models import FormatError, Trace
from pushbench.log.names import trace_name

TRACE_LEVEL = 6  # zlib's default: Python's gzip level 9 took 2-3x the CPU (10 ms per RepoScan trace) for 3% smaller files


def write_trace(trace_dir: Path, trace: Trace) -> Path:
    """Write ``trace`` atomically (temp file + ``os.replace``); the same trace gives the same bytes."""
    trace_dir.mkdir(parents=True, exist_ok=True)
    final = trace_dir / trace_name(trace.episode_id)
    tmp = final.with_suffix(".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=TRACE_LEVEL) as gz:
        gz.write(json.dumps(trace.as_json(), sort_keys=True, default=str).encode())
    os.replace(tmp, final)
    return final


def read_trace(path: Path) -> Trace:
    """The trace at ``path``, through the format check (``FormatError``: not a trace, or newer);
    a missing file raises ``FileNotFoundError``."""
    data = Path(path).read_bytes()
    try:
        raw = gzip.decompress(data)  # one call (GzipFile reads in 8 KiB Python steps)
    except (OSError, EOFError, ValueError):
        raise FormatError(f"{path} is not a gzip JSON trace") from None
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:  # what orjson refuses and json takes (NaN, huge integers)
        try:
            parsed = json.loads(raw)
        except ValueError:
            raise FormatError(f"{path} is not a gzip JSON trace") from None
    return Trace.from_json(parsed, path)
