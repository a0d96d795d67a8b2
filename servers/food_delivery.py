"""food_delivery: restaurants, menus, carts, promo codes, orders with tracking, cancellation and ratings."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import EnvServer, InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES

NOW = "2026-03-02T19:30:00"  # a Monday evening
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

Day = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
Cuisine = Literal["italian", "japanese", "mexican", "indian", "thai", "american", "mediterranean", "chinese"]
Zone = Literal["Downtown", "Riverside", "Old Town", "Harbor", "University", "Northgate", "Westfield", "Hillcrest"]
ZONES: tuple[str, ...] = ("Downtown", "Riverside", "Old Town", "Harbor", "University", "Northgate", "Westfield", "Hillcrest")
MenuCategory = Literal["starters", "mains", "sides", "desserts", "drinks"]
Dietary = Literal["vegetarian", "vegan", "gluten_free", "spicy"]
OrderStatus = Literal["placed", "accepted", "preparing", "ready_for_pickup", "picked_up", "delivered", "cancelled"]
PaymentMethod = Literal["card", "cash", "wallet"]
DiscountType = Literal["percent", "flat", "free_delivery"]
NEXT_STATUS: dict[str, tuple[str, ...]] = {
    "placed": ("accepted",), "accepted": ("preparing",), "preparing": ("ready_for_pickup",),
    "ready_for_pickup": ("picked_up",), "picked_up": ("delivered",), "delivered": (), "cancelled": (),
}
EXCLUSIVE_GROUPS = ("size", "spice")

# dish name, category, base price, dietary tags
DISHES: dict[str, list[tuple[str, str, float, tuple[str, ...]]]] = {
    "italian": [
        ("Margherita Pizza", "mains", 11.5, ("vegetarian",)), ("Pepperoni Pizza", "mains", 13.0, ()),
        ("Quattro Formaggi Pizza", "mains", 14.0, ("vegetarian",)), ("Spaghetti Carbonara", "mains", 13.5, ()),
        ("Penne Arrabbiata", "mains", 11.0, ("vegan", "vegetarian", "spicy")), ("Lasagna al Forno", "mains", 14.5, ()),
        ("Caprese Salad", "starters", 8.5, ("vegetarian", "gluten_free")), ("Garlic Bread", "sides", 4.5, ("vegetarian",)),
        ("Tiramisu", "desserts", 6.5, ("vegetarian",)), ("Panna Cotta", "desserts", 6.0, ("vegetarian", "gluten_free")),
        ("San Pellegrino", "drinks", 2.8, ("vegan", "vegetarian", "gluten_free")),
    ],
    "japanese": [
        ("Salmon Nigiri (6 pcs)", "mains", 9.5, ("gluten_free",)), ("California Roll", "mains", 8.5, ()),
        ("Spicy Tuna Roll", "mains", 9.5, ("spicy",)), ("Chicken Katsu Curry", "mains", 13.5, ()),
        ("Tonkotsu Ramen", "mains", 14.0, ()), ("Vegetable Gyoza", "starters", 6.5, ("vegetarian",)),
        ("Edamame", "starters", 4.5, ("vegan", "vegetarian", "gluten_free")), ("Miso Soup", "sides", 3.5, ("vegetarian",)),
        ("Mochi Ice Cream", "desserts", 5.5, ("vegetarian",)), ("Iced Green Tea", "drinks", 2.5, ("vegan", "vegetarian", "gluten_free")),
    ],
    "mexican": [
        ("Carne Asada Tacos", "mains", 11.0, ("gluten_free",)), ("Al Pastor Tacos", "mains", 10.5, ("gluten_free", "spicy")),
        ("Chicken Burrito", "mains", 12.0, ()), ("Veggie Burrito", "mains", 10.5, ("vegetarian",)),
        ("Beef Quesadilla", "mains", 10.0, ()), ("Nachos Supreme", "starters", 9.0, ("vegetarian",)),
        ("Guacamole & Chips", "starters", 6.5, ("vegan", "vegetarian", "gluten_free")), ("Elote", "sides", 4.5, ("vegetarian", "gluten_free")),
        ("Churros", "desserts", 5.5, ("vegetarian",)), ("Horchata", "drinks", 3.5, ("vegetarian", "gluten_free")),
    ],
    "indian": [
        ("Chicken Tikka Masala", "mains", 14.0, ("gluten_free",)), ("Lamb Rogan Josh", "mains", 15.5, ("gluten_free", "spicy")),
        ("Palak Paneer", "mains", 12.0, ("vegetarian", "gluten_free")), ("Chana Masala", "mains", 11.0, ("vegan", "vegetarian", "gluten_free")),
        ("Chicken Biryani", "mains", 14.5, ("gluten_free",)), ("Vegetable Samosas", "starters", 5.5, ("vegetarian",)),
        ("Garlic Naan", "sides", 3.5, ("vegetarian",)), ("Basmati Rice", "sides", 3.0, ("vegan", "vegetarian", "gluten_free")),
        ("Gulab Jamun", "desserts", 5.0, ("vegetarian",)), ("Mango Lassi", "drinks", 4.0, ("vegetarian", "gluten_free")),
    ],
    "thai": [
        ("Pad Thai", "mains", 12.5, ()), ("Green Curry", "mains", 13.0, ("gluten_free", "spicy")),
        ("Massaman Curry", "mains", 13.5, ("gluten_free",)), ("Basil Chicken", "mains", 12.5, ("spicy",)),
        ("Tom Yum Soup", "starters", 7.5, ("gluten_free", "spicy")), ("Papaya Salad", "starters", 8.0, ("vegan", "vegetarian", "gluten_free", "spicy")),
        ("Spring Rolls", "starters", 6.0, ("vegan", "vegetarian")), ("Jasmine Rice", "sides", 2.5, ("vegan", "vegetarian", "gluten_free")),
        ("Mango Sticky Rice", "desserts", 6.5, ("vegan", "vegetarian", "gluten_free")), ("Thai Iced Tea", "drinks", 3.5, ("vegetarian",)),
    ],
    "american": [
        ("Classic Cheeseburger", "mains", 11.5, ()), ("Bacon BBQ Burger", "mains", 13.5, ()),
        ("Plant Burger", "mains", 13.0, ("vegan", "vegetarian")), ("Crispy Chicken Sandwich", "mains", 12.0, ()),
        ("Buffalo Wings", "starters", 10.0, ("gluten_free", "spicy")), ("Caesar Salad", "starters", 9.0, ()),
        ("Fries", "sides", 4.0, ("vegan", "vegetarian")), ("Onion Rings", "sides", 4.5, ("vegetarian",)),
        ("Chocolate Milkshake", "desserts", 5.5, ("vegetarian",)), ("Cola", "drinks", 2.5, ("vegan", "vegetarian", "gluten_free")),
    ],
    "mediterranean": [
        ("Chicken Shawarma Wrap", "mains", 10.5, ()), ("Falafel Plate", "mains", 11.0, ("vegan", "vegetarian")),
        ("Lamb Kofta", "mains", 14.0, ("gluten_free",)), ("Mixed Grill Platter", "mains", 18.5, ("gluten_free",)),
        ("Hummus & Pita", "starters", 6.0, ("vegan", "vegetarian")), ("Greek Salad", "starters", 8.5, ("vegetarian", "gluten_free")),
        ("Halloumi Fries", "sides", 7.0, ("vegetarian",)), ("Baklava", "desserts", 5.0, ("vegetarian",)),
        ("Mint Lemonade", "drinks", 3.5, ("vegan", "vegetarian", "gluten_free")),
    ],
    "chinese": [
        ("Kung Pao Chicken", "mains", 12.5, ("spicy",)), ("Sweet and Sour Pork", "mains", 12.0, ()),
        ("Mapo Tofu", "mains", 11.0, ("vegan", "vegetarian", "spicy")), ("Beef Chow Mein", "mains", 12.5, ()),
        ("Pork Dumplings", "starters", 7.5, ()), ("Hot and Sour Soup", "starters", 5.5, ("spicy",)),
        ("Spring Onion Pancake", "sides", 5.0, ("vegan", "vegetarian")), ("Egg Fried Rice", "sides", 6.0, ("vegetarian",)),
        ("Sesame Balls", "desserts", 4.5, ("vegan", "vegetarian")), ("Jasmine Tea", "drinks", 2.5, ("vegan", "vegetarian", "gluten_free")),
    ],
}
RESTAURANT_NAMES: dict[str, list[str]] = {
    "italian": ["Trattoria Bella", "Nonna's Kitchen", "Forno Rosso"],
    "japanese": ["Sakura Sushi", "Ramen Ichiban", "Koi Izakaya"],
    "mexican": ["Casa Lupita", "Taqueria El Sol"],
    "indian": ["Spice Route", "Taj Tandoor", "Bombay Bites"],
    "thai": ["Bangkok Street", "Lotus Thai"],
    "american": ["Burger Barn", "Smokestack Grill", "The Patty Lab"],
    "mediterranean": ["Olive & Vine", "Beirut Grill"],
    "chinese": ["Golden Dragon", "Jade Garden"],
}
EXTRAS: dict[str, list[tuple[str, float]]] = {
    "italian": [("Extra mozzarella", 1.5), ("Add prosciutto", 3.0), ("Add mushrooms", 1.0)],
    "japanese": [("Extra wasabi", 0.5), ("Add soft-boiled egg", 1.5), ("Extra chashu", 3.0)],
    "mexican": [("Add guacamole", 2.0), ("Extra cheese", 1.0), ("Add jalapenos", 0.5)],
    "indian": [("Extra paneer", 2.5), ("Add raita", 1.5)],
    "thai": [("Add prawns", 3.5), ("Add tofu", 2.0), ("Extra peanuts", 0.5)],
    "american": [("Extra patty", 3.5), ("Add bacon", 2.0), ("Add avocado", 2.0), ("Gluten-free bun", 1.5)],
    "mediterranean": [("Extra hummus", 1.5), ("Add halloumi", 2.5)],
    "chinese": [("Add egg", 1.0), ("Extra chili oil", 0.5)],
}
STREETS = ["Maple Ave", "Harbor Rd", "Elm St", "Station Rd", "Market St", "College Ave", "Mill Lane", "Bridge St", "Canal Walk", "Kings Rd"]
COURIERS = ["Marco P.", "Aisha K.", "Tom B.", "Lucia R.", "Dev S.", "Nina W.", "Kofi A.", "Sven L."]


class OpeningHours(BaseModel):
    day: Day
    opens: str
    closes: str


class Restaurant(BaseModel):
    restaurant_id: str
    name: str
    cuisine: Cuisine
    rating: float
    rating_count: int
    price_level: Literal["$", "$$", "$$$"]
    zone: Zone
    address: str
    delivery_zones: list[Zone]
    delivery_fee: float
    min_order: float
    prep_time_min: int
    accepts_cash: bool
    temporarily_closed: bool = False
    opening_hours: list[OpeningHours]


class ItemOption(BaseModel):
    option_id: str
    group: Literal["size", "spice", "extras"]
    name: str
    price_delta: float


class MenuItem(BaseModel):
    item_id: str
    restaurant_id: str
    name: str
    category: MenuCategory
    description: str
    price: float
    available: bool = True
    dietary: list[Dietary]
    options: list[ItemOption]


class Address(BaseModel):
    address_id: str
    customer_id: str
    label: Literal["home", "work", "other"]
    street: str
    postcode: str
    zone: Zone
    instructions: str | None = None


class Customer(BaseModel):
    customer_id: str
    name: str
    email: str
    phone: str
    wallet_balance: float


class CartItem(BaseModel):
    cart_item_id: str
    item_id: str
    name: str
    quantity: int
    option_ids: list[str]
    option_names: list[str]
    unit_price: float
    line_total: float


class Cart(BaseModel):
    customer_id: str
    restaurant_id: str | None = None
    items: list[CartItem] = []
    promo_code: str | None = None


class Promo(BaseModel):
    promo_code: str
    description: str
    discount_type: DiscountType
    value: float
    min_subtotal: float
    restaurant_id: str | None = None
    valid_until: str
    single_use: bool
    redeemed_by: list[str] = []


class StatusChange(BaseModel):
    status: OrderStatus
    at: str


class OrderRating(BaseModel):
    food_rating: int
    delivery_rating: int
    comment: str | None = None
    rated_at: str


class Order(BaseModel):
    order_id: str
    customer_id: str
    restaurant_id: str
    restaurant_name: str
    address_id: str
    items: list[CartItem]
    subtotal: float
    delivery_fee: float
    discount: float
    tip: float
    total: float
    promo_code: str | None = None
    payment_method: PaymentMethod
    status: OrderStatus
    placed_at: str
    estimated_delivery_at: str
    courier_name: str | None = None
    status_history: list[StatusChange]
    notes: str | None = None
    refund_amount: float | None = None
    cancel_reason: str | None = None
    rating: OrderRating | None = None


class FoodWorld(World):
    clock: str = NOW
    city: str = ""
    restaurants: dict[str, Restaurant] = {}
    items: dict[str, MenuItem] = {}
    customers: dict[str, Customer] = {}
    addresses: dict[str, Address] = {}
    carts: dict[str, Cart] = {}
    promos: dict[str, Promo] = {}
    orders: dict[str, Order] = {}


# --------------------------------------------------------------------------- time helpers
def _dt(ts: str) -> datetime:
    return datetime.fromisoformat(ts)


def _plus(ts: str, minutes: float) -> str:
    return (_dt(ts) + timedelta(minutes=minutes)).isoformat(timespec="seconds")


def _mins(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _open_at(r: Restaurant, ts: str) -> bool:
    if r.temporarily_closed:
        return False
    dt = _dt(ts)
    day, prev = DAYS[dt.weekday()], DAYS[(dt.weekday() - 1) % 7]
    t = dt.hour * 60 + dt.minute
    for h in r.opening_hours:
        o, c = _mins(h.opens), _mins(h.closes)
        if h.day == day and (o <= t < c if c > o else t >= o):
            return True
        if h.day == prev and c <= o and t < c:
            return True
    return False


def _next_opening(r: Restaurant, ts: str) -> str | None:
    if r.temporarily_closed:
        return None
    dt = _dt(ts)
    for add in range(0, 8):
        d = dt + timedelta(days=add)
        for h in r.opening_hours:
            if h.day == DAYS[d.weekday()]:
                start = d.replace(hour=_mins(h.opens) // 60, minute=_mins(h.opens) % 60, second=0)
                if start > dt:
                    return start.isoformat(timespec="seconds")
    return None


def _money(x: float) -> float:
    return round(x + 1e-9, 2)


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
    adj = rng.choice(["House favourite", "Freshly made", "Classic", "Chef's recipe", "Made to order", "Customer favourite"])
    extra = f"; {', '.join(t.replace('_', '-') for t in tags)}" if tags else ""
    return f"{adj}: {name.lower()}{extra}"


def seed_world(rng: random.Random, seed: int) -> FoodWorld:
    w = FoodWorld(seed=seed, city=rng.choice(CITIES))
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
                restaurant_id=rid, name=name, cuisine=cuisine, rating=round(rng.uniform(3.3, 4.9), 1),  # type: ignore[arg-type]
                rating_count=rng.randint(12, 2400), price_level=rng.choice(["$", "$$", "$$", "$$$"]),  # type: ignore[arg-type]
                zone=home, address=f"{rng.randint(1, 250)} {rng.choice(STREETS)}, {w.city}",  # type: ignore[arg-type]
                delivery_zones=sorted(zones, key=ZONES.index), delivery_fee=rng.choice([0.0, 1.49, 1.99, 2.49, 2.99, 3.99]),  # type: ignore[arg-type]
                min_order=rng.choice([10.0, 12.0, 15.0, 15.0, 20.0, 25.0]), prep_time_min=rng.choice([10, 15, 20, 25, 30]),
                accepts_cash=rng.random() < 0.6, temporarily_closed=rng.random() < 0.06,
                opening_hours=_hours(rng.choice(hour_kinds)),
            )
            w.restaurants[rid] = r
            dishes = DISHES[cuisine]
            keep = sorted(rng.sample(range(len(dishes)), k=min(len(dishes), rng.randint(8, 10))))
            for i in keep:
                dname, cat, base, tags = dishes[i]
                iid = w.new_id("ITM")
                opts: list[ItemOption] = []
                if cat == "mains" and any(k in dname for k in ("Pizza", "Ramen", "Curry", "Burrito", "Biryani", "Pad Thai", "Platter", "Chow Mein")):
                    opts.append(ItemOption(option_id=w.new_id("OPT"), group="size", name="Regular", price_delta=0.0))
                    opts.append(ItemOption(option_id=w.new_id("OPT"), group="size", name="Large", price_delta=rng.choice([2.5, 3.0, 4.0])))
                if cat == "drinks":
                    opts.append(ItemOption(option_id=w.new_id("OPT"), group="size", name="Regular", price_delta=0.0))
                    opts.append(ItemOption(option_id=w.new_id("OPT"), group="size", name="Large", price_delta=1.0))
                if cat == "mains" and cuisine in ("indian", "thai", "mexican", "chinese"):
                    for lvl in ("Mild", "Medium", "Hot"):
                        opts.append(ItemOption(option_id=w.new_id("OPT"), group="spice", name=lvl, price_delta=0.0))
                if cat == "mains":
                    for ename, eprice in rng.sample(EXTRAS[cuisine], k=min(2, len(EXTRAS[cuisine]))):
                        opts.append(ItemOption(option_id=w.new_id("OPT"), group="extras", name=ename, price_delta=eprice))
                w.items[iid] = MenuItem(
                    item_id=iid, restaurant_id=rid, name=dname, category=cat, description=_describe(dname, tags, rng),  # type: ignore[arg-type]
                    price=_money(round(base * rng.uniform(0.9, 1.15) * 2, 0) / 2 - 0.01 if base > 5 else base),
                    available=rng.random() > 0.1, dietary=list(tags), options=opts,  # type: ignore[arg-type]
                )
    # customers and addresses
    used_names: set[str] = set()
    for _ in range(12):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        while f"{first} {last}" in used_names:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        used_names.add(f"{first} {last}")
        cid = w.new_id("CUS")
        w.customers[cid] = Customer(customer_id=cid, name=f"{first} {last}", email=f"{first.lower()}.{last.lower()}@example.com",
                                    phone=f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
                                    wallet_balance=rng.choice([0.0, 0.0, 5.0, 12.5, 25.0, 60.0]))
        w.carts[cid] = Cart(customer_id=cid)
        for label in ["home"] + rng.sample(["work", "other"], k=rng.randint(0, 2)):
            aid = w.new_id("ADR")
            zone = rng.choice(ZONES) if label != "home" or rng.random() > 0.1 else "Hillcrest"
            w.addresses[aid] = Address(address_id=aid, customer_id=cid, label=label, street=f"{rng.randint(1, 300)} {rng.choice(STREETS)}",  # type: ignore[arg-type]
                                       postcode=f"{10000 + ZONES.index(zone) * 100 + rng.randint(0, 99)}", zone=zone,  # type: ignore[arg-type]
                                       instructions=rng.choice([None, None, "Ring twice", "Leave at the door", "Call on arrival", "Buzzer 4B"]))
    # promo codes
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
        w.promos[code] = Promo(promo_code=code, description=desc, discount_type=kind, value=val, min_subtotal=mins,  # type: ignore[arg-type]
                               restaurant_id=rid, valid_until=until, single_use=single)
    for rid in rng.sample(rids, k=4):
        r = w.restaurants[rid]
        code = "".join(ch for ch in r.name.upper() if ch.isalpha())[:6] + str(rng.choice([3, 4, 5]))
        val = float(code[-1])
        w.promos[code] = Promo(promo_code=code, description=f"{val:g} off at {r.name}", discount_type="flat", value=val,
                               min_subtotal=rng.choice([15.0, 20.0]), restaurant_id=rid,
                               valid_until=rng.choice(["2026-03-15", "2026-05-31", "2026-02-20"]), single_use=False)
    cids = list(w.customers)
    w.promos["WELCOME10"].redeemed_by = rng.sample(cids, k=4)
    w.promos["NEWYEAR8"].redeemed_by = rng.sample(cids, k=2)
    # order history and in-flight orders
    plan = ["delivered"] * 12 + ["cancelled"] * 2 + ["placed", "placed", "accepted", "accepted", "preparing", "preparing",
                                                     "ready_for_pickup", "picked_up", "picked_up"]
    flow = ["placed", "accepted", "preparing", "ready_for_pickup", "picked_up", "delivered"]
    for k, status in enumerate(plan):
        cid = rng.choice(cids)
        addrs = [a for a in w.addresses.values() if a.customer_id == cid]
        rid = rng.choice(rids)
        r = w.restaurants[rid]
        menu = [i for i in w.items.values() if i.restaurant_id == rid]
        lines = []
        for it in rng.sample(menu, k=rng.randint(1, 3)):
            q = rng.randint(1, 3)
            lines.append(CartItem(cart_item_id=w.new_id("CI"), item_id=it.item_id, name=it.name, quantity=q, option_ids=[],
                                  option_names=[], unit_price=it.price, line_total=_money(it.price * q)))
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
        o = Order(order_id=oid, customer_id=cid, restaurant_id=rid, restaurant_name=r.name, address_id=addrs[0].address_id, items=lines,
                  subtotal=sub, delivery_fee=r.delivery_fee, discount=0.0, tip=tip, total=_money(sub + r.delivery_fee + tip),
                  payment_method=rng.choice(["card", "card", "wallet"]), status=status, placed_at=placed,  # type: ignore[arg-type]
                  estimated_delivery_at=_plus(placed, r.prep_time_min + 25), status_history=hist,
                  courier_name=rng.choice(COURIERS) if status in ("picked_up", "delivered") else None)
        if status == "cancelled":
            o.refund_amount, o.cancel_reason = o.total, rng.choice(["ordered by mistake", "took too long"])
        if status == "delivered" and rng.random() < 0.5:
            o.rating = OrderRating(food_rating=rng.randint(2, 5), delivery_rating=rng.randint(3, 5), rated_at=_plus(t, 30),
                                   comment=rng.choice([None, "Great food!", "Arrived a bit cold", "Fast delivery", "Portion was small"]))
        w.orders[oid] = o
    # a couple of customers start with something in their cart
    for cid in rng.sample(cids, k=3):
        rid = rng.choice(rids)
        it = rng.choice([i for i in w.items.values() if i.restaurant_id == rid and i.available])
        w.carts[cid] = Cart(customer_id=cid, restaurant_id=rid,
                            items=[CartItem(cart_item_id=w.new_id("CI"), item_id=it.item_id, name=it.name, quantity=1, option_ids=[],
                                            option_names=[], unit_price=it.price, line_total=it.price)])
    return w


# --------------------------------------------------------------------------- helpers


def _restaurant(w: FoodWorld, restaurant_id: str) -> Restaurant:
    r = w.restaurants.get(restaurant_id)
    if r is None:
        raise not_found("restaurant", restaurant_id, "search_restaurants shows valid restaurant ids")
    return r


def _customer(w: FoodWorld, customer_id: str) -> Customer:
    c = w.customers.get(customer_id)
    if c is None:
        raise not_found("customer", customer_id, "list_customers shows valid customer ids")
    return c


def _order(w: FoodWorld, order_id: str) -> Order:
    o = w.orders.get(order_id)
    if o is None:
        raise not_found("order", order_id, "list_orders shows a customer's orders")
    return o


def _cart(w: FoodWorld, customer_id: str) -> Cart:
    _customer(w, customer_id)
    return w.carts.get(customer_id) or Cart(customer_id=customer_id)


def _promo_discount(p: Promo, subtotal: float, delivery_fee: float) -> tuple[float, float]:
    """(discount on food, delivery fee after the promo)"""
    if p.discount_type == "percent":
        return _money(subtotal * p.value / 100), delivery_fee
    if p.discount_type == "flat":
        return _money(min(p.value, subtotal)), delivery_fee
    return 0.0, 0.0


def _check_promo(w: FoodWorld, p: Promo, cart: Cart, subtotal: float) -> None:
    if p.valid_until < w.clock[:10]:
        raise StateConflict(f"promo_code {p.promo_code!r} expired on {p.valid_until}; list_promotions shows active codes")
    if p.restaurant_id is not None and p.restaurant_id != cart.restaurant_id:
        r = w.restaurants[p.restaurant_id]
        raise StateConflict(f"promo_code {p.promo_code!r} is only valid at {r.name} ({p.restaurant_id}), "
                            f"but the cart is from {cart.restaurant_id}")
    if subtotal < p.min_subtotal:
        raise StateConflict(f"promo_code {p.promo_code!r} needs a subtotal of at least {p.min_subtotal:.2f}; "
                            f"the cart subtotal is {subtotal:.2f}")
    if p.single_use and cart.customer_id in p.redeemed_by:
        raise StateConflict(f"promo_code {p.promo_code!r} is single-use and customer {cart.customer_id} has already redeemed it")


# --------------------------------------------------------------------------- parameter and result types
CustomerId = Annotated[str, Field(description="Customer id, e.g. 'CUS-0001' (from list_customers)")]
RestaurantId = Annotated[str, Field(description="Restaurant id, e.g. 'RES-0004' (from search_restaurants)")]
OrderId = Annotated[str, Field(description="Order id, e.g. 'ORD-0012' (from list_orders)")]


class CustomerProfile(Customer):
    addresses: list[Address]


class CustomerList(BaseModel):
    customers: list[CustomerProfile]
    total: int


class RestaurantSummary(BaseModel):
    restaurant_id: str
    name: str
    cuisine: Cuisine
    rating: float
    rating_count: int
    price_level: str
    zone: Zone
    delivery_zones: list[Zone]
    delivery_fee: float
    min_order: float
    prep_time_min: int
    open_now: bool


class RestaurantList(BaseModel):
    restaurants: list[RestaurantSummary]
    total: int


class RestaurantDetail(Restaurant):
    open_now: bool
    next_opening: str | None


class Menu(BaseModel):
    restaurant_id: str
    restaurant_name: str
    open_now: bool
    items: list[MenuItem]
    total: int


class CartView(BaseModel):
    customer_id: str
    restaurant_id: str | None
    restaurant_name: str | None
    items: list[CartItem]
    item_count: int
    subtotal: float
    delivery_fee: float
    discount: float
    total: float
    promo_code: str | None
    min_order: float | None
    meets_minimum: bool


class PromoInfo(BaseModel):
    promo_code: str
    description: str
    discount_type: DiscountType
    value: float
    min_subtotal: float
    restaurant_id: str | None
    valid_until: str
    single_use: bool
    expired: bool


class PromoList(BaseModel):
    promotions: list[PromoInfo]
    total: int


class OrderSummary(BaseModel):
    order_id: str
    customer_id: str
    restaurant_id: str
    restaurant_name: str
    status: OrderStatus
    total: float
    placed_at: str
    estimated_delivery_at: str
    rated: bool


class OrderList(BaseModel):
    orders: list[OrderSummary]
    total: int


def _view(w: FoodWorld, cart: Cart) -> CartView:
    r = w.restaurants.get(cart.restaurant_id or "")
    sub = _money(sum(i.line_total for i in cart.items))
    fee = r.delivery_fee if r and cart.items else 0.0
    disc = 0.0
    if cart.promo_code and cart.promo_code in w.promos and cart.items:
        disc, fee = _promo_discount(w.promos[cart.promo_code], sub, fee)
    return CartView(customer_id=cart.customer_id, restaurant_id=cart.restaurant_id, restaurant_name=r.name if r else None,
                    items=cart.items, item_count=sum(i.quantity for i in cart.items), subtotal=sub, delivery_fee=fee, discount=disc,
                    total=_money(sub - disc + fee), promo_code=cart.promo_code, min_order=r.min_order if r else None,
                    meets_minimum=bool(r and cart.items and sub >= r.min_order))


def _summary(w: FoodWorld, r: Restaurant) -> RestaurantSummary:
    return RestaurantSummary(restaurant_id=r.restaurant_id, name=r.name, cuisine=r.cuisine, rating=r.rating, rating_count=r.rating_count,
                             price_level=r.price_level, zone=r.zone, delivery_zones=r.delivery_zones, delivery_fee=r.delivery_fee,
                             min_order=r.min_order, prep_time_min=r.prep_time_min, open_now=_open_at(r, w.clock))


TOOLS: ToolSet[FoodWorld] = ToolSet()


@TOOLS.tool(read_only=True)
def list_customers(
    w: FoodWorld,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the customer's name")] = None,
) -> CustomerList:
    """List customers with their saved delivery addresses (address_id, zone) and wallet balance."""
    out = [CustomerProfile(**c.model_dump(), addresses=[a for a in w.addresses.values() if a.customer_id == c.customer_id])
           for c in w.customers.values() if name_contains is None or name_contains.lower() in c.name.lower()]
    return CustomerList(customers=out, total=len(out))


@TOOLS.tool()
def add_address(
    w: FoodWorld,
    customer_id: CustomerId,
    label: Annotated[Literal["home", "work", "other"], Field(description="What kind of address this is")],
    street: Annotated[str, Field(description="Street and house number, e.g. '12 Market St'", min_length=4, max_length=120)],
    postcode: Annotated[str, Field(description="5-digit postcode", pattern=r"^\d{5}$")],
    zone: Annotated[Zone, Field(description="Delivery zone (neighbourhood) of the address")],
    instructions: Annotated[str | None, Field(description="Note for the courier, e.g. 'Ring twice'", max_length=200)] = None,
) -> Address:
    """Save a new delivery address for a customer."""
    _customer(w, customer_id)
    if any(a.customer_id == customer_id and a.street.lower() == street.lower() and a.postcode == postcode for a in w.addresses.values()):
        raise StateConflict(f"customer {customer_id} already has the address {street!r} {postcode}")
    aid = w.new_id("ADR")
    a = Address(address_id=aid, customer_id=customer_id, label=label, street=street, postcode=postcode, zone=zone, instructions=instructions)
    w.addresses[aid] = a
    return a

# ---------------------------------------------------------------- restaurants and menus
@TOOLS.tool(read_only=True)
def search_restaurants(
    w: FoodWorld,
    cuisine: Annotated[Cuisine | None, Field(description="Only restaurants of this cuisine")] = None,
    address_id: Annotated[str | None, Field(description="Only restaurants that deliver to this address id (from list_customers)")] = None,
    open_now: Annotated[bool | None, Field(description="true: only restaurants open right now")] = None,
    min_rating: Annotated[float | None, Field(description="Minimum average rating", ge=1, le=5)] = None,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the restaurant name")] = None,
    max_delivery_fee: Annotated[float | None, Field(description="Highest acceptable delivery fee", ge=0)] = None,
) -> RestaurantList:
    """Search restaurants by cuisine, delivery address, opening status, rating, name or delivery fee (best rated first)."""
    zone = None
    if address_id is not None:
        a = w.addresses.get(address_id)
        if a is None:
            raise not_found("address", address_id, "list_customers shows each customer's address ids")
        zone = a.zone
    out = [_summary(w, r) for r in w.restaurants.values()
           if (cuisine is None or r.cuisine == cuisine) and (zone is None or zone in r.delivery_zones)
           and (open_now is None or _open_at(r, w.clock) == open_now) and (min_rating is None or r.rating >= min_rating)
           and (name_contains is None or name_contains.lower() in r.name.lower())
           and (max_delivery_fee is None or r.delivery_fee <= max_delivery_fee)]
    out.sort(key=lambda r: (-r.rating, r.restaurant_id))
    return RestaurantList(restaurants=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_restaurant(w: FoodWorld, restaurant_id: RestaurantId) -> RestaurantDetail:
    """Get a restaurant's details: opening hours, whether it is open now and when it next opens, delivery zones, fees and minimum order."""
    r = _restaurant(w, restaurant_id)
    is_open = _open_at(r, w.clock)
    return RestaurantDetail(**r.model_dump(), open_now=is_open, next_opening=None if is_open else _next_opening(r, w.clock))


