"""The MCP server: real subprocesses (stdio through the SDK client, streamable HTTP on loopback),
tool listing, the verifier log, the budget, and hostile inputs that must not crash the server."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from pushbench.harness.mcp_server import META_DONE, ServerPaths, build_server
from pushbench.scoring.items import tool_calls
from pushbench.scoring.metrics import common_metrics
from pushbench.tasks import get_family
from pushbench.tools import ToolCall

from blackbox_data import free_port, make_data, serve_argv, start_http_server, task_id
from handmade import FIXTURE_VALID

VALID = sorted(FIXTURE_VALID["fixture"])
TOOLS = ["final", "search", "status", "submit"]

HOSTILE: list[tuple[str, dict[str, Any], str]] = [
    ("search", {"query": "x" * 100_000}, "exceed 8000 characters"),  # oversize
    ("submit", {"ids": ["../../etc/passwd.py::x"]}, "contains '..'"),  # traversal
    ("submit", {"ids": ["/etc/passwd.py::root"]}, "absolute path"),
    ("submit", {"ids": ["tests/test_api.py::test_get\x00"]}, "control characters"),
    ("submit", {"ids": "tests/test_api.py::test_get"}, "invalid arguments"),  # wrong type
    ("search", {"query": "db", "page": "two"}, "invalid arguments"),
    ("search", {"query": ["db"]}, "invalid arguments"),
    ("final", {"count": -1}, "invalid arguments"),
    ("submit", {"ids": [f"a{i}.py::f" for i in range(21)]}, "at most 20"),
    ("search", {"query": "db", "extra": 1}, "invalid arguments"),
    ("rm_rf", {"path": "/"}, "unknown tool"),
    ("x" * 5000, {}, "unknown tool"),
]


@pytest.fixture
def data(tmp_path: Path):
    return make_data(tmp_path)


def _events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (log / "events.jsonl").read_text().splitlines()]


def stdio_params(argv: list[str]) -> StdioServerParameters:
    # the SDK starts servers with a minimal environment; pass ours so the server runs this checkout
    return StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))


def run_bounded(session, seconds: float = 120.0) -> None:
    """Run a client session; a server that stops answering fails the test instead of hanging it."""
    async def bounded() -> None:
        with anyio.fail_after(seconds):
            await session()

    anyio.run(bounded)


def _text(result) -> str:
    return result.content[0].text


async def _hostile_then_valid(client: Client) -> list[str]:
    texts = []
    for name, args, expected in HOSTILE:
        result = await client.call_tool(name, args)
        assert result.is_error, name
        assert expected in _text(result), (name[:20], _text(result)[:200])
        texts.append(_text(result))
    ok = await client.call_tool("submit", {"ids": VALID[:2]})
    assert not ok.is_error and "2 accepted" in _text(ok)
    return texts


def test_stdio_server_lists_tools_logs_calls_and_survives_hostile_input(data, tmp_path: Path) -> None:
    data_root, snaps, tasks = data
    log = tmp_path / "log"
    argv = serve_argv(task_id(3), log, data_root, snaps)
    params = stdio_params(argv)
    env_schemas = get_family("reposcan").environment(tasks[task_id(3)], snapshot_root=snaps,
                                                     hidden_root=data_root / "hidden").schemas()

    async def session() -> None:
        async with Client(params) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == TOOLS
            assert [t.input_schema for t in listed] == [s["function"]["parameters"] for s in env_schemas]
            page = await client.call_tool("search", {"query": "test db"})
            assert not page.is_error and 'search "test db": page 1 of' in _text(page)
            assert "tests/test_api.py::test_get" in _text(page)
            await _hostile_then_valid(client)
            for _ in range(6):  # 1 search + 12 hostile + 1 submit + 6 status = the budget of 20
                assert not (await client.call_tool("status", {})).is_error
            after = await client.call_tool("status", {})
            assert after.is_error and "episode has ended" in _text(after)
            assert after.meta[META_DONE] is True
            assert [t.name for t in (await client.list_tools()).tools] == TOOLS  # still serving

    run_bounded(session)
    events = _events(log)
    calls = [e for e in events if e["kind"] == "call"]
    assert [e["step"] for e in calls] == list(range(1, 21))  # logged until the budget, then refused
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert [e["ok"] for e in calls[:14]] == [True] + [False] * 12 + [True]
    assert calls[5]["args"] == {"ids": "tests/test_api.py::test_get"}  # logged as sent
    assert events[-1]["kind"] == "end" and events[-1]["reason"] == "budget"
    metrics = {**common_metrics(events, 3, 20), "status_calls": tool_calls(events, "status")}
    assert metrics["invalid_actions"] == 12 and metrics["steps"] == 20 and metrics["valid_count"] == 2
    assert metrics["status_calls"] == 6 and metrics["termination"] == "budget" and not metrics["success"]
    assert json.loads((log / "task.json").read_text()) == {
        "budget": 20, "family": "reposcan", "target": 3, "task_id": task_id(3)}
    assert not (log / "server.pid").exists()  # removed on a clean exit


def test_http_server_on_loopback_serves_a_whole_episode(data, tmp_path: Path) -> None:
    data_root, snaps, _ = data
    log, port = tmp_path / "log", free_port()
    proc = start_http_server(serve_argv(task_id(3), log, data_root, snaps), port)
    try:
        async def session() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                assert [t.name for t in (await client.list_tools()).tools] == TOOLS
                await _hostile_then_valid(client)
                result = await client.call_tool("submit", {"ids": VALID[1:4]})
                assert "2 accepted, 0 rejected, 1 duplicate" in _text(result)
                status = await client.call_tool("status", {})
                assert _text(status).startswith("status: 4 accepted (verified) of target 3")
                final = await client.call_tool("final", {"count": 4})
                assert not final.is_error and final.meta[META_DONE] is True
                late = await client.call_tool("search", {"query": "db"})
                assert late.is_error and "episode has ended" in _text(late)

        run_bounded(session)
        assert proc.poll() is None  # hostile input did not take it down
        listening = Path("/proc/net/tcp").read_text()
        assert f"0100007F:{port:04X}" in listening  # bound to 127.0.0.1 only
        assert f"00000000:{port:04X}" not in listening
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    metrics = common_metrics(_events(log), 3, 20)
    assert metrics["success"] and metrics["valid_count"] == 4 and metrics["termination"] == "final"
    assert metrics["duplicate_submissions"] == 1 and metrics["reported_count_error"] == 0


def test_server_calls_log_exactly_like_in_process_calls(data, tmp_path: Path) -> None:
    """The same call sequence gives the same verifier events through MCP and in process."""
    data_root, snaps, tasks = data
    sequence = [("search", {"query": "test db", "page": 2}), *[(n, a) for n, a, _ in HOSTILE[:5]],
                ("submit", {"ids": VALID[:3] + ["tests/test_api.py::test_no_fixture"]}),
                ("submit", {"ids": VALID[2:4]}), ("status", {}), ("final", {"count": 4})]
    server, sink = build_server(task_id(3), tmp_path / "log", ServerPaths(data_root, snaps))

    async def session() -> None:
        async with Client(server) as client:
            for name, args in sequence:
                await client.call_tool(name, json.loads(json.dumps(args)))

    run_bounded(session)
    sink.close()
    env = get_family("reposcan").environment(tasks[task_id(3)], snapshot_root=snaps,
                                             hidden_root=data_root / "hidden")
    for name, args in sequence:
        env.execute(ToolCall(name, json.loads(json.dumps(args))))
    assert _events(tmp_path / "log") == json.loads(json.dumps(env.verifier.events))


class RawStdio:
    """A bare JSON-RPC client on the server's stdin/stdout: every wait is bounded, so a missing
    reply fails the test instead of hanging it."""

    def __init__(self, argv: list[str]):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)

    def send(self, line: str | dict[str, Any]) -> None:
        self.proc.stdin.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 20.0) -> dict[str, Any]:
        if not select.select([self.proc.stdout], [], [], timeout)[0]:
            raise AssertionError(f"no reply within {timeout} s")
        return json.loads(self.proc.stdout.readline())

    def ask(self, line: str | dict[str, Any]) -> dict[str, Any]:
        self.send(line)
        try:
            return self.reply()
        except AssertionError as err:
            raise AssertionError(f"{err}: {str(line)[:100]}") from None

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _call(request_id: Any, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


# (raw line, expected id, expected JSON-RPC error code)
MALFORMED: list[tuple[str, Any, int]] = [
    ("{this is not json", None, -32700),
    ('{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "status"', None, -32700),
    ("\u00ff\u00fe garbage", None, -32700),
    ('[{"jsonrpc": "2.0", "id": 6, "method": "tools/list"}]', None, -32600),  # batches are not MCP
    ('"a string"', None, -32600),
    ('{"jsonrpc": "2.0", "id": 7}', 7, -32600),  # no method
    ('{"jsonrpc": "1.0", "id": 8, "method": "tools/list"}', 8, -32600),
    ('{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', None, -32600),  # unusable id
    (json.dumps(_call(9, 5)), 9, -32602),  # params not an object
    (json.dumps(_call("ten", ["status"])), "ten", -32602),
    (json.dumps(_call(11, {"name": "search", "arguments": ["db"]})), 11, -32602),  # arguments not an object
    (json.dumps(_call(12, {"arguments": {}})), 12, -32602),  # no tool name
    ('{"jsonrpc": "2.0", "id": 13, "method": "no/such/method"}', 13, -32601),
]


def test_malformed_protocol_messages_get_json_rpc_errors_and_the_server_keeps_serving(
        data, tmp_path: Path) -> None:
    """Each malformed line gets exactly one error reply, with the request's id where it has a
    usable one; a malformed notification gets none; the next valid request is served."""
    data_root, snaps, _ = data
    raw = RawStdio(serve_argv(task_id(3), tmp_path / "log", data_root, snaps))
    try:
        init = raw.ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        assert init["id"] == 1 and "result" in init
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 3})  # no reply: a notification
        for line, request_id, code in MALFORMED:
            reply = raw.ask(line)
            assert reply["jsonrpc"] == "2.0" and "result" not in reply, line
            assert (reply["id"], reply["error"]["code"]) == (request_id, code), (line, reply)
            assert reply["error"]["message"], line
        status = raw.ask(_call(14, {"name": "status", "arguments": {}}))
        assert status["id"] == 14
        assert status["result"]["content"][0]["text"].startswith("status: 0 accepted (verified) of target 3")
        assert raw.ask({"jsonrpc": "2.0", "id": 15, "method": "tools/list"})["id"] == 15
    finally:
        raw.close()
    assert raw.proc.returncode == 0
    calls = [e for e in _events(tmp_path / "log") if e["kind"] == "call"]
    assert [(c["tool"], c["step"]) for c in calls] == [("status", 1)]  # protocol errors are not tool calls


def test_listed_schemas_state_the_limits_the_tools_enforce(data, tmp_path: Path) -> None:
    """The official client reads the schema; a call at the stated limit passes it, one past it is refused."""
    data_root, snaps, tasks = data
    argv = serve_argv(task_id(3), tmp_path / "log", data_root, snaps)
    limit = tasks[task_id(3)].settings["max_submit"]

    async def session() -> None:
        async with Client(stdio_params(argv)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            ids_schema = tools["submit"].input_schema["properties"]["ids"]
            assert ids_schema["maxItems"] == limit == 20
            assert f"At most {limit} identifiers per call" in tools["submit"].description
            query = tools["search"].input_schema["properties"]["query"]
            too_long = await client.call_tool("search", {"query": "x" * (query["maxLength"] + 1)})
            assert too_long.is_error
            at_limit = await client.call_tool("submit", {"ids": [f"a{i}.py::f" for i in range(limit)]})
            assert not at_limit.is_error and f"{limit} rejected" in _text(at_limit)
            past = await client.call_tool("submit", {"ids": [f"b{i}.py::f" for i in range(limit + 1)]})
            assert past.is_error and f"at most {limit} ids" in _text(past)

    run_bounded(session)


def test_server_refuses_bad_setup_with_a_clear_error(data, tmp_path: Path) -> None:
    data_root, snaps, _ = data
    log = tmp_path / "used"
    log.mkdir()
    (log / "events.jsonl").write_text('{"kind": "call"}\n')
    for task, folder, message in [("reposcan-nope-n001", tmp_path / "fresh", "no RepoScan task"),
                                  (task_id(3), log, "already holds an episode")]:
        done = subprocess.run(serve_argv(task, folder, data_root, snaps), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=60)
        assert done.returncode == 1
        assert message in done.stderr and "Traceback" not in done.stderr
