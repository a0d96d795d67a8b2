"""Wrong first attempts drawn from the world and the schema, each failing live on a built-in server."""

from __future__ import annotations

import json
import random

import pytest

from pipeline.core.records import Message, Snapshot
from pipeline.env import Environment
from pipeline.synthesis.mistakes import (
    KINDS,
    LiveWorld,
    candidates,
    enum_of,
    explains,
    first_attempt,
    synonyms,
    typos,
)
from pipeline.synthesis.simulate import run_conversation

SEED = 7


@pytest.fixture(scope="module")
def bank(banking_env):
    """A banking customer with an account, and the text a conversation showed about them."""
    with banking_env.session(SEED) as s:
        customers = s.call("list_customers", {}).data["customers"]
        for c in customers:
            accts = s.call("list_accounts", {"customer_id": c["customer_id"]}).data["accounts"]
            if accts:
                shown = json.dumps(c) + "\n" + json.dumps(accts)
                return c, accts[0], shown
    raise AssertionError("no banking customer with an account")


def _mistake(kind, tool, args, snap, tools, session, shown, seed=0):
    world = LiveWorld(session.state())
    found = [m for m in candidates(tool, args, snap, tools, world, shown, random.Random(seed)) if m.kind == kind]
    assert found, f"no {kind} mistake open to {tool.name}({args})"
    return found[0]


def test_a_name_where_an_id_is_needed_is_the_entitys_own_name_and_fails(banking_env, snapshot, tools_by_name, bank):
    customer, _, shown = bank
    with banking_env.session(SEED) as s:
        tool = tools_by_name["get_customer"]
        m = _mistake("name_for_id", tool, {"customer_id": customer["customer_id"]}, snapshot, tools_by_name, s, shown)
        assert m.args == {"customer_id": customer["name"]}
        r = s.call(m.tool, m.args)
    assert not r.ok and r.error_code == "not_found"


def test_an_id_of_the_wrong_kind_is_a_related_real_id_and_fails(banking_env, snapshot, tools_by_name, bank):
    customer, account, shown = bank
    with banking_env.session(SEED) as s:
        tool = tools_by_name["get_balance"]
        m = _mistake("wrong_kind_id", tool, {"account_id": account["account_id"]}, snapshot, tools_by_name, s, shown)
        assert m.args == {"account_id": customer["customer_id"]}  # the account's own customer, as the result showed
        r = s.call(m.tool, m.args)
    assert not r.ok and r.error_code == "not_found"


def test_a_mistyped_id_is_a_slip_of_the_real_id_that_names_nothing(banking_env, snapshot, tools_by_name, bank):
    _, account, shown = bank
    aid = account["account_id"]
    with banking_env.session(SEED) as s:
        tool = tools_by_name["get_balance"]
        m = _mistake("mistyped_id", tool, {"account_id": aid}, snapshot, tools_by_name, s, shown)
        assert m.args["account_id"] in typos(aid) and explains(m.args["account_id"], aid)
        r = s.call(m.tool, m.args)
    assert not r.ok and r.error_code in ("not_found", "invalid_arguments")
    assert set(typos("ACC-0012")) == {"ACC-001", "ACC-00122", "ACC-0021", "ACC-O012", "ACC0012"}


def test_an_enum_synonym_is_another_word_for_the_value_and_changes_nothing(banking_env, snapshot, tools_by_name, bank):
    customer, _, shown = bank
    tool = tools_by_name["open_account"]
    args = {"customer_id": customer["customer_id"], "account_type": "checking"}
    with banking_env.session(SEED) as s:
        before = s.state_hash()
        m = _mistake("enum_synonym", tool, args, snapshot, tools_by_name, s, shown)
        assert m.args["account_type"] in synonyms("checking")
        assert m.args["account_type"] not in enum_of(tool, "account_type")
        r = s.call(m.tool, m.args)
        assert not r.ok and r.error_code == "invalid_arguments"
        assert s.state_hash() == before  # a failed write leaves the world as it was


