"""shopping: an online store account: catalog, cart, coupons, checkout, orders, returns, addresses and wishlist."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import EnvServer, InvalidArgument, StateConflict, ToolSet, World, not_found
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES

OrderStatus = Literal["processing", "shipped", "delivered", "cancelled", "returned"]
PaymentMethod = Literal["credit_card", "paypal", "gift_card"]
ReturnReason = Literal["damaged", "wrong_item", "not_as_described", "no_longer_needed", "other"]
SortBy = Literal["relevance", "price_asc", "price_desc", "rating"]
TODAY = "2026-03-02"
RETURN_WINDOW_DAYS = 30
FREE_SHIPPING_OVER = 50.0
SHIPPING_FEE = 5.99
TAX_RATE = 0.08
DATE = r"^\d{4}-\d{2}-\d{2}$"

# category name -> (adjectives, nouns with base price)
CATALOG = {
    "Electronics": (["Wireless", "Compact", "Pro", "Smart", "Ultra"],
                    [("Earbuds", 79), ("Bluetooth Speaker", 59), ("USB-C Charger", 25), ("Smartwatch", 199), ("Webcam", 69), ("E-Reader", 129)]),
    "Home & Kitchen": (["Stainless", "Ceramic", "Nonstick", "Classic", "Modern"],
                       [("Chef Knife", 45), ("Dutch Oven", 89), ("Coffee Grinder", 39), ("Frying Pan", 34), ("Kettle", 29), ("Blender", 99)]),
    "Books": (["Illustrated", "Collected", "Annotated", "Pocket", "Complete"],
              [("Cookbook", 28), ("Atlas of Birds", 35), ("Mystery Novel", 15), ("Poetry Anthology", 19), ("History of Sail", 32)]),
    "Sports & Outdoors": (["Trail", "Lightweight", "Insulated", "Waterproof", "Pro"],
                          [("Running Shoes", 119), ("Yoga Mat", 32), ("Water Bottle", 22), ("Daypack", 64), ("Tent", 249), ("Headlamp", 29)]),
    "Toys & Games": (["Deluxe", "Junior", "Classic", "Family", "Mini"],
                     [("Puzzle 1000pc", 24), ("Board Game", 39), ("Building Blocks Set", 49), ("Plush Fox", 18), ("Kite", 27)]),
    "Beauty": (["Organic", "Hydrating", "Gentle", "Daily", "Botanical"],
               [("Face Serum", 36), ("Shampoo", 14), ("Sunscreen SPF50", 19), ("Lip Balm Set", 12), ("Body Lotion", 17)]),
    "Pet Supplies": (["Durable", "Cozy", "Orthopedic", "Natural", "Travel"],
                     [("Dog Bed", 59), ("Cat Tree", 89), ("Chew Toy", 11), ("Pet Carrier", 45), ("Grain-Free Kibble 5kg", 38)]),
    "Office": (["Ergonomic", "Recycled", "Premium", "Slim", "Adjustable"],
               [("Desk Lamp", 42), ("Notebook 3-pack", 16), ("Monitor Stand", 54), ("Gel Pens 12-pack", 13), ("Desk Chair", 229)]),
}
BRANDS = ["Northpeak", "Aurora", "Kestrel", "Lumen", "Tidewater", "Brightside", "Oakridge", "Vela", "Cobalt", "Juniper"]
STREETS = ["Maple Ave", "Harbor St", "Elm Road", "Kings Way", "Riverside Dr", "Station Rd", "Oak Lane", "Market St"]


class Category(BaseModel):
    category_id: str
    name: str
    product_count: int = 0


class Product(BaseModel):
    product_id: str
    name: str
    brand: str
    category_id: str
    price: float
    stock: int
    rating: float
    review_count: int
    description: str


class CartItem(BaseModel):
    product_id: str
    name: str
    unit_price: float
    quantity: int
    line_total: float


class Coupon(BaseModel):
    code: str
    description: str
    discount_type: Literal["percent", "fixed"]
    value: float
    min_spend: float
    expires_on: str
    category_id: str | None = None


class Address(BaseModel):
    address_id: str
    label: str
    recipient: str
    street: str
    city: str
    postal_code: str
    country: str
    is_default: bool = False


class OrderItem(BaseModel):
    product_id: str
    name: str
    unit_price: float
    quantity: int


class Order(BaseModel):
    order_id: str
    status: OrderStatus
    items: list[OrderItem]
    subtotal: float
    discount: float
    shipping: float
    tax: float
    total: float
    coupon_code: str | None = None
    address_id: str
    payment_method: PaymentMethod
    placed_on: str
    shipped_on: str | None = None
    delivered_on: str | None = None
    tracking_number: str | None = None
    return_id: str | None = None
    refund_amount: float | None = None


class Shopper(BaseModel):
    name: str
    email: str
    gift_card_balance: float


class ShopWorld(World):
    shopper: Shopper = Shopper(name="", email="", gift_card_balance=0.0)
    categories: dict[str, Category] = {}
    products: dict[str, Product] = {}
    coupons: dict[str, Coupon] = {}
    cart: dict[str, int] = {}  # product_id -> quantity
    cart_coupon: str | None = None
    addresses: dict[str, Address] = {}
    orders: dict[str, Order] = {}
    wishlist: dict[str, str] = {}  # product_id -> added_on


def _money(x: float) -> float:
    return round(x + 0.0, 2)


def _days(d: str, n: int) -> str:
    return (date.fromisoformat(d) + timedelta(days=n)).isoformat()


def seed_world(rng: random.Random, seed: int) -> ShopWorld:
    w = ShopWorld(seed=seed)
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    w.shopper = Shopper(name=f"{first} {last}", email=f"{first.lower()}.{last.lower()}@example.com",
                        gift_card_balance=_money(rng.choice([0, 15, 25, 40, 75])))
    for cname, (adjs, nouns) in CATALOG.items():
        cat_id = w.new_id("CAT", 2)
        w.categories[cat_id] = Category(category_id=cat_id, name=cname)
        for noun, base in rng.sample(nouns, k=min(len(nouns), 5)):
            for adj in rng.sample(adjs, k=rng.randint(1, 2)):
                pid = w.new_id("PRD")
                brand = rng.choice(BRANDS)
                stock = 0 if rng.random() < 0.15 else rng.choice([1, 2, 3, rng.randint(4, 40), rng.randint(20, 200)])
                w.products[pid] = Product(
                    product_id=pid, name=f"{brand} {adj} {noun}", brand=brand, category_id=cat_id,
                    price=_money(round(base * rng.uniform(0.8, 1.3)) - 0.01),
                    stock=stock, rating=round(rng.uniform(2.8, 5.0), 1), review_count=rng.randint(0, 2500),
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
        w.coupons[code] = Coupon(code=code, description=desc, discount_type=kind, value=val, min_spend=mn, expires_on=exp, category_id=cat)  # type: ignore[arg-type]
    labels = ["Home", "Work", "Parents", "Cabin"]
    for i, label in enumerate(labels[: rng.randint(2, 4)]):
        aid = w.new_id("ADR")
        city = rng.choice(CITIES)
        recipient = w.shopper.name if label != "Parents" else f"{rng.choice(FIRST_NAMES)} {last}"
        w.addresses[aid] = Address(address_id=aid, label=label, recipient=recipient,
                                   street=f"{rng.randint(1, 400)} {rng.choice(STREETS)}", city=city,
                                   postal_code=f"{rng.randint(10000, 99999)}", country="US", is_default=i == 0)
    addr_ids = list(w.addresses)
    in_stock = [p for p in w.products.values() if p.stock > 0]
    for _ in range(14):
        oid = w.new_id("ORD", 5)
        items = [OrderItem(product_id=p.product_id, name=p.name, unit_price=p.price, quantity=rng.randint(1, 2))
                 for p in rng.sample(in_stock, k=rng.randint(1, 3))]
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
        o = Order(order_id=oid, status=status, items=items, subtotal=sub, discount=0.0, shipping=ship, tax=tax,  # type: ignore[arg-type]
                  total=_money(sub + ship + tax), address_id=rng.choice(addr_ids),
                  payment_method=rng.choice(["credit_card", "credit_card", "paypal"]), placed_on=placed)  # type: ignore[arg-type]
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


def _product(w: ShopWorld, product_id: str) -> Product:
    p = w.products.get(product_id)
    if p is None:
        raise not_found("product", product_id, "search_products shows valid product ids")
    return p


def _order(w: ShopWorld, order_id: str) -> Order:
    o = w.orders.get(order_id)
    if o is None:
        raise not_found("order", order_id, "list_orders shows your order ids")
    return o


def _address(w: ShopWorld, address_id: str) -> Address:
    a = w.addresses.get(address_id)
    if a is None:
        raise not_found("address", address_id, "list_addresses shows your saved address ids")
    return a


ProductId = Annotated[str, Field(description="Product id, e.g. 'PRD-0012' (from search_products)")]
OrderId = Annotated[str, Field(description="Order id, e.g. 'ORD-00003' (from list_orders)")]
Quantity = Annotated[int, Field(description="Number of units", ge=1, le=99)]
CouponCode = Annotated[str, Field(description="Coupon code, e.g. 'WELCOME10' (from list_coupons)", min_length=3, max_length=20)]


class CategoryList(BaseModel):
    categories: list[Category]
    total: int


class ProductList(BaseModel):
    products: list[Product]
    total: int


class Cart(BaseModel):
    items: list[CartItem]
    item_count: int
    subtotal: float
    coupon_code: str | None
    discount: float
    shipping: float
    tax: float
    total: float
    coupon_note: str | None = None


class CouponView(BaseModel):
    code: str
    description: str
    discount_type: Literal["percent", "fixed"]
    value: float
    min_spend: float
    expires_on: str
    category_id: str | None
    expired: bool


class CouponList(BaseModel):
    coupons: list[CouponView]
    total: int


class OrderSummary(BaseModel):
    order_id: str
    status: OrderStatus
    item_count: int
    total: float
    placed_on: str
    delivered_on: str | None


class OrderList(BaseModel):
    orders: list[OrderSummary]
    total: int


class AddressList(BaseModel):
    addresses: list[Address]
    total: int


class WishlistItem(BaseModel):
    product_id: str
    name: str
    price: float
    in_stock: bool
    added_on: str


class Wishlist(BaseModel):
    items: list[WishlistItem]
    total: int


class RemovedAddress(BaseModel):
    address_id: str
    removed: bool


def _coupon_problem(w: ShopWorld, c: Coupon, items: dict[str, int]) -> str | None:
    if c.expires_on < TODAY:
        return f"coupon {c.code} expired on {c.expires_on}"
    eligible = _eligible_subtotal(w, c, items)
    if eligible < c.min_spend:
        scope = "" if c.category_id is None else f" in category {c.category_id}"
        return f"coupon {c.code} needs a minimum spend of {c.min_spend:.2f}{scope}; the cart has {eligible:.2f}"
    return None


def _eligible_subtotal(w: ShopWorld, c: Coupon, items: dict[str, int]) -> float:
    return _money(sum(w.products[pid].price * q for pid, q in items.items()
                      if c.category_id is None or w.products[pid].category_id == c.category_id))


def _discount(w: ShopWorld, c: Coupon, items: dict[str, int]) -> float:
    eligible = _eligible_subtotal(w, c, items)
    d = eligible * c.value / 100 if c.discount_type == "percent" else c.value
    return _money(min(d, eligible))


def _cart_view(w: ShopWorld) -> Cart:
    items = [CartItem(product_id=pid, name=w.products[pid].name, unit_price=w.products[pid].price, quantity=q,
                      line_total=_money(w.products[pid].price * q)) for pid, q in w.cart.items()]
    sub = _money(sum(i.line_total for i in items))
    disc, note = 0.0, None
    if w.cart_coupon is not None:
        c = w.coupons[w.cart_coupon]
        note = _coupon_problem(w, c, w.cart)
        if note is None:
            disc = _discount(w, c, w.cart)
    ship = 0.0 if not items or sub >= FREE_SHIPPING_OVER else SHIPPING_FEE
    tax = _money((sub - disc) * TAX_RATE)
    return Cart(items=items, item_count=sum(w.cart.values()), subtotal=sub, coupon_code=w.cart_coupon, discount=disc,
                shipping=ship, tax=tax, total=_money(sub - disc + ship + tax), coupon_note=note)


TOOLS: ToolSet[ShopWorld] = ToolSet()


@TOOLS.tool(read_only=True)
def list_categories(w: ShopWorld) -> CategoryList:
    """List the store's product categories with how many products each holds."""
    out = list(w.categories.values())
    return CategoryList(categories=out, total=len(out))


