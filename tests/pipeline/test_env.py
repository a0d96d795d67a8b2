"""The environment client: typed tool errors, session isolation, reset, state hashes."""

from __future__ import annotations

import pytest

from pipeline.env import ADMIN_PREFIX, classify_error

SEED = 7


def _active_account(s, min_balance: float = 1.0) -> dict:
    accs = s.call("list_accounts", {"min_balance": min_balance}).data["accounts"]
    return next(a for a in accs if a["status"] == "active")


def _pin_of(s, customer_id: str) -> str:
    return s.state()["customers"][customer_id]["pin"]


@pytest.fixture()
def session(banking_env):
    s = banking_env.session(SEED)
    yield s
    s.close()


def test_unknown_tool_is_named_and_the_session_keeps_working(session):
    r = session.call("get_acount", {"account_id": "ACC-0001"})
    assert not r.ok and r.error_code == "unknown_tool" and "get_acount" in r.error
    assert session.call("get_balance", {"account_id": "ACC-0001"}).ok


def test_missing_or_mistyped_argument_is_invalid_arguments(session):
    r = session.call("get_balance", {})
    assert not r.ok and r.error_code == "invalid_arguments" and "account_id" in r.error
    r = session.call("get_balance", {"account_id": 5})
    assert not r.ok and r.error_code == "invalid_arguments" and "account_id" in r.error
    assert session.call("list_customers", {}).ok


@pytest.mark.parametrize("bad", [["ACC-0001"], "ACC-0001", 3, None])
def test_non_dict_arguments_are_invalid_arguments_and_never_reach_the_server(session, bad):
    before = session.state_hash()
    r = session.call("deposit", bad)
    assert not r.ok and r.error_code == "invalid_arguments" and "JSON object" in r.error
    assert session.state_hash() == before
    assert session.call("list_accounts", {}).ok


def test_wrong_pin_is_permission_denied_and_moves_no_money(session):
    acc = _active_account(session)
    pin = _pin_of(session, acc["customer_id"])
    wrong = "0000" if pin != "0000" else "1111"
    r = session.call("withdraw", {"account_id": acc["account_id"], "amount": 1.0, "pin": wrong})
    assert not r.ok and r.error_code == "permission_denied"
    assert session.call("get_balance", {"account_id": acc["account_id"]}).data["balance"] == acc["balance"]


def test_insufficient_funds_and_double_freeze_are_state_conflicts(session):
    acc = _active_account(session)
    pin = _pin_of(session, acc["customer_id"])
    r = session.call("withdraw", {"account_id": acc["account_id"], "amount": acc["balance"] + 1000, "pin": pin})
    assert not r.ok and r.error_code == "state_conflict" and "insufficient funds" in r.error
    assert session.call("freeze_account", {"account_id": acc["account_id"], "reason": "travel"}).ok
    r = session.call("freeze_account", {"account_id": acc["account_id"], "reason": "travel"})
    assert not r.ok and r.error_code == "state_conflict" and "already frozen" in r.error
    assert session.call("unfreeze_account", {"account_id": acc["account_id"], "pin": pin}).ok


def test_unknown_entity_is_not_found_naming_the_id(session):
    r = session.call("get_account", {"account_id": "ACC-9999"})
    assert not r.ok and r.error_code == "not_found" and "ACC-9999" in r.error
    assert session.call("get_account", {"account_id": "ACC-0001"}).ok


def test_error_result_is_readable_tool_content_with_the_code(session):
    r = session.call("get_account", {"account_id": "ACC-9999"})
    content = r.as_tool_content()
    assert '"not_found"' in content and "ACC-9999" in content


def test_two_sessions_of_one_seed_are_isolated(banking_env):
    with banking_env.session(SEED) as a, banking_env.session(SEED) as b:
        assert a.state_hash() == b.state_hash()
        acc = _active_account(a)
        dep = a.call("deposit", {"account_id": acc["account_id"], "amount": 50.0})
        assert dep.ok
        assert a.call("get_balance", {"account_id": acc["account_id"]}).data["balance"] == pytest.approx(
            acc["balance"] + 50
        )
        assert b.call("get_balance", {"account_id": acc["account_id"]}).data["balance"] == acc["balance"]
        assert b.call("get_transaction", {"transaction_id": dep.data["transaction_id"]}).error_code == "not_found"
        assert a.state_hash() != b.state_hash()


