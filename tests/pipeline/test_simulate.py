"""The conversation state machine, run live on banking."""

from __future__ import annotations

import json
import random
import re

import pytest

from pipeline.core.records import ArgSource, Chain, ChainStep, UserQuery
from pipeline.language.lexicon import words
from pipeline.language.phrasing import ID_TOKEN, mentions
from pipeline.synthesis.simulate import run_conversation

SEED = 7
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")


def _user_turn_starts(conv):
    """Indices of the user messages that open a turn (a clarification answer does not)."""
    idx = [i for i, m in enumerate(conv.messages) if m.role == "user"]
    if conv.info_level == "missing":
        idx.pop(1)
    return idx


def test_messages_are_well_formed_openai_chat(conversations, tools_by_name):
    for conv in conversations:
        msgs = conv.messages
        assert msgs[0].role == "system" and msgs[1].role == "user"
        assert {m.role for m in msgs} <= {"system", "user", "assistant", "tool"}
        seen_ids = set()
        i = 0
        while i < len(msgs):
            m = msgs[i]
            if m.role == "assistant" and m.tool_calls:
                assert m.content is None
                ids = []
                for tc in m.tool_calls:
                    assert tc.type == "function" and tc.function.name in tools_by_name
                    assert isinstance(json.loads(tc.function.arguments), dict)
                    assert tc.id not in seen_ids
                    seen_ids.add(tc.id)
                    ids.append(tc.id)
                answered = [msgs[i + 1 + k] for k in range(len(ids))]
                assert [a.role for a in answered] == ["tool"] * len(ids)
                assert [a.tool_call_id for a in answered] == ids
                i += 1 + len(ids)
                continue
            if m.role == "tool":
                pytest.fail(f"{conv.conversation_id}: tool message without a preceding tool call")
            if m.role == "assistant":
                assert isinstance(m.content, str) and m.content
            i += 1
        assert msgs[-1].role == "assistant" and not msgs[-1].tool_calls


def test_two_or_three_user_turns_each_ending_in_an_answer(simulated):
    for _, q, conv in simulated:
        starts = _user_turn_starts(conv)
        assert len(starts) == len(q.turns) == len(conv.reference) == len(conv.outcomes)
        assert 2 <= len(q.turns) <= 3
        for _a, b in zip(starts, starts[1:] + [len(conv.messages)]):
            last = conv.messages[b - 1]
            assert last.role == "assistant" and not last.tool_calls


def test_reference_per_turn_lists_the_calls_with_dependency_indices(simulated):
    for chain, q, conv in simulated:
        flat = [c for turn in conv.reference for c in turn]
        executed = [t for t in conv.trace if t.reference]
        assert [(c.name, c.arguments) for c in flat] == [(t.name, t.arguments) for t in executed]
        for k, c in enumerate(flat):
            assert all(0 <= d < k for d in c.depends_on)
        # a conversation where every step ran maps the chain's dependencies one to one
        if len(flat) == len(chain.steps):
            assert [c.name for c in flat] == chain.names
            assert [c.depends_on for c in flat] == [s.depends_on for s in chain.steps]
        # turns follow the query's split of chain steps
        for turn_ref, steps in zip(conv.reference, q.turn_steps):
            assert [c.name for c in turn_ref] == [chain.steps[k].name for k in steps][: len(turn_ref)]


def test_step_sourced_arguments_carry_the_earlier_output_value(simulated):
    checked = 0
    for chain, q, conv in simulated:
        results = {}
        for k, step in enumerate(chain.steps):
            for p, src in step.args.items():
                if src.kind == "step" and src.step in results and k < len(q.step_args):
                    assert json.dumps(q.step_args[k][p]) in results[src.step]
                    checked += 1
            done = next((t for t in conv.trace if t.reference and t.name == step.name), None)
            if done is not None and done.ok:
                results[k] = json.dumps(done.result)
    assert checked > 0


def test_missing_information_makes_the_assistant_ask_before_the_first_call(simulated):
    missing = [(q, c) for _, q, c in simulated if q.info_level == "missing"]
    assert missing
    for q, conv in missing:
        ((param, value),) = q.withheld.items()
        m = conv.messages
        assert m[1].role == "user" and not mentions(m[1].content, value, "2026-03-02")
        # the question names what is missing, in the assistant's words; the user's answer supplies it
        # (a question, possibly with its reason after it: "Could you give me your PIN? It's required for this.")
        assert m[2].role == "assistant" and not m[2].tool_calls and "?" in m[2].content
        # a one-word parameter (reason) is its own word; a snake_case one (due_date) must not appear raw
        assert words(param).split(" ")[-1] in m[2].content and ("_" not in param or param not in m[2].content)
        assert m[3].role == "user" and mentions(m[3].content, value, "2026-03-02")
        assert conv.kind == "clarification"
        assert m[4].role == "assistant" and m[4].tool_calls
        first_args = json.loads(m[4].tool_calls[0].function.arguments)
        assert first_args[param] == value


