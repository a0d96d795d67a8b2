"""Argument values: the records earlier results hold for an id, found by one walk per result."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from pipeline.core.records import Snapshot, ToolSpec
from pipeline.corpus.lint_calls import FILLERS
from pipeline.language.schema_values import synth_value
from pipeline.language.value_agreement import RecordIndex, _records_of
from pipeline.language.values import fill_args


def carrying_by_walking(eid: str, results: list[Any]) -> list[dict[str, Any]]:
    """The reference: walk every result depth first, keeping each dict with an ``*_id`` field equal to ``eid``."""
    out: list[dict[str, Any]] = []

    def walk(d: Any) -> None:
        if isinstance(d, dict):
            if any(k.endswith("_id") and str(v) == eid for k, v in d.items() if isinstance(v, (str, int))):
                out.append(d)
            for v in d.values():
                walk(v)
        elif isinstance(d, list):
            for x in d:
                walk(x)

    for r in results:
        walk(r)
    return out


RESULTS = [
    {
        "listing_id": "LST-1",
        "seller_id": "USR-7",
        "bids": [{"bid_id": "BID-1", "listing_id": "LST-1", "bidder_id": "USR-2"}],
    },
    {
        "listings": [
            {"listing_id": "LST-2", "seller_id": "USR-2", "min_next_bid": 12.5},
            {"listing_id": "LST-1", "seller_id": "USR-7", "owner_id": "LST-1"},
        ]
    },  # one dict, the id twice
    {"order_id": 41, "customer_id": "CUS-1"},  # an integer id
    ["LST-1", {"note": "no id field here", "ref": "LST-1"}],
]


def test_index_finds_the_records_of_each_id_in_walk_order_each_once():
    index = RecordIndex()
    for r in RESULTS:
        index.add(r)
    for eid in ("LST-1", "LST-2", "USR-2", "USR-7", "BID-1", "41", "CUS-1", "NOPE"):
        found = index.carrying(eid)
        assert found == carrying_by_walking(eid, RESULTS), eid
        assert len({id(d) for d in found}) == len(found)
    assert [d.get("bid_id") or d.get("seller_id") for d in index.carrying("LST-1")] == ["USR-7", "BID-1", "USR-7"]
    assert RecordIndex(RESULTS).carrying("USR-2") == index.carrying("USR-2")


def test_records_of_an_id_are_its_sampled_record_then_those_in_results():
    snap = Snapshot(
        snapshot_id="s",
        server="x",
        seed=0,
        schema_hash="h",
        tools=[],
        entities={"USR-2": {"user_id": "USR-2", "name": "Ana"}},
    )
    recs = _records_of("USR-2", snap, RecordIndex(RESULTS))
    assert recs[0] == {"user_id": "USR-2", "name": "Ana"}
    assert recs[1:] == carrying_by_walking("USR-2", RESULTS)


def test_a_linked_value_is_the_same_from_a_list_of_results_or_an_index():
    bid = ToolSpec(
        name="place_bid",
        server="x",
        input_schema={
            "type": "object",
            "required": ["listing_id", "amount"],
            "properties": {
                "listing_id": {"type": "string"},
                "amount": {"type": "number", "description": "at least the listing's min_next_bid"},
            },
        },
    )
    snap = Snapshot(snapshot_id="s", server="x", seed=0, schema_hash="h", tools=[bid], values={"listing_id": ["LST-2"]})
    from_list = fill_args(bid, snap, random.Random(3), context=RESULTS)
    from_index = fill_args(bid, snap, random.Random(3), context=RecordIndex(RESULTS))
    assert from_list == from_index == {"listing_id": "LST-2", "amount": 12.5}


def test_a_shared_memo_gives_the_arguments_and_draws_of_filling_without_one(snapshot):
    from pipeline.language.value_plans import ValueMemo

    memo = ValueMemo()
    pick: dict[str, Any] = {}
    for seed in range(12):
        for tool in snapshot.tools:
            plain_rng, memo_rng = random.Random(f"{seed}:{tool.name}"), random.Random(f"{seed}:{tool.name}")
            plain = fill_args(tool, snapshot, plain_rng, optional_rate=0.5, pick=dict(pick), context=RESULTS)
            memoized = fill_args(
                tool, snapshot, memo_rng, optional_rate=0.5, pick=dict(pick), context=RESULTS, memo=memo
            )
            assert memoized == plain, tool.name
            assert memo_rng.getstate() == plain_rng.getstate(), tool.name
            if seed % 3 == 0:
                pick.update({k: v for k, v in plain.items() if k not in pick})
    assert memo.facts(snapshot.tools[0]).props == snapshot.tools[0].properties


def test_an_id_drawn_from_the_state_never_equals_another_id_of_the_call():
    """A route's destination is drawn from the places other than its origin (no route from a place to itself)."""
    route = ToolSpec(
        name="get_route",
        server="x",
        input_schema={
            "type": "object",
            "required": ["origin_place_id", "destination_place_id"],
            "properties": {"origin_place_id": {"type": "string"}, "destination_place_id": {"type": "string"}},
        },
    )
    snap = Snapshot(
        snapshot_id="s",
        server="x",
        seed=0,
        schema_hash="h",
        tools=[route],
        values={"place_id": ["PLC-1", "PLC-2", "PLC-3"]},
    )
    drawn = [
        fill_args(route, snap, random.Random(i), fixed={"origin_place_id": "PLC-1"})["destination_place_id"]
        for i in range(30)
    ]
    assert "PLC-1" not in drawn and set(drawn) == {"PLC-2", "PLC-3"}
    both = [fill_args(route, snap, random.Random(i)) for i in range(30)]
    assert all(a["origin_place_id"] != a["destination_place_id"] for a in both)


