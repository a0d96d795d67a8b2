"""The rules several stages share, each in one place: the error budget (pipeline.core.rules), the
composition plan (pipeline.core.composition), and the typed records that replace dicts and tag strings."""

from __future__ import annotations

import doctest
import json
from collections import Counter

import pytest

import pipeline.core.records
import pipeline.core.rules
from pipeline.core.composition import Composition
from pipeline.core.config import AugmentConfig, BuildConfig, ChainConfig, SimulateConfig
from pipeline.core.records import Augmentation, Chain, ChainStep, Example, Message, Rejection, TraceCall, rejection
from pipeline.core.speedups import IdentityMemo
from pipeline.stages.plan import chains_wanted, info_level_plan


@pytest.mark.parametrize("module", [pipeline.core.rules, pipeline.core.records])
def test_the_documented_examples_hold(module):
    assert doctest.testmod(module).failed == 0


@pytest.mark.parametrize("max_rate", [0.0, 0.1, 0.25, 0.30, 0.5, 0.9])
def test_recovery_room_is_the_most_extra_failures_the_error_budget_allows(max_rate):
    for calls in range(0, 12):
        for fails in range(0, calls + 1):
            k = pipeline.core.rules.recovery_room(calls, fails, max_rate)
            if pipeline.core.rules.over_budget(calls, fails, max_rate):
                assert k == 0
                continue
            assert not pipeline.core.rules.over_budget(calls + k, fails + k, max_rate), (calls, fails, k)
            assert pipeline.core.rules.over_budget(calls + k + 1, fails + k + 1, max_rate), (calls, fails, k)


def test_a_rate_equal_to_the_budget_is_within_it():
    assert not pipeline.core.rules.over_budget(10, 3, 0.30)
    assert pipeline.core.rules.over_budget(10, 4, 0.30)
    assert pipeline.core.rules.error_rate(0, 0) == 0.0


def test_the_level_plan_meets_the_configured_shares_exactly():
    plan = Composition.of(BuildConfig(servers=["banking"])).level_plan(100, "salt")
    assert Counter(plan) == {"complete": 60, "missing": 20, "minimal": 20}
    skewed = Composition(SimulateConfig(complete=0.5, missing=0.5, minimal=0.0), AugmentConfig()).level_plan(10, "s")
    assert Counter(skewed) == {"complete": 5, "missing": 5}


def test_generation_weights_come_from_config():
    base = Composition(SimulateConfig(), AugmentConfig())
    gen = Counter(base.level_plan(1000, "s", generation=True))
    assert gen["missing"] > 200 and gen["minimal"] > 200, "the lossy levels are planned above their shares"
    flat = Composition(SimulateConfig(missing_oversample=1.0, minimal_oversample=1.0), AugmentConfig())
    assert Counter(flat.level_plan(1000, "s", generation=True)) == Counter(flat.level_plan(1000, "s"))


def test_oversampling_is_a_config_value():
    cfg = BuildConfig(examples=1000, servers=["a", "b"])
    doubled = BuildConfig(examples=1000, servers=["a", "b"], chains=ChainConfig(oversample=4.0))
    assert chains_wanted(cfg) == 820  # ceil(1000 * 0.82 * 2.0 / 2): today's factor
    assert chains_wanted(doubled) == 2 * chains_wanted(cfg)


