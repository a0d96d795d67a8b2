"""food_delivery: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import StateConflict, ToolSet, World, not_found

NOW = f"{REFERENCE_DAY}T19:30:00"  # a Monday evening
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

Day = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
Cuisine = Literal["italian", "japanese", "mexican", "indian", "thai", "american", "mediterranean", "chinese"]
Zone = Literal["Downtown", "Riverside", "Old Town", "Harbor", "University", "Northgate", "Westfield", "Hillcrest"]
ZONES: tuple[str, ...] = (
    "Downtown",
    "Riverside",
    "Old Town",
    "Harbor",
    "University",
    "Northgate",
    "Westfield",
    "Hillcrest",
)
MenuCategory = Literal["starters", "mains", "sides", "desserts", "drinks"]
Dietary = Literal["vegetarian", "vegan", "gluten_free", "spicy"]
OrderStatus = Literal["placed", "accepted", "preparing", "ready_for_pickup", "picked_up", "delivered", "cancelled"]
PaymentMethod = Literal["card", "cash", "wallet"]
DiscountType = Literal["percent", "flat", "free_delivery"]
NEXT_STATUS: dict[str, tuple[str, ...]] = {
    "placed": ("accepted",),
    "accepted": ("preparing",),
    "preparing": ("ready_for_pickup",),
    "ready_for_pickup": ("picked_up",),
    "picked_up": ("delivered",),
    "delivered": (),
    "cancelled": (),
}
EXCLUSIVE_GROUPS = ("size", "spice")

# dish name, category, base price, dietary tags
DISHES: dict[str, list[tuple[str, str, float, tuple[str, ...]]]] = {
    "italian": [
        ("Margherita Pizza", "mains", 11.5, ("vegetarian",)),
        ("Pepperoni Pizza", "mains", 13.0, ()),
        ("Quattro Formaggi Pizza", "mains", 14.0, ("vegetarian",)),
        ("Spaghetti Carbonara", "mains", 13.5, ()),
        ("Penne Arrabbiata", "mains", 11.0, ("vegan", "vegetarian", "spicy")),
        ("Lasagna al Forno", "mains", 14.5, ()),
        ("Caprese Salad", "starters", 8.5, ("vegetarian", "gluten_free")),
        ("Garlic Bread", "sides", 4.5, ("vegetarian",)),
        ("Tiramisu", "desserts", 6.5, ("vegetarian",)),
        ("Panna Cotta", "desserts", 6.0, ("vegetarian", "gluten_free")),
        ("San Pellegrino", "drinks", 2.8, ("vegan", "vegetarian", "gluten_free")),
    ],
    "japanese": [
        ("Salmon Nigiri (6 pcs)", "mains", 9.5, ("gluten_free",)),
        ("California Roll", "mains", 8.5, ()),
        ("Spicy Tuna Roll", "mains", 9.5, ("spicy",)),
        ("Chicken Katsu Curry", "mains", 13.5, ()),
        ("Tonkotsu Ramen", "mains", 14.0, ()),
        ("Vegetable Gyoza", "starters", 6.5, ("vegetarian",)),
        ("Edamame", "starters", 4.5, ("vegan", "vegetarian", "gluten_free")),
        ("Miso Soup", "sides", 3.5, ("vegetarian",)),
        ("Mochi Ice Cream", "desserts", 5.5, ("vegetarian",)),
        ("Iced Green Tea", "drinks", 2.5, ("vegan", "vegetarian", "gluten_free")),
    ],
    "mexican": [
        ("Carne Asada Tacos", "mains", 11.0, ("gluten_free",)),
        ("Al Pastor Tacos", "mains", 10.5, ("gluten_free", "spicy")),
        ("Chicken Burrito", "mains", 12.0, ()),
        ("Veggie Burrito", "mains", 10.5, ("vegetarian",)),
        ("Beef Quesadilla", "mains", 10.0, ()),
        ("Nachos Supreme", "starters", 9.0, ("vegetarian",)),
        ("Guacamole & Chips", "starters", 6.5, ("vegan", "vegetarian", "gluten_free")),
        ("Elote", "sides", 4.5, ("vegetarian", "gluten_free")),
        ("Churros", "desserts", 5.5, ("vegetarian",)),
        ("Horchata", "drinks", 3.5, ("vegetarian", "gluten_free")),
    ],
    "indian": [
        ("Chicken Tikka Masala", "mains", 14.0, ("gluten_free",)),
        ("Lamb Rogan Josh", "mains", 15.5, ("gluten_free", "spicy")),
        ("Palak Paneer", "mains", 12.0, ("vegetarian", "gluten_free")),
        ("Chana Masala", "mains", 11.0, ("vegan", "vegetarian", "gluten_free")),
        ("Chicken Biryani", "mains", 14.5, ("gluten_free",)),
        ("Vegetable Samosas", "starters", 5.5, ("vegetarian",)),
        ("Garlic Naan", "sides", 3.5, ("vegetarian",)),
        ("Basmati Rice", "sides", 3.0, ("vegan", "vegetarian", "gluten_free")),
        ("Gulab Jamun", "desserts", 5.0, ("vegetarian",)),
        ("Mango Lassi", "drinks", 4.0, ("vegetarian", "gluten_free")),
    ],
    "thai": [
        ("Pad Thai", "mains", 12.5, ()),
        ("Green Curry", "mains", 13.0, ("gluten_free", "spicy")),
        ("Massaman Curry", "mains", 13.5, ("gluten_free",)),
        ("Basil Chicken", "mains", 12.5, ("spicy",)),
        ("Tom Yum Soup", "starters", 7.5, ("gluten_free", "spicy")),
        ("Papaya Salad", "starters", 8.0, ("vegan", "vegetarian", "gluten_free", "spicy")),
        ("Spring Rolls", "starters", 6.0, ("vegan", "vegetarian")),
        ("Jasmine Rice", "sides", 2.5, ("vegan", "vegetarian", "gluten_free")),
        ("Mango Sticky Rice", "desserts", 6.5, ("vegan", "vegetarian", "gluten_free")),
        ("Thai Iced Tea", "drinks", 3.5, ("vegetarian",)),
    ],
    "american": [
        ("Classic Cheeseburger", "mains", 11.5, ()),
        ("Bacon BBQ Burger", "mains", 13.5, ()),
        ("Plant Burger", "mains", 13.0, ("vegan", "vegetarian")),
        ("Crispy Chicken Sandwich", "mains", 12.0, ()),
        ("Buffalo Wings", "starters", 10.0, ("gluten_free", "spicy")),
        ("Caesar Salad", "starters", 9.0, ()),
        ("Fries", "sides", 4.0, ("vegan", "vegetarian")),
        ("Onion Rings", "sides", 4.5, ("vegetarian",)),
        ("Chocolate Milkshake", "desserts", 5.5, ("vegetarian",)),
        ("Cola", "drinks", 2.5, ("vegan", "vegetarian", "gluten_free")),
    ],
    "mediterranean": [
        ("Chicken Shawarma Wrap", "mains", 10.5, ()),
        ("Falafel Plate", "mains", 11.0, ("vegan", "vegetarian")),
        ("Lamb Kofta", "mains", 14.0, ("gluten_free",)),
        ("Mixed Grill Platter", "mains", 18.5, ("gluten_free",)),
        ("Hummus & Pita", "starters", 6.0, ("vegan", "vegetarian")),
        ("Greek Salad", "starters", 8.5, ("vegetarian", "gluten_free")),
        ("Halloumi Fries", "sides", 7.0, ("vegetarian",)),
        ("Baklava", "desserts", 5.0, ("vegetarian",)),
        ("Mint Lemonade", "drinks", 3.5, ("vegan", "vegetarian", "gluten_free")),
    ],
    "chinese": [
        ("Kung Pao Chicken", "mains", 12.5, ("spicy",)),
        ("Sweet and Sour Pork", "mains", 12.0, ()),
        ("Mapo Tofu", "mains", 11.0, ("vegan", "vegetarian", "spicy")),
        ("Beef Chow Mein", "mains", 12.5, ()),
        ("Pork Dumplings", "starters", 7.5, ()),
        ("Hot and Sour Soup", "starters", 5.5, ("spicy",)),
        ("Spring Onion Pancake", "sides", 5.0, ("vegan", "vegetarian")),
        ("Egg Fried Rice", "sides", 6.0, ("vegetarian",)),
        ("Sesame Balls", "desserts", 4.5, ("vegan", "vegetarian")),
        ("Jasmine Tea", "drinks", 2.5, ("vegan", "vegetarian", "gluten_free")),
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
STREETS = [
    "Maple Ave",
    "Harbor Rd",
    "Elm St",
    "Station Rd",
    "Market St",
    "College Ave",
    "Mill Lane",
    "Bridge St",
    "Canal Walk",
    "Kings Rd",
]
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
        raise StateConflict(
            f"promo_code {p.promo_code!r} expired on {p.valid_until}; list_promotions shows active codes"
        )
    if p.restaurant_id is not None and p.restaurant_id != cart.restaurant_id:
        r = w.restaurants[p.restaurant_id]
        raise StateConflict(
            f"promo_code {p.promo_code!r} is only valid at {r.name} ({p.restaurant_id}), "
            f"but the cart is from {cart.restaurant_id}"
        )
    if subtotal < p.min_subtotal:
        raise StateConflict(
            f"promo_code {p.promo_code!r} needs a subtotal of at least {p.min_subtotal:.2f}; "
            f"the cart subtotal is {subtotal:.2f}"
        )
    if p.single_use and cart.customer_id in p.redeemed_by:
        raise StateConflict(
            f"promo_code {p.promo_code!r} is single-use and customer {cart.customer_id} has already redeemed it"
        )


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
    return CartView(
        customer_id=cart.customer_id,
        restaurant_id=cart.restaurant_id,
        restaurant_name=r.name if r else None,
        items=cart.items,
        item_count=sum(i.quantity for i in cart.items),
        subtotal=sub,
        delivery_fee=fee,
        discount=disc,
        total=_money(sub - disc + fee),
        promo_code=cart.promo_code,
        min_order=r.min_order if r else None,
        meets_minimum=bool(r and cart.items and sub >= r.min_order),
    )


def _summary(w: FoodWorld, r: Restaurant) -> RestaurantSummary:
    return RestaurantSummary(
        restaurant_id=r.restaurant_id,
        name=r.name,
        cuisine=r.cuisine,
        rating=r.rating,
        rating_count=r.rating_count,
        price_level=r.price_level,
        zone=r.zone,
        delivery_zones=r.delivery_zones,
        delivery_fee=r.delivery_fee,
        min_order=r.min_order,
        prep_time_min=r.prep_time_min,
        open_now=_open_at(r, w.clock),
    )


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[FoodWorld] = ToolSet()
