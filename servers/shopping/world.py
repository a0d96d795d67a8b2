"""shopping: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import ToolSet, World, not_found

OrderStatus = Literal["processing", "shipped", "delivered", "cancelled", "returned"]
PaymentMethod = Literal["credit_card", "paypal", "gift_card"]
ReturnReason = Literal["damaged", "wrong_item", "not_as_described", "no_longer_needed", "other"]
SortBy = Literal["relevance", "price_asc", "price_desc", "rating"]
TODAY = REFERENCE_DAY
RETURN_WINDOW_DAYS = 30
FREE_SHIPPING_OVER = 50.0
SHIPPING_FEE = 5.99
TAX_RATE = 0.08
DATE = r"^\d{4}-\d{2}-\d{2}$"

# category name -> (adjectives, nouns with base price)
CATALOG = {
    "Electronics": (
        ["Wireless", "Compact", "Pro", "Smart", "Ultra"],
        [
            ("Earbuds", 79),
            ("Bluetooth Speaker", 59),
            ("USB-C Charger", 25),
            ("Smartwatch", 199),
            ("Webcam", 69),
            ("E-Reader", 129),
        ],
    ),
    "Home & Kitchen": (
        ["Stainless", "Ceramic", "Nonstick", "Classic", "Modern"],
        [
            ("Chef Knife", 45),
            ("Dutch Oven", 89),
            ("Coffee Grinder", 39),
            ("Frying Pan", 34),
            ("Kettle", 29),
            ("Blender", 99),
        ],
    ),
    "Books": (
        ["Illustrated", "Collected", "Annotated", "Pocket", "Complete"],
        [
            ("Cookbook", 28),
            ("Atlas of Birds", 35),
            ("Mystery Novel", 15),
            ("Poetry Anthology", 19),
            ("History of Sail", 32),
        ],
    ),
    "Sports & Outdoors": (
        ["Trail", "Lightweight", "Insulated", "Waterproof", "Pro"],
        [
            ("Running Shoes", 119),
            ("Yoga Mat", 32),
            ("Water Bottle", 22),
            ("Daypack", 64),
            ("Tent", 249),
            ("Headlamp", 29),
        ],
    ),
    "Toys & Games": (
        ["Deluxe", "Junior", "Classic", "Family", "Mini"],
        [("Puzzle 1000pc", 24), ("Board Game", 39), ("Building Blocks Set", 49), ("Plush Fox", 18), ("Kite", 27)],
    ),
    "Beauty": (
        ["Organic", "Hydrating", "Gentle", "Daily", "Botanical"],
        [("Face Serum", 36), ("Shampoo", 14), ("Sunscreen SPF50", 19), ("Lip Balm Set", 12), ("Body Lotion", 17)],
    ),
    "Pet Supplies": (
        ["Durable", "Cozy", "Orthopedic", "Natural", "Travel"],
        [("Dog Bed", 59), ("Cat Tree", 89), ("Chew Toy", 11), ("Pet Carrier", 45), ("Grain-Free Kibble 5kg", 38)],
    ),
    "Office": (
        ["Ergonomic", "Recycled", "Premium", "Slim", "Adjustable"],
        [
            ("Desk Lamp", 42),
            ("Notebook 3-pack", 16),
            ("Monitor Stand", 54),
            ("Gel Pens 12-pack", 13),
            ("Desk Chair", 229),
        ],
    ),
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
CouponCode = Annotated[
    str, Field(description="Coupon code, e.g. 'WELCOME10' (from list_coupons)", min_length=3, max_length=20)
]


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
    return _money(
        sum(
            w.products[pid].price * q
            for pid, q in items.items()
            if c.category_id is None or w.products[pid].category_id == c.category_id
        )
    )


def _discount(w: ShopWorld, c: Coupon, items: dict[str, int]) -> float:
    eligible = _eligible_subtotal(w, c, items)
    d = eligible * c.value / 100 if c.discount_type == "percent" else c.value
    return _money(min(d, eligible))


def _cart_view(w: ShopWorld) -> Cart:
    items = [
        CartItem(
            product_id=pid,
            name=w.products[pid].name,
            unit_price=w.products[pid].price,
            quantity=q,
            line_total=_money(w.products[pid].price * q),
        )
        for pid, q in w.cart.items()
    ]
    sub = _money(sum(i.line_total for i in items))
    disc, note = 0.0, None
    if w.cart_coupon is not None:
        c = w.coupons[w.cart_coupon]
        note = _coupon_problem(w, c, w.cart)
        if note is None:
            disc = _discount(w, c, w.cart)
    ship = 0.0 if not items or sub >= FREE_SHIPPING_OVER else SHIPPING_FEE
    tax = _money((sub - disc) * TAX_RATE)
    return Cart(
        items=items,
        item_count=sum(w.cart.values()),
        subtotal=sub,
        coupon_code=w.cart_coupon,
        discount=disc,
        shipping=ship,
        tax=tax,
        total=_money(sub - disc + ship + tax),
        coupon_note=note,
    )


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[ShopWorld] = ToolSet()