def test_kind_counts_fill_the_rest_with_multi_turn_and_scale_together():
    plan = Composition(SimulateConfig(), AugmentConfig())
    counts = plan.kind_counts(200)
    assert (counts.irrelevance, counts.abstention, counts.missing_function) == (10, 10, 16)
    assert counts.multi_turn == 200 - 36
    half = plan.scaled(counts, counts.multi_turn // 2)
    assert (half.multi_turn, half.irrelevance, half.abstention, half.missing_function) == (82, 5, 5, 8)


def test_feasibility_is_the_largest_count_the_supply_meets_exactly():
    plan = Composition(SimulateConfig(), AugmentConfig())
    supply = Counter({"complete": 60, "missing": 10, "minimal": 40})
    n = plan.feasible_multi_turn(supply, 100)

    def fits(k: int) -> bool:
        return all(
            supply[lvl] >= c for lvl, c in Counter(info_level_plan(k, BuildConfig(servers=["x"]), "feasible")).items()
        )

    assert 0 < n < 100 and fits(n) and not fits(n + 1), n
    assert plan.feasible_multi_turn(supply, 20) == 20, "a count the supply meets is kept"


def test_the_corpus_gate_targets_are_the_composition_targets():
    from pipeline.corpus.store import targets_of

    cfg = BuildConfig(servers=["x"], augment=AugmentConfig(distractor_rate=0.1))
    assert targets_of(cfg) == Composition.of(cfg).targets() and targets_of(cfg)["distractors"] == 0.1


# ----------------------------------------------------------------------------- typed records
def test_augmentation_tags_are_read_by_name_and_stored_as_before():
    assert Augmentation.distractors(4) == "distractors:4" and Augmentation.distractors(4).count == 4
    near = Augmentation.parse("abstention:near_miss:export")
    assert (near.kind, near.action, near.tool) == ("abstention", "export", None)
    other = Augmentation.abstention("create_contact")
    assert (other.kind, other.tool, other.action) == ("abstention", "create_contact", None)
    assert Augmentation.imported("when2call").source == "when2call"
    assert json.dumps([Augmentation.enum_stripped()]) == '["enum_stripped"]'


def test_an_unknown_augmentation_tag_is_an_error_naming_it():
    with pytest.raises(ValueError, match="not an augmentation tag: 'shuffled:3'"):
        Augmentation.parse("shuffled:3")
    with pytest.raises(ValueError, match="shuffled"):
        Example(
            conversation_id="e",
            server="s",
            servers=["s"],
            seed=0,
            snapshot_id="x",
            messages=[],
            tools=[],
            reference=[],
            augmentations=["shuffled"],
        )


def test_messages_serialize_to_the_keys_their_role_carries_in_the_corpus_order():
    call = Message.calling("call_1", "get_customer", {"customer_id": "c-1"})
    assert json.dumps(call.model_dump()) == (
        '{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", '
        '"function": {"name": "get_customer", "arguments": "{\\"customer_id\\": \\"c-1\\"}"}}]}'
    )
    assert (
        json.dumps(Message(role="tool", tool_call_id="call_1", content="{}").model_dump())
        == '{"role": "tool", "tool_call_id": "call_1", "content": "{}"}'
    )
    assert Message(role="user", content="hi").model_dump() == {"role": "user", "content": "hi"}
    assert Message.model_validate(call.model_dump()) == call


def test_trace_calls_keep_the_corpus_column_order():
    t = TraceCall(
        turn=0, name="withdraw", arguments={"amount": 5}, ok=False, error_code="state_conflict", error="closed"
    )
    assert list(t.model_dump()) == ["turn", "name", "arguments", "ok", "error_code", "reference", "result", "error"]


def test_a_rejection_names_the_type_of_the_record_it_carries():
    chain = Chain(chain_id="c", server="s", seed=0, snapshot_id="x", graph_id="g", steps=[ChainStep(name="t")])
    assert rejection("chains", "r", "d", "s", {}, chain).record_type == "chain"
    assert rejection("augment", "short_supply", "d", None, {}).record_type == "none"
    assert rejection("query", "r", "d", "s", {}, {"steps": []}, record_type="chain").record_type == "chain"
    with pytest.raises(ValueError, match="needs its record_type"):
        rejection("query", "r", "d", "s", {}, {"steps": []})
    assert "record_type" in Rejection.model_fields


def test_an_identity_memo_works_each_record_out_once():
    seen = []
    memo = IdentityMemo(lambda r: seen.append(r) or len(seen))
    a, b = ["x"], ["x"]  # equal, not the same object
    assert [memo(a), memo(a), memo(b), memo(a)] == [1, 1, 2, 1] and seen == [a, b]


def test_a_settled_run_freezes_the_heap_and_spaces_full_collections_then_restores_the_spacing() -> None:
    import gc

    from pipeline.core.speedups import FULL_COLLECTION_SPACING, settled_run

    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with settled_run():
        assert gc.get_freeze_count() > frozen
        assert gc.get_threshold() == (before[0], before[1], before[2] * FULL_COLLECTION_SPACING)
        with settled_run():  # nested (a build inside a build's worker): the outer block's settings hold
            assert gc.get_threshold()[2] == before[2] * FULL_COLLECTION_SPACING
        assert gc.get_threshold()[2] == before[2] * FULL_COLLECTION_SPACING
    assert gc.get_threshold() == before