def test_reset_restores_the_seeded_state_hash(session):
    seeded = session.state_hash()
    assert seeded
    acc = _active_account(session)
    assert session.call("deposit", {"account_id": acc["account_id"], "amount": 12.5}).ok
    assert session.call("open_account", {"customer_id": acc["customer_id"], "account_type": "savings"}).ok
    assert session.state_hash() != seeded
    session.reset()
    assert session.state_hash() == seeded
    assert session.call("get_balance", {"account_id": acc["account_id"]}).data["balance"] == acc["balance"]


def test_same_seed_gives_same_world_and_another_seed_another(banking_env):
    with banking_env.session(SEED) as a, banking_env.session(SEED) as b, banking_env.session(SEED + 1) as c:
        assert a.state_hash() == b.state_hash() != c.state_hash()


def test_tool_list_hides_admin_tools_and_carries_annotations(banking_tools):
    names = {t.name for t in banking_tools}
    assert not any(n.startswith(ADMIN_PREFIX) for n in names)
    by = {t.name: t for t in banking_tools}
    assert by["get_balance"].read_only and not by["deposit"].read_only
    assert by["close_account"].destructive
    assert by["withdraw"].sensitive == ["pin"]


@pytest.mark.parametrize(
    "text, code",
    [
        ("Unknown tool: frobnicate", "unknown_tool"),
        ("1 validation error for depositArguments\namount\n  Field required [type=missing]", "invalid_arguments"),
        ("Error executing tool withdraw: state_conflict: insufficient funds", "state_conflict"),
        ("permission_denied: the PIN does not match", "permission_denied"),
        ("not_found: account 'ACC-9' not found", "not_found"),
        ("something odd happened", "tool_error"),
    ],
)
def test_error_texts_classify_to_named_codes(text, code):
    assert classify_error(text)[0] == code


# --------------------------------------------------------------------------- how calls reach the event loop
def test_inline_loop_runs_coroutines_on_the_calling_thread_and_holds_contexts_open():
    import contextlib
    import threading

    from pipeline.env import InlineLoop

    loop = InlineLoop()
    events: list[str] = []

    async def whose_thread() -> int:
        return threading.get_ident()

    @contextlib.asynccontextmanager
    async def resource():
        events.append("enter")
        yield "handle"
        events.append("exit")

    try:
        assert loop.call(whose_thread) == threading.get_ident()  # no hand-off to another thread
        with loop.wrap_async_context_manager(resource()) as handle:
            assert handle == "handle" and events == ["enter"]
            assert loop.call(whose_thread) == threading.get_ident()
        assert events == ["enter", "exit"]
    finally:
        loop.close()
    with pytest.raises(RuntimeError, match="closed"):
        loop.call(whose_thread)


def test_inline_loop_reports_a_context_that_fails_to_open():
    import contextlib

    from pipeline.env import InlineLoop

    @contextlib.asynccontextmanager
    async def broken():
        raise ConnectionError("server would not start")
        yield  # pragma: no cover

    loop = InlineLoop()
    try:
        with pytest.raises(ConnectionError, match="would not start"):
            loop.wrap_async_context_manager(broken()).__enter__()
    finally:
        loop.close()


def test_inline_loop_tasks_declare_asyncio_to_sniffio_and_the_caller_does_not_see_it():
    """anyio reads the declaration instead of looking up the current task at every cancel scope."""
    import asyncio
    import contextlib

    import sniffio

    from pipeline.env import InlineLoop

    async def library_and_child() -> tuple[str, str]:
        async def child() -> str:
            return sniffio.current_async_library_cvar.get()

        return sniffio.current_async_library_cvar.get(), await asyncio.get_running_loop().create_task(child())

    @contextlib.asynccontextmanager
    async def connection():
        yield sniffio.current_async_library_cvar.get()

    loop = InlineLoop()
    try:
        assert loop.call(library_and_child) == ("asyncio", "asyncio")  # the task and the tasks it starts
        with loop.wrap_async_context_manager(connection()) as declared:
            assert declared == "asyncio"
        assert sniffio.current_async_library_cvar.get() is None  # set in the tasks' own contexts only
        with pytest.raises(sniffio.AsyncLibraryNotFoundError):
            sniffio.current_async_library()
    finally:
        loop.close()