@TOOLS.tool(read_only=True)
def get_menu(
    w: FoodWorld,
    restaurant_id: RestaurantId,
    category: Annotated[MenuCategory | None, Field(description="Only items of this menu category")] = None,
    dietary: Annotated[Dietary | None, Field(description="Only items with this dietary tag")] = None,
    available_only: Annotated[bool, Field(description="Hide items that are currently unavailable")] = False,
) -> Menu:
    """Get a restaurant's menu: items with prices, availability, dietary tags and options (option_id, group, price_delta)."""
    r = _restaurant(w, restaurant_id)
    out = [i for i in w.items.values() if i.restaurant_id == restaurant_id
           and (category is None or i.category == category) and (dietary is None or dietary in i.dietary)
           and (not available_only or i.available)]
    return Menu(restaurant_id=restaurant_id, restaurant_name=r.name, open_now=_open_at(r, w.clock), items=out, total=len(out))

# ---------------------------------------------------------------- cart
@TOOLS.tool()
def add_to_cart(
    w: FoodWorld,
    customer_id: CustomerId,
    item_id: Annotated[str, Field(description="Menu item id, e.g. 'ITM-0031' (from get_menu)")],
    quantity: Annotated[int, Field(description="How many", ge=1, le=20)] = 1,
    option_ids: Annotated[list[str] | None, Field(description="Option ids of this item (from get_menu); at most one per size/spice group")] = None,
) -> CartView:
    """Add a menu item (with options) to the customer's cart. A cart holds items from one restaurant only."""
    cart = _cart(w, customer_id)
    it = w.items.get(item_id)
    if it is None:
        raise not_found("menu item", item_id, "get_menu lists a restaurant's item ids")
    if not it.available:
        raise StateConflict(f"item {item_id} ({it.name}) is currently unavailable at {w.restaurants[it.restaurant_id].name}; "
                            "get_menu with available_only=true shows what can be ordered")
    if cart.items and cart.restaurant_id != it.restaurant_id:
        cur = w.restaurants[cart.restaurant_id or ""].name
        raise StateConflict(f"the cart of {customer_id} holds items from {cur} ({cart.restaurant_id}); "
                            f"clear_cart before adding items from {w.restaurants[it.restaurant_id].name}")
    chosen = []
    by_id = {o.option_id: o for o in it.options}
    for oid in option_ids or []:
        if oid not in by_id:
            valid = ", ".join(f"{o.option_id} ({o.group}: {o.name})" for o in it.options) or "none"
            raise InvalidArgument(f"option {oid!r} does not belong to item {item_id}; its options: {valid}")
        chosen.append(by_id[oid])
    if len({o.option_id for o in chosen}) != len(chosen):
        raise InvalidArgument("option_ids must not repeat an option")
    for g in EXCLUSIVE_GROUPS:
        if sum(o.group == g for o in chosen) > 1:
            raise InvalidArgument(f"choose at most one {g} option for item {item_id}")
    unit = _money(it.price + sum(o.price_delta for o in chosen))
    key = sorted(o.option_id for o in chosen)
    if not cart.items:
        cart = Cart(customer_id=customer_id, restaurant_id=it.restaurant_id)
    for line in cart.items:
        if line.item_id == item_id and sorted(line.option_ids) == key:
            if line.quantity + quantity > 20:
                raise InvalidArgument(f"at most 20 of one item per order; the cart already holds {line.quantity}")
            line.quantity += quantity
            line.line_total = _money(line.unit_price * line.quantity)
            break
    else:
        cart.items.append(CartItem(cart_item_id=w.new_id("CI"), item_id=item_id, name=it.name, quantity=quantity, option_ids=key,
                                   option_names=[by_id[o].name for o in key], unit_price=unit, line_total=_money(unit * quantity)))
    w.carts[customer_id] = cart
    return _view(w, cart)


