"""The server kit, checked on the reference server (banking) over every transport.

Sessions are isolated and resettable, the same seed gives the same ids everywhere, bad calls get
errors that name the problem while the server keeps serving, and the ``python -m servers``
entry point works with a plain ``mcp.Client`` over stdio and streamable HTTP.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from pipeline.core.config import ServerConfig
from pipeline.env import Environment, free_port, wait_for_port
from servers.kit import SEED_META_KEY, SESSION_META_KEY
from servers.kit.keys import RESET_META_KEY
from servers.registry import build

ROOT = Path(__file__).resolve().parents[2]
TRANSPORTS = ["inprocess", "stdio"]


def _env_vars() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


@pytest.fixture(scope="module", params=TRANSPORTS)
def bank(request: pytest.FixtureRequest):
    with Environment(ServerConfig.for_builtin("banking", request.param)) as env:
        yield env


@pytest.fixture(scope="module")
def bank_local():
    with Environment(ServerConfig.for_builtin("banking", "inprocess")) as env:
        yield env


def _a_funded_account(s) -> dict:
    accounts = s.call("list_accounts", {"min_balance": 100}).data["accounts"]
    return next(a for a in accounts if a["status"] == "active")


# --------------------------------------------------------------------------- sessions
def test_concurrent_sessions_do_not_see_each_others_writes(bank: Environment) -> None:
    a, b = bank.session(0), bank.session(0)
    try:
        acc = _a_funded_account(a)
        aid, start = acc["account_id"], acc["balance"]
        # interleaved writes on the same account in two live sessions
        ra = a.call("deposit", {"account_id": aid, "amount": 50})
        assert ra.ok, ra.error
        assert b.call("get_balance", {"account_id": aid}).data["balance"] == start
        rb = b.call("deposit", {"account_id": aid, "amount": 7.25})
        assert rb.ok, rb.error
        assert a.call("get_balance", {"account_id": aid}).data["balance"] == round(start + 50, 2)
        assert b.call("get_balance", {"account_id": aid}).data["balance"] == round(start + 7.25, 2)
        # each session numbers its own new entities from the seed's counters
        assert ra.data["transaction_id"] == rb.data["transaction_id"]
        new_a = a.call("open_account", {"customer_id": acc["customer_id"], "account_type": "savings"}).data[
            "account_id"
        ]
        assert b.call("get_account", {"account_id": new_a}).error_code == "not_found"
        assert a.state_hash() != b.state_hash()
    finally:
        a.close()
        b.close()


def test_truly_concurrent_calls_stay_isolated() -> None:
    """Many sessions writing at the same time on one in-process server (one event loop, interleaved)."""
    srv = build("banking")

    async def main() -> dict[str, float]:
        out: dict[str, float] = {}
        async with Client(srv) as client:

            async def session(i: int) -> None:
                meta = {SESSION_META_KEY: f"s{i}", SEED_META_KEY: 0}
                for _ in range(i + 1):
                    r = await client.call_tool("deposit", {"account_id": "ACC-0001", "amount": 10}, meta=meta)
                    assert not r.is_error, r.content
                r = await client.call_tool("get_balance", {"account_id": "ACC-0001"}, meta=meta)
                out[f"s{i}"] = r.structured_content["balance"]

            async with anyio.create_task_group() as tg:
                for i in range(6):
                    tg.start_soon(session, i)
            r = await client.call_tool(
                "get_balance", {"account_id": "ACC-0001"}, meta={SESSION_META_KEY: "untouched", SEED_META_KEY: 0}
            )
            out["untouched"] = r.structured_content["balance"]
        return out

    got = anyio.run(main)
    base = got["untouched"]
    for i in range(6):
        assert got[f"s{i}"] == round(base + 10 * (i + 1), 2), got


def test_reset_restores_seeded_balances(bank: Environment) -> None:
    s = bank.session(0)
    try:
        before = {a["account_id"]: a["balance"] for a in s.call("list_accounts", {}).data["accounts"]}
        h0 = s.state_hash()
        acc = _a_funded_account(s)
        assert s.call("deposit", {"account_id": acc["account_id"], "amount": 123.45}).ok
        assert s.call(
            "open_account", {"customer_id": acc["customer_id"], "account_type": "credit", "initial_deposit": 5}
        ).ok
        assert s.call("freeze_account", {"account_id": acc["account_id"], "reason": "travel"}).ok
        assert s.state_hash() != h0
        s.reset()
        after = {a["account_id"]: a["balance"] for a in s.call("list_accounts", {}).data["accounts"]}
        assert after == before
        assert s.call("get_account", {"account_id": acc["account_id"]}).data["status"] == acc["status"]
        assert s.state_hash() == h0
    finally:
        s.close()


def test_a_reset_keeps_a_world_only_read_and_copies_one_a_writing_tool_ran_on() -> None:
    """Resetting copies the seed's world; read-only tools leave a world as they found it (test_conformance), so a
    session that was only read keeps its world, and one a writing tool ran on (even a failed call) gets a copy."""
    server = build("banking")
    meta = {SESSION_META_KEY: "s", SEED_META_KEY: 0}
    reset = {**meta, RESET_META_KEY: True}

    async def main() -> None:
        async with Client(server) as c:
            accounts = (await c.call_tool("list_accounts", {}, meta=meta)).structured_content["accounts"]
            read = server.store.get("s", 0)
            seed_hash = read.state_hash()
            await c.call_tool("list_accounts", {}, meta=reset)
            assert server.store.get("s", 0) is read
            assert (await c.call_tool("deposit", {"account_id": "ACC-none", "amount": 5}, meta=meta)).is_error
            await c.call_tool("list_accounts", {}, meta=reset)
            copied = server.store.get("s", 0)
            assert copied is not read and copied.state_hash() == seed_hash
            deposit = {"account_id": accounts[0]["account_id"], "amount": 5}
            assert not (await c.call_tool("deposit", deposit, meta=meta)).is_error
            assert server.store.get("s", 0).state_hash() != seed_hash
            await c.call_tool("list_accounts", {}, meta=reset)
            assert server.store.get("s", 0).state_hash() == seed_hash

    anyio.run(main)


def test_same_seed_same_ids_over_stdio_and_inprocess(bank_local: Environment) -> None:
    def script(env: Environment, seed: int) -> list:
        s = env.session(seed)
        try:
            acc = _a_funded_account(s)
            opened = s.call(
                "open_account", {"customer_id": acc["customer_id"], "account_type": "savings", "initial_deposit": 20}
            ).data
            dep = s.call("deposit", {"account_id": opened["account_id"], "amount": 5}).data
            payee = s.call(
                "add_payee", {"customer_id": acc["customer_id"], "name": "Water Co", "account_number": "1234567890"}
            ).data
            return [acc["account_id"], opened["account_id"], dep["transaction_id"], payee["payee_id"], s.state_hash()]
        finally:
            s.close()

    with Environment(ServerConfig.for_builtin("banking", "stdio")) as remote:
        local7, remote7 = script(bank_local, 7), script(remote, 7)
        assert local7 == remote7
        assert local7[1].startswith("ACC-") and local7[2].startswith("TXN-") and local7[3].startswith("PAY-")
        # a different seed is a different world
        assert script(bank_local, 8)[-1] != local7[-1]


# --------------------------------------------------------------------------- bad calls
def test_bad_calls_name_the_problem_and_the_server_keeps_serving(bank: Environment) -> None:
    s = bank.session(0)
    try:
        r = s.call("get_acount", {"account_id": "ACC-0001"})
        assert not r.ok and r.error_code == "unknown_tool" and "get_acount" in r.error
        assert s.call("get_account", {"account_id": "ACC-0001"}).ok

        r = s.call("get_account", {})
        assert not r.ok and r.error_code == "invalid_arguments"
        assert "account_id" in r.error and "required" in r.error.lower()
        assert s.call("get_balance", {"account_id": "ACC-0001"}).ok

        r = s.call("deposit", {"account_id": "ACC-0001", "amount": "lots"})
        assert not r.ok and r.error_code == "invalid_arguments"
        assert "amount" in r.error and "number" in r.error.lower()
        r = s.call("get_account", {"account_id": 17})
        assert not r.ok and r.error_code == "invalid_arguments" and "account_id" in r.error and "string" in r.error
        assert s.call("list_customers", {}).ok

        r = s.call("withdraw", {"account_id": "ACC-0001", "amount": 10, "pin": "12ab"})  # violates the pattern
        assert not r.ok and r.error_code == "invalid_arguments" and "pin" in r.error
        r = s.call("get_account", {"account_id": "ACC-9999"})
        assert not r.ok and r.error_code == "not_found" and "ACC-9999" in r.error
        assert s.call("get_account", {"account_id": "ACC-0001"}).ok
    finally:
        s.close()


# --------------------------------------------------------------------------- entry point
def test_python_m_servers_stdio_with_a_plain_client() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "servers", "banking", "--transport", "stdio"],
        env=_env_vars(),
        cwd=str(ROOT),
    )

    async def main() -> None:
        with anyio.fail_after(60):
            await session()

    async def session() -> None:
        async with Client(params, read_timeout_seconds=30) as client:
            tools = (await client.list_tools()).tools
            names = {t.name for t in tools}
            assert len(names) == 17 and "get_account" in names
            assert not any(n.startswith("prove_admin_") for n in names)
            r = await client.call_tool("get_account", {"account_id": "ACC-0001"})  # no _meta: the default session
            assert not r.is_error, r.content
            assert r.structured_content["account_id"] == "ACC-0001"

    anyio.run(main)


def test_python_m_servers_streamable_http_with_a_plain_client() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "servers", "banking", "--transport", "http", "--port", str(port)],
        cwd=str(ROOT),
        env=_env_vars(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, timeout=30, proc=proc)

        async def main() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=30) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert len(names) == 17 and "transfer" in names
                r = await client.call_tool("get_balance", {"account_id": "ACC-0001"})
                assert not r.is_error, r.content
                assert r.structured_content["account_id"] == "ACC-0001"
                meta = {SESSION_META_KEY: "http-a", SEED_META_KEY: 0}
                r = await client.call_tool("deposit", {"account_id": "ACC-0001", "amount": 1}, meta=meta)
                assert not r.is_error, r.content
                r2 = await client.call_tool("get_balance", {"account_id": "ACC-0001"})
                assert (
                    r2.structured_content["balance"] != r.structured_content["balance_after"]
                )  # default session untouched

        anyio.run(main)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _has_otel(srv) -> bool:
    return any(type(m).__name__ == "OpenTelemetryMiddleware" for m in srv.middleware)


def test_request_spans_are_dropped_without_a_tracer_provider_and_kept_when_asked(monkeypatch) -> None:
    monkeypatch.delenv("PROVE_SERVER_TELEMETRY", raising=False)
    quiet = build("banking")
    assert not _has_otel(quiet)  # no provider installed here: spans would record nothing

    async def balance(srv) -> float:
        async with Client(srv) as c:
            r = await c.call_tool(
                "get_balance", {"account_id": "ACC-0001"}, meta={SESSION_META_KEY: "t", SEED_META_KEY: 0}
            )
            assert not r.is_error, r.content
            return r.structured_content["balance"]

    monkeypatch.setenv("PROVE_SERVER_TELEMETRY", "1")
    traced = build("banking")
    assert _has_otel(traced)
    assert anyio.run(balance, quiet) == anyio.run(balance, traced)  # the same answers either way


def test_closed_sessions_are_dropped_even_when_the_call_carrying_the_close_fails() -> None:
    from servers.kit import CLOSE_META_KEY

    srv = build("banking")

    async def main() -> None:
        async with Client(srv) as c:
            for sid in ("a", "b"):
                r = await c.call_tool("list_accounts", {}, meta={SESSION_META_KEY: sid, SEED_META_KEY: 0})
                assert not r.is_error
            assert len(srv.store) == 2
            bad = await c.call_tool(
                "get_balance", {}, meta={SESSION_META_KEY: "c", SEED_META_KEY: 0, CLOSE_META_KEY: ["a", "b"]}
            )
            assert bad.is_error  # account_id missing: rejected before the handler
            assert len(srv.store) == 0  # yet the worlds of a and b are gone

    anyio.run(main)


def test_two_instances_of_a_server_keep_their_own_worlds_though_they_share_tool_records() -> None:
    """Each tool's mcp record (argument model, schemas) is made once per process; each instance's copy still
    calls the tool with a world of its own session store."""
    first, second = build("banking"), build("banking")
    assert first.kit_tools["transfer"].fn_metadata is second.kit_tools["transfer"].fn_metadata  # made once
    assert first.kit_tools["transfer"].fn is not second.kit_tools["transfer"].fn

    async def main() -> None:
        meta = {SESSION_META_KEY: "same-id", SEED_META_KEY: 0}
        async with Client(first) as c:
            assert not (await c.call_tool("list_accounts", {}, meta=meta)).is_error
        async with Client(second) as c:
            assert not (await c.call_tool("list_accounts", {}, meta={**meta, SESSION_META_KEY: "other"})).is_error
        assert len(first.store) == 1 and len(second.store) == 1  # shared functions would put both in one store

    anyio.run(main)


def test_benchmark_clocks_nest_handler_inside_server_inside_round_trip() -> None:
    """The benchmarks' clocks, attached through the kit's public hooks (``servers.kit.hooks``)."""
    from bench.clocks import CallClock, HandlerClock, ServerClock, install_server_clocks, uninstall_server_clocks

    clocks = (HandlerClock, ServerClock, CallClock)
    install_server_clocks()
    for c in clocks:
        c.reset()
        c.enabled = True
    try:
        with Environment("banking") as env, env.session(0) as s:
            for _ in range(20):
                assert s.call("list_accounts", {}).ok
            assert s.call("get_balance", {}).error_code == "invalid_arguments"  # the server's work, no handler runs
    finally:
        for c in clocks:
            c.enabled = False
        uninstall_server_clocks()
    assert CallClock.calls == ServerClock.calls == 21 and HandlerClock.calls == 20
    assert 0 < HandlerClock.seconds < ServerClock.seconds < CallClock.seconds


def test_hooks_see_each_handler_and_middleware_of_servers_built_after_install() -> None:
    """``servers.kit.hooks``: a handler timer sees every tool handler's work (a reset riding on ``_meta`` as
    uncounted work), and outer middleware lands outermost on servers built while it is listed, not before."""
    from servers.kit import HOOKS, RESET_META_KEY

    events: list[tuple[str, bool]] = []
    seen: list[str] = []

    class Recorder:
        def start(self) -> int:
            events.append(("start", True))
            return len(events)

        def stop(self, token: int, count: bool = True) -> None:
            events.append(("stop", count))

    async def outer(ctx, call_next):
        seen.append(ctx.method)
        return await call_next(ctx)

    before = build("banking")
    HOOKS.handler_timer, HOOKS.outer_middleware = Recorder(), [outer]
    try:
        after = build("banking")
    finally:
        HOOKS.handler_timer, HOOKS.outer_middleware = None, []
    assert after.middleware[0] is outer and outer not in before.middleware

    async def main() -> None:
        HOOKS.handler_timer = Recorder()
        try:
            async with Client(after) as c:
                r = await c.call_tool(
                    "list_accounts", {}, meta={SESSION_META_KEY: "h", SEED_META_KEY: 0, RESET_META_KEY: True}
                )
                assert not r.is_error
                bad = await c.call_tool("get_balance", {}, meta={SESSION_META_KEY: "h", SEED_META_KEY: 0})
                assert bad.is_error  # rejected before any handler runs
        finally:
            HOOKS.handler_timer = None

    anyio.run(main)
    assert events == [("start", True), ("stop", False), ("start", True), ("stop", True)]  # the reset, then the tool
    assert seen.count("tools/call") == 2


def test_direct_calls_answer_plain_calls_and_leave_the_rest_to_mcp() -> None:
    """``DirectCalls`` answers a plain call of a kit tool on a 2026-07-28 connection; arguments that do not
    validate, an unknown tool and a handshake-era (legacy) connection go on to mcp, with the same answers.
    (The conformance suite compares its results with mcp's for every server.)"""
    meta = {SESSION_META_KEY: "d", SEED_META_KEY: 0}
    srv = build("banking")
    direct = srv.direct_calls
    assert direct is not None

    async def modern() -> None:
        async with Client(srv) as c:
            ok = await c.call_tool("get_balance", {"account_id": "ACC-0001"}, meta=meta)
            assert not ok.is_error and ok.structured_content["account_id"] == "ACC-0001"
            assert ok.content[0].text == json.dumps(ok.structured_content, indent=2)
            failed = await c.call_tool("get_balance", {"account_id": "ACC-9999"}, meta=meta)
            assert failed.is_error and failed.content[0].text.startswith("Error executing tool get_balance: not_found:")
            assert direct.answered == 2  # a named failure is the tool's answer too
            bad = await c.call_tool("get_balance", {"account_id": 7}, meta=meta)
            assert bad.is_error and "validation error" in bad.content[0].text  # mcp's wording
            unknown = await c.call_tool("no_such_tool", {}, meta=meta)
            assert unknown.is_error and "Unknown tool" in unknown.content[0].text
            assert direct.answered == 2

    async def legacy() -> float:
        async with Client(srv, mode="legacy") as c:
            r = await c.call_tool("get_balance", {"account_id": "ACC-0001"}, meta=meta)
            assert not r.is_error
            return r.structured_content["balance"]

    anyio.run(modern)
    assert anyio.run(legacy) > 0 and direct.answered == 2


@pytest.mark.parametrize("direct", ["1", "0"])
def test_a_call_asking_for_the_state_hash_gets_it_in_its_results_meta(direct, monkeypatch) -> None:
    """``prove/state_hash`` in a request's ``_meta``: the result's ``_meta`` holds the session's hash after the call
    (the admin tool's answer), on a call that succeeds and on one whose tool fails; through the kit's direct
    path and through mcp's own."""
    from servers.kit import STATE_HASH_META_KEY

    monkeypatch.setenv("PROVE_DIRECT_CALLS", direct)
    server = build("banking")
    meta = {SESSION_META_KEY: "h", SEED_META_KEY: 0}

    async def main() -> list:
        async with Client(server) as c:
            acc = (await c.call_tool("list_accounts", {}, meta=meta)).structured_content["accounts"][0]["account_id"]
            dep = await c.call_tool(
                "deposit", {"account_id": acc, "amount": 5.0}, meta={**meta, STATE_HASH_META_KEY: True}
            )
            after = (await c.call_tool("prove_admin_state_hash", {}, meta=meta)).structured_content["state_hash"]
            bad = await c.call_tool("get_balance", {"account_id": "ACC-9999"}, meta={**meta, STATE_HASH_META_KEY: True})
            plain = await c.call_tool("get_balance", {"account_id": acc}, meta=meta)
            return [dep, after, bad, plain]

    dep, after, bad, plain = anyio.run(main)
    assert not dep.is_error and dep.meta[STATE_HASH_META_KEY] == after
    assert bad.is_error and bad.meta[STATE_HASH_META_KEY] == after  # a failed read leaves the state as it was
    assert STATE_HASH_META_KEY not in (plain.meta or {})