def test_complete_requests_call_tools_right_away(simulated):
    for _, q, conv in simulated:
        if q.info_level != "missing":
            assert conv.messages[2].role == "assistant" and conv.messages[2].tool_calls


def _final_answers(conv):
    """(final assistant answer, tool contents of its turn) per turn."""
    out, tools = [], []
    for m in conv.messages[1:]:
        if m.role == "tool":
            tools.append(m.content)
        elif m.role == "assistant" and not m.tool_calls:
            if tools or m.content.startswith(("I didn't", "There was nothing")):
                out.append((m.content, "\n".join(tools)))
                tools = []
    return out


def test_final_answers_only_state_values_the_tools_returned(conversations):
    n = 0
    for conv in conversations:
        for answer, tool_text in _final_answers(conv):
            for tok in ID_TOKEN.findall(answer):
                assert tok in tool_text, f"{conv.conversation_id}: answer names {tok} no tool returned"
            for num in DECIMAL.findall(answer):
                assert num in tool_text, f"{conv.conversation_id}: answer states {num} no tool returned"
            n += 1
    assert n >= len(conversations) * 2


@pytest.fixture(scope="module")
def failing_run(banking_env, snapshot, seeded_state):
    acc = next(a for a in seeded_state["accounts"].values() if a["status"] == "active" and a["balance"] > 0)
    pin = seeded_state["customers"][acc["customer_id"]]["pin"]
    chain = Chain(
        chain_id="chain-test-insufficient",
        server="banking",
        seed=SEED,
        snapshot_id=snapshot.snapshot_id,
        graph_id="graph-test",
        steps=[
            ChainStep(name="get_balance", args={"account_id": ArgSource(kind="user")}),
            ChainStep(
                name="withdraw",
                args={
                    "account_id": ArgSource(kind="step", step=0, field="account_id"),
                    "amount": ArgSource(kind="user"),
                    "pin": ArgSource(kind="user"),
                },
                depends_on=[0],
            ),
            ChainStep(
                name="get_transaction",
                args={"transaction_id": ArgSource(kind="step", step=1, field="transaction_id")},
                depends_on=[1],
            ),
        ],
    )
    amount = round(acc["balance"] + 5000, 2)
    query = UserQuery(
        query_id="q-test-insufficient",
        chain_id=chain.chain_id,
        server="banking",
        info_level="complete",
        persona="student",
        turns=[
            f"Check {acc['account_id']} and withdraw {amount} from it, my PIN is {pin}.",
            "Then show me that withdrawal.",
        ],
        turn_steps=[[0, 1], [2]],
        seed=SEED,
        snapshot_id=snapshot.snapshot_id,
        step_args=[
            {"account_id": acc["account_id"]},
            {"account_id": acc["account_id"], "amount": amount, "pin": pin},
            {"transaction_id": "TXN-00001"},
        ],
    )
    conv = run_conversation(banking_env, snapshot, chain, query, random.Random(0), recovery_rate=0.0)
    return acc, conv


def test_state_failure_gives_a_graceful_give_up_and_failure_outcomes(failing_run):
    acc, conv = failing_run
    assert conv.outcomes == ["PARTIAL", "FAILURE"]
    assert [t.error_code for t in conv.trace] == [None, "state_conflict"]
    answers = [m.content for m in conv.messages if m.role == "assistant" and not m.tool_calls]
    assert "insufficient funds" in answers[0] and "couldn't" in answers[0]
    assert "step it depends on failed" in answers[1]
    # the dependent call is never made; the failing call is still the right call and stays in the reference
    names = [tc.function.name for m in conv.messages if m.tool_calls for tc in m.tool_calls]
    assert names == ["get_balance", "withdraw"]
    assert [[c.name for c in t] for t in conv.reference] == [["get_balance", "withdraw"], []]
    assert conv.reference[0][1].depends_on == [0]


def test_a_failed_withdrawal_leaves_the_seeded_state(failing_run, banking_env):
    _, conv = failing_run
    with banking_env.session(SEED) as s:
        assert conv.final_state_hash == s.state_hash()


def test_recovery_demonstrations_fail_first_and_stay_out_of_the_reference(
    banking_env, snapshot, simulated, tools_by_name
):
    demos = 0
    for i, (chain, q, _) in enumerate(simulated):
        conv = run_conversation(banking_env, snapshot, chain, q, random.Random(f"r:{i}"), recovery_rate=1.0)
        for j, t in enumerate(conv.trace):
            if not t.reference:
                demos += 1
                assert not t.ok and t.error_code in ("invalid_arguments", "not_found"), (
                    f"a wrong first attempt must fail on the server, got {t.name} {t.arguments} ok={t.ok}"
                )
                nxt = conv.trace[j + 1]
                # the corrected call follows; a wrong tool is only ever a read-only one
                assert nxt.reference and (nxt.name == t.name or tools_by_name[t.name].read_only)
        assert [c.name for turn in conv.reference for c in turn] == [t.name for t in conv.trace if t.reference]
    assert demos >= 10


