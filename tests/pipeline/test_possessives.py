"""A request names things the way people do: as an entity's ("CUS-0001's accounts"), an update as what becomes of
the entity's fields, an entity with what its own record says of it ("Hugo Hughes in Austin"); the id is always said."""

from __future__ import annotations

import random

from pipeline.language.phrasing import described, entity_name, possessive, say_entity, say_owner
from pipeline.language.requests.step import StepWriter
from tests.plans import plan_step

CUSTOMER = {"customer_id": "CUS-0001", "name": "Hugo Hughes", "city": "Austin"}


def _step(name: str, args: dict, read_only: bool) -> dict:
    return plan_step(name, args, read_only=read_only)


def _said(step: dict, entities: dict, seeds: int = 80) -> list[str]:
    return [
        StepWriter([step], entities, "2026-03-02", random.Random(s)).phrase(step, [], terse=False) for s in range(seeds)
    ]


def test_a_read_of_a_thing_named_by_its_kind_is_often_asked_for_as_its_owners_and_always_names_the_owner():
    step = _step("list_accounts", {"customer_id": "CUS-0001"}, read_only=True)
    texts = _said(step, {"CUS-0001": CUSTOMER})
    owned = [t for t in texts if "'s accounts" in t or "' accounts" in t]
    assert len(owned) > len(texts) // 3, texts
    assert any("CUS-0001's accounts" in t for t in owned) and any("Hugo Hughes' accounts" in t for t in owned)
    assert all("CUS-0001" in t for t in texts), [t for t in texts if "CUS-0001" not in t]
    assert not any("accounts for" in t or "accounts of" in t for t in owned), owned


def test_a_thing_a_call_makes_is_never_said_as_an_entitys():
    step = _step("create_event", {"calendar_id": "CAL-0004", "title": "Team sync"}, read_only=False)
    texts = _said(step, {"CAL-0004": {"calendar_id": "CAL-0004", "name": "Work"}})
    assert not any("'s event" in t for t in texts), [t for t in texts if "'s event" in t]


def test_an_update_of_plain_fields_is_said_as_what_becomes_of_them_naming_every_value():
    step = _step("update_event", {"event_id": "EVT-0004", "title": "Team sync", "status": "confirmed"}, False)
    texts = _said(step, {})
    changed = [t for t in texts if "EVT-0004's title to" in t]
    assert changed, texts
    assert all('"Team sync"' in t and "its status to confirmed" in t for t in changed), changed
    assert all("EVT-0004" in t and "confirmed" in t and "Team sync" in t for t in texts)


def test_an_update_that_names_another_entity_is_never_said_as_changed_fields():
    step = _step("update_event", {"event_id": "EVT-0004", "room_id": "ROOM-0002"}, read_only=False)
    assert not any("'s room to" in t for t in _said(step, {}))


def test_an_entity_is_said_with_what_its_own_record_says_of_it_and_always_with_its_id():
    forms = {described("CUS-0001", "customer", "Hugo Hughes", CUSTOMER, random.Random(s)) for s in range(40)}
    assert "Hugo Hughes in Austin (CUS-0001)" in forms
    assert all(f and "CUS-0001" in f and "Austin" in f for f in forms), forms
    account = {"account_id": "ACC-0003", "account_type": "savings", "balance": 12.5}
    kinds = {described("ACC-0003", "account", None, account, random.Random(s)) for s in range(40)}
    assert kinds == {"the savings account ACC-0003", "my savings account ACC-0003"}
    # nothing the record tells apart (a balance changes; snake_case is no word): no description
    plain = {"balance": 3.0, "account_type": "high_yield"}
    assert described("ACC-0004", "account", None, plain, random.Random(0)) is None
    assert all("CUS-0001" in say_entity("CUS-0001", "customer", CUSTOMER, random.Random(s)) for s in range(60))


def test_an_owner_is_always_named_by_its_id_and_a_name_in_the_possessive():
    assert possessive("Ava Chen") == "Ava Chen's" and possessive("Hugo Hughes") == "Hugo Hughes'"
    forms = {say_owner("CUS-0001", "customer", CUSTOMER, random.Random(s)).format(t="orders") for s in range(40)}
    assert forms == {
        "CUS-0001's orders",
        "customer CUS-0001's orders",
        "Hugo Hughes' orders (customer CUS-0001)",
        "Hugo Hughes' orders (CUS-0001)",
    }
    # a one-word or punctuated name is no owner's name: "Health's report", "Acme - Pilot's stage" are never said
    for name in ("Health", "Clearwater Learning - Data migration"):
        said = {say_owner("CAT-0009", "category", {"name": name}, random.Random(s)).format(t="x") for s in range(30)}
        assert said == {"CAT-0009's x", "category CAT-0009's x"}


def test_a_person_is_named_by_their_names_never_by_a_job_title_their_record_also_holds():
    contact = {"id": "CON-0001", "title": "Marketing Lead", "first_name": "Leah", "last_name": "Kowalski"}
    assert entity_name(contact) == "Leah Kowalski"
    assert entity_name({"id": "EVT-0004", "title": "Daily standup"}) == "Daily standup"
