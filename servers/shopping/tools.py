"""shopping tools, list_categories to remove_from_wishlist (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import StateConflict, not_found
from servers.shopping.world import (
    DATE,
    RETURN_WINDOW_DAYS,
    TODAY,
    TOOLS,
    Address,
    AddressList,
    Cart,
    CategoryList,
    CouponCode,
    CouponList,
    CouponView,
    Order,
    OrderId,
    OrderItem,
    OrderList,
    OrderStatus,
    OrderSummary,
    PaymentMethod,
    Product,
    ProductId,
    ProductList,
    Quantity,
    RemovedAddress,
    ReturnReason,
    ShopWorld,
    SortBy,
    Wishlist,
    WishlistItem,
    _address,
    _cart_view,
    _coupon_problem,
    _days,
    _money,
    _order,
    _product,
)


@TOOLS.tool(read_only=True)
def list_categories(w: ShopWorld) -> CategoryList:
    """List the store's product categories with how many products each holds."""
    out = list(w.categories.values())
    return CategoryList(categories=out, total=len(out))


@TOOLS.tool(read_only=True)
def search_products(
    w: ShopWorld,
    query: Annotated[
        str | None, Field(description="Words to look for in the product name, brand or description")
    ] = None,
    category_id: Annotated[
        str | None, Field(description="Only products in this category id, e.g. 'CAT-01' (from list_categories)")
    ] = None,
    min_price: Annotated[float | None, Field(description="Lowest price", ge=0)] = None,
    max_price: Annotated[float | None, Field(description="Highest price", ge=0)] = None,
    in_stock_only: Annotated[bool, Field(description="Hide products that are out of stock")] = False,
    sort_by: Annotated[SortBy, Field(description="Result order")] = "relevance",
    limit: Annotated[int, Field(description="Maximum number of products returned", ge=1, le=100)] = 20,
) -> ProductList:
    """Search the catalog by keywords, category, price range and stock, sorted as requested."""
    if category_id is not None and category_id not in w.categories:
        raise not_found("category", category_id, "list_categories shows valid category ids")
    words = (query or "").lower().split()
    scored = []
    for p in w.products.values():
        text = f"{p.name} {p.brand} {p.description}".lower()
        hits = sum(1 for t in words if t in text)
        if words and hits == 0:
            continue
        if (category_id is not None and p.category_id != category_id) or (in_stock_only and p.stock == 0):
            continue
        if (min_price is not None and p.price < min_price) or (max_price is not None and p.price > max_price):
            continue
        scored.append((hits, p))
    if sort_by == "price_asc":
        scored.sort(key=lambda x: (x[1].price, x[1].product_id))
    elif sort_by == "price_desc":
        scored.sort(key=lambda x: (-x[1].price, x[1].product_id))
    elif sort_by == "rating":
        scored.sort(key=lambda x: (-x[1].rating, x[1].product_id))
    else:
        scored.sort(key=lambda x: (-x[0], x[1].product_id))
    out = [p for _, p in scored]
    return ProductList(products=out[:limit], total=len(out))


@TOOLS.tool(read_only=True)
def get_product(w: ShopWorld, product_id: ProductId) -> Product:
    """Get a product's details: price, stock left, rating and description."""
    return _product(w, product_id)


# ------------------------------------------------------------------ cart
@TOOLS.tool(read_only=True)
def view_cart(w: ShopWorld) -> Cart:
    """Show the cart: items, subtotal, applied coupon and its discount, shipping, tax and total."""
    return _cart_view(w)


@TOOLS.tool()
def add_to_cart(w: ShopWorld, product_id: ProductId, quantity: Quantity = 1) -> Cart:
    """Add units of a product to the cart (added to any units already there). Fails if not enough is in stock."""
    p = _product(w, product_id)
    want = w.cart.get(product_id, 0) + quantity
    if p.stock == 0:
        raise StateConflict(f"product {product_id} ({p.name}) is out of stock; add_to_wishlist keeps it for later")
    if want > p.stock:
        raise StateConflict(f"only {p.stock} units of product {product_id} are in stock; the cart would hold {want}")
    w.cart[product_id] = want
    return _cart_view(w)