@TOOLS.tool(read_only=True)
def search_products(
    w: ShopWorld,
    query: Annotated[str | None, Field(description="Words to look for in the product name, brand or description")] = None,
    category_id: Annotated[str | None, Field(description="Only products in this category id, e.g. 'CAT-01' (from list_categories)")] = None,
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
    out = [CouponView(**c.model_dump(), expired=c.expires_on < TODAY) for c in w.coupons.values()
           if include_expired or c.expires_on >= TODAY]
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
    payment_method: Annotated[PaymentMethod, Field(description="How to pay; 'gift_card' needs enough gift card balance")],
) -> Order:
    """Place an order for everything in the cart, shipping to a saved address. Empties the cart and reserves stock."""
    addr = _address(w, address_id)
    if not w.cart:
        raise StateConflict("the cart is empty; add_to_cart before checking out")
    for pid, q in w.cart.items():
        p = w.products[pid]
        if p.stock < q:
            raise StateConflict(f"product {pid} ({p.name}) is out of stock: {p.stock} left, the cart holds {q}; update_cart_item or remove_from_cart")
    cart = _cart_view(w)
    if cart.coupon_code is not None and cart.coupon_note is not None:
        raise StateConflict(f"{cart.coupon_note}; remove_coupon or change the cart before checkout")
    if payment_method == "gift_card" and w.shopper.gift_card_balance < cart.total:
        raise StateConflict(f"gift card balance {w.shopper.gift_card_balance:.2f} does not cover the total {cart.total:.2f}; choose another payment_method")
    oid = w.new_id("ORD", 5)
    order = Order(order_id=oid, status="processing",
                  items=[OrderItem(product_id=i.product_id, name=i.name, unit_price=i.unit_price, quantity=i.quantity) for i in cart.items],
                  subtotal=cart.subtotal, discount=cart.discount, shipping=cart.shipping, tax=cart.tax, total=cart.total,
                  coupon_code=cart.coupon_code, address_id=addr.address_id, payment_method=payment_method, placed_on=TODAY)
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
    placed_after: Annotated[str | None, Field(description="Only orders placed on or after this date (YYYY-MM-DD)", pattern=DATE)] = None,
) -> OrderList:
    """List the shopper's orders, newest first, optionally by status or date."""
    out = [OrderSummary(order_id=o.order_id, status=o.status, item_count=sum(i.quantity for i in o.items), total=o.total,
                        placed_on=o.placed_on, delivered_on=o.delivered_on)
           for o in w.orders.values()
           if (status is None or o.status == status) and (placed_after is None or o.placed_on >= placed_after)]
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
        raise StateConflict(f"order {order_id} is {o.status} and can no longer be cancelled; only processing orders can be{hint}")
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
        raise StateConflict(f"order {order_id} was delivered on {o.delivered_on}; the 30-day return window closed on {last_day}")
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
    country: Annotated[Literal["US", "CA", "GB", "IE", "PT", "ES", "FR", "DE", "NO"], Field(description="ISO country code")] = "US",
    make_default: Annotated[bool, Field(description="Make this the default shipping address")] = False,
) -> Address:
    """Save a new shipping address."""
    if any(a.label.lower() == label.lower() for a in w.addresses.values()):
        raise StateConflict(f"an address labelled {label!r} already exists; choose another label")
    aid = w.new_id("ADR")
    if make_default or not w.addresses:
        for a in w.addresses.values():
            a.is_default = False
    addr = Address(address_id=aid, label=label, recipient=recipient, street=street, city=city, postal_code=postal_code,
                   country=country, is_default=make_default or not w.addresses)
    w.addresses[aid] = addr
    return addr


@TOOLS.tool(idempotent=True)
def set_default_address(w: ShopWorld, address_id: Annotated[str, Field(description="Address id to make the default (from list_addresses)")]) -> Address:
    """Make a saved address the default shipping address."""
    addr = _address(w, address_id)
    for a in w.addresses.values():
        a.is_default = a.address_id == address_id
    return addr


@TOOLS.tool(destructive=True)
def delete_address(w: ShopWorld, address_id: Annotated[str, Field(description="Address id to delete (from list_addresses)")]) -> RemovedAddress:
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
    out = [WishlistItem(product_id=pid, name=w.products[pid].name, price=w.products[pid].price,
                        in_stock=w.products[pid].stock > 0, added_on=d) for pid, d in w.wishlist.items()]
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


def build(seed: int = 0) -> EnvServer[ShopWorld]:
    """A fresh shopping server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "shopping", seeder=seed_world, category="commerce",
        description="Online store for one signed-in shopper: catalog search, cart, coupons, checkout, orders, returns, addresses and wishlist.",
        tools=TOOLS, default_seed=seed,
    )
