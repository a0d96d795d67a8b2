"""retail_chain: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random

from servers.names import CITIES, FIRST_NAMES, LAST_NAMES
from servers.retail_chain.world import (
    BRANDS,
    DISTRICTS,
    PRODUCTS,
    TODAY,
    WEEKDAYS,
    Product,
    Reservation,
    RetailWorld,
    StockEntry,
    Store,
    Transfer,
    _days,
)


def _phone(rng: random.Random) -> str:
    return f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"


def seed_world(rng: random.Random, seed: int) -> RetailWorld:
    w = RetailWorld(seed=seed)
    cities = rng.sample(CITIES, k=6)
    for city in cities:
        for district in rng.sample(DISTRICTS, k=rng.randint(1, 3)):
            sid = w.new_id("STR")
            open_h = rng.choice(["08:00", "09:00", "10:00"])
            close_h = rng.choice(["18:00", "20:00", "21:00"])
            hours = {d: f"{open_h}-{close_h}" for d in WEEKDAYS[:5]}
            hours["saturday"] = f"{open_h}-{'17:00' if close_h != '18:00' else '16:00'}"
            hours["sunday"] = "closed" if rng.random() < 0.5 else "11:00-16:00"
            if rng.random() < 0.15:
                hours["monday"] = "closed"
            w.stores[sid] = Store(
                store_id=sid,
                name=f"{city} {district}",
                city=city,
                address=f"{rng.randint(1, 250)} {rng.choice(['High St', 'Market Sq', 'Mill Rd', 'Dock Lane', 'Park Ave'])}",
                phone=_phone(rng),
                status="temporarily_closed" if rng.random() < 0.1 else "open",
                hours=hours,
            )
    for cat, items in PRODUCTS.items():
        for name, base in items:
            sku = w.new_id("SKU", 5)
            w.products[sku] = Product(
                sku=sku,
                name=name,
                brand=rng.choice(BRANDS),
                category=cat,  # type: ignore[arg-type]
                price=round(base * rng.uniform(0.9, 1.1)) - 0.01,
            )
    for sid in w.stores:
        w.stock[sid] = {}
        for sku in w.products:
            r = rng.random()
            if r < 0.15:
                continue  # store does not carry this SKU
            w.stock[sid][sku] = StockEntry(
                on_hand=0 if r < 0.3 else rng.choice([1, 2, 3, rng.randint(4, 25), rng.randint(10, 60)])
            )
    sids, skus = list(w.stores), list(w.products)
    for _ in range(10):
        a, b = rng.sample(sids, k=2)
        sku = rng.choice(skus)
        tid = w.new_id("TRF")
        qty = rng.randint(1, 8)
        received = rng.random() < 0.5
        day = _days(TODAY, -rng.randint(1, 6))
        w.transfers[tid] = Transfer(
            transfer_id=tid,
            sku=sku,
            from_store_id=a,
            to_store_id=b,
            quantity=qty,
            status="received" if received else "in_transit",
            created_at=f"{day}T14:00:00",
            received_at=f"{_days(day, 1)}T10:30:00" if received else None,
        )
    for _ in range(16):
        sid = rng.choice(sids)
        candidates = [(k, e) for k, e in w.stock[sid].items() if e.on_hand - e.reserved >= 1]
        if not candidates:
            continue
        sku, entry = rng.choice(candidates)
        qty = rng.randint(1, min(3, entry.on_hand - entry.reserved))
        rid = w.new_id("RSV")
        status = rng.choices(["active", "collected", "cancelled"], weights=[6, 3, 2])[0]
        pickup = _days(TODAY, rng.randint(0, 6)) if status == "active" else _days(TODAY, -rng.randint(1, 10))
        if status == "active":
            entry.reserved += qty
        w.reservations[rid] = Reservation(
            reservation_id=rid,
            store_id=sid,
            sku=sku,
            quantity=qty,
            customer_name=f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
            customer_phone=_phone(rng),
            pickup_date=pickup,
            pickup_time=rng.choice(["10:30", "12:00", "15:15", "17:00"]),
            status=status,
            created_at=f"{_days(pickup, -2) if pickup < TODAY else _days(TODAY, -1)}T16:00:00",  # type: ignore[arg-type]
        )
    return w