def test_conversation_records_lineage_and_seed(simulated, snapshot):
    for chain, q, conv in simulated:
        assert conv.chain_id == chain.chain_id and conv.query_id == q.query_id
        assert conv.snapshot_id == snapshot.snapshot_id and conv.seed == SEED
        assert conv.servers == ["banking"] and conv.final_state_hash
        assert conv.kind == ("clarification" if q.info_level == "missing" else "multi_turn")


def test_recovery_demonstrations_never_push_a_conversation_over_the_error_threshold(banking_env, snapshot, simulated):
    """A corrected wrong attempt is a failed call too: the simulator spends only the room the
    replay's 30% error-rate rule leaves, so no recovery demonstration gets its conversation rejected."""
    from pipeline.synthesis.replay import error_rate

    with_demo = 0
    for i, (chain, q, _) in enumerate(simulated):
        conv = run_conversation(
            banking_env, snapshot, chain, q, random.Random(f"r:{i}"), recovery_rate=1.0, max_error_rate=0.30
        )
        assert error_rate(conv) <= 0.30, f"{[(t.name, t.ok) for t in conv.trace]}"
        with_demo += any(not t.reference for t in conv.trace)
    assert with_demo >= 5, "some conversations have room for a recovery demonstration"


def test_recovery_budget_counts_the_dry_run_failures():
    from pipeline.synthesis.simulate import recovery_budget

    chain = Chain(
        chain_id="c",
        server="banking",
        seed=SEED,
        snapshot_id="s",
        graph_id="g",
        steps=[ChainStep(name="a"), ChainStep(name="b", depends_on=[0]), ChainStep(name="c"), ChainStep(name="d")],
    )
    assert recovery_budget(chain, [True, True, True, True], 0.30) == 1  # 2 of 6 would be 33%
    assert recovery_budget(chain, [True, True, True, False], 0.30) == 0  # one failure already: 1 of 4
    # a failed first step skips its dependent: 3 calls, 1 failure, no room left
    assert recovery_budget(chain, [False, True, True, True], 0.30) == 0
    assert recovery_budget(chain, [True] * 4, 0.50) == 4


def test_two_ids_taken_from_one_result_field_name_two_different_entities(banking_env, snapshot):
    """A transfer whose two accounts both come from one listing goes between its first two accounts, never from
    an account to itself."""
    from pipeline.core.config import QueryConfig
    from pipeline.synthesis.simulate import resolve_chain

    chain = Chain(
        chain_id="chain-test-two-ids",
        server="banking",
        seed=SEED,
        snapshot_id=snapshot.snapshot_id,
        graph_id="graph-test",
        steps=[
            ChainStep(name="list_accounts"),
            ChainStep(
                name="transfer",
                args={
                    "from_account_id": ArgSource(kind="step", step=0, field="account_id"),
                    "to_account_id": ArgSource(kind="step", step=0, field="account_id"),
                    "amount": ArgSource(kind="user"),
                    "pin": ArgSource(kind="user"),
                },
                depends_on=[0],
            ),
        ],
    )
    steps, why = resolve_chain(banking_env, snapshot, chain, random.Random(0), QueryConfig())
    assert why is None
    listed = [a["account_id"] for a in steps[0]["result"].data["accounts"]]
    args = steps[1]["args"]
    assert (args["from_account_id"], args["to_account_id"]) == (listed[0], listed[1])


def test_an_id_from_a_result_with_one_value_keeps_it_and_the_other_id_moves():
    """The destination comes from a result holding one place, the origin from a listing: the origin takes the
    listing's next place."""
    from pipeline.core.records import CallResult
    from pipeline.synthesis.simulate import _distinct_ids

    listing = {"result": CallResult(ok=True, data={"places": [{"place_id": "PLC-0073"}, {"place_id": "PLC-0079"}]})}
    removed = {"result": CallResult(ok=True, data={"place_id": "PLC-0073", "removed": True})}
    st = ChainStep(
        name="get_route",
        args={
            "origin_place_id": ArgSource(kind="step", step=0, field="place_id"),
            "destination_place_id": ArgSource(kind="step", step=1, field="place_id"),
        },
    )
    fixed = {"origin_place_id": "PLC-0073", "destination_place_id": "PLC-0073"}
    _distinct_ids(fixed, st, [listing, removed])
    assert fixed == {"origin_place_id": "PLC-0079", "destination_place_id": "PLC-0073"}
