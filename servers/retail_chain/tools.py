"""retail_chain tools, list_stores to cancel_reservation (in tools/list order)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.kit import InvalidArgument, StateConflict, not_found
from servers.retail_chain.world import (
    DATE,
    MAX_PICKUP_DAYS,
    NOW,
    NOW_TIME,
    TIME,
    TODAY,
    TOOLS,
    Category,
    Inventory,
    InventoryLine,
    ProductList,
    Reservation,
    ReservationList,
    ReservationStatus,
    RetailWorld,
    Sku,
    StockEntry,
    StockReport,
    StoreDetail,
    StoreId,
    StoreList,
    StoreStock,
    StoreSummary,
    Transfer,
    TransferList,
    TransferStatus,
    _days,
    _entry,
    _open_at,
    _product,
    _store,
    _weekday,
)


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
