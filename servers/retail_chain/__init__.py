"""retail_chain: a chain of stores in several cities: per-store stock by SKU, transfers, store hours, pickup reservations."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import EnvServer, InvalidArgument, StateConflict, ToolSet, World, not_found
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES

TODAY = REFERENCE_DAY  # a Monday
NOW_TIME = "09:00"
NOW = f"{TODAY}T{NOW_TIME}:00"
DATE = r"^\d{4}-\d{2}-\d{2}$"
TIME = r"^([01]\d|2[0-3]):[0-5]\d$"
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MAX_PICKUP_DAYS = 14
Category = Literal["outdoor", "kitchen", "electronics", "tools", "toys", "apparel"]
StoreStatus = Literal["open", "temporarily_closed"]
TransferStatus = Literal["in_transit", "received"]
ReservationStatus = Literal["active", "collected", "cancelled"]

DISTRICTS = ["Central", "Riverside", "Northgate", "Harbour", "Old Town", "Westfield", "Airport", "University"]
PRODUCTS = {
    "outdoor": [
        ("Trail Backpack 30L", 89.0),
        ("Camping Stove", 54.0),
        ("Sleeping Bag -5C", 119.0),
        ("Folding Chair", 29.0),
        ("LED Lantern", 24.0),
    ],
    "kitchen": [
        ("Cast Iron Skillet", 39.0),
        ("Chef Knife 20cm", 59.0),
        ("Espresso Maker", 149.0),
        ("Glass Storage Set", 27.0),
        ("Stand Mixer", 279.0),
    ],
    "electronics": [
        ("Bluetooth Speaker", 69.0),
        ("Noise-Cancelling Headphones", 199.0),
        ("Power Bank 20000mAh", 45.0),
        ("Smart Plug 2-pack", 25.0),
        ("4K Streaming Stick", 49.0),
    ],
    "tools": [
        ("Cordless Drill 18V", 129.0),
        ("Socket Set 94pc", 79.0),
        ("Laser Level", 64.0),
        ("Stud Finder", 22.0),
        ("Workbench", 189.0),
    ],
    "toys": [
        ("Wooden Train Set", 44.0),
        ("Building Bricks 1200pc", 99.0),
        ("Remote Control Car", 59.0),
        ("Puzzle 1000pc", 19.0),
    ],
    "apparel": [
        ("Rain Jacket", 99.0),
        ("Merino Base Layer", 69.0),
        ("Hiking Socks 3-pack", 21.0),
        ("Fleece Pullover", 55.0),
    ],
}
BRANDS = ["Fieldcraft", "Homestead", "Voltix", "Ironbark", "Playwell", "Nordway"]


class Store(BaseModel):
    store_id: str
    name: str
    city: str
    address: str
    phone: str
    status: StoreStatus
    hours: dict[str, str]  # weekday -> "HH:MM-HH:MM" or "closed"


class Product(BaseModel):
    sku: str
    name: str
    brand: str
    category: Category
    price: float


class StockEntry(BaseModel):
    on_hand: int
    reserved: int = 0


class Transfer(BaseModel):
    transfer_id: str
    sku: str
    from_store_id: str
    to_store_id: str
    quantity: int
    status: TransferStatus
    created_at: str
    received_at: str | None = None


class Reservation(BaseModel):
    reservation_id: str
    store_id: str
    sku: str
    quantity: int
    customer_name: str
    customer_phone: str
    pickup_date: str
    pickup_time: str
    status: ReservationStatus
    created_at: str


class RetailWorld(World):
    stores: dict[str, Store] = {}
    products: dict[str, Product] = {}
    stock: dict[str, dict[str, StockEntry]] = {}  # store_id -> sku -> entry
    transfers: dict[str, Transfer] = {}
    reservations: dict[str, Reservation] = {}


def _days(d: str, n: int) -> str:
    return (date.fromisoformat(d) + timedelta(days=n)).isoformat()


def _weekday(d: str) -> str:
    return WEEKDAYS[date.fromisoformat(d).weekday()]


def _open_at(store: Store, d: str, t: str) -> bool:
    span = store.hours[_weekday(d)]
    if store.status != "open" or span == "closed":
        return False
    start, end = span.split("-")
    return start <= t < end


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


def _store(w: RetailWorld, store_id: str, arg: str = "store_id") -> Store:
    s = w.stores.get(store_id)
    if s is None:
        raise not_found("store", store_id, f"{arg} must be a store id from list_stores")
    return s


def _product(w: RetailWorld, sku: str) -> Product:
    p = w.products.get(sku)
    if p is None:
        raise not_found("SKU", sku, "list_products shows valid SKUs")
    return p


def _entry(w: RetailWorld, store_id: str, sku: str) -> StockEntry | None:
    return w.stock[store_id].get(sku)


StoreId = Annotated[str, Field(description="Store id, e.g. 'STR-0003' (from list_stores)")]
Sku = Annotated[str, Field(description="Product SKU, e.g. 'SKU-00007' (from list_products)")]


class StoreSummary(BaseModel):
    store_id: str
    name: str
    city: str
    address: str
    status: StoreStatus
    open_now: bool
    today_hours: str


class StoreList(BaseModel):
    stores: list[StoreSummary]
    total: int


class StoreDetail(BaseModel):
    store_id: str
    name: str
    city: str
    address: str
    phone: str
    status: StoreStatus
    open_now: bool
    hours: dict[str, str]
    as_of: str


class ProductList(BaseModel):
    products: list[Product]
    total: int


class StoreStock(BaseModel):
    store_id: str
    store_name: str
    city: str
    store_status: StoreStatus
    on_hand: int
    reserved: int
    available: int


class StockReport(BaseModel):
    sku: str
    name: str
    stores: list[StoreStock]
    total_available: int


class InventoryLine(BaseModel):
    sku: str
    name: str
    category: Category
    price: float
    on_hand: int
    reserved: int
    available: int


class Inventory(BaseModel):
    store_id: str
    items: list[InventoryLine]
    total: int


class TransferList(BaseModel):
    transfers: list[Transfer]
    total: int


class ReservationList(BaseModel):
    reservations: list[Reservation]
    total: int


TOOLS: ToolSet[RetailWorld] = ToolSet()


@TOOLS.tool(read_only=True)
def list_stores(
    w: RetailWorld,
    city: Annotated[str | None, Field(description="Only stores in this city, e.g. 'Lisbon'")] = None,
    open_now: Annotated[
        bool | None, Field(description="true: only stores open right now; false: only stores closed right now")
    ] = None,
) -> StoreList:
    """List the chain's stores with city, address, status and whether each is open right now."""
    out = []
    for s in w.stores.values():
        is_open = _open_at(s, TODAY, NOW_TIME)
        if (city is not None and s.city.lower() != city.lower()) or (open_now is not None and is_open != open_now):
            continue
        out.append(
            StoreSummary(
                store_id=s.store_id,
                name=s.name,
                city=s.city,
                address=s.address,
                status=s.status,
                open_now=is_open,
                today_hours=s.hours[_weekday(TODAY)],
            )
        )
    return StoreList(stores=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_store_hours(w: RetailWorld, store_id: StoreId) -> StoreDetail:
    """Get a store's weekly opening hours, phone number, status and whether it is open right now."""
    s = _store(w, store_id)
    return StoreDetail(
        store_id=s.store_id,
        name=s.name,
        city=s.city,
        address=s.address,
        phone=s.phone,
        status=s.status,
        open_now=_open_at(s, TODAY, NOW_TIME),
        hours=s.hours,
        as_of=NOW,
    )


@TOOLS.tool(read_only=True)
def list_products(
    w: RetailWorld,
    category: Annotated[Category | None, Field(description="Only products in this category")] = None,
    query: Annotated[str | None, Field(description="Case-insensitive part of the product name or brand")] = None,
) -> ProductList:
    """List the chain's product catalog (SKUs) with name, brand, category and price."""
    q = (query or "").lower()
    out = [
        p
        for p in w.products.values()
        if (category is None or p.category == category) and (q in p.name.lower() or q in p.brand.lower())
    ]
    return ProductList(products=out, total=len(out))


@TOOLS.tool(read_only=True)
def check_stock(
    w: RetailWorld,
    sku: Sku,
    city: Annotated[str | None, Field(description="Only stores in this city")] = None,
    in_stock_only: Annotated[bool, Field(description="Only stores with at least one unit available")] = False,
) -> StockReport:
    """Check how many units of a SKU each store has on hand, reserved and available."""
    p = _product(w, sku)
    rows = []
    for s in w.stores.values():
        e = w.stock[s.store_id].get(sku)
        if e is None or (city is not None and s.city.lower() != city.lower()):
            continue
        avail = e.on_hand - e.reserved
        if in_stock_only and avail <= 0:
            continue
        rows.append(
            StoreStock(
                store_id=s.store_id,
                store_name=s.name,
                city=s.city,
                store_status=s.status,
                on_hand=e.on_hand,
                reserved=e.reserved,
                available=avail,
            )
        )
    return StockReport(sku=sku, name=p.name, stores=rows, total_available=sum(r.available for r in rows))


@TOOLS.tool(read_only=True)
def get_store_inventory(
    w: RetailWorld,
    store_id: StoreId,
    category: Annotated[Category | None, Field(description="Only products in this category")] = None,
    max_available: Annotated[
        int | None, Field(description="Only lines with at most this many units available (low-stock view)", ge=0)
    ] = None,
) -> Inventory:
    """List every SKU a store carries with on-hand, reserved and available units."""
    _store(w, store_id)
    out = []
    for sku, e in w.stock[store_id].items():
        p = w.products[sku]
        avail = e.on_hand - e.reserved
        if (category is not None and p.category != category) or (max_available is not None and avail > max_available):
            continue
        out.append(
            InventoryLine(
                sku=sku,
                name=p.name,
                category=p.category,
                price=p.price,
                on_hand=e.on_hand,
                reserved=e.reserved,
                available=avail,
            )
        )
    return Inventory(store_id=store_id, items=out, total=len(out))


@TOOLS.tool()
def transfer_stock(
    w: RetailWorld,
    from_store_id: Annotated[str, Field(description="Store id sending the units (from list_stores)")],
    to_store_id: Annotated[str, Field(description="Store id receiving the units (from list_stores)")],
    sku: Sku,
    quantity: Annotated[int, Field(description="Units to move", ge=1, le=500)],
) -> Transfer:
    """Ship units of a SKU from one store to another. Units leave the sender now and arrive when the transfer is received."""
    if from_store_id == to_store_id:
        raise InvalidArgument("from_store_id and to_store_id must be different stores")
    src, dst = _store(w, from_store_id, "from_store_id"), _store(w, to_store_id, "to_store_id")
    p = _product(w, sku)
    for s in (src, dst):
        if s.status != "open":
            raise StateConflict(
                f"store {s.store_id} ({s.name}) is temporarily closed and cannot send or receive transfers"
            )
    e = _entry(w, from_store_id, sku)
    avail = 0 if e is None else e.on_hand - e.reserved
    if e is None or avail < quantity:
        raise StateConflict(
            f"insufficient stock: store {from_store_id} has {avail} units of {sku} ({p.name}) available "
            f"(on hand minus reserved), requested {quantity}; check_stock shows other stores"
        )
    e.on_hand -= quantity
    tid = w.new_id("TRF")
    t = Transfer(
        transfer_id=tid,
        sku=sku,
        from_store_id=from_store_id,
        to_store_id=to_store_id,
        quantity=quantity,
        status="in_transit",
        created_at=NOW,
    )
    w.transfers[tid] = t
    return t


@TOOLS.tool(read_only=True)
def list_transfers(
    w: RetailWorld,
    store_id: Annotated[str | None, Field(description="Only transfers sent from or to this store id")] = None,
    status: Annotated[TransferStatus | None, Field(description="Only transfers in this status")] = None,
) -> TransferList:
    """List stock transfers between stores, newest first."""
    if store_id is not None:
        _store(w, store_id)
    out = [
        t
        for t in w.transfers.values()
        if (store_id is None or store_id in (t.from_store_id, t.to_store_id)) and (status is None or t.status == status)
    ]
    out.sort(key=lambda t: (t.created_at, t.transfer_id), reverse=True)
    return TransferList(transfers=out, total=len(out))


@TOOLS.tool(idempotent=True)
def receive_transfer(
    w: RetailWorld,
    transfer_id: Annotated[
        str, Field(description="Id of an in-transit transfer, e.g. 'TRF-0004' (from list_transfers)")
    ],
) -> Transfer:
    """Mark an in-transit transfer as received: its units are added to the destination store's stock."""
    t = w.transfers.get(transfer_id)
    if t is None:
        raise not_found("transfer", transfer_id, "list_transfers shows transfer ids")
    if t.status == "received":
        raise StateConflict(f"transfer {transfer_id} was already received at {t.received_at}")
    dst = w.stores[t.to_store_id]
    if dst.status != "open":
        raise StateConflict(f"store {dst.store_id} ({dst.name}) is temporarily closed and cannot receive deliveries")
    e = w.stock[t.to_store_id].setdefault(t.sku, StockEntry(on_hand=0))
    e.on_hand += t.quantity
    t.status, t.received_at = "received", NOW
    return t


@TOOLS.tool()
def reserve_for_pickup(
    w: RetailWorld,
    store_id: StoreId,
    sku: Sku,
    quantity: Annotated[int, Field(description="Units to hold for the customer", ge=1, le=20)],
    customer_name: Annotated[
        str, Field(description="Full name of the customer collecting", min_length=2, max_length=80)
    ],
    customer_phone: Annotated[
        str, Field(description="Customer phone number, e.g. '+1-555-123-4567'", pattern=r"^\+?[0-9][0-9 \-]{6,19}$")
    ],
    pickup_date: Annotated[
        str, Field(description=f"Pickup day (YYYY-MM-DD), today to {MAX_PICKUP_DAYS} days ahead", pattern=DATE)
    ],
    pickup_time: Annotated[
        str, Field(description="Pickup time HH:MM (24h), within the store's hours that day", pattern=TIME)
    ],
) -> Reservation:
    """Hold units of a SKU at a store for a customer to collect at a given date and time."""
    s = _store(w, store_id)
    p = _product(w, sku)
    try:
        last = _days(TODAY, MAX_PICKUP_DAYS)
        _weekday(pickup_date)
    except ValueError:
        raise InvalidArgument(f"pickup_date {pickup_date!r} is not a valid calendar date") from None
    if not TODAY <= pickup_date <= last:
        raise InvalidArgument(f"pickup_date {pickup_date} must be between {TODAY} and {last}")
    if s.status != "open":
        raise StateConflict(f"store {store_id} ({s.name}) is temporarily closed; choose another store (list_stores)")
    span = s.hours[_weekday(pickup_date)]
    if span == "closed":
        raise StateConflict(
            f"store {store_id} ({s.name}) is closed on {_weekday(pickup_date).capitalize()}s; pick another pickup_date (get_store_hours)"
        )
    if not _open_at(s, pickup_date, pickup_time):
        raise StateConflict(
            f"store {store_id} ({s.name}) is closed at {pickup_time} on {pickup_date}; its hours that day are {span}"
        )
    if pickup_date == TODAY and pickup_time < NOW_TIME:
        raise InvalidArgument(f"pickup_time {pickup_time} today is already past; it is now {NOW_TIME}")
    e = _entry(w, store_id, sku)
    avail = 0 if e is None else e.on_hand - e.reserved
    if e is None or avail < quantity:
        raise StateConflict(
            f"insufficient stock: store {store_id} has {avail} units of {sku} ({p.name}) available, requested {quantity}; "
            "check_stock shows other stores, or transfer_stock can bring units in"
        )
    e.reserved += quantity
    rid = w.new_id("RSV")
    r = Reservation(
        reservation_id=rid,
        store_id=store_id,
        sku=sku,
        quantity=quantity,
        customer_name=customer_name,
        customer_phone=customer_phone,
        pickup_date=pickup_date,
        pickup_time=pickup_time,
        status="active",
        created_at=NOW,
    )
    w.reservations[rid] = r
    return r


@TOOLS.tool(read_only=True)
def list_reservations(
    w: RetailWorld,
    store_id: Annotated[str | None, Field(description="Only reservations at this store id")] = None,
    status: Annotated[ReservationStatus | None, Field(description="Only reservations in this status")] = None,
    customer_name: Annotated[str | None, Field(description="Case-insensitive part of the customer's name")] = None,
) -> ReservationList:
    """List pickup reservations, filtered by store, status or customer."""
    if store_id is not None:
        _store(w, store_id)
    q = (customer_name or "").lower()
    out = [
        r
        for r in w.reservations.values()
        if (store_id is None or r.store_id == store_id)
        and (status is None or r.status == status)
        and q in r.customer_name.lower()
    ]
    return ReservationList(reservations=out, total=len(out))


@TOOLS.tool(destructive=True, idempotent=True)
def cancel_reservation(
    w: RetailWorld,
    reservation_id: Annotated[
        str, Field(description="Id of an active reservation, e.g. 'RSV-0005' (from list_reservations)")
    ],
) -> Reservation:
    """Cancel an active pickup reservation; the held units become available again."""
    r = w.reservations.get(reservation_id)
    if r is None:
        raise not_found("reservation", reservation_id, "list_reservations shows reservation ids")
    if r.status != "active":
        raise StateConflict(
            f"reservation {reservation_id} is already {r.status}; only active reservations can be cancelled"
        )
    e = w.stock[r.store_id][r.sku]
    e.reserved = max(0, e.reserved - r.quantity)
    r.status = "cancelled"
    return r


def build(seed: int = 0) -> EnvServer[RetailWorld]:
    """A fresh retail_chain server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "retail_chain",
        seeder=seed_world,
        category="commerce",
        description="Store-chain inventory: stores in several cities with opening hours, stock per store and SKU, "
        "transfers between stores and reservations for in-store pickup.",
        tools=TOOLS,
        default_seed=seed,
    )
