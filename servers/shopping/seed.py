"""shopping: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random
from datetime import date

from servers.names import CITIES, FIRST_NAMES, LAST_NAMES
from servers.shopping.world import (
    BRANDS,
    CATALOG,
    FREE_SHIPPING_OVER,
    SHIPPING_FEE,
    STREETS,
    TAX_RATE,
    TODAY,
    Address,
    Category,
    Coupon,
    Order,
    OrderItem,
    Product,
    Shopper,
    ShopWorld,
    _days,
    _money,
)


def seed_world(rng: random.Random, seed: int) -> ShopWorld:
    w = ShopWorld(seed=seed)
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    w.shopper = Shopper(
        name=f"{first} {last}",
        email=f"{first.lower()}.{last.lower()}@example.com",
        gift_card_balance=_money(rng.choice([0, 15, 25, 40, 75])),
    )
    for cname, (adjs, nouns) in CATALOG.items():
        cat_id = w.new_id("CAT", 2)
        w.categories[cat_id] = Category(category_id=cat_id, name=cname)
        for noun, base in rng.sample(nouns, k=min(len(nouns), 5)):
            for adj in rng.sample(adjs, k=rng.randint(1, 2)):
                pid = w.new_id("PRD")
                brand = rng.choice(BRANDS)
                stock = 0 if rng.random() < 0.15 else rng.choice([1, 2, 3, rng.randint(4, 40), rng.randint(20, 200)])
                w.products[pid] = Product(
                    product_id=pid,
                    name=f"{brand} {adj} {noun}",
                    brand=brand,
                    category_id=cat_id,
                    price=_money(round(base * rng.uniform(0.8, 1.3)) - 0.01),
                    stock=stock,
                    rating=round(rng.uniform(2.8, 5.0), 1),
                    review_count=rng.randint(0, 2500),
                    description=f"{adj} {noun.lower()} by {brand}, {cname.lower()} range.",
                )
                w.categories[cat_id].product_count += 1
    cat_ids = list(w.categories)
    coupon_specs = [
        ("WELCOME10", "10% off your order", "percent", 10, 0, "2026-12-31", None),
        ("SPRING15", "15% off orders over $100", "percent", 15, 100, "2026-04-30", None),
        ("SAVE20", "$20 off orders over $150", "fixed", 20, 150, "2026-06-30", None),
        ("FREESHIP5", "$5 off any order over $25", "fixed", 5, 25, "2026-03-31", None),
        ("WINTER25", "25% off, winter sale", "percent", 25, 50, "2026-02-28", None),
        ("HOLIDAY30", "$30 off holiday orders over $120", "fixed", 30, 120, "2025-12-31", None),
        ("BOOKWORM", "20% off books", "percent", 20, 30, "2026-05-15", cat_ids[2]),
        ("GADGET10", "$10 off electronics over $80", "fixed", 10, 80, "2026-03-15", cat_ids[0]),
        ("PETLOVE", "15% off pet supplies", "percent", 15, 40, "2026-01-31", cat_ids[6]),
        ("BIGSPEND50", "$50 off orders over $400", "fixed", 50, 400, "2026-09-30", None),
    ]
    for code, desc, kind, val, mn, exp, cat in coupon_specs:
        if rng.random() < 0.2 and exp > TODAY:
            exp = _days(TODAY, -rng.randint(1, 20))  # some seeds expire more coupons
        w.coupons[code] = Coupon(
            code=code, description=desc, discount_type=kind, value=val, min_spend=mn, expires_on=exp, category_id=cat
        )  # type: ignore[arg-type]
    labels = ["Home", "Work", "Parents", "Cabin"]
    for i, label in enumerate(labels[: rng.randint(2, 4)]):
        aid = w.new_id("ADR")
        city = rng.choice(CITIES)
        recipient = w.shopper.name if label != "Parents" else f"{rng.choice(FIRST_NAMES)} {last}"
        w.addresses[aid] = Address(
            address_id=aid,
            label=label,
            recipient=recipient,
            street=f"{rng.randint(1, 400)} {rng.choice(STREETS)}",
            city=city,
            postal_code=f"{rng.randint(10000, 99999)}",
            country="US",
            is_default=i == 0,
        )
    addr_ids = list(w.addresses)
    in_stock = [p for p in w.products.values() if p.stock > 0]
    for _ in range(14):
        oid = w.new_id("ORD", 5)
        items = [
            OrderItem(product_id=p.product_id, name=p.name, unit_price=p.price, quantity=rng.randint(1, 2))
            for p in rng.sample(in_stock, k=rng.randint(1, 3))
        ]
        sub = _money(sum(i.unit_price * i.quantity for i in items))
        ship = 0.0 if sub >= FREE_SHIPPING_OVER else SHIPPING_FEE
        tax = _money(sub * TAX_RATE)
        placed = _days(TODAY, -rng.randint(0, 60))
        age = (date.fromisoformat(TODAY) - date.fromisoformat(placed)).days
        if age <= 1:
            status = "processing"
        elif age <= 4:
            status = rng.choice(["processing", "shipped"])
        else:
            status = rng.choices(["delivered", "shipped", "cancelled", "returned"], weights=[7, 1, 1, 1])[0]
        o = Order(
            order_id=oid,
            status=status,
            items=items,
            subtotal=sub,
            discount=0.0,
            shipping=ship,
            tax=tax,  # type: ignore[arg-type]
            total=_money(sub + ship + tax),
            address_id=rng.choice(addr_ids),
            payment_method=rng.choice(["credit_card", "credit_card", "paypal"]),
            placed_on=placed,
        )  # type: ignore[arg-type]
        if status in ("shipped", "delivered", "returned"):
            o.shipped_on = _days(placed, 1)
            o.tracking_number = f"1Z{rng.randint(10**9, 10**10 - 1)}"
        if status in ("delivered", "returned"):
            o.delivered_on = _days(placed, rng.randint(3, 5)) if _days(placed, 5) <= TODAY else TODAY
        if status == "returned":
            o.return_id = w.new_id("RET")
            o.refund_amount = _money(sub + tax)
        w.orders[oid] = o
    for p in rng.sample(list(w.products.values()), k=6):
        w.wishlist[p.product_id] = _days(TODAY, -rng.randint(1, 90))
    for p in rng.sample(in_stock, k=2):
        w.cart[p.product_id] = 1
    return w
