"""food_delivery: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random

from servers.food_delivery.world import (
    COURIERS,
    DAYS,
    DISHES,
    EXTRAS,
    NOW,
    RESTAURANT_NAMES,
    STREETS,
    ZONES,
    Address,
    Cart,
    CartItem,
    Customer,
    FoodWorld,
    ItemOption,
    MenuItem,
    OpeningHours,
    Order,
    OrderRating,
    Promo,
    Restaurant,
    StatusChange,
    _money,
    _plus,
)
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES


# --------------------------------------------------------------------------- seeding
def _hours(kind: str) -> list[OpeningHours]:
    if kind == "standard":
        return [OpeningHours(day=d, opens="11:00", closes="22:00") for d in DAYS]  # type: ignore[arg-type]
    if kind == "closed_monday":
        return [OpeningHours(day=d, opens="12:00", closes="23:00") for d in DAYS if d != "mon"]  # type: ignore[arg-type]
    if kind == "lunch":
        return [OpeningHours(day=d, opens="11:00", closes="15:00") for d in DAYS[:6]]  # type: ignore[arg-type]
    if kind == "late":
        return [OpeningHours(day=d, opens="18:00", closes="02:00") for d in DAYS]  # type: ignore[arg-type]
    if kind == "split":
        out = []
        for d in DAYS:
            out.append(OpeningHours(day=d, opens="12:00", closes="14:30"))  # type: ignore[arg-type]
            out.append(OpeningHours(day=d, opens="18:00", closes="22:30"))  # type: ignore[arg-type]
        return out
    return [OpeningHours(day=d, opens="17:00", closes="23:30") for d in DAYS]  # type: ignore[arg-type]  # "evening"


def _describe(name: str, tags: tuple[str, ...], rng: random.Random) -> str:
    adj = rng.choice(
        ["House favourite", "Freshly made", "Classic", "Chef's recipe", "Made to order", "Customer favourite"]
    )
    extra = f"; {', '.join(t.replace('_', '-') for t in tags)}" if tags else ""
    return f"{adj}: {name.lower()}{extra}"


def _seed_restaurants(w: FoodWorld, rng: random.Random) -> None:
    """Restaurants, their menus and the options of each dish."""
    hour_kinds = ["standard", "standard", "standard", "evening", "split", "closed_monday", "lunch", "late"]
    for cuisine, names in RESTAURANT_NAMES.items():
        for name in names:
            rid = w.new_id("RES")
            home = rng.choice(ZONES[:7])
            others = [z for z in ZONES if z != home and z != "Hillcrest"]
            zones = [home] + rng.sample(others, k=rng.randint(1, 4))
            if rng.random() < 0.15:
                zones.append("Hillcrest")
            r = Restaurant(
                restaurant_id=rid,
                name=name,
                cuisine=cuisine,
                rating=round(rng.uniform(3.3, 4.9), 1),  # type: ignore[arg-type]
                rating_count=rng.randint(12, 2400),
                price_level=rng.choice(["$", "$$", "$$", "$$$"]),  # type: ignore[arg-type]
                zone=home,
                address=f"{rng.randint(1, 250)} {rng.choice(STREETS)}, {w.city}",  # type: ignore[arg-type]
                delivery_zones=sorted(zones, key=ZONES.index),
                delivery_fee=rng.choice([0.0, 1.49, 1.99, 2.49, 2.99, 3.99]),  # type: ignore[arg-type]
                min_order=rng.choice([10.0, 12.0, 15.0, 15.0, 20.0, 25.0]),
                prep_time_min=rng.choice([10, 15, 20, 25, 30]),
                accepts_cash=rng.random() < 0.6,
                temporarily_closed=rng.random() < 0.06,
                opening_hours=_hours(rng.choice(hour_kinds)),
            )
            w.restaurants[rid] = r
            dishes = DISHES[cuisine]
            keep = sorted(rng.sample(range(len(dishes)), k=min(len(dishes), rng.randint(8, 10))))
            for i in keep:
                dname, cat, base, tags = dishes[i]
                iid = w.new_id("ITM")
                opts: list[ItemOption] = []
                if cat == "mains" and any(
                    k in dname
                    for k in ("Pizza", "Ramen", "Curry", "Burrito", "Biryani", "Pad Thai", "Platter", "Chow Mein")
                ):
                    opts.append(ItemOption(option_id=w.new_id("OPT"), group="size", name="Regular", price_delta=0.0))
                    opts.append(
                        ItemOption(
                            option_id=w.new_id("OPT"),
                            group="size",
                            name="Large",
                            price_delta=rng.choice([2.5, 3.0, 4.0]),
                        )
                    )
                if cat == "drinks":
                    opts.append(ItemOption(option_id=w.new_id("OPT"), group="size", name="Regular", price_delta=0.0))
                    opts.append(ItemOption(option_id=w.new_id("OPT"), group="size", name="Large", price_delta=1.0))
                if cat == "mains" and cuisine in ("indian", "thai", "mexican", "chinese"):
                    for lvl in ("Mild", "Medium", "Hot"):
                        opts.append(ItemOption(option_id=w.new_id("OPT"), group="spice", name=lvl, price_delta=0.0))
                if cat == "mains":
                    for ename, eprice in rng.sample(EXTRAS[cuisine], k=min(2, len(EXTRAS[cuisine]))):
                        opts.append(
                            ItemOption(option_id=w.new_id("OPT"), group="extras", name=ename, price_delta=eprice)
                        )
                w.items[iid] = MenuItem(
                    item_id=iid,
                    restaurant_id=rid,
                    name=dname,
                    category=cat,
                    description=_describe(dname, tags, rng),  # type: ignore[arg-type]
                    price=_money(round(base * rng.uniform(0.9, 1.15) * 2, 0) / 2 - 0.01 if base > 5 else base),
                    available=rng.random() > 0.1,
                    dietary=list(tags),
                    options=opts,  # type: ignore[arg-type]
                )


def _seed_customers(w: FoodWorld, rng: random.Random) -> None:
    """Customers, each with an empty cart and one to three addresses."""
    used_names: set[str] = set()
    for _ in range(12):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        while f"{first} {last}" in used_names:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        used_names.add(f"{first} {last}")
        cid = w.new_id("CUS")
        w.customers[cid] = Customer(
            customer_id=cid,
            name=f"{first} {last}",
            email=f"{first.lower()}.{last.lower()}@example.com",
            phone=f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            wallet_balance=rng.choice([0.0, 0.0, 5.0, 12.5, 25.0, 60.0]),
        )
        w.carts[cid] = Cart(customer_id=cid)
        for label in ["home"] + rng.sample(["work", "other"], k=rng.randint(0, 2)):
            aid = w.new_id("ADR")
            zone = rng.choice(ZONES) if label != "home" or rng.random() > 0.1 else "Hillcrest"
            w.addresses[aid] = Address(
                address_id=aid,
                customer_id=cid,
                label=label,
                street=f"{rng.randint(1, 300)} {rng.choice(STREETS)}",  # type: ignore[arg-type]
                postcode=f"{10000 + ZONES.index(zone) * 100 + rng.randint(0, 99)}",
                zone=zone,  # type: ignore[arg-type]
                instructions=rng.choice(
                    [None, None, "Ring twice", "Leave at the door", "Call on arrival", "Buzzer 4B"]
                ),
            )


def _seed_promos(w: FoodWorld, rng: random.Random) -> None:
    """Platform-wide promo codes, four restaurant codes, and who already redeemed the single-use ones."""
    rids = list(w.restaurants)
    promo_specs = [
        ("WELCOME10", "10% off your order", "percent", 10.0, 15.0, None, "2026-12-31", True),
        ("FREEDEL", "Free delivery on orders over 20", "free_delivery", 0.0, 20.0, None, "2026-04-30", False),
        ("SAVE5", "5 off orders of 30 or more", "flat", 5.0, 30.0, None, "2026-03-31", False),
        ("BIGFEAST20", "20% off orders of 50 or more", "percent", 20.0, 50.0, None, "2026-06-30", False),
        ("WINTER15", "15% off (winter campaign)", "percent", 15.0, 0.0, None, "2026-02-28", False),
        ("NEWYEAR8", "8 off your first order of the year", "flat", 8.0, 25.0, None, "2026-01-31", True),
    ]
    for code, desc, kind, val, mins, rid, until, single in promo_specs:
        w.promos[code] = Promo(
            promo_code=code,
            description=desc,
            discount_type=kind,
            value=val,
            min_subtotal=mins,  # type: ignore[arg-type]
            restaurant_id=rid,
            valid_until=until,
            single_use=single,
        )
    for rid in rng.sample(rids, k=4):
        r = w.restaurants[rid]
        code = "".join(ch for ch in r.name.upper() if ch.isalpha())[:6] + str(rng.choice([3, 4, 5]))
        val = float(code[-1])
        w.promos[code] = Promo(
            promo_code=code,
            description=f"{val:g} off at {r.name}",
            discount_type="flat",
            value=val,
            min_subtotal=rng.choice([15.0, 20.0]),
            restaurant_id=rid,
            valid_until=rng.choice(["2026-03-15", "2026-05-31", "2026-02-20"]),
            single_use=False,
        )
    cids = list(w.customers)
    w.promos["WELCOME10"].redeemed_by = rng.sample(cids, k=4)
    w.promos["NEWYEAR8"].redeemed_by = rng.sample(cids, k=2)


def _seed_orders(w: FoodWorld, rng: random.Random) -> None:
    """Order history (delivered, cancelled) and in-flight orders at every step of the flow."""
    rids, cids = list(w.restaurants), list(w.customers)
    plan = (
        ["delivered"] * 12
        + ["cancelled"] * 2
        + [
            "placed",
            "placed",
            "accepted",
            "accepted",
            "preparing",
            "preparing",
            "ready_for_pickup",
            "picked_up",
            "picked_up",
        ]
    )
    flow = ["placed", "accepted", "preparing", "ready_for_pickup", "picked_up", "delivered"]
    for status in plan:
        cid = rng.choice(cids)
        addrs = [a for a in w.addresses.values() if a.customer_id == cid]
        rid = rng.choice(rids)
        r = w.restaurants[rid]
        menu = [i for i in w.items.values() if i.restaurant_id == rid]
        lines = []
        for it in rng.sample(menu, k=rng.randint(1, 3)):
            q = rng.randint(1, 3)
            lines.append(
                CartItem(
                    cart_item_id=w.new_id("CI"),
                    item_id=it.item_id,
                    name=it.name,
                    quantity=q,
                    option_ids=[],
                    option_names=[],
                    unit_price=it.price,
                    line_total=_money(it.price * q),
                )
            )
        sub = _money(sum(x.line_total for x in lines))
        tip = rng.choice([0.0, 1.0, 2.0, 3.0])
        steps = flow[: flow.index(status) + 1] if status != "cancelled" else ["placed", "cancelled"]
        if status in ("delivered", "cancelled"):
            placed = f"2026-02-{rng.randint(10, 28):02d}T{rng.randint(11, 21):02d}:{rng.randint(0, 59):02d}:00"
        else:
            placed = _plus(NOW, -(len(steps) * 12 + rng.randint(2, 10)))
        oid = w.new_id("ORD")
        hist, t = [], placed
        for s in steps:
            hist.append(StatusChange(status=s, at=t))  # type: ignore[arg-type]
            t = _plus(t, rng.randint(3, 12))
        o = Order(
            order_id=oid,
            customer_id=cid,
            restaurant_id=rid,
            restaurant_name=r.name,
            address_id=addrs[0].address_id,
            items=lines,
            subtotal=sub,
            delivery_fee=r.delivery_fee,
            discount=0.0,
            tip=tip,
            total=_money(sub + r.delivery_fee + tip),
            payment_method=rng.choice(["card", "card", "wallet"]),
            status=status,
            placed_at=placed,  # type: ignore[arg-type]
            estimated_delivery_at=_plus(placed, r.prep_time_min + 25),
            status_history=hist,
            courier_name=rng.choice(COURIERS) if status in ("picked_up", "delivered") else None,
        )
        if status == "cancelled":
            o.refund_amount, o.cancel_reason = o.total, rng.choice(["ordered by mistake", "took too long"])
        if status == "delivered" and rng.random() < 0.5:
            o.rating = OrderRating(
                food_rating=rng.randint(2, 5),
                delivery_rating=rng.randint(3, 5),
                rated_at=_plus(t, 30),
                comment=rng.choice([None, "Great food!", "Arrived a bit cold", "Fast delivery", "Portion was small"]),
            )
        w.orders[oid] = o


def seed_world(rng: random.Random, seed: int) -> FoodWorld:
    w = FoodWorld(seed=seed, city=rng.choice(CITIES))
    _seed_restaurants(w, rng)
    _seed_customers(w, rng)  # customers and addresses
    _seed_promos(w, rng)  # promo codes
    _seed_orders(w, rng)  # order history and in-flight orders
    rids, cids = list(w.restaurants), list(w.customers)
    # a couple of customers start with something in their cart
    for cid in rng.sample(cids, k=3):
        rid = rng.choice(rids)
        it = rng.choice([i for i in w.items.values() if i.restaurant_id == rid and i.available])
        w.carts[cid] = Cart(
            customer_id=cid,
            restaurant_id=rid,
            items=[
                CartItem(
                    cart_item_id=w.new_id("CI"),
                    item_id=it.item_id,
                    name=it.name,
                    quantity=1,
                    option_ids=[],
                    option_names=[],
                    unit_price=it.price,
                    line_total=it.price,
                )
            ],
        )
    return w
