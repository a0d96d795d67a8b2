"""retail_chain: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import ToolSet, World, not_found

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
