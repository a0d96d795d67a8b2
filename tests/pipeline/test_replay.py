"""Replay validation: error rate, sensitive-argument provenance, replay mismatch, determinism."""

from __future__ import annotations

import json

import pytest

from pipeline.core.config import ReplayConfig
from pipeline.core.records import Conversation, Message, RefCall, messages_json
from pipeline.synthesis.replay import error_rate, replay_trace, sensitive_violations, validate

SEED = 7


def recorded(env, snapshot, user_text: str, calls: list[tuple[str, dict]]) -> Conversation:
    """Execute ``calls`` live on a fresh session and record them as a one-turn conversation."""
    msgs = [{"role": "system", "content": "You operate banking."}, {"role": "user", "content": user_text}]
    trace, ref = [], []
    with env.session(SEED) as s:
        for i, (name, args) in enumerate(calls):
            r = s.call(name, args)
            cid = f"call_{i + 1}"
            msgs.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                    ],
                }
            )
            msgs.append({"role": "tool", "tool_call_id": cid, "content": r.as_tool_content()})
            trace.append(
                {
                    "turn": 0,
                    "name": name,
                    "arguments": args,
                    "ok": r.ok,
                    "error_code": r.error_code,
                    "reference": True,
                    "result": r.data if r.ok else None,
                    "error": r.error,
                }
            )
            ref.append(RefCall(name=name, arguments=args))
        final = s.state_hash()
    msgs.append({"role": "assistant", "content": "Done."})
    return Conversation(
        conversation_id=f"conv-test-{abs(hash(json.dumps(calls)))}",
        server="banking",
        servers=["banking"],
        seed=SEED,
        snapshot_id=snapshot.snapshot_id,
        messages=msgs,
        tools=snapshot.tools,
        reference=[ref],
        trace=trace,
        outcomes=["SUCCESS"],
        final_state_hash=final,
    )


@pytest.fixture(scope="module")
def account(seeded_state):
    acc = next(a for a in seeded_state["accounts"].values() if a["status"] == "active" and a["balance"] > 50)
    return acc["account_id"], seeded_state["customers"][acc["customer_id"]]["pin"]


@pytest.fixture(scope="module")
def withdrawal(banking_env, snapshot, account):
    aid, pin = account
    return recorded(
        banking_env,
        snapshot,
        f"Withdraw 20 from {aid}; my PIN is {pin}.",
        [
            ("get_balance", {"account_id": aid}),
            ("withdraw", {"account_id": aid, "amount": 20.0, "pin": pin}),
            ("get_balance", {"account_id": aid}),
        ],
    )


def test_a_valid_conversation_passes(banking_env, withdrawal):
    assert validate(banking_env, withdrawal, ReplayConfig()) is None


def test_simulated_conversations_without_failures_pass(banking_env, conversations):
    clean = [c for c in conversations if all(t.ok for t in c.trace)]
    assert clean
    for c in clean[:8]:
        assert validate(banking_env, c, ReplayConfig()) is None


def _reads(aid, n_ok, n_err):
    return [("get_balance", {"account_id": aid})] * n_ok + [("get_account", {"account_id": "ACC-9999"})] * n_err


def test_error_rate_above_thirty_percent_is_rejected(banking_env, snapshot, account):
    conv = recorded(banking_env, snapshot, "Check my accounts.", _reads(account[0], 6, 4))
    assert error_rate(conv) == pytest.approx(0.4)
    rej = validate(banking_env, conv, ReplayConfig())
    assert rej is not None and rej.reason == "error_rate" and rej.stage == "replay"
    assert "not_found" in rej.detail and rej.upstream["conversation_id"] == conv.conversation_id


def test_error_rate_of_exactly_thirty_percent_is_kept(banking_env, snapshot, account):
    conv = recorded(banking_env, snapshot, "Check my accounts.", _reads(account[0], 7, 3))
    assert error_rate(conv) == pytest.approx(0.3)
    assert validate(banking_env, conv, ReplayConfig()) is None