@TOOLS.tool(idempotent=True)
def update_cart_item(
    w: ShopWorld,
    product_id: ProductId,
    quantity: Annotated[int, Field(description="New number of units for this cart line", ge=1, le=99)],
) -> Cart:
    """Set the quantity of a product already in the cart."""
    if product_id not in w.cart:
        raise not_found("cart item", product_id, "view_cart shows the product ids in the cart")
    p = _product(w, product_id)
    if quantity > p.stock:
        raise StateConflict(f"only {p.stock} units of product {product_id} are in stock, requested {quantity}")
    w.cart[product_id] = quantity
    return _cart_view(w)


@TOOLS.tool(destructive=True, idempotent=True)
def remove_from_cart(w: ShopWorld, product_id: ProductId) -> Cart:
    """Remove a product line from the cart."""
    if product_id not in w.cart:
        raise not_found("cart item", product_id, "view_cart shows the product ids in the cart")
    del w.cart[product_id]
    return _cart_view(w)


@TOOLS.tool(destructive=True, idempotent=True)
def clear_cart(w: ShopWorld) -> Cart:
    """Remove every item and the applied coupon from the cart."""
    w.cart.clear()
    w.cart_coupon = None
    return _cart_view(w)


# ------------------------------------------------------------------ coupons
@TOOLS.tool(read_only=True)
def list_coupons(
    w: ShopWorld,
    include_expired: Annotated[bool, Field(description="Also list coupons that have already expired")] = False,
) -> CouponList:
    """List the coupon codes available to the shopper with discount, minimum spend and expiry date."""
    out = [
        CouponView(**c.model_dump(), expired=c.expires_on < TODAY)
        for c in w.coupons.values()
        if include_expired or c.expires_on >= TODAY
    ]
    return CouponList(coupons=out, total=len(out))


@TOOLS.tool(idempotent=True)
def apply_coupon(w: ShopWorld, code: CouponCode) -> Cart:
    """Apply a coupon code to the cart. It must not be expired and the cart must meet its minimum spend."""
    c = w.coupons.get(code.strip().upper())
    if c is None:
        raise not_found("coupon", code, "list_coupons shows valid codes")
    if not w.cart:
        raise StateConflict("the cart is empty; add_to_cart before applying a coupon")
    problem = _coupon_problem(w, c, w.cart)
    if problem:
        raise StateConflict(problem)
    w.cart_coupon = c.code
    return _cart_view(w)


@TOOLS.tool(idempotent=True)
def remove_coupon(w: ShopWorld) -> Cart:
    """Remove the coupon applied to the cart."""
    if w.cart_coupon is None:
        raise StateConflict("no coupon is applied to the cart")
    w.cart_coupon = None
    return _cart_view(w)


# ------------------------------------------------------------------ checkout and orders
@TOOLS.tool()
def checkout(
    w: ShopWorld,
    address_id: Annotated[str, Field(description="Shipping address id, e.g. 'ADR-0001' (from list_addresses)")],
    payment_method: Annotated[
        PaymentMethod, Field(description="How to pay; 'gift_card' needs enough gift card balance")
    ],
) -> Order:
    """Place an order for everything in the cart, shipping to a saved address. Empties the cart and reserves stock."""
    addr = _address(w, address_id)
    if not w.cart:
        raise StateConflict("the cart is empty; add_to_cart before checking out")
    for pid, q in w.cart.items():
        p = w.products[pid]
        if p.stock < q:
            raise StateConflict(
                f"product {pid} ({p.name}) is out of stock: {p.stock} left, the cart holds {q}; update_cart_item or remove_from_cart"
            )
    cart = _cart_view(w)
    if cart.coupon_code is not None and cart.coupon_note is not None:
        raise StateConflict(f"{cart.coupon_note}; remove_coupon or change the cart before checkout")
    if payment_method == "gift_card" and w.shopper.gift_card_balance < cart.total:
        raise StateConflict(
            f"gift card balance {w.shopper.gift_card_balance:.2f} does not cover the total {cart.total:.2f}; choose another payment_method"
        )
    oid = w.new_id("ORD", 5)
    order = Order(
        order_id=oid,
        status="processing",
        items=[
            OrderItem(product_id=i.product_id, name=i.name, unit_price=i.unit_price, quantity=i.quantity)
            for i in cart.items
        ],
        subtotal=cart.subtotal,
        discount=cart.discount,
        shipping=cart.shipping,
        tax=cart.tax,
        total=cart.total,
        coupon_code=cart.coupon_code,
        address_id=addr.address_id,
        payment_method=payment_method,
        placed_on=TODAY,
    )
    for pid, q in w.cart.items():
        w.products[pid].stock -= q
    if payment_method == "gift_card":
        w.shopper.gift_card_balance = _money(w.shopper.gift_card_balance - cart.total)
    w.cart.clear()
    w.cart_coupon = None
    w.orders[oid] = order
    return order