@TOOLS.tool(read_only=True)
def get_cart(w: FoodWorld, customer_id: CustomerId) -> CartView:
    """Show a customer's cart: lines (cart_item_id), subtotal, delivery fee, promo discount, total and whether the minimum order is met."""
    return _view(w, _cart(w, customer_id))


@TOOLS.tool(idempotent=True)
def update_cart_item(
    w: FoodWorld,
    customer_id: CustomerId,
    cart_item_id: Annotated[str, Field(description="Cart line id, e.g. 'CI-0041' (from get_cart)")],
    quantity: Annotated[int, Field(description="New quantity; 0 removes the line", ge=0, le=20)],
) -> CartView:
    """Change the quantity of a cart line, or remove it with quantity 0."""
    cart = _cart(w, customer_id)
    line = next((i for i in cart.items if i.cart_item_id == cart_item_id), None)
    if line is None:
        raise not_found("cart item", cart_item_id, f"get_cart shows the cart lines of {customer_id}")
    if quantity == 0:
        cart.items = [i for i in cart.items if i.cart_item_id != cart_item_id]
        if not cart.items:
            cart.restaurant_id, cart.promo_code = None, None
    else:
        line.quantity = quantity
        line.line_total = _money(line.unit_price * quantity)
    w.carts[customer_id] = cart
    return _view(w, cart)


