"""Goals: what closes what, and the later calls that would undo it or act on what was closed."""

from __future__ import annotations

import random

from pipeline.discovery.goals import closed_by, conflicts, goal_order
from pipeline.language.references import distinguishing, options


def _calls(*calls):
    """(name, arguments, ok, read_only, result) tuples, reads named by their verb (a result where given)."""
    reads = ("get", "list", "search")
    return [(n, a, ok, n.split("_")[0] in reads, rest[0] if rest else a) for n, a, ok, *rest in calls]


def test_removing_a_saved_place_then_saving_it_again_is_an_undo_then_redo():
    found = conflicts(
        _calls(
            ("remove_saved_place", {"place_id": "PLC-0073"}, True),
            ("save_place", {"place_id": "PLC-0073", "note": "for the weekend"}, True),
        )
    )
    assert [(c.closer, c.later, c.kind) for c in found] == [(0, 1, "undo_then_redo")]


def test_bidding_on_a_listing_the_conversation_closed_acts_on_what_was_closed():
    found = conflicts(
        _calls(
            ("search_listings", {"query": "desk"}, True),
            ("close_listing", {"listing_id": "LST-0006", "seller_id": "USR-0012"}, True),
            ("get_listing", {"listing_id": "LST-0006"}, True),  # a check: reads never conflict
            ("place_bid", {"listing_id": "LST-0006", "bidder_id": "USR-0003", "amount": 40}, False),
        )
    )
    assert [(c.closer, c.later, c.kind) for c in found] == [(1, 3, "acts_on_closed")]
    # the seller who closed it is no closed entity: their next listing is fine
    assert not conflicts(
        _calls(
            ("close_listing", {"listing_id": "LST-0006", "seller_id": "USR-0012"}, True),
            ("create_listing", {"seller_id": "USR-0012", "title": "Lamp"}, True),
        )
    )


def test_a_link_taken_off_is_restored_only_by_a_call_on_the_same_link():
    # off the sprint, then assigned: a new step of the same goal, not an undo
    assert not conflicts(
        _calls(
            ("remove_issue_from_sprint", {"issue_id": "MOB-0009"}, True),
            ("assign_issue", {"issue_id": "MOB-0009", "user_id": "USR-0002"}, True),
        )
    )
    # unfollow then follow the same user is; unliking a post then deleting it is not
    redo = _calls(
        ("unfollow_user", {"user_id": "USR-0001", "target_user_id": "USR-0009"}, True),
        ("follow_user", {"user_id": "USR-0001", "target_user_id": "USR-0009"}, True),
    )
    assert [c.kind for c in conflicts(redo)] == ["undo_then_redo"]
    assert not conflicts(
        _calls(
            ("unlike_post", {"user_id": "USR-0030", "post_id": "PST-0026"}, True),
            ("delete_post", {"user_id": "USR-0030", "post_id": "PST-0026"}, True),
        )
    )


def test_closing_what_the_conversation_made_or_linked_is_a_do_then_undo():
    bid = _calls(
        ("place_bid", {"listing_id": "LST-0035", "bidder_id": "USR-0011"}, True, {"bid_id": "BID-00071"}),
        ("retract_bid", {"bid_id": "BID-00071", "bidder_id": "USR-0011"}, True),
    )
    assert [(c.closer, c.later, c.kind) for c in conflicts(bid)] == [(0, 1, "do_then_undo")]
    cart = _calls(
        ("add_to_cart", {"product_id": "PRD-0037"}, True), ("remove_from_cart", {"product_id": "PRD-0037"}, True)
    )
    assert [c.kind for c in conflicts(cart)] == ["do_then_undo"]
    # editing a listing the user already had, then closing it, undoes nothing made here
    assert not conflicts(
        _calls(
            ("update_listing", {"listing_id": "LST-0028", "title": "Desk"}, True, {"listing_id": "LST-0028"}),
            ("close_listing", {"listing_id": "LST-0028", "seller_id": "USR-0016"}, True),
        )
    )


def test_a_failed_close_closes_nothing_and_a_file_removed_is_named_by_its_path():
    assert not conflicts(
        _calls(("cancel_order", {"order_id": "ORD-0001"}, False), ("return_order", {"order_id": "ORD-0001"}, True))
    )
    assert closed_by("rm", {"path": "/home/priya/a.txt", "force": False}).values == ("/home/priya/a.txt",)
    assert closed_by("list_orders", {}) is None


def test_goal_order_puts_what_closes_after_what_finds_and_acts():
    path = ["list_listings", "close_listing", "place_bid"]
    assert goal_order(path) == ["list_listings", "place_bid", "close_listing"]


HOTELS = {
    "hotels": [
        {"hotel_id": "HTL-0001", "name": "Harbour Inn", "city": "Denver", "price_per_night": 120.0, "rating": 4.1},
        {"hotel_id": "HTL-0002", "name": "Alpine Lodge", "city": "Boulder", "price_per_night": 95.0, "rating": 4.6},
        {"hotel_id": "HTL-0003", "name": "Old Mill", "city": "Boulder", "price_per_night": 150.0, "rating": 3.9},
    ]
}


def test_a_follow_up_points_at_a_record_by_what_tells_it_apart():
    denver = {"the hotel in Denver", "the hotel called Harbour Inn"}
    assert set(options(HOTELS, "hotel_id", "HTL-0001", "hotel")) == denver
    assert set(options(HOTELS, "hotel_id", "HTL-0002", "hotel")) == {
        "the cheapest hotel",
        "the best-rated hotel",
        "the hotel called Alpine Lodge",
    }
    assert distinguishing(HOTELS, "hotel_id", "HTL-0003", "hotel", random.Random(0)) in {
        "the most expensive hotel",
        "the lowest-rated hotel",
        "the hotel called Old Mill",
    }
    # one record is singled out already, and an unknown value has nothing to tell apart
    assert options({"hotels": HOTELS["hotels"][:1]}, "hotel_id", "HTL-0001", "hotel") == []
    assert options(HOTELS, "hotel_id", "HTL-0009", "hotel") == []
