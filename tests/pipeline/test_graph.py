"""Dependency graphs: explicit edges confirmed live, implicit edges from state changes, the schema-hash cache."""

from __future__ import annotations

import os

from pipeline.core.config import GraphConfig
from pipeline.core.records import schema_hash
from pipeline.discovery.graph import cached_discover, candidate_explicit, discover, to_networkx

SEED = 7


def _edge(graph, src, dst, kind=None):
    for e in graph.edges:
        if e.src == src and e.dst == dst and (kind is None or e.kind == kind):
            return e
    return None


def _reduced(snapshot, tools):
    """The snapshot offering only ``tools`` (ToolSpec records, possibly edited)."""
    return snapshot.model_copy(update={"tools": tools, "schema_hash": schema_hash(tools)})


def test_explicit_edge_list_accounts_to_get_balance_is_confirmed_live(graph):
    e = _edge(graph, "list_accounts", "get_balance", "explicit")
    assert e is not None and e.confirmed and e.source == "schema+live"
    assert e.fields == {"account_id": "account_id"}


def test_explicit_edge_deposit_to_get_transaction_through_transaction_id(graph):
    e = _edge(graph, "deposit", "get_transaction", "explicit")
    assert e is not None and e.confirmed
    assert e.fields == {"transaction_id": "transaction_id"}


def test_explicit_edge_feeds_a_real_value_live(banking_env, snapshot):
    """What the edge claims holds on a fresh session: A's output field is accepted by B."""
    with banking_env.session(SEED) as s:
        acc = s.call("list_accounts", {}).data["accounts"][0]["account_id"]
        assert s.call("get_balance", {"account_id": acc}).ok
        tx = s.call(
            "deposit",
            {
                "account_id": next(
                    a["account_id"] for a in s.call("list_accounts", {}).data["accounts"] if a["status"] == "active"
                ),
                "amount": 10.0,
            },
        ).data["transaction_id"]
        assert s.call("get_transaction", {"transaction_id": tx}).ok


def test_schema_candidates_that_fail_live_stay_unconfirmed_and_out_of_chains(graph):
    """close_account needs a zero balance and the PIN: an account id from a listing is not enough, so
    the schema candidates into it are not confirmed; only emptying the account (withdraw) enables it."""
    into_close = [e for e in graph.edges if e.dst == "close_account" and e.kind == "explicit"]
    assert into_close and not any(e.confirmed for e in into_close)
    confirmed_into = {e.src for e in graph.edges if e.dst == "close_account" and e.confirmed}
    assert confirmed_into and confirmed_into <= {"withdraw", "transfer"}
    G = to_networkx(graph)
    assert set(G.predecessors("close_account")) == confirmed_into


def test_without_live_confirmation_every_schema_candidate_is_an_edge(banking_env, snapshot, tools_by_name):
    snap = _reduced(snapshot, [tools_by_name[n] for n in ("list_accounts", "get_balance", "close_account")])
    g = discover(banking_env, snap, GraphConfig(confirm_live=False, implicit=False), seed=SEED)
    assert {(e.src, e.dst) for e in g.edges} == {(a.name, b.name) for a, b, _, _ in candidate_explicit(snap.tools)}
    assert all(e.source == "schema" for e in g.edges)
    live = discover(banking_env, snap, GraphConfig(implicit=False), seed=SEED)
    assert _edge(live, "list_accounts", "close_account").confirmed is False
    assert _edge(live, "list_accounts", "get_balance").confirmed is True


def test_full_graph_has_live_implicit_edges(graph):
    implicit = [e for e in graph.edges if e.kind == "implicit"]
    assert implicit and all(e.source == "live" and e.confirmed and not e.fields for e in implicit)
    assert _edge(graph, "withdraw", "get_account", "implicit") is not None


def test_a_list_tool_is_fed_through_an_optional_filter_of_the_same_name(graph):
    """list_accounts takes no required input: a new account's customer_id feeds its customer filter."""
    e = _edge(graph, "open_account", "list_accounts", "explicit")
    assert e is not None and e.confirmed and e.fields == {"customer_id": "customer_id"}


def test_implicit_edge_when_a_write_changes_what_a_read_returns(banking_env, snapshot, tools_by_name):
    # without an output schema, deposit cannot explain the dependency explicitly: only state can (the account
    # its result names is the one it was given, which passes through it: no value flow)
    dep = tools_by_name["deposit"].model_copy(update={"output_schema": None})
    snap = _reduced(snapshot, [dep, tools_by_name["get_balance"]])
    g = discover(banking_env, snap, GraphConfig(), seed=SEED)
    e = _edge(g, "deposit", "get_balance")
    assert e is not None and e.kind == "implicit" and e.confirmed and e.source == "live"


def test_value_flow_edge_from_a_tool_without_output_schema(banking_env, snapshot, tools_by_name):
    # list_accounts' live result names accounts, and get_balance accepts one (while refusing an account nobody holds)
    lister = tools_by_name["list_accounts"].model_copy(update={"output_schema": None})
    snap = _reduced(snapshot, [lister, tools_by_name["get_balance"]])
    g = discover(banking_env, snap, GraphConfig(), seed=SEED)
    e = _edge(g, "list_accounts", "get_balance")
    assert e is not None and e.kind == "explicit" and e.source == "live" and e.confirmed
    assert list(e.fields.values()) == ["account_id"]
    off = discover(banking_env, snap, GraphConfig(value_flow=False), seed=SEED)
    assert _edge(off, "list_accounts", "get_balance", "explicit") is None