@TOOLS.tool(destructive=True, idempotent=True)
def clear_cart(w: FoodWorld, customer_id: CustomerId) -> CartView:
    """Remove every item and the promo code from a customer's cart."""
    _customer(w, customer_id)
    w.carts[customer_id] = Cart(customer_id=customer_id)
    return _view(w, w.carts[customer_id])

# ---------------------------------------------------------------- promotions
@TOOLS.tool(read_only=True)
def list_promotions(
    w: FoodWorld,
    restaurant_id: Annotated[str | None, Field(description="Only codes usable at this restaurant id (plus site-wide codes)")] = None,
    include_expired: Annotated[bool, Field(description="Also list expired codes")] = False,
) -> PromoList:
    """List promo codes with their discount, minimum subtotal, restaurant restriction and expiry date."""
    if restaurant_id is not None:
        _restaurant(w, restaurant_id)
    today = w.clock[:10]
    out = [PromoInfo(**p.model_dump(exclude={"redeemed_by"}), expired=p.valid_until < today) for p in w.promos.values()
           if (include_expired or p.valid_until >= today) and (restaurant_id is None or p.restaurant_id in (None, restaurant_id))]
    return PromoList(promotions=out, total=len(out))


@TOOLS.tool(idempotent=True)
def apply_promo_code(
    w: FoodWorld,
    customer_id: CustomerId,
    promo_code: Annotated[str, Field(description="Promo code, e.g. 'FREEDEL' (from list_promotions)", min_length=3, max_length=20)],
) -> CartView:
    """Apply a promo code to the customer's cart (one code per cart; replaces an earlier one)."""
    cart = _cart(w, customer_id)
    p = w.promos.get(promo_code.upper())
    if p is None:
        raise not_found("promo_code", promo_code, "list_promotions shows the valid codes")
    if not cart.items:
        raise StateConflict(f"the cart of {customer_id} is empty; add_to_cart before applying a promo code")
    _check_promo(w, p, cart, _money(sum(i.line_total for i in cart.items)))
    cart.promo_code = p.promo_code
    w.carts[customer_id] = cart
    return _view(w, cart)

