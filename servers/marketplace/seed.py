"""marketplace: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random

from servers.marketplace.world import (
    CATEGORIES,
    CONDITION_WORDS,
    DESCRIPTIONS,
    TODAY,
    Bid,
    Listing,
    MarketWorld,
    User,
    _days,
    _increment,
)
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES


def _description(title: str, cond: str, city: str, n: int) -> str:
    """The ``n``-th listing's description in a seller's words: its title, condition and city."""
    low = title[:1].lower() + title[1:]
    return DESCRIPTIONS[n % len(DESCRIPTIONS)].format(Title=title, title=low, cp=CONDITION_WORDS[cond], city=city)


def seed_world(rng: random.Random, seed: int) -> MarketWorld:
    w = MarketWorld(seed=seed)
    used: set[str] = set()
    for _ in range(22):
        uid = w.new_id("USR")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        handle = f"{first.lower()}{last[0].lower()}{rng.randint(1, 99)}"
        while handle in used:
            handle += str(rng.randint(0, 9))
        used.add(handle)
        w.users[uid] = User(
            user_id=uid,
            username=handle,
            name=f"{first} {last}",
            city=rng.choice(CITIES),
            rating=round(rng.uniform(3.2, 5.0), 1),
            member_since=f"20{rng.randint(14, 25)}-{rng.randint(1, 12):02d}-01",
            status="suspended" if rng.random() < 0.08 else "active",
        )
    uids = list(w.users)
    active_uids = [u for u in uids if w.users[u].status == "active"]
    for _ in range(34):
        cat, _cname, items = rng.choice(CATEGORIES)
        title, base = rng.choice(items)
        lid = w.new_id("LST")
        seller = rng.choice(active_uids)
        cond = rng.choice(["new", "like_new", "good", "good", "fair", "for_parts"])
        reserve = float(round(base * rng.uniform(0.5, 0.9)))
        created = _days(TODAY, -rng.randint(1, 20))
        state = rng.choices(["active", "closed", "sold"], weights=[7, 2, 2])[0]
        ends = _days(TODAY, rng.randint(1, 10)) if state == "active" else _days(TODAY, -rng.randint(0, 5) - 1)
        if ends <= created:
            created = _days(ends, -7)
        listing = Listing(
            listing_id=lid,
            seller_id=seller,
            title=title,
            description=_description(title, cond, w.users[seller].city, len(w.listings)),
            category=cat,
            condition=cond,
            reserve_price=reserve,
            min_increment=_increment(reserve),  # type: ignore[arg-type]
            created_on=created,
            ends_on=ends,
            status=state,
        )  # type: ignore[arg-type]
        w.listings[lid] = listing
        bidders = [u for u in active_uids if u != seller]
        price = reserve
        last_bid: Bid | None = None
        for k in range(rng.choice([0, 0, 1, 2, 3, 4, 5])):
            if k > 0:
                price = round(price + listing.min_increment * rng.randint(1, 4), 2)
            bid_id = w.new_id("BID", 5)
            if last_bid is not None:
                last_bid.status = "outbid"
            last_bid = Bid(
                bid_id=bid_id,
                listing_id=lid,
                bidder_id=rng.choice([u for u in bidders if last_bid is None or u != last_bid.bidder_id]),
                amount=price,
                status="leading",
                placed_at=f"{_days(created, min(k + 1, 6))}T{rng.randint(8, 22):02d}:{rng.randint(0, 59):02d}:00Z",
            )
            w.bids[bid_id] = last_bid
            listing.bid_count += 1
            listing.current_highest_bid, listing.leading_bid_id = price, bid_id
        if state == "sold":
            if last_bid is None:
                listing.status = "closed"
            else:
                last_bid.status = "accepted"
                listing.sold_bid_id, listing.sold_price = last_bid.bid_id, last_bid.amount
                for b in w.bids.values():
                    if b.listing_id == lid and b.status == "outbid":
                        b.status = "lost"
        elif state == "closed":
            for b in w.bids.values():
                if b.listing_id == lid and b.status in ("leading", "outbid"):
                    b.status = "lost"
    return w