def test_environment_works_from_inside_a_running_event_loop():
    """A notebook or an async app already runs a loop in its thread; calls still go through."""
    import asyncio

    from pipeline.env import Environment

    async def app() -> tuple[bool, str | None]:
        with Environment("banking") as env, env.session(SEED) as s:
            r = s.call("list_customers", {})
            return r.ok, s.state_hash()

    ok, h = asyncio.run(app())
    assert ok and h


def test_environment_serialises_calls_from_many_threads(banking_env):
    from concurrent.futures import ThreadPoolExecutor

    acc = None
    with banking_env.session(SEED) as probe_s:
        acc = _active_account(probe_s)

    def deposits(k: int) -> float:
        with banking_env.session(SEED) as s:
            for _ in range(k):
                assert s.call("deposit", {"account_id": acc["account_id"], "amount": 1.0}).ok
            return s.call("get_balance", {"account_id": acc["account_id"]}).data["balance"]

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(deposits, [1, 2, 3, 4, 5, 6]))
    assert got == [pytest.approx(acc["balance"] + k) for k in [1, 2, 3, 4, 5, 6]]


@pytest.mark.parametrize(
    "failing_call",
    [("deposit", {"account_id": "ACC-0001"}), ("no_such_tool", {})],
    ids=["arguments_fail_validation", "unknown_tool"],
)
def test_a_reset_holds_even_when_the_call_it_rides_on_fails_before_the_handler(session, failing_call):
    seeded = session.state_hash()
    acc = _active_account(session)
    assert session.call("deposit", {"account_id": acc["account_id"], "amount": 5.0}).ok
    session.reset()  # sent with the next request, which mcp rejects before any tool code runs
    name, args = failing_call
    assert not session.call(name, args).ok
    assert session.state_hash() == seeded


def _wire_results(client_cm, calls):
    """Each call's result as mcp's wire dict (or the protocol error's code and message), sent through ``client_cm``
    as the environment sends a kit server's calls (:func:`~pipeline.env.fast_client.send_trusted`)."""
    import asyncio

    from mcp.shared.exceptions import MCPError

    from pipeline.env.fast_client import send_trusted

    async def run():
        out = []
        async with client_cm as client:
            for name, args, meta in calls:
                try:  # the direct client sends it to its dispatcher itself, mcp.Client through its session
                    res = await send_trusted(client, name, args, meta)
                    out.append(res.model_dump(by_alias=True, mode="json", exclude_none=True))
                except MCPError as exc:
                    out.append(("error", exc.error.code, exc.error.message))
        return out

    return asyncio.run(run())


def test_the_direct_client_answers_every_call_as_mcps_own_in_process_client_does():
    from decimal import Decimal

    from mcp import Client

    from pipeline.env.fast_client import DirectClient
    from servers.registry import build

    s = {"prove/session": "s1", "prove/seed": 3}
    calls = [
        ("list_customers", {}, s),
        ("get_customer", {"customer_id": "CUS-0001"}, s),
        ("get_customer", {"customer_id": "CUS-9999"}, s),  # a tool error
        ("get_customer", {}, s),
        ("get_customer", {"customer_id": 5}, s),  # arguments that do not validate
        ("no_such_tool", {}, s),
        ("prove_admin_state_hash", {}, s),
        ("freeze_account", {"account_id": "ACC-0001", "reason": "lost_card"}, s),
        ("prove_admin_state_hash", {}, s),
        ("get_customer", {"customer_id": "CUS-0002"}, {**s, "prove/reset": True, "prove/state_hash": True}),
        ("list_accounts", {"min_balance": Decimal("1.5")}, {**s, "prove/other": None}),  # sent in its JSON form
        ("get_customer", {"customer_id": ("CUS-0001",)}, s),
    ]  # a tuple: invalid in either form
    direct = _wire_results(DirectClient(build("banking")), calls)
    plain = _wire_results(Client(build("banking"), raise_exceptions=False), calls)
    assert direct == plain
    assert direct[0]["structuredContent"]["customers"] and direct[2]["isError"] and direct[5]["isError"]
    assert (
        direct[6]["structuredContent"]["state_hash"] != direct[8]["structuredContent"]["state_hash"]
    )  # the freeze wrote


