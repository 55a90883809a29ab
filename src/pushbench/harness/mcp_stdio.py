"""The MCP server's stdio wire, with JSON-RPC errors for lines the SDK would drop in silence.

The SDK's stdio transport parses each line and, when a line is not valid JSON or not a valid
JSON-RPC message, passes the exception on and writes nothing, so a client waiting on that request
id waits forever. Here every line is screened first: a line that is not JSON gets a parse error
(-32700, id null); valid JSON that is no JSON-RPC message gets -32600 (with the request's id when
it has a usable one); a request whose ``params`` is not an object gets -32602 with its id. Only
well-formed messages reach the SDK, which answers everything else itself (unknown methods,
invalid tool-call params). Errors and the SDK's replies share one writer, so frames never tear.

As the SDK's transport does, the wire runs on private duplicates of fd 0 and 1 while fd 0 reads
the null device and fd 1 goes to stderr, so stray output of a handler cannot corrupt a frame.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from io import TextIOWrapper
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

log = logging.getLogger(__name__)


class LineWriter:
    """An async text sink whose every ``write`` is one whole frame, flushed, under a lock."""

    def __init__(self, stream: Any):
        self._stream = stream
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._stream.write(text)
            await self._stream.flush()

    async def flush(self) -> None:  # each write already flushed
        return None


def _usable_id(message: dict[str, Any]) -> int | str | None:
    value = message.get("id")
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


def screen(line: str) -> types.JSONRPCError | None:
    """The error reply a raw line deserves, or None when it is a message the SDK can take.

    A malformed notification (a method and no id) gets no reply, as JSON-RPC never answers a
    notification, only a log line on stderr.
    """
    try:
        message = json.loads(line)
    except ValueError:
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not valid JSON")
    try:
        parsed = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        parsed = None
    if parsed is not None:
        # a request whose id is neither a string nor an integer would pass as a notification
        # and never be answered
        if isinstance(parsed, types.JSONRPCNotification) and isinstance(message, dict) and "id" in message:
            return _error(None, types.INVALID_REQUEST, "Invalid Request: the id must be a string or an integer")
        return None
    if not isinstance(message, dict):
        kind = "a batch (array)" if isinstance(message, list) else f"a JSON {type(message).__name__}"
        return _error(None, types.INVALID_REQUEST, f"Invalid Request: expected one JSON-RPC object, got {kind}")
    request_id = _usable_id(message)
    method = message.get("method")
    if "id" not in message and isinstance(method, str):
        log.warning("dropped a malformed JSON-RPC notification: %.200s", line)
        return None
    if (request_id is not None and message.get("jsonrpc") == "2.0" and isinstance(method, str)
            and "params" in message and not isinstance(message["params"], (dict, type(None)))):
        return _error(request_id, types.INVALID_PARAMS, "Invalid params: params must be an object")
    return _error(request_id, types.INVALID_REQUEST,
                  "Invalid Request: a JSON-RPC 2.0 request needs jsonrpc \"2.0\", a string or integer id "
                  "and a string method")


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class ScreenedLines:
    """The lines of ``source`` that are well-formed messages; the others are answered on ``out``."""

    def __init__(self, source: Any, out: LineWriter):
        self._source = source
        self._out = out

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue
            reply = screen(line)
            if reply is None:
                yield line
            else:
                await self._out.write(reply.model_dump_json(by_alias=True, exclude_unset=True) + "\n")


@contextmanager
def _wire() -> Iterator[tuple[Any, Any]]:
    """Text streams on private duplicates of fd 0 and 1, with fd 0 and 1 diverted meanwhile."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    reader = TextIOWrapper(os.fdopen(wire_in, "rb", closefd=False), encoding="utf-8", errors="replace")
    writer = TextIOWrapper(os.fdopen(wire_out, "wb", closefd=False), encoding="utf-8")
    try:
        yield reader, writer
    finally:
        sys.stdout.flush()
        writer.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


async def serve_stdio(server: Server) -> None:
    """Serve ``server`` (the SDK's low-level server) over stdio until stdin closes."""
    with _wire() as (raw_in, raw_out):
        out = LineWriter(anyio.wrap_file(raw_out))
        lines = ScreenedLines(anyio.wrap_file(raw_in), out)
        async with stdio_server(stdin=lines, stdout=out) as (read_stream, write_stream):  # type: ignore[arg-type]
            await server.run(read_stream, write_stream, server.create_initialization_options())
