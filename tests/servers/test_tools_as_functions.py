"""Tools are module-level functions of the session's world: importable, callable on a seeded world, and served
with the world left out of what a client sees."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from pipeline.env import Environment
from servers import banking
from servers.banking.tools import transfer
from servers.filesystem.tools_change import mv
from servers.filesystem.tools_inspect import ls, stat
from servers.kit import EnvServer, PermissionDenied, StateConflict, ToolSet, World
from servers.registry import available, build, world
from servers.shopping.tools import add_to_wishlist

ROOT = Path(__file__).resolve().parents[2]


def test_transfer_on_a_seeded_bank_world_moves_the_amount_between_both_balances():
    w = world("banking", 0)
    src, dst = next(
        (a, b)
        for a in w.accounts.values()
        for b in w.accounts.values()
        if a is not b and a.currency == b.currency and a.status == b.status == "active" and a.balance >= 50
    )
    before_src, before_dst = src.balance, dst.balance
    pin = w.customers[src.customer_id].pin
    out = transfer(w, src.account_id, dst.account_id, 25.0, pin, memo="rent share")
    assert (out.from_balance, out.to_balance) == (round(before_src - 25, 2), round(before_dst + 25, 2))
    assert (w.accounts[src.account_id].balance, w.accounts[dst.account_id].balance) == (
        out.from_balance,
        out.to_balance,
    )
    assert [t.kind for t in w.transactions.values()][-2:] == ["transfer_out", "transfer_in"]


def test_transfer_with_a_wrong_pin_is_refused_and_moves_nothing():
    w = world("banking", 0)
    src, dst = list(w.accounts.values())[:2]
    wrong = "0000" if w.customers[src.customer_id].pin != "0000" else "1111"
    before = w.state_hash()
    with pytest.raises(PermissionDenied, match="PIN does not match"):
        transfer(w, src.account_id, dst.account_id, 1.0, wrong)
    assert w.state_hash() == before


def test_mv_on_a_seeded_filesystem_moves_the_file_and_keeps_its_content():
    w = world("filesystem", 0)
    content = stat(w, "docs/todo.txt")
    moved = mv(w, "docs/todo.txt", "notes/todo-moved.txt")
    assert moved.path.endswith("/notes/todo-moved.txt") and moved.kind == "file"
    assert "todo.txt" not in [e.name for e in ls(w, "docs").entries]
    assert "todo-moved.txt" in [e.name for e in ls(w, "notes").entries]
    assert stat(w, "notes/todo-moved.txt").size == content.size
    with pytest.raises(StateConflict):
        mv(w, "notes/todo-moved.txt", "docs/resume.md")  # never overwrites


def test_a_tool_calling_another_tool_passes_the_world_on():
    w = world("shopping", 0)
    product = next(p for p in w.products.values() if p.product_id not in w.wishlist)
    wishlist = add_to_wishlist(w, product.product_id)  # answers with view_wishlist(w)
    assert product.product_id in [i.product_id for i in wishlist.items] and wishlist.total == len(w.wishlist)


def test_the_world_seeded_for_a_session_equals_the_registry_world():
    with Environment("banking") as env, env.session(3) as s:
        assert s.state_hash() == world("banking", 3).state_hash()
    assert world("banking", 3).state_hash() != world("banking", 4).state_hash()


def test_served_tools_leave_the_world_out_of_their_signature_and_schema():
    async def listed() -> list:
        async with Client(build("banking")) as c:
            return (await c.list_tools()).tools

    tools = {t.name: t for t in anyio.run(listed)}
    assert list(tools["transfer"].input_schema["properties"]) == [
        "from_account_id",
        "to_account_id",
        "amount",
        "pin",
        "memo",
    ]
    assert list(inspect.signature(transfer).parameters)[0] == "w"
    assert [t.name for t in banking.TOOLS] == list(tools)  # tools/list keeps the tool set's order


def test_every_built_in_server_exposes_its_tools_as_functions_of_its_world():
    for name in available():
        srv = build(name)
        tools = list(__import__(f"servers.{name}", fromlist=["TOOLS"]).TOOLS)
        assert tools and len(tools) == len(srv.tool_specs), name
        for t in tools:
            first = next(iter(inspect.signature(t.fn, eval_str=True).parameters.values()))
            assert issubclass(first.annotation, World), f"{name}.{t.name}: first parameter is {first.annotation!r}"
            assert t.fn.__module__.startswith(f"servers.{name}"), f"{name}.{t.name} lives in {t.fn.__module__}"


def test_a_tool_without_a_world_parameter_is_refused_with_a_clear_error():
    tools: ToolSet[World] = ToolSet()

    @tools.tool(read_only=True)
    def ping() -> dict:
        """Answer."""
        return {}

    with pytest.raises(TypeError, match="first parameter must be the session's world"):
        EnvServer("broken", seeder=lambda rng, seed: World(), category="test", description="broken", tools=tools)


def test_a_tool_name_defined_twice_is_refused():
    tools: ToolSet[World] = ToolSet()

    @tools.tool()
    def twice(w: World) -> dict:
        """One."""
        return {}

    with pytest.raises(ValueError, match="'twice' is defined twice"):
        tools.tool(name="twice")(lambda w: {})


def test_an_unexpected_exception_in_a_tool_reads_as_a_named_internal_error_with_the_tool_name():
    tools: ToolSet[World] = ToolSet()

    @tools.tool()
    def explode(w: World) -> dict:
        """Fail."""
        raise KeyError("boom")

    async def call() -> str:
        srv = EnvServer("crashy", seeder=lambda rng, seed: World(), category="test", description="crashy", tools=tools)
        async with Client(srv) as c:
            r = await c.call_tool("explode", {})
            return r.content[0].text

    assert "internal_error: explode failed: KeyError: 'boom'" in anyio.run(call)


# --------------------------------------------------------------------------- the served world's seed
def _admin_hash(srv: EnvServer) -> str:
    async def run() -> str:
        async with Client(srv) as c:  # a plain client: no _meta, the default session and seed
            r = await c.call_tool("prove_admin_state_hash", {})
            return r.structured_content["state_hash"]

    return anyio.run(run)


def test_build_with_a_seed_serves_the_world_the_pipeline_gets_for_that_seed():
    with Environment("banking") as env, env.session(7) as s:
        pipeline_hash = s.state_hash()
    assert _admin_hash(build("banking", seed=7)) == pipeline_hash
    assert _admin_hash(build("banking")) != pipeline_hash  # the default is seed 0


def test_prove_servers_serve_seed_serves_that_world_over_stdio():
    with Environment("crm") as env, env.session(5) as s:
        pipeline_hash = s.state_hash()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "assets.cli", "servers", "serve", "crm", "--seed", "5"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )

    async def run() -> str:
        with anyio.fail_after(60):
            async with Client(params, read_timeout_seconds=30) as c:
                r = await c.call_tool("prove_admin_state_hash", {})
                return r.structured_content["state_hash"]

    assert anyio.run(run) == pipeline_hash


def test_prove_servers_serve_refuses_a_seed_that_is_not_a_number():
    r = subprocess.run(
        [sys.executable, "-m", "assets.cli", "servers", "serve", "crm", "--seed", "x"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )
    assert r.returncode == 2 and "--seed" in r.stderr and "invalid int value: 'x'" in r.stderr