def test_the_direct_client_reports_a_crash_outside_the_tools_as_an_opaque_internal_error_as_mcp_does():
    from mcp import Client
    from mcp_types import INTERNAL_ERROR

    from pipeline.env.fast_client import DirectClient
    from servers.registry import build

    async def crash(ctx, call_next):
        if ctx.method == "tools/call" and (ctx.params or {}).get("name") == "get_customer":
            raise RuntimeError("secret detail")
        return await call_next(ctx)

    def server():
        srv = build("banking")
        srv.middleware.insert(0, crash)
        return srv

    calls = [("get_customer", {"customer_id": "CUS-0001"}, None), ("list_customers", {}, None)]
    direct = _wire_results(DirectClient(server()), calls)
    assert direct == _wire_results(Client(server(), raise_exceptions=False), calls)
    assert direct[0] == ("error", INTERNAL_ERROR, "Internal server error") and "secret" not in str(direct[0])
    assert direct[1]["structuredContent"]["customers"]  # the connection keeps working


def test_fast_in_process_connections_keep_one_server_side_connection_and_the_plain_path_uses_mcps_client(monkeypatch):
    from mcp import Client
    from mcp.server.connection import Connection as ServerConnection

    from pipeline.env import Environment
    from pipeline.env.fast_client import DirectClient

    made = []
    real = ServerConnection.from_envelope.__func__

    def counting(cls, *a, **k):
        made.append(1)
        return real(cls, *a, **k)

    monkeypatch.setattr(ServerConnection, "from_envelope", classmethod(counting))
    with Environment("banking") as env:
        s = env.session(SEED)
        for _ in range(20):
            assert s.call("list_customers", {}).ok
        assert isinstance(env.conn.client, DirectClient)
    assert len(made) == 1  # mcp's in-process pair makes one per request
    monkeypatch.setenv("PROVE_FAST_PATHS", "0")
    made.clear()
    with Environment("banking") as env:
        s = env.session(SEED)
        for _ in range(5):
            assert s.call("list_customers", {}).ok
        assert isinstance(env.conn.client, Client)
    assert len(made) >= 5


def test_a_request_on_a_closed_direct_connection_is_refused_as_connection_closed():
    import asyncio

    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    from pipeline.env.fast_client import RunnerDispatcher, low_level_server
    from servers.registry import build

    async def run():
        server = low_level_server(build("banking"))
        async with server.lifespan(server) as state:
            dispatcher = RunnerDispatcher(server, state)
            dispatcher.close()
            with pytest.raises(MCPError) as err:
                await dispatcher.send_raw_request("tools/call", {"name": "list_customers", "arguments": {}})
            return err.value.error.code

    assert asyncio.run(run()) == CONNECTION_CLOSED


def _spares(lazy: bool = True):
    """WarmSpares over counted starts; ``gate`` holds every start until it is set."""
    import itertools
    import threading

    from pipeline.env.fast_client import WarmSpares

    ids, started, stopped, gate = itertools.count(), [], [], threading.Event()
    gate.set()

    def start() -> int:
        gate.wait()
        n = next(ids)
        started.append(n)
        return n

    return WarmSpares(start, stopped.append, depth=2, lazy=lazy), started, stopped, gate


def _until(cond, timeout: float = 10.0) -> None:
    import time

    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_warm_spares_start_none_for_an_environment_that_takes_two_processes():
    spares, started, stopped, _ = _spares()
    assert [spares.take(), spares.take()] == [0, 1]
    spares.close()
    assert started == [0, 1] and stopped == []  # no process started for nothing


def test_warm_spares_keep_one_ahead_from_the_third_take_and_two_once_a_take_waited_for_one():
    import threading

    spares, started, stopped, gate = _spares()
    taken = [spares.take() for _ in range(3)]
    _until(lambda: len(started) == 4)  # the third take started one spare
    taken.append(spares.take())  # ready: taken without waiting; one replacement starts
    _until(lambda: len(started) == 5)
    gate.clear()
    taken.append(spares.take())  # its replacement is held at the gate
    taker = threading.Thread(target=lambda: taken.append(spares.take()))  # waits for that one
    taker.start()
    _until(lambda: spares._ahead == 2)
    gate.set()
    taker.join(10)
    _until(lambda: len(started) == 8)  # six taken, two ahead now
    spares.close()
    assert len(set(taken)) == 6 and len(stopped) == 2 and not set(stopped) & set(taken)


def test_warm_spares_without_lazy_keep_two_ahead_from_the_first_take():
    spares, started, stopped, _ = _spares(lazy=False)
    first = spares.take()
    _until(lambda: len(started) == 3)
    spares.close()
    assert len(stopped) == 2 and first not in stopped