def test_implicit_edge_when_a_write_enables_another_write(banking_env, snapshot, tools_by_name):
    freeze = tools_by_name["freeze_account"].model_copy(update={"output_schema": None})
    snap = _reduced(snapshot, [freeze, tools_by_name["unfreeze_account"]])
    g = discover(banking_env, snap, GraphConfig(), seed=SEED)
    e = _edge(g, "freeze_account", "unfreeze_account")
    assert e is not None and e.kind == "implicit" and e.confirmed
    back = [e for e in g.edges if e.src == "unfreeze_account" and e.dst == "freeze_account" and e.confirmed]
    assert not back  # unfreezing an active account fails, so it enables nothing


def test_no_implicit_edge_when_the_write_leaves_the_read_unchanged(banking_env, snapshot, tools_by_name):
    add = tools_by_name["add_payee"].model_copy(update={"output_schema": None})
    snap = _reduced(snapshot, [add, tools_by_name["get_customer"]])
    g = discover(banking_env, snap, GraphConfig(), seed=SEED)
    assert _edge(g, "add_payee", "get_customer") is None


def test_graph_records_its_lineage(graph, snapshot):
    assert graph.server == "banking" and graph.schema_hash == snapshot.schema_hash
    assert graph.snapshot_id == snapshot.snapshot_id
    assert set(graph.tools) == {t.name for t in snapshot.tools}


def test_cache_hits_for_the_same_schema_and_rebuilds_for_a_changed_one(banking_env, snapshot, tools_by_name, tmp_path):
    snap = _reduced(snapshot, [tools_by_name["list_accounts"], tools_by_name["get_balance"]])
    g1, hit1 = cached_discover(banking_env, snap, GraphConfig(), tmp_path, seed=SEED)
    assert not hit1
    files = list(tmp_path.glob("banking-*.json"))
    assert len(files) == 1
    stamp = os.stat(files[0]).st_mtime_ns
    g2, hit2 = cached_discover(banking_env, snap, GraphConfig(), tmp_path, seed=SEED)
    assert hit2 and g2.model_dump() == g1.model_dump()
    assert os.stat(files[0]).st_mtime_ns == stamp  # read, not rewritten

    changed = tools_by_name["get_balance"].model_copy(update={"description": "Balance of an account (v2)."})
    snap2 = _reduced(snapshot, [tools_by_name["list_accounts"], changed])
    assert snap2.schema_hash != snap.schema_hash
    g3, hit3 = cached_discover(banking_env, snap2, GraphConfig(), tmp_path, seed=SEED)
    assert not hit3 and g3.schema_hash == snap2.schema_hash
    assert len(list(tmp_path.glob("banking-*.json"))) == 2


def test_the_cache_misses_when_the_servers_settings_or_its_probed_state_change(
    banking_env, snapshot, tools_by_name, tmp_path
):
    """The same tools are not the same server: a graph found before the user stated known values, or on other
    data, is not reused in the same data folder."""
    from pipeline.env import Environment

    snap = _reduced(snapshot, [tools_by_name["list_accounts"], tools_by_name["get_balance"]])
    _, hit = cached_discover(banking_env, snap, GraphConfig(), tmp_path, seed=SEED)
    assert not hit
    told = banking_env.config.model_copy(update={"known_values": {"account_id": ["ACC-0001"]}})
    with Environment(told) as env:
        _, hit = cached_discover(env, snap, GraphConfig(), tmp_path, seed=SEED)
    assert not hit
    other_data = snap.model_copy(update={"values": {**snap.values, "account_id": ["ACC-9999"]}})
    _, hit = cached_discover(banking_env, other_data, GraphConfig(), tmp_path, seed=SEED)
    assert not hit
    _, hit = cached_discover(banking_env, snap, GraphConfig(), tmp_path, seed=SEED)
    assert hit and len(list(tmp_path.glob("banking-*.json"))) == 3


def test_the_graph_cache_folder_comes_from_the_build_then_the_environment_then_the_data_folder(tmp_path, monkeypatch):
    from pipeline.core.config import BuildConfig
    from pipeline.stages.discovery import GraphStep

    monkeypatch.delenv("PROVE_GRAPH_CACHE_DIR", raising=False)
    assert GraphStep.of(BuildConfig(data_dir=str(tmp_path / "d"))).cache == tmp_path / "d" / "cache" / "graphs"
    monkeypatch.setenv("PROVE_GRAPH_CACHE_DIR", str(tmp_path / "shared"))
    assert GraphStep.of(BuildConfig(data_dir=str(tmp_path / "d"))).cache == tmp_path / "shared"
    named = BuildConfig(data_dir=str(tmp_path / "d"), graph=GraphConfig(cache_dir=str(tmp_path / "named")))
    assert GraphStep.of(named).cache == tmp_path / "named"


def test_corrupt_cache_entry_is_rebuilt(banking_env, snapshot, tools_by_name, tmp_path):
    snap = _reduced(snapshot, [tools_by_name["list_accounts"], tools_by_name["get_balance"]])
    cached_discover(banking_env, snap, GraphConfig(), tmp_path, seed=SEED)
    (path,) = tmp_path.glob("banking-*.json")
    path.write_text("{not json")
    g, hit = cached_discover(banking_env, snap, GraphConfig(), tmp_path, seed=SEED)
    assert not hit and _edge(g, "list_accounts", "get_balance").confirmed
