"""marketplace: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import PermissionDenied, StateConflict, ToolSet, World, not_found

Condition = Literal["new", "like_new", "good", "fair", "for_parts"]
ListingStatus = Literal["active", "closed", "sold"]
BidStatus = Literal["leading", "outbid", "accepted", "retracted", "lost"]
TODAY = REFERENCE_DAY
NOW = f"{REFERENCE_DAY}T09:00:00Z"
DATE = r"^\d{4}-\d{2}-\d{2}$"

# how sellers word a listing, one per listing in turn (no draw from the seed's generator: the world is the same)
DESCRIPTIONS = [
    "{Title}, {cp}. Pickup in {city} or shipped.",
    "Selling my {title}, {cp}. Collection from {city}, or I can post it.",
    "{Title}, {cp}; happy to ship, or collect in {city}.",
    "{Title} ({cp}). Located in {city}, shipping available.",
    "Up for grabs: {title}, {cp}. {city} pickup preferred.",
    "{Title}, {cp}. Can meet in {city} or send it by courier.",
    "Good home wanted for this {title}, {cp}. Pickup in {city}.",
]
CONDITION_WORDS = {
    "new": "brand new",
    "like_new": "like new",
    "good": "in good condition",
    "fair": "in fair condition",
    "for_parts": "for parts or repair",
}

# category id, name, items (title, typical price)
CATEGORIES = [
    (
        "electronics",
        "Electronics",
        [
            ("Vintage film camera", 180),
            ("Mechanical keyboard", 95),
            ("Noise-cancelling headphones", 160),
            ("Used smartphone, 128GB", 240),
            ("Retro game console", 130),
            ("Drone with 4K camera", 390),
        ],
    ),
    (
        "furniture",
        "Furniture",
        [("Mid-century armchair", 320), ("Oak dining table", 560), ("Bookshelf, walnut", 140), ("Standing desk", 280)],
    ),
    (
        "collectibles",
        "Collectibles",
        [
            ("First-edition comic book", 450),
            ("Signed baseball", 210),
            ("Vinyl record box set", 120),
            ("Antique pocket watch", 610),
            ("Rare stamp collection", 380),
        ],
    ),
    (
        "fashion",
        "Fashion",
        [("Leather jacket", 150), ("Designer handbag", 720), ("Vintage denim jacket", 85), ("Wool overcoat", 170)],
    ),
    (
        "sports",
        "Sports",
        [("Road bike, carbon frame", 1400), ("Snowboard with bindings", 260), ("Golf club set", 480), ("Kayak", 650)],
    ),
    (
        "music",
        "Musical Instruments",
        [("Acoustic guitar", 340), ("Digital piano", 520), ("Trumpet", 290), ("Drum kit", 700)],
    ),
    (
        "home",
        "Home & Garden",
        [("Espresso machine", 230), ("Cast-iron cookware set", 110), ("Robot lawn mower", 600), ("Persian rug", 900)],
    ),
]
CATEGORY_IDS = Literal["electronics", "furniture", "collectibles", "fashion", "sports", "music", "home"]


class User(BaseModel):
    user_id: str
    username: str
    name: str
    city: str
    rating: float
    member_since: str
    status: Literal["active", "suspended"] = "active"


class Listing(BaseModel):
    listing_id: str
    seller_id: str
    title: str
    description: str
    category: str
    condition: Condition
    reserve_price: float
    min_increment: float
    current_highest_bid: float | None = None
    leading_bid_id: str | None = None
    bid_count: int = 0
    status: ListingStatus = "active"
    created_on: str
    ends_on: str
    sold_bid_id: str | None = None
    sold_price: float | None = None


class Bid(BaseModel):
    bid_id: str
    listing_id: str
    bidder_id: str
    amount: float
    status: BidStatus
    placed_at: str


class MarketWorld(World):
    users: dict[str, User] = {}
    listings: dict[str, Listing] = {}
    bids: dict[str, Bid] = {}


def _days(d: str, n: int) -> str:
    return (date.fromisoformat(d) + timedelta(days=n)).isoformat()


def _increment(price: float) -> float:
    return 1.0 if price < 100 else 5.0 if price < 500 else 10.0


def _user(w: MarketWorld, user_id: str, arg: str = "user_id") -> User:
    u = w.users.get(user_id)
    if u is None:
        raise not_found("user", user_id, f"{arg} must be a user id from list_users")
    return u


def _listing(w: MarketWorld, listing_id: str) -> Listing:
    li = w.listings.get(listing_id)
    if li is None:
        raise not_found("listing", listing_id, "search_listings shows valid listing ids")
    return li


def _owned(w: MarketWorld, li: Listing, seller_id: str) -> None:
    _user(w, seller_id, "seller_id")
    if li.seller_id != seller_id:
        raise PermissionDenied(
            f"listing {li.listing_id} belongs to seller {li.seller_id}, not {seller_id}; only its seller may change it"
        )


def _open(li: Listing) -> None:
    if li.status != "active":
        raise StateConflict(f"listing {li.listing_id} is {li.status}; it no longer takes bids or changes")
    if li.ends_on < TODAY:
        raise StateConflict(f"listing {li.listing_id} ended on {li.ends_on}; it no longer takes bids or changes")


def _min_next(li: Listing) -> float:
    return li.reserve_price if li.current_highest_bid is None else round(li.current_highest_bid + li.min_increment, 2)


ListingId = Annotated[str, Field(description="Listing id, e.g. 'LST-0004' (from search_listings)")]
SellerId = Annotated[
    str, Field(description="User id of the listing's seller, acting on it, e.g. 'USR-0003' (from list_users)")
]
BidderId = Annotated[str, Field(description="User id of the bidder, e.g. 'USR-0007' (from list_users)")]


class UserList(BaseModel):
    users: list[User]
    total: int


class UserProfile(BaseModel):
    user_id: str
    username: str
    name: str
    city: str
    rating: float
    member_since: str
    status: str
    active_listings: int
    sold_listings: int


class CategoryView(BaseModel):
    category: str
    name: str
    active_listings: int


class CategoryList(BaseModel):
    categories: list[CategoryView]
    total: int


class ListingView(BaseModel):
    listing_id: str
    seller_id: str
    title: str
    description: str
    category: str
    condition: Condition
    reserve_price: float
    min_increment: float
    current_highest_bid: float | None
    leading_bid_id: str | None
    min_next_bid: float | None
    bid_count: int
    status: ListingStatus
    created_on: str
    ends_on: str
    sold_bid_id: str | None
    sold_price: float | None


class ListingList(BaseModel):
    listings: list[ListingView]
    total: int


class BidList(BaseModel):
    bids: list[Bid]
    total: int


class BidResult(BaseModel):
    bid_id: str
    listing_id: str
    bidder_id: str
    amount: float
    status: BidStatus
    current_highest_bid: float | None
    min_next_bid: float | None


class SaleResult(BaseModel):
    listing_id: str
    bid_id: str
    bidder_id: str
    sold_price: float
    status: ListingStatus


def _view(li: Listing) -> ListingView:
    return ListingView(**li.model_dump(), min_next_bid=_min_next(li) if li.status == "active" else None)


TOOLS: ToolSet[MarketWorld] = ToolSet()
