"""food_delivery tools, list_customers to rate_order (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.food_delivery.world import (
    COURIERS,
    EXCLUSIVE_GROUPS,
    NEXT_STATUS,
    TOOLS,
    Address,
    Cart,
    CartItem,
    CartView,
    Cuisine,
    CustomerId,
    CustomerList,
    CustomerProfile,
    Dietary,
    FoodWorld,
    Menu,
    MenuCategory,
    Order,
    OrderId,
    OrderList,
    OrderRating,
    OrderStatus,
    OrderSummary,
    PaymentMethod,
    PromoInfo,
    PromoList,
    RestaurantDetail,
    RestaurantId,
    RestaurantList,
    StatusChange,
    Zone,
    _cart,
    _check_promo,
    _customer,
    _money,
    _next_opening,
    _open_at,
    _order,
    _plus,
    _restaurant,
    _summary,
    _view,
)
from servers.kit import InvalidArgument, PermissionDenied, StateConflict, not_found


@TOOLS.tool(read_only=True)
def list_customers(
    w: FoodWorld,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the customer's name")] = None,
) -> CustomerList:
    """List customers with their saved delivery addresses (address_id, zone) and wallet balance."""
    out = [
        CustomerProfile(**c.model_dump(), addresses=[a for a in w.addresses.values() if a.customer_id == c.customer_id])
        for c in w.customers.values()
        if name_contains is None or name_contains.lower() in c.name.lower()
    ]
    return CustomerList(customers=out, total=len(out))


@TOOLS.tool()
def add_address(
    w: FoodWorld,
    customer_id: CustomerId,
    label: Annotated[Literal["home", "work", "other"], Field(description="What kind of address this is")],
    street: Annotated[
        str, Field(description="Street and house number, e.g. '12 Market St'", min_length=4, max_length=120)
    ],
    postcode: Annotated[str, Field(description="5-digit postcode", pattern=r"^\d{5}$")],
    zone: Annotated[Zone, Field(description="Delivery zone (neighbourhood) of the address")],
    instructions: Annotated[
        str | None, Field(description="Note for the courier, e.g. 'Ring twice'", max_length=200)
    ] = None,
) -> Address:
    """Save a new delivery address for a customer."""
    _customer(w, customer_id)
    if any(
        a.customer_id == customer_id and a.street.lower() == street.lower() and a.postcode == postcode
        for a in w.addresses.values()
    ):
        raise StateConflict(f"customer {customer_id} already has the address {street!r} {postcode}")
    aid = w.new_id("ADR")
    a = Address(
        address_id=aid,
        customer_id=customer_id,
        label=label,
        street=street,
        postcode=postcode,
        zone=zone,
        instructions=instructions,
    )
    w.addresses[aid] = a
    return a


# ---------------------------------------------------------------- restaurants and menus
@TOOLS.tool(read_only=True)
def search_restaurants(
    w: FoodWorld,
    cuisine: Annotated[Cuisine | None, Field(description="Only restaurants of this cuisine")] = None,
    address_id: Annotated[
        str | None, Field(description="Only restaurants that deliver to this address id (from list_customers)")
    ] = None,
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
    out = [
        _summary(w, r)
        for r in w.restaurants.values()
        if (cuisine is None or r.cuisine == cuisine)
        and (zone is None or zone in r.delivery_zones)
        and (open_now is None or _open_at(r, w.clock) == open_now)
        and (min_rating is None or r.rating >= min_rating)
        and (name_contains is None or name_contains.lower() in r.name.lower())
        and (max_delivery_fee is None or r.delivery_fee <= max_delivery_fee)
    ]
    out.sort(key=lambda r: (-r.rating, r.restaurant_id))
    return RestaurantList(restaurants=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_restaurant(w: FoodWorld, restaurant_id: RestaurantId) -> RestaurantDetail:
    """Get a restaurant's details: opening hours, whether it is open now and when it next opens, delivery zones, fees and minimum order."""
    r = _restaurant(w, restaurant_id)
    is_open = _open_at(r, w.clock)
    return RestaurantDetail(
        **r.model_dump(), open_now=is_open, next_opening=None if is_open else _next_opening(r, w.clock)
    )


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
    out = [
        i
        for i in w.items.values()
        if i.restaurant_id == restaurant_id
        and (category is None or i.category == category)
        and (dietary is None or dietary in i.dietary)
        and (not available_only or i.available)
    ]
    return Menu(
        restaurant_id=restaurant_id, restaurant_name=r.name, open_now=_open_at(r, w.clock), items=out, total=len(out)
    )