@TOOLS.tool(read_only=True)
def list_orders(
    w: ShopWorld,
    status: Annotated[OrderStatus | None, Field(description="Only orders in this status")] = None,
    placed_after: Annotated[
        str | None, Field(description="Only orders placed on or after this date (YYYY-MM-DD)", pattern=DATE)
    ] = None,
) -> OrderList:
    """List the shopper's orders, newest first, optionally by status or date."""
    out = [
        OrderSummary(
            order_id=o.order_id,
            status=o.status,
            item_count=sum(i.quantity for i in o.items),
            total=o.total,
            placed_on=o.placed_on,
            delivered_on=o.delivered_on,
        )
        for o in w.orders.values()
        if (status is None or o.status == status) and (placed_after is None or o.placed_on >= placed_after)
    ]
    out.sort(key=lambda o: (o.placed_on, o.order_id), reverse=True)
    return OrderList(orders=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_order(w: ShopWorld, order_id: OrderId) -> Order:
    """Get an order's items, totals, shipping address, status and tracking number."""
    return _order(w, order_id)


@TOOLS.tool(destructive=True)
def cancel_order(w: ShopWorld, order_id: OrderId) -> Order:
    """Cancel an order that has not shipped yet; its items go back into stock and the payment is refunded."""
    o = _order(w, order_id)
    if o.status != "processing":
        hint = " (use return_order once it is delivered)" if o.status in ("shipped", "delivered") else ""
        raise StateConflict(
            f"order {order_id} is {o.status} and can no longer be cancelled; only processing orders can be{hint}"
        )
    for i in o.items:
        if i.product_id in w.products:
            w.products[i.product_id].stock += i.quantity
    if o.payment_method == "gift_card":
        w.shopper.gift_card_balance = _money(w.shopper.gift_card_balance + o.total)
    o.status, o.refund_amount = "cancelled", o.total
    return o


@TOOLS.tool()
def return_order(
    w: ShopWorld,
    order_id: OrderId,
    reason: Annotated[ReturnReason, Field(description="Why the order is returned")],
) -> Order:
    """Return a delivered order within 30 days of delivery; the items are refunded (shipping is not)."""
    o = _order(w, order_id)
    if o.status != "delivered":
        raise StateConflict(f"order {order_id} is {o.status}; only delivered orders can be returned")
    last_day = _days(o.delivered_on or o.placed_on, RETURN_WINDOW_DAYS)
    if last_day < TODAY:
        raise StateConflict(
            f"order {order_id} was delivered on {o.delivered_on}; the 30-day return window closed on {last_day}"
        )
    o.status, o.return_id = "returned", w.new_id("RET")
    o.refund_amount = _money(o.total - o.shipping)
    for i in o.items:
        if reason != "damaged" and i.product_id in w.products:
            w.products[i.product_id].stock += i.quantity
    return o


# ------------------------------------------------------------------ addresses
@TOOLS.tool(read_only=True)
def list_addresses(w: ShopWorld) -> AddressList:
    """List the shopper's saved shipping addresses; one is the default."""
    out = list(w.addresses.values())
    return AddressList(addresses=out, total=len(out))


@TOOLS.tool()
def add_address(
    w: ShopWorld,
    label: Annotated[str, Field(description="Short name for the address, e.g. 'Home'", min_length=1, max_length=30)],
    recipient: Annotated[str, Field(description="Full name of the person receiving parcels", min_length=2)],
    street: Annotated[str, Field(description="Street and number", min_length=3)],
    city: Annotated[str, Field(description="City", min_length=2)],
    postal_code: Annotated[str, Field(description="5-digit postal code", pattern=r"^\d{5}$")],
    country: Annotated[
        Literal["US", "CA", "GB", "IE", "PT", "ES", "FR", "DE", "NO"], Field(description="ISO country code")
    ] = "US",
    make_default: Annotated[bool, Field(description="Make this the default shipping address")] = False,
) -> Address:
    """Save a new shipping address."""
    if any(a.label.lower() == label.lower() for a in w.addresses.values()):
        raise StateConflict(f"an address labelled {label!r} already exists; choose another label")
    aid = w.new_id("ADR")
    if make_default or not w.addresses:
        for a in w.addresses.values():
            a.is_default = False
    addr = Address(
        address_id=aid,
        label=label,
        recipient=recipient,
        street=street,
        city=city,
        postal_code=postal_code,
        country=country,
        is_default=make_default or not w.addresses,
    )
    w.addresses[aid] = addr
    return addr


@TOOLS.tool(idempotent=True)
def set_default_address(
    w: ShopWorld, address_id: Annotated[str, Field(description="Address id to make the default (from list_addresses)")]
) -> Address:
    """Make a saved address the default shipping address."""
    addr = _address(w, address_id)
    for a in w.addresses.values():
        a.is_default = a.address_id == address_id
    return addr


@TOOLS.tool(destructive=True)
def delete_address(
    w: ShopWorld, address_id: Annotated[str, Field(description="Address id to delete (from list_addresses)")]
) -> RemovedAddress:
    """Delete a saved address. The default address cannot be deleted while other addresses exist."""
    addr = _address(w, address_id)
    if any(o.address_id == address_id and o.status in ("processing", "shipped") for o in w.orders.values()):
        raise StateConflict(f"address {address_id} is used by an order that has not been delivered yet")
    if addr.is_default and len(w.addresses) > 1:
        raise StateConflict(f"address {address_id} is the default; set_default_address on another address first")
    del w.addresses[address_id]
    return RemovedAddress(address_id=address_id, removed=True)


# ------------------------------------------------------------------ wishlist
@TOOLS.tool(read_only=True)
def view_wishlist(w: ShopWorld) -> Wishlist:
    """Show the wishlist with current prices and whether each product is in stock."""
    out = [
        WishlistItem(
            product_id=pid,
            name=w.products[pid].name,
            price=w.products[pid].price,
            in_stock=w.products[pid].stock > 0,
            added_on=d,
        )
        for pid, d in w.wishlist.items()
    ]
    return Wishlist(items=out, total=len(out))


@TOOLS.tool(idempotent=True)
def add_to_wishlist(w: ShopWorld, product_id: ProductId) -> Wishlist:
    """Save a product to the wishlist (also works for out-of-stock products)."""
    _product(w, product_id)
    if product_id in w.wishlist:
        raise StateConflict(f"product {product_id} is already on the wishlist")
    w.wishlist[product_id] = TODAY
    return view_wishlist(w)


@TOOLS.tool(destructive=True, idempotent=True)
def remove_from_wishlist(w: ShopWorld, product_id: ProductId) -> Wishlist:
    """Remove a product from the wishlist."""
    if product_id not in w.wishlist:
        raise not_found("wishlist item", product_id, "view_wishlist shows the saved product ids")
    del w.wishlist[product_id]
    return view_wishlist(w)
