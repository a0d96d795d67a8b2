"""The reward of PAPER.md section 3, worked by hand, plus state match on the live banking server."""

from __future__ import annotations

import json

import pytest

from pipeline.env import Environment
from pipeline.reward.jsonl import score_jsonl
from pipeline.reward.score import (
    RewardConfig,
    RewardInputError,
    execute_calls,
    json_equal,
    replay_state_hashes,
    score,
    score_turns,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "list_accounts",
            "parameters": {
                "type": "object",
                "properties": {"customer_id": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
                "required": [],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_balance",
            "parameters": {
                "type": "object",
                "properties": {"account_id": {"type": "string"}},
                "required": ["account_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "deposit",
            "parameters": {
                "type": "object",
                "properties": {"account_id": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["account_id", "amount"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "list_transactions",
            "parameters": {
                "type": "object",
                "properties": {"account_id": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["account_id"],
            },
        },
    },
]


def call(name, ok=True, **arguments):
    return {"name": name, "arguments": arguments, "ok": ok}


def ref(name, depends_on=(), **arguments):
    return {"name": name, "arguments": arguments, "depends_on": list(depends_on)}


# ---------------------------------------------------------------------------------------------- validity


def test_correct_name_with_wrong_parameters_scores_one_third_validity():
    b = score([call("get_balance", ok=False, acct="ACC-0001")], [ref("get_balance", account_id="ACC-0001")], TOOLS)
    assert b.validity == pytest.approx(1 / 3)


def test_correct_structure_with_failed_execution_scores_two_thirds_validity():
    b = score(
        [call("get_balance", ok=False, account_id="ACC-9999")], [ref("get_balance", account_id="ACC-0001")], TOOLS
    )
    assert b.validity == pytest.approx(2 / 3)


def test_unknown_name_scores_zero_validity_even_when_executed():
    b = score([call("transfer", ok=True, amount=3)], [ref("get_balance", account_id="A")], TOOLS)
    assert b.validity == 0.0


def test_mistyped_required_parameter_fails_the_structure_level():
    # amount must be a number: a string is not, an integer is
    assert score(
        [call("deposit", ok=False, account_id="A", amount="5")], [ref("deposit")], TOOLS
    ).validity == pytest.approx(1 / 3)
    assert score(
        [call("deposit", ok=True, account_id="A", amount=5)], [ref("deposit")], TOOLS
    ).validity == pytest.approx(1.0)
    # a boolean is not an integer
    assert score(
        [call("list_transactions", ok=False, account_id=True)], [ref("deposit")], TOOLS
    ).validity == pytest.approx(1 / 3)


def test_validity_is_averaged_over_calls_and_zero_without_calls():
    calls = [call("get_balance", account_id="A"), call("nope"), call("get_balance", ok=False)]
    b = score(calls, [ref("get_balance", account_id="A")], TOOLS)
    assert b.validity == pytest.approx((1 + 0 + 1 / 3) / 3)
    assert score([], [ref("get_balance", account_id="A")], TOOLS).validity == 0.0


def test_missing_ok_counts_as_not_executed():
    b = score([{"name": "get_balance", "arguments": {"account_id": "A"}}], [ref("get_balance", account_id="A")], TOOLS)
    assert b.validity == pytest.approx(2 / 3)


# ---------------------------------------------------------------------------------------------- coverage / order


def test_perfect_two_step_chain_scores_the_maximum():
    G = [ref("list_accounts", customer_id="CUS-0001"), ref("get_balance", [0], account_id="ACC-0001")]
    C = [call("list_accounts", customer_id="CUS-0001"), call("get_balance", account_id="ACC-0001")]
    b = score(C, G, TOOLS)
    assert (b.validity, b.coverage, b.efficiency, b.name, b.args) == (1.0, 1.0, 0.0, 1.0, 1.0)
    assert b.total == pytest.approx(1.3)
    assert b.exact and b.matched == [0, 1]


def test_dependency_placed_after_its_dependent_loses_coverage_of_that_step():
    G = [ref("list_accounts", customer_id="CUS-0001"), ref("get_balance", [0], account_id="ACC-0001")]
    C = [call("get_balance", account_id="ACC-0001"), call("list_accounts", customer_id="CUS-0001")]
    b = score(C, G, TOOLS)
    assert b.matched == [1, 0]
    assert b.coverage == pytest.approx(0.5)  # list_accounts has no deps: o=1; get_balance's dep comes later: o=0
    assert not b.exact


def test_unmatched_dependency_zeroes_the_dependent_step():
    G = [ref("list_accounts", customer_id="CUS-0001"), ref("get_balance", [0], account_id="ACC-0001")]
    C = [call("get_balance", account_id="ACC-0001")]
    b = score(C, G, TOOLS)
    assert b.coverage == 0.0
    assert b.args == 1.0  # the one matched pair has equal values


def test_matching_needs_the_reference_argument_keys_and_takes_the_earliest_call():
    G = [ref("get_balance", account_id="ACC-0002")]
    C = [
        call("get_balance", acct="x"),
        call("get_balance", account_id="ACC-0001"),
        call("get_balance", account_id="ACC-0002"),
    ]
    b = score(C, G, TOOLS)
    assert b.matched == [1]  # keys match at 1 (values are not compared when matching)
    assert b.coverage == 1.0 and b.args == 0.0


def test_each_call_matches_at_most_one_reference_step():
    G = [ref("get_balance", account_id="A"), ref("get_balance", account_id="B")]
    b = score([call("get_balance", account_id="A")], G, TOOLS)
    assert b.matched == [0, None] and b.coverage == 0.5


# ------------------------------------------------------------------------------------------- efficiency / name / args


def test_a_four_call_task_has_budget_six():
    G = [ref("get_balance", account_id=f"A{i}") for i in range(4)]
    six = [call("get_balance", account_id=f"A{i}") for i in range(6)]
    assert score(six, G, TOOLS).efficiency == 0.0
    eight = [call("get_balance", account_id=f"A{i}") for i in range(8)]
    assert score(eight, G, TOOLS).efficiency == pytest.approx(-0.5 * 2 / 6)


def test_flat_budget_is_configurable():
    G = [ref("get_balance", account_id="A")]
    C = [call("get_balance", account_id="A"), call("get_balance", account_id="A")]
    assert score(C, G, TOOLS).efficiency == 0.0  # B = 1 + ceil(0.5) = 2
    assert score(C, G, TOOLS, RewardConfig(beta=0.0)).efficiency == pytest.approx(-0.5)


def test_name_precision():
    G = [ref("get_balance", account_id="A")]
    C = [call("get_balance", account_id="A"), call("list_accounts"), call("deposit", account_id="A", amount=1)]
    assert score(C, G, TOOLS).name == pytest.approx(1 / 3)
    assert score([], G, TOOLS).name == 0.0


def test_argument_values_compare_as_json():
    assert json_equal(1, 1.0) and json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1) and not json_equal("1", 1) and not json_equal("abc", "ABC")
    G = [ref("deposit", account_id="A", amount=10)]
    assert score([call("deposit", account_id="A", amount=10.0)], G, TOOLS).args == 1.0
    assert score([call("deposit", account_id="a", amount=10.0)], G, TOOLS).args == 0.5


def test_step_without_arguments_scores_one_and_no_pair_scores_zero():
    assert score([call("list_accounts")], [ref("list_accounts")], TOOLS).args == 1.0
    assert score([call("get_balance", account_id="A")], [ref("list_accounts")], TOOLS).args == 0.0


def test_total_is_the_weighted_sum():
    G = [ref("list_accounts"), ref("get_balance", [0], account_id="A")]
    C = [call("list_accounts"), call("get_balance", ok=False, account_id="B")]
    b = score(C, G, TOOLS)
    assert (b.validity, b.coverage, b.name, b.args) == (pytest.approx(5 / 6), 1.0, 1.0, 0.5)
    assert b.total == pytest.approx(0.5 * 5 / 6 + 0.5 * 1 + 0.15 * 0 + 0.2 * 1 + 0.1 * 0.5)
    w = RewardConfig(w_validity=0, w_coverage=0, w_efficiency=0, w_name=0, w_args=1)
    assert score(C, G, TOOLS, w).total == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------- abstention


def test_abstention_rewards_no_call_and_punishes_any_call():
    b = score([], [], TOOLS)
    assert b.total == 1.0 and b.abstention == 1.0 and b.exact
    b = score([call("list_accounts")], [], TOOLS)
    assert b.total == 0.0 and b.abstention == 0.0 and not b.exact


# ---------------------------------------------------------------------------------------------- multi-turn


def test_per_turn_scoring_averages_turns_and_honours_cross_turn_dependencies():
    turns_ref = [[ref("list_accounts")], [ref("get_balance", [0], account_id="A")]]
    good = [[call("list_accounts")], [call("get_balance", account_id="A")]]
    cfg = RewardConfig(per_turn=True)
    assert score_turns(good, turns_ref, TOOLS, cfg).total == pytest.approx(1.3)
    missed_first = [[], [call("get_balance", account_id="A")]]
    b = score_turns(missed_first, turns_ref, TOOLS, cfg)
    assert b.coverage == pytest.approx(0.0)  # turn 0 unmatched; turn 1's dependency unmatched
    flat = score_turns(good, turns_ref, TOOLS)  # default: flattened
    assert flat.total == pytest.approx(1.3)


# ---------------------------------------------------------------------------------------------- state match (live)


def test_state_match_against_the_reference_replayed_on_the_live_banking_server():
    G = [ref("deposit", account_id="ACC-0002", amount=25.0)]
    with Environment("banking") as env:
        [ref_hash] = replay_state_hashes(env, 3, [G])
        outcomes = {}
        for label, calls in {
            "same": [call("deposit", account_id="ACC-0002", amount=25)],
            "other": [call("deposit", account_id="ACC-0002", amount=26)],
        }.items():
            s = env.session(3)
            executed = execute_calls(s, calls)
            outcomes[label] = (executed, s.state_hash() == ref_hash)
            s.close()
    cfg = RewardConfig(w_state=0.3)
    same_calls, same_match = outcomes["same"]
    other_calls, other_match = outcomes["other"]
    assert same_calls[0]["ok"] and same_match and not other_match
    assert score(same_calls, G, TOOLS, cfg, state_match=same_match).total == pytest.approx(1.3 + 0.3)
    off = score(same_calls, G, TOOLS, state_match=same_match)  # weight 0 by default: reported, not counted
    assert off.state == 1.0 and off.total == pytest.approx(1.3)
    b = score_turns([other_calls], [G], TOOLS, cfg, state_per_turn=[other_match])
    assert b.state == 0.0


# ---------------------------------------------------------------------------------------------- JSONL


def _write(tmp_path, rows):
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return p


def test_score_jsonl_with_recorded_outcomes(tmp_path):
    p = _write(
        tmp_path,
        [
            {
                "tools": TOOLS,
                "reference": [ref("get_balance", account_id="A")],
                "calls": [call("get_balance", account_id="A")],
            },
            {"tools": TOOLS, "reference": [], "calls": []},
        ],
    )
    out = score_jsonl(p)
    assert list(out[0]) == ["validity", "coverage", "efficiency", "name", "args", "total"]
    assert out[0]["total"] == pytest.approx(1.3) and out[1]["total"] == 1.0


def test_score_jsonl_executes_calls_live_when_outcomes_are_missing(tmp_path):
    with Environment("banking") as env:
        tools = [t.to_openai() for t in env.tools()]
    rec = {
        "tools": tools,
        "seed": 0,
        "reference": [ref("get_balance", account_id="ACC-0001")],
        "calls": [
            {"name": "get_balance", "arguments": {"account_id": "ACC-0001"}},
            {"name": "get_balance", "arguments": json.dumps({"account_id": "ACC-9999"})},
        ],
    }
    out = score_jsonl(_write(tmp_path, [rec]), server="banking")
    assert out[0]["validity"] == pytest.approx((1 + 2 / 3) / 2)


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "line 2: not valid JSON"),
        ('{"tools": [], "calls": []}', "line 2: field 'reference' is missing"),
        ('{"tools": {}, "reference": [], "calls": []}', "line 2: field 'tools'"),
        ('{"tools": [], "reference": [{"arguments": {}}], "calls": []}', "line 2: field 'reference[0].name'"),
        (
            '{"tools": [], "reference": [{"name": "a", "depends_on": [3]}], "calls": []}',
            "line 2: field 'reference[0].depends_on'",
        ),
        ('{"tools": [], "reference": [], "calls": [{"name": "a", "ok": "yes"}]}', "line 2: field 'calls[0].ok'"),
        ('{"tools": [], "reference": [], "calls": [{"name": "a"}]}', "line 2: field 'calls[0].ok' is missing"),
        ('{"tools": [{"type": "function"}], "reference": [], "calls": []}', "line 2: field 'tools[0]'"),
    ],
)
def test_malformed_lines_raise_errors_naming_line_and_field(tmp_path, line, message):
    ok = json.dumps({"tools": TOOLS, "reference": [], "calls": []})
    with pytest.raises(RewardInputError) as err:
        score_jsonl(_write(tmp_path, [ok, line]))
    assert message in str(err.value)
