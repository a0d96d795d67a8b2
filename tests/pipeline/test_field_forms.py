"""A value is said by what its field means ("due March 9th", "titled "Sync"", "a rating of at least 4"), always
with the value as the call passes it; a PIN or a key is told once in a conversation, then the calls reuse it; an
entity named once is "that event" later, where nothing else of its kind could be meant."""

from __future__ import annotations

import random
import re

from pipeline.core.records import SENSITIVE_KEY, CallResult
from pipeline.language.argforms import field_forms
from pipeline.language.requests.conversation import write_turns
from pipeline.language.requests.step import StepWriter
from tests.plans import plan_step


def _said(step: dict, seeds: int = 60) -> list[str]:
    return [StepWriter([step], {}, "2026-03-02", random.Random(s)).phrase(step, [], terse=False) for s in range(seeds)]


def test_a_due_date_is_said_as_due_and_always_names_the_date():
    step = plan_step("create_invoice", {"customer_id": "CUS-0011", "due_date": "2026-04-21"})
    texts = _said(step)
    assert any(re.search(r" due (on |by )?(April 21|21 April)", t) for t in texts), texts
    assert not any("setting the due date" in t or "making the due date" in t for t in texts), texts
    assert all(re.search(r"April 21|21 April", t) for t in texts), texts


def test_a_minimum_is_said_as_at_least_or_a_minimum_never_as_the_parameters_name():
    step = plan_step("search_hotels", {"city": "Seattle", "min_rating": 4}, read_only=True)
    texts = _said(step)
    assert any("of at least 4" in t for t in texts) and any("a minimum rating of 4" in t for t in texts), texts
    assert not any("min rating" in t for t in texts), [t for t in texts if "min rating" in t]
    assert any("in Seattle" in t for t in texts), texts
    assert all("Seattle" in t and "4" in t for t in texts)


def test_a_title_and_a_note_are_said_as_people_word_them_with_the_text_in_quotes():
    step = plan_step("create_event", {"calendar_id": "CAL-0004", "title": "Team sync", "note": "Bring the slides"})
    texts = _said(step)
    assert any('titled "Team sync"' in t for t in texts), texts
    assert any('noting "Bring the slides"' in t or 'note saying "Bring the slides"' in t for t in texts), texts
    assert all('"Team sync"' in t and '"Bring the slides"' in t for t in texts), texts


def test_a_field_whose_name_says_nothing_more_gets_no_special_form():
    assert field_forms("colour_scheme", "dark", read=False, text=False) is None
    assert field_forms("min_rating", "high", read=True, text=False) is None  # a minimum only of a number
    assert any("first" in f for f in field_forms("limit", 5, read=True, text=False))  # how many results a read shows
    assert not any("first" in f for f in field_forms("limit", 500, read=False, text=False))  # a card's limit: money


def _token_step(index: int, tool: str, args: dict) -> dict:
    step = plan_step(tool, args)
    props = step["tool"].input_schema["properties"]
    props["api_token"] = {"type": "string", SENSITIVE_KEY: True}
    return step | {"index": index}


def test_a_key_is_told_once_in_a_conversation_and_the_later_calls_reuse_it_unsaid():
    token = "sk_live_a9q8m34yhjf1za55"
    steps = [
        _token_step(
            0, "create_webhook", {"merchant_id": "MER-0001", "url": "https://h.example.com", "api_token": token}
        ),
        _token_step(1, "create_invoice", {"merchant_id": "MER-0001", "amount": 74.06, "api_token": token}),
        _token_step(2, "void_invoice", {"invoice_id": "INV-00034", "api_token": token}),
    ]
    for seed in range(20):
        turns = write_turns(
            [[steps[0]], [steps[1]], [steps[2]]],
            steps,
            "full",
            "busy_parent",
            [],
            {},
            "2026-03-02",
            random.Random(seed),
        )
        assert token in turns[0], turns
        assert not any(token in t for t in turns[1:]), turns
        assert "74.06" in turns[1] and "INV-00034" in turns[2], turns