# ---------------------------------------------------------------- orders
@TOOLS.tool()
def place_order(
    w: FoodWorld,
    customer_id: CustomerId,
    address_id: Annotated[str, Field(description="Delivery address id of this customer (from list_customers)")],
    payment_method: Annotated[PaymentMethod, Field(description="How to pay; 'wallet' needs enough wallet balance, 'cash' needs a restaurant that accepts cash")],
    tip: Annotated[float, Field(description="Courier tip", ge=0, le=100)] = 0.0,
    notes: Annotated[str | None, Field(description="Note for the restaurant, e.g. 'no onions'", max_length=200)] = None,
) -> Order:
    """Place the customer's cart as an order. The restaurant must be open, deliver to the address's zone, and the subtotal must reach its minimum order."""
    cust = _customer(w, customer_id)
    cart = _cart(w, customer_id)
    a = w.addresses.get(address_id)
    if a is None:
        raise not_found("address", address_id, "list_customers shows each customer's address ids")
    if a.customer_id != customer_id:
        raise PermissionDenied(f"address {address_id} belongs to another customer than {customer_id}")
    if not cart.items:
        raise StateConflict(f"the cart of {customer_id} is empty; add_to_cart first")
    r = w.restaurants[cart.restaurant_id or ""]
    if not _open_at(r, w.clock):
        nxt = _next_opening(r, w.clock)
        when = f"; it next opens at {nxt}" if nxt else "; it is temporarily closed"
        raise StateConflict(f"restaurant {r.restaurant_id} ({r.name}) is closed now ({w.clock}){when}")
    if a.zone not in r.delivery_zones:
        raise StateConflict(f"address {address_id} is outside the delivery zone of {r.name}: it is in {a.zone}, "
                            f"the restaurant delivers to {', '.join(r.delivery_zones)}")
    gone = [f"{i.name} ({i.item_id})" for i in cart.items if not w.items[i.item_id].available]
    if gone:
        raise StateConflict(f"items no longer available: {', '.join(gone)}; remove them with update_cart_item(quantity=0)")
    view = _view(w, cart)
    if view.subtotal < r.min_order:
        raise StateConflict(f"minimum order amount not met: subtotal {view.subtotal:.2f} is below {r.name}'s minimum of "
                            f"{r.min_order:.2f}; add {r.min_order - view.subtotal:.2f} more")
    if cart.promo_code:
        _check_promo(w, w.promos[cart.promo_code], cart, view.subtotal)
    total = _money(view.total + tip)
    if payment_method == "cash" and not r.accepts_cash:
        raise InvalidArgument(f"{r.name} does not accept cash; use payment_method 'card' or 'wallet'")
    if payment_method == "wallet":
        if cust.wallet_balance < total:
            raise StateConflict(f"wallet balance {cust.wallet_balance:.2f} is less than the order total {total:.2f}; pay by card")
        cust.wallet_balance = _money(cust.wallet_balance - total)
    if cart.promo_code and w.promos[cart.promo_code].single_use:
        w.promos[cart.promo_code].redeemed_by.append(customer_id)
    oid = w.new_id("ORD")
    o = Order(order_id=oid, customer_id=customer_id, restaurant_id=r.restaurant_id, restaurant_name=r.name, address_id=address_id,
              items=cart.items, subtotal=view.subtotal, delivery_fee=view.delivery_fee, discount=view.discount, tip=_money(tip),
              total=total, promo_code=cart.promo_code, payment_method=payment_method, status="placed", placed_at=w.clock,
              estimated_delivery_at=_plus(w.clock, r.prep_time_min + 25), status_history=[StatusChange(status="placed", at=w.clock)],
              notes=notes)
    w.orders[oid] = o
    w.carts[customer_id] = Cart(customer_id=customer_id)
    return o