# ---------------------------------------------------------------- cart
@TOOLS.tool()
def add_to_cart(
    w: FoodWorld,
    customer_id: CustomerId,
    item_id: Annotated[str, Field(description="Menu item id, e.g. 'ITM-0031' (from get_menu)")],
    quantity: Annotated[int, Field(description="How many", ge=1, le=20)] = 1,
    option_ids: Annotated[
        list[str] | None, Field(description="Option ids of this item (from get_menu); at most one per size/spice group")
    ] = None,
) -> CartView:
    """Add a menu item (with options) to the customer's cart. A cart holds items from one restaurant only."""
    cart = _cart(w, customer_id)
    it = w.items.get(item_id)
    if it is None:
        raise not_found("menu item", item_id, "get_menu lists a restaurant's item ids")
    if not it.available:
        raise StateConflict(
            f"item {item_id} ({it.name}) is currently unavailable at {w.restaurants[it.restaurant_id].name}; "
            "get_menu with available_only=true shows what can be ordered"
        )
    if cart.items and cart.restaurant_id != it.restaurant_id:
        cur = w.restaurants[cart.restaurant_id or ""].name
        raise StateConflict(
            f"the cart of {customer_id} holds items from {cur} ({cart.restaurant_id}); "
            f"clear_cart before adding items from {w.restaurants[it.restaurant_id].name}"
        )
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
        cart.items.append(
            CartItem(
                cart_item_id=w.new_id("CI"),
                item_id=item_id,
                name=it.name,
                quantity=quantity,
                option_ids=key,
                option_names=[by_id[o].name for o in key],
                unit_price=unit,
                line_total=_money(unit * quantity),
            )
        )
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
    restaurant_id: Annotated[
        str | None, Field(description="Only codes usable at this restaurant id (plus site-wide codes)")
    ] = None,
    include_expired: Annotated[bool, Field(description="Also list expired codes")] = False,
) -> PromoList:
    """List promo codes with their discount, minimum subtotal, restaurant restriction and expiry date."""
    if restaurant_id is not None:
        _restaurant(w, restaurant_id)
    today = w.clock[:10]
    out = [
        PromoInfo(**p.model_dump(exclude={"redeemed_by"}), expired=p.valid_until < today)
        for p in w.promos.values()
        if (include_expired or p.valid_until >= today)
        and (restaurant_id is None or p.restaurant_id in (None, restaurant_id))
    ]
    return PromoList(promotions=out, total=len(out))


@TOOLS.tool(idempotent=True)
def apply_promo_code(
    w: FoodWorld,
    customer_id: CustomerId,
    promo_code: Annotated[
        str, Field(description="Promo code, e.g. 'FREEDEL' (from list_promotions)", min_length=3, max_length=20)
    ],
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
    payment_method: Annotated[
        PaymentMethod,
        Field(
            description="How to pay; 'wallet' needs enough wallet balance, 'cash' needs a restaurant that accepts cash"
        ),
    ],
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
        raise StateConflict(
            f"address {address_id} is outside the delivery zone of {r.name}: it is in {a.zone}, "
            f"the restaurant delivers to {', '.join(r.delivery_zones)}"
        )
    gone = [f"{i.name} ({i.item_id})" for i in cart.items if not w.items[i.item_id].available]
    if gone:
        raise StateConflict(
            f"items no longer available: {', '.join(gone)}; remove them with update_cart_item(quantity=0)"
        )
    view = _view(w, cart)
    if view.subtotal < r.min_order:
        raise StateConflict(
            f"minimum order amount not met: subtotal {view.subtotal:.2f} is below {r.name}'s minimum of "
            f"{r.min_order:.2f}; add {r.min_order - view.subtotal:.2f} more"
        )
    if cart.promo_code:
        _check_promo(w, w.promos[cart.promo_code], cart, view.subtotal)
    total = _money(view.total + tip)
    if payment_method == "cash" and not r.accepts_cash:
        raise InvalidArgument(f"{r.name} does not accept cash; use payment_method 'card' or 'wallet'")
    if payment_method == "wallet":
        if cust.wallet_balance < total:
            raise StateConflict(
                f"wallet balance {cust.wallet_balance:.2f} is less than the order total {total:.2f}; pay by card"
            )
        cust.wallet_balance = _money(cust.wallet_balance - total)
    if cart.promo_code and w.promos[cart.promo_code].single_use:
        w.promos[cart.promo_code].redeemed_by.append(customer_id)
    oid = w.new_id("ORD")
    o = Order(
        order_id=oid,
        customer_id=customer_id,
        restaurant_id=r.restaurant_id,
        restaurant_name=r.name,
        address_id=address_id,
        items=cart.items,
        subtotal=view.subtotal,
        delivery_fee=view.delivery_fee,
        discount=view.discount,
        tip=_money(tip),
        total=total,
        promo_code=cart.promo_code,
        payment_method=payment_method,
        status="placed",
        placed_at=w.clock,
        estimated_delivery_at=_plus(w.clock, r.prep_time_min + 25),
        status_history=[StatusChange(status="placed", at=w.clock)],
        notes=notes,
    )
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
    out = [
        OrderSummary(
            order_id=o.order_id,
            customer_id=o.customer_id,
            restaurant_id=o.restaurant_id,
            restaurant_name=o.restaurant_name,
            status=o.status,
            total=o.total,
            placed_at=o.placed_at,
            estimated_delivery_at=o.estimated_delivery_at,
            rated=o.rating is not None,
        )
        for o in w.orders.values()
        if (customer_id is None or o.customer_id == customer_id)
        and (status is None or o.status == status)
        and (restaurant_id is None or o.restaurant_id == restaurant_id)
    ]
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
    status: Annotated[
        Literal["accepted", "preparing", "ready_for_pickup", "picked_up", "delivered"],
        Field(
            description="Next status (restaurant/courier side): placed -> accepted -> preparing -> ready_for_pickup -> picked_up -> delivered"
        ),
    ],
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
    reason: Annotated[
        Literal["ordered_by_mistake", "taking_too_long", "changed_mind", "wrong_address", "other"],
        Field(description="Why the order is cancelled"),
    ],
) -> Order:
    """Cancel an order before the courier picks it up. Full refund while placed or accepted; once preparing, half the food subtotal is kept."""
    o = _order(w, order_id)
    if o.status in ("picked_up", "delivered"):
        raise StateConflict(
            f"order {order_id} was already {o.status.replace('_', ' ')}"
            + (f" by courier {o.courier_name}" if o.courier_name else "")
            + "; it can no longer be cancelled"
        )
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