def _listings(items: list[tuple[str, str]], extra: dict | None = None) -> tuple[ToolSpec, Snapshot]:
    """A create_listing tool (title, description, a condition enum and ``extra`` properties, all required) and a
    snapshot of listings "<title> in <condition> condition."."""
    props = {
        "title": {"type": "string"},
        "description": {"type": "string"},
        "condition": {"type": "string", "enum": ["new", "good", "fair"]},
        **(extra or {}),
    }
    create = ToolSpec(
        name="create_listing", server="x", input_schema={"type": "object", "required": list(props), "properties": props}
    )
    listings = {
        f"LST-{i}": {"listing_id": f"LST-{i}", "title": t, "description": f"{t} in {c} condition.", "condition": c}
        for i, (t, c) in enumerate(items)
    }
    snap = Snapshot(
        snapshot_id="s",
        server="x",
        seed=0,
        schema_hash="h",
        tools=[create],
        entities=listings,
        values={
            "title": [r["title"] for r in listings.values()],
            "description": [r["description"] for r in listings.values()],
        },
    )
    return create, snap


def test_text_values_drawn_from_the_state_come_from_one_record():
    """A new listing's title and description are one listing's, never one listing's title with another's description;
    its condition (an enum) is that listing's too, never "in fair condition" with the condition set to good."""
    items = [
        ("Golf club set", "good"),
        ("Pocket watch", "fair"),
        ("Mid-century armchair", "new"),
        ("Road bike", "fair"),
    ]
    create, snap = _listings(items, {"reserve_price": {"type": "number"}})
    drawn = [fill_args(create, snap, random.Random(i)) for i in range(40)]
    assert all(a["description"] == f"{a['title']} in {a['condition']} condition." for a in drawn), drawn
    assert len({a["title"] for a in drawn}) == 4


def test_list_arguments_drawn_from_the_state_share_no_value():
    """A message's cc never repeats an address its to holds ("cc set to a@x to a@x" is a defect the lint rejects)."""
    send = ToolSpec(
        name="send_message",
        server="x",
        input_schema={
            "type": "object",
            "required": ["to", "cc", "subject"],
            "properties": {
                "to": {"type": "array", "items": {"type": "string"}, "description": "Addresses, like 'ana@x.example'"},
                "cc": {"type": "array", "items": {"type": "string"}, "description": "Addresses, like 'ana@x.example'"},
                "subject": {"type": "string"},
            },
        },
    )
    snap = Snapshot(
        snapshot_id="s",
        server="x",
        seed=0,
        schema_hash="h",
        tools=[send],
        values={"email": ["a@x.example", "b@x.example", "c@x.example"]},
    )
    drawn = [fill_args(send, snap, random.Random(i)) for i in range(60)]
    assert all(not set(a["to"]) & set(a["cc"]) for a in drawn), [a for a in drawn if set(a["to"]) & set(a["cc"])]
    assert all(a["cc"] for a in drawn)
    assert {x for a in drawn for x in a["cc"]} == {"a@x.example", "b@x.example", "c@x.example"}
    fixed = [fill_args(send, snap, random.Random(i), fixed={"to": ["a@x.example"]}) for i in range(30)]
    assert all("a@x.example" not in a["cc"] for a in fixed)


def test_a_date_pattern_gets_a_real_date_whatever_the_parameter_is_called():
    """``start`` with a YYYY-MM-DDTHH:MM pattern once got digits drawn one by one (``5465-06-45T87:92``)."""
    for pattern, fmt in [
        (r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$", "%Y-%m-%dT%H:%M"),
        (r"^\d{4}-\d{2}-\d{2}$", "%Y-%m-%d"),
        (r"^\d{4}-\d{2}$", "%Y-%m"),
    ]:
        for seed in range(20):
            v = synth_value("start", {"type": "string", "pattern": pattern}, random.Random(seed))
            datetime.strptime(v, fmt)  # raises on a month 57 or an hour 87


def test_a_free_text_parameter_never_gets_a_word_the_corpus_linter_calls_a_filler():
    drawn = {
        param: {synth_value(param, {"type": "string"}, random.Random(seed)) for seed in range(40)}
        for param in ("notes", "note", "relation_type", "merchant_contains", "observations")
    }
    assert all(v.lower() not in FILLERS for values in drawn.values() for v in values), drawn
    assert all(" " in v for v in drawn["notes"]), drawn["notes"]  # a note a person would write, not a stand-in word


def test_a_text_value_carried_from_an_earlier_result_anchors_the_record_the_others_come_from():
    """A listing made with the description an earlier result gave takes that listing's title and condition too, never
    "title "Acoustic guitar", description "Standing desk in for parts condition ..."."""
    items = [("Golf club set", "good"), ("Pocket watch", "fair"), ("Standing desk", "new"), ("Road bike", "fair")]
    create, snap = _listings(items)
    carried = {"description": "Standing desk in new condition."}
    drawn = [fill_args(create, snap, random.Random(i), fixed=carried) for i in range(30)]
    assert all(a["title"] == "Standing desk" and a["condition"] == "new" for a in drawn), drawn