def test_a_left_out_field_is_a_required_one_and_fails(banking_env, snapshot, tools_by_name, bank):
    customer, account, shown = bank
    tool = tools_by_name["deposit"]
    args = {"account_id": account["account_id"], "amount": 25.0}
    with banking_env.session(SEED) as s:
        before = s.state_hash()
        m = _mistake("missing_field", tool, args, snapshot, tools_by_name, s, shown)
        assert len(m.args) == 1 and m.param in tool.required and m.param not in m.args
        r = s.call(m.tool, m.args)
        assert not r.ok and r.error_code == "invalid_arguments" and s.state_hash() == before


def test_a_wrong_tool_is_a_read_only_sibling_the_arguments_cannot_satisfy(banking_env, snapshot, tools_by_name, bank):
    _, account, shown = bank
    tool = tools_by_name["list_transactions"]
    with banking_env.session(SEED) as s:
        m = _mistake("wrong_tool", tool, {"account_id": account["account_id"]}, snapshot, tools_by_name, s, shown)
        assert m.tool == "get_transaction" and tools_by_name[m.tool].read_only
        r = s.call(m.tool, m.args)
    assert not r.ok and r.error_code == "invalid_arguments"


def test_a_stale_id_is_one_the_conversation_saw_deleted_and_fails():
    with Environment("iot_devices") as env:
        tools = {t.name: t for t in env.tools()}
        with env.session(SEED) as s:
            scenes = s.call("list_scenes", {}).data["scenes"]
            keep, gone = scenes[0]["scene_id"], scenes[1]["scene_id"]
            deleted = s.call("delete_scene", {"scene_id": gone})
            assert deleted.ok
            snap = Snapshot(
                snapshot_id="s",
                server="iot_devices",
                seed=SEED,
                schema_hash="h",
                tools=list(tools.values()),
                entity_kinds={keep: "scene", gone: "scene"},
            )
            shown = json.dumps(scenes) + "\n" + deleted.as_tool_content()
            tool = tools["activate_scene"]
            m = _mistake("stale_id", tool, {"scene_id": keep}, snap, tools, s, shown)
            assert m.args == {"scene_id": gone}
            before = s.state_hash()
            r = s.call(m.tool, m.args)
            assert not r.ok and r.error_code == "not_found" and s.state_hash() == before


def test_first_attempt_is_seeded_and_fails_live(banking_env, snapshot, tools_by_name, bank):
    customer, account, shown = bank
    msgs = [Message(role="user", content="hi"), Message(role="tool", tool_call_id="c", content=shown)]
    tool = tools_by_name["get_balance"]
    made = []
    for seed in (1, 1, 2, 3, 4, 5):
        with banking_env.session(SEED) as s:
            a = first_attempt(
                s, snapshot, tool, {"account_id": account["account_id"]}, random.Random(seed), tools_by_name, msgs
            )
            assert a is not None and not a.result.ok
            made.append(a.mistake)
    assert made[0] == made[1]  # the same seed makes the same mistake
    assert len({m.kind for m in made}) >= 2


def test_simulated_recovery_demonstrations_use_the_world_and_carry_weight_zero(banking_env, snapshot, simulated):
    kinds = set()
    for i, (chain, q, _) in enumerate(simulated):
        conv = run_conversation(banking_env, snapshot, chain, q, random.Random(f"m:{i}"), recovery_rate=1.0)
        calls = [m for m in conv.messages if m.tool_calls]
        shown = ""
        ci = 0
        for m in conv.messages:
            if m.role in ("user", "tool"):
                shown += "\n" + (m.content or "")
            if not m.tool_calls:
                continue
            t = conv.trace[ci]
            assert (m.weight == 0) == (not t.reference)  # exactly the failed attempts are weighted out
            if not t.reference:
                assert not t.ok
                right = conv.trace[ci + 1]
                assert right.reference and calls[ci + 1].weight is None
                if t.name != right.name:
                    kinds.add("wrong_tool")
                for p, v in t.arguments.items():
                    if v != right.arguments.get(p):
                        assert str(v) in shown or explains(v, right.arguments.get(p)), f"{t.name} {p}={v!r}"
                        kinds.add(p)
                if set(t.arguments) < set(right.arguments):
                    kinds.add("missing_field")
            ci += 1
    assert "missing_field" in kinds and len(kinds) >= 3, kinds


def test_kinds_are_named_once():
    assert len(KINDS) == len(set(KINDS)) == 7