@TOOLS.tool(read_only=True)
def list_orders(
    w: FoodWorld,
    customer_id: Annotated[str | None, Field(description="Only orders of this customer id")] = None,
    status: Annotated[OrderStatus | None, Field(description="Only orders in this status")] = None,
    restaurant_id: Annotated[str | None, Field(description="Only orders from this restaurant id")] = None,
) -> OrderList:
    """List orders (most recent first), filtered by customer, status or restaurant."""
    if customer_id is not None:
        _customer(w, customer_id)
    if restaurant_id is not None:
        _restaurant(w, restaurant_id)
    out = [OrderSummary(order_id=o.order_id, customer_id=o.customer_id, restaurant_id=o.restaurant_id, restaurant_name=o.restaurant_name,
                        status=o.status, total=o.total, placed_at=o.placed_at, estimated_delivery_at=o.estimated_delivery_at,
                        rated=o.rating is not None)
           for o in w.orders.values() if (customer_id is None or o.customer_id == customer_id)
           and (status is None or o.status == status) and (restaurant_id is None or o.restaurant_id == restaurant_id)]
    out.sort(key=lambda o: (o.placed_at, o.order_id), reverse=True)
    return OrderList(orders=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_order(w: FoodWorld, order_id: OrderId) -> Order:
    """Track an order: items, totals, current status with its history, courier and estimated delivery time."""
    return _order(w, order_id)


@TOOLS.tool(idempotent=False)
def update_order_status(
    w: FoodWorld,
    order_id: OrderId,
    status: Annotated[Literal["accepted", "preparing", "ready_for_pickup", "picked_up", "delivered"],
                      Field(description="Next status (restaurant/courier side): placed -> accepted -> preparing -> ready_for_pickup -> picked_up -> delivered")],
) -> Order:
    """Advance an order to its next status, as the restaurant or courier would. Statuses can only move one step forward."""
    o = _order(w, order_id)
    allowed = NEXT_STATUS[o.status]
    if status not in allowed:
        nxt = f"the next status is {allowed[0]!r}" if allowed else "it is final"
        raise StateConflict(f"order {order_id} is {o.status!r}; it cannot move to {status!r} ({nxt})")
    w.clock = _plus(w.clock, 5)
    o.status = status
    o.status_history.append(StatusChange(status=status, at=w.clock))
    if status == "picked_up":
        o.courier_name = COURIERS[int(order_id.split("-")[-1]) % len(COURIERS)]
        o.estimated_delivery_at = max(o.estimated_delivery_at, _plus(w.clock, 15))
    if status == "delivered":
        o.estimated_delivery_at = w.clock
    return o


@TOOLS.tool(destructive=True)
def cancel_order(
    w: FoodWorld,
    order_id: OrderId,
    reason: Annotated[Literal["ordered_by_mistake", "taking_too_long", "changed_mind", "wrong_address", "other"],
                      Field(description="Why the order is cancelled")],
) -> Order:
    """Cancel an order before the courier picks it up. Full refund while placed or accepted; once preparing, half the food subtotal is kept."""
    o = _order(w, order_id)
    if o.status in ("picked_up", "delivered"):
        raise StateConflict(f"order {order_id} was already {o.status.replace('_', ' ')}"
                            + (f" by courier {o.courier_name}" if o.courier_name else "") + "; it can no longer be cancelled")
    if o.status == "cancelled":
        raise StateConflict(f"order {order_id} is already cancelled")
    keep = 0.0 if o.status in ("placed", "accepted") else _money(o.subtotal * 0.5)
    o.refund_amount = _money(o.total - keep)
    o.cancel_reason = reason
    o.status = "cancelled"
    o.status_history.append(StatusChange(status="cancelled", at=w.clock))
    if o.payment_method == "wallet":
        c = w.customers[o.customer_id]
        c.wallet_balance = _money(c.wallet_balance + o.refund_amount)
    if o.promo_code and o.promo_code in w.promos and o.customer_id in w.promos[o.promo_code].redeemed_by:
        w.promos[o.promo_code].redeemed_by.remove(o.customer_id)
    return o


@TOOLS.tool()
def rate_order(
    w: FoodWorld,
    order_id: OrderId,
    food_rating: Annotated[int, Field(description="Food rating, 1 (poor) to 5 (excellent)", ge=1, le=5)],
    delivery_rating: Annotated[int, Field(description="Delivery rating, 1 (poor) to 5 (excellent)", ge=1, le=5)],
    comment: Annotated[str | None, Field(description="Optional review text", max_length=500)] = None,
) -> Order:
    """Rate a delivered order (once). The food rating updates the restaurant's average rating."""
    o = _order(w, order_id)
    if o.status != "delivered":
        raise StateConflict(f"order {order_id} is {o.status!r}; only delivered orders can be rated")
    if o.rating is not None:
        raise StateConflict(f"order {order_id} was already rated on {o.rating.rated_at}")
    o.rating = OrderRating(food_rating=food_rating, delivery_rating=delivery_rating, comment=comment, rated_at=w.clock)
    r = w.restaurants[o.restaurant_id]
    r.rating = round((r.rating * r.rating_count + food_rating) / (r.rating_count + 1), 2)
    r.rating_count += 1
    return o


def build(seed: int = 0) -> EnvServer[FoodWorld]:
    """A fresh food_delivery server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "food_delivery", seeder=seed_world, category="lifestyle",
        description="Food delivery: restaurants with hours and delivery zones, menus with options, carts, promo codes, "
                    "orders with live status tracking, cancellation and ratings.",
        tools=TOOLS, default_seed=seed,
    )