def test_an_empty_result_is_not_an_error(banking_env, snapshot, seeded_state):
    lonely = next(
        c for c in seeded_state["customers"] if not any(p["customer_id"] == c for p in seeded_state["payees"].values())
    )
    conv = recorded(banking_env, snapshot, "Any payees?", [("list_payees", {"customer_id": lonely})])
    assert conv.trace[0].result["payees"] == []
    assert error_rate(conv) == 0.0
    assert validate(banking_env, conv, ReplayConfig()) is None


def _set_call_arg(conv: Conversation, call_index: int, param: str, value) -> Conversation:
    c = conv.model_copy(deep=True)
    seen = -1
    for m in c.messages:
        for tc in m.tool_calls or []:
            seen += 1
            if seen == call_index:
                args = json.loads(tc.function.arguments)
                args[param] = value
                tc.function.arguments = json.dumps(args)
    return c


def test_a_pin_the_user_never_gave_is_rejected_for_provenance(banking_env, withdrawal, account):
    _, pin = account
    forged = next(
        p for p in ("4821", "7305", "9999") if p != pin and p not in json.dumps(messages_json(withdrawal.messages))
    )
    tampered = _set_call_arg(withdrawal, 1, "pin", forged)
    assert sensitive_violations(tampered) == ["withdraw.pin"]
    rej = validate(banking_env, tampered, ReplayConfig())
    assert rej is not None and rej.reason == "sensitive_provenance"


def test_a_pin_given_only_after_the_call_is_rejected(banking_env, snapshot, account):
    aid, pin = account
    conv = recorded(
        banking_env, snapshot, f"Withdraw 5 from {aid}.", [("withdraw", {"account_id": aid, "amount": 5.0, "pin": pin})]
    )
    conv.messages.insert(len(conv.messages) - 1, Message(role="user", content=f"By the way my PIN is {pin}."))
    assert sensitive_violations(conv) == ["withdraw.pin"]
    assert validate(banking_env, conv, ReplayConfig()).reason == "sensitive_provenance"


def test_a_pin_read_from_an_earlier_tool_output_is_traceable(withdrawal, account):
    _, pin = account
    c = withdrawal.model_copy(deep=True)
    c.messages[1].content = "Withdraw 20 please."
    assert sensitive_violations(c) == ["withdraw.pin"]
    c.messages[3].content = json.dumps({"note": f"pin on file {pin}"})  # the tool result of the first call
    assert sensitive_violations(c) == []


def test_provenance_check_can_be_switched_off(banking_env, withdrawal, account):
    tampered = _set_call_arg(withdrawal, 1, "pin", "4821" if account[1] != "4821" else "7305")
    assert validate(banking_env, tampered, ReplayConfig(check_sensitive=False)) is None  # the trace itself is unchanged


def test_a_tampered_recorded_result_is_a_replay_mismatch(banking_env, withdrawal):
    c = withdrawal.model_copy(deep=True)
    c.trace[2].result["balance"] += 100
    rej = validate(banking_env, c, ReplayConfig())
    assert rej is not None and rej.reason == "replay_mismatch" and "call 2" in rej.detail


def test_a_tampered_outcome_is_a_replay_mismatch(banking_env, withdrawal):
    c = withdrawal.model_copy(deep=True)
    c.trace[1].ok = False
    c.trace[1].error_code = "state_conflict"
    assert validate(banking_env, c, ReplayConfig(max_error_rate=0.5)).reason == "replay_mismatch"


def test_a_final_state_that_replay_does_not_reach_is_nondeterministic(banking_env, withdrawal):
    c = withdrawal.model_copy(update={"final_state_hash": "0" * 64})
    assert validate(banking_env, c, ReplayConfig()).reason == "nondeterministic"


def test_replay_starts_from_the_seed_every_time(banking_env, withdrawal):
    (r1, h1), (r2, h2) = replay_trace(banking_env, withdrawal), replay_trace(banking_env, withdrawal)
    assert r1 == r2 and h1 == h2 == withdrawal.final_state_hash
    assert [r["result"] for r in r1] == [t.result for t in withdrawal.trace]