def _event_steps(second: str) -> list[dict]:
    listed = {
        "events": [{"event_id": "EVT-0001", "title": "Daily standup"}, {"event_id": "EVT-0020", "title": "Review"}]
    }
    linked = {"sources": {"event_id": 0}, "source_fields": {"event_id": "event_id"}}
    return [
        plan_step("list_events", {}, read_only=True) | {"index": 0, "result": CallResult(ok=True, data=listed)},
        plan_step("update_event", {"event_id": "EVT-0001", "status": "confirmed"}) | {"index": 1} | linked,
        plan_step("respond_to_event", {"event_id": second, "response": "accepted"}) | {"index": 2} | linked,
    ]


def _turns(steps: list[dict], seed: int) -> str:
    known = {"EVT-0001": {"event_id": "EVT-0001", "title": "Daily standup"}}
    rng = random.Random(seed)
    return write_turns([steps], steps, "full", "retiree", [], known, "2026-03-02", rng, known=lambda v: True)[0]


def test_an_entity_named_earlier_in_the_conversation_is_pointed_at_again_never_before_it_is_named():
    texts = [_turns(_event_steps("EVT-0001"), seed) for seed in range(40)]
    for t in texts:
        first = min(t.find(w) for w in ("EVT-0001", "same event", "that event", "this event") if w in t)
        assert t[first:].startswith("EVT-0001"), t  # the first mention names the id
    assert any(w in t for t in texts for w in ("the same event", "that event", "this event")), texts
    assert sum("EVT-0001" in t.split("EVT-0001", 1)[1] for t in texts) > 5, texts  # and is said again at times


def test_an_entity_is_never_pointed_at_as_that_one_when_the_conversation_dealt_with_two_of_its_kind():
    for seed in range(40):
        t = _turns(_event_steps("EVT-0020"), seed)
        assert "EVT-0020" in t or "Review" in t or "one of those events" in t, t
        assert not any(w in t for w in ("the same event", "that event", "this event")), t


def test_a_step_that_takes_something_off_never_sets_the_value_it_takes_off():
    step = plan_step("untag_file", {"path": "/home/priya/notes.txt", "tag": "archive"})
    texts = _said(step)
    assert not any("setting the tag" in t or "making the tag" in t for t in texts), texts
    assert all("archive" in t and "/home/priya/notes.txt" in t for t in texts), texts


def test_a_quantity_of_one_is_never_one_units_or_one_of_them():
    step = plan_step("add_to_cart", {"customer_id": "CUS-0002", "item_id": "ITM-0163", "quantity": 1})
    texts = _said(step)
    assert not any(re.search(r"\b1 (units|of them)\b", t) for t in texts), [t for t in texts if "1 " in t]
    assert all(re.search(r"\b1\b", t) for t in texts), texts  # the value is still said
    many = _said(plan_step("add_to_cart", {"customer_id": "CUS-0002", "item_id": "ITM-0163", "quantity": 3}))
    assert any("3 units" in t or "3 of them" in t for t in many), many


def test_a_thing_the_call_makes_is_a_new_one_never_the_one():
    """create_invoice: "create an invoice for ...", "set up a new invoice ...", never "set up the invoice" (there is
    no such invoice yet); an existing thing a write names keeps "the" (add_to_cart: "to the cart")."""
    texts = _said(plan_step("create_invoice", {"merchant_id": "MER-0006", "amount": 41.6}))
    assert all(re.search(r"\b(an|a new) invoice\b", t) for t in texts), texts
    assert not any("the invoice" in t for t in texts), texts
    met = _said(plan_step("schedule_meeting", {"host_id": "USR-0009", "title": "Sprint planning"}))
    assert all(re.search(r"\b(a|a new) meeting\b", t) for t in met), met  # a noun in -ing is still a thing made
    carted = _said(plan_step("add_to_cart", {"customer_id": "CUS-0002", "item_id": "ITM-0163", "quantity": 3}))
    assert not any(re.search(r"\b(a|a new) cart\b", t) for t in carted), carted
