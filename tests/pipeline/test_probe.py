"""Probing: only read-only tools, real entities, support thresholds, the user's own secrets."""

from __future__ import annotations

from pipeline.core.config import ProbeConfig
from pipeline.discovery.probe import narrow, probe, probe_safe
from pipeline.language.state_values import linked_secret

SEED = 7


def _zero_balance_accounts(state) -> set[str]:
    return {a["account_id"] for a in state["accounts"].values() if a["balance"] == 0 and a["status"] != "closed"}


def test_probe_calls_only_read_only_non_destructive_tools(snapshot, tools_by_name):
    assert snapshot.probe_calls
    for call in snapshot.probe_calls:
        tool = tools_by_name[call["name"]]
        assert tool.read_only and not tool.destructive, f"probe called write tool {call['name']}"
    writers = {n for n, t in tools_by_name.items() if not t.read_only}
    assert writers <= set(snapshot.skipped_tools)


def test_probe_feeds_observed_ids_to_lookup_tools(snapshot):
    called = {c["name"] for c in snapshot.probe_calls if c["arguments"]}
    assert {"get_balance", "get_account"} & called
    assert all(c["ok"] for c in snapshot.probe_calls if c["name"] == "get_balance")


def test_probe_leaves_the_live_state_untouched(banking_env, banking_tools):
    with banking_env.session(SEED) as s:
        before = s.state_hash()
        probe(s, banking_tools, ProbeConfig())
        assert s.state_hash() == before


def test_probe_safe_admits_allowlisted_tools_only_by_name(banking_tools):
    safe = {t.name for t in probe_safe(banking_tools)}
    assert "deposit" not in safe and "get_balance" in safe
    assert "deposit" in {t.name for t in probe_safe(banking_tools, ["deposit"])}


def test_probed_entities_are_real_and_cover_the_seeded_world(snapshot, seeded_state):
    real = (
        set(seeded_state["customers"])
        | set(seeded_state["accounts"])
        | set(seeded_state["transactions"])
        | set(seeded_state["payees"])
    )
    assert set(snapshot.entities) <= real
    assert set(seeded_state["customers"]) <= set(snapshot.entities)
    assert set(seeded_state["accounts"]) <= set(snapshot.entities)
    for aid in seeded_state["accounts"]:
        assert snapshot.entities[aid]["customer_id"] == seeded_state["accounts"][aid]["customer_id"]
    assert set(snapshot.values["account_id"]) <= set(seeded_state["accounts"])


def test_probe_never_exposes_secrets_as_values(snapshot):
    assert "pin" not in snapshot.values


def test_support_threshold_drops_zero_balance_accounts(banking_env, banking_tools, snapshot, seeded_state):
    zero = _zero_balance_accounts(seeded_state)
    assert zero, "seed 7 has accounts with a zero balance"
    assert zero <= set(snapshot.entities)  # kept without a threshold
    with banking_env.session(SEED) as s:
        snap = probe(s, banking_tools, ProbeConfig(support={"account": {"balance": 0.01}}))
    assert not zero & set(snap.entities)
    assert not zero & set(snap.values["account_id"])
    assert all(snap.entities[a]["balance"] >= 0.01 for a in seeded_state["accounts"] if a in snap.entities)
    # customers are untouched by an account rule
    assert set(seeded_state["customers"]) <= set(snap.entities)
    assert snap.snapshot_id != snapshot.snapshot_id


def test_support_threshold_keyed_by_id_prefix(banking_env, banking_tools, seeded_state):
    """ProbeConfig.support is keyed by entity kind: the id field's name or the id prefix."""
    zero = _zero_balance_accounts(seeded_state)
    with banking_env.session(SEED) as s:
        snap = probe(s, banking_tools, ProbeConfig(support={"acc": {"balance": 0.01}}))
    assert not zero & set(snap.entities)
    assert not zero & set(snap.values["account_id"])


def test_excluded_status_drops_entities(banking_env, banking_tools):
    with banking_env.session(SEED) as s:
        acc = next(a for a in s.call("list_accounts", {}).data["accounts"] if a["status"] == "active")
        assert s.call("freeze_account", {"account_id": acc["account_id"], "reason": "lost_card"}).ok
        default = probe(s, banking_tools, ProbeConfig())
        strict = probe(s, banking_tools, ProbeConfig(exclude_status=["frozen"]))
    assert acc["account_id"] in default.entities
    assert acc["account_id"] not in strict.entities
    assert acc["account_id"] not in strict.values["account_id"]
    assert all(e.get("status") != "frozen" for e in strict.entities.values())


def test_secrets_hold_every_customers_pin(snapshot, seeded_state):
    for cid, cust in seeded_state["customers"].items():
        assert snapshot.secrets[cid]["pin"] == cust["pin"]


def test_linked_secret_is_the_account_holders_pin_and_opens_the_account(banking_env, snapshot, seeded_state):
    acc = next(a for a in seeded_state["accounts"].values() if a["status"] == "active" and a["balance"] > 5)
    pin = linked_secret(snapshot, "pin", {"account_id": acc["account_id"], "amount": 5.0})
    assert pin == seeded_state["customers"][acc["customer_id"]]["pin"]
    with banking_env.session(SEED) as s:
        assert s.call("withdraw", {"account_id": acc["account_id"], "amount": 5.0, "pin": pin}).ok


def test_narrow_keeps_only_the_entities_a_chain_touches(snapshot):
    acc = next(eid for eid, rec in snapshot.entities.items() if "customer_id" in rec and eid.startswith("ACC"))
    n = narrow(snapshot, [acc, 25.0, "rent share"])
    owner = str(snapshot.entities[acc]["customer_id"])
    assert acc in n and owner in n, "the account and the customer it points at"
    assert len(n) < len(snapshot.entities) / 4, "not the whole sampled state"
    assert all(n[e] == snapshot.entities[e] for e in n)
