"""marketplace tools, list_users to accept_bid (in tools/list order)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.kit import InvalidArgument, PermissionDenied, StateConflict, not_found
from servers.marketplace.world import (
    CATEGORIES,
    CATEGORY_IDS,
    DATE,
    NOW,
    TODAY,
    TOOLS,
    Bid,
    BidderId,
    BidList,
    BidResult,
    BidStatus,
    CategoryList,
    CategoryView,
    Condition,
    Listing,
    ListingId,
    ListingList,
    ListingStatus,
    ListingView,
    MarketWorld,
    SaleResult,
    SellerId,
    UserList,
    UserProfile,
    _days,
    _increment,
    _listing,
    _min_next,
    _open,
    _owned,
    _user,
    _view,
)


@TOOLS.tool(read_only=True)
def list_users(
    w: MarketWorld,
    city: Annotated[str | None, Field(description="Only users in this city")] = None,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the name or username")] = None,
) -> UserList:
    """List marketplace users (buyers and sellers) with their rating and account status."""
    q = (name_contains or "").lower()
    out = [
        u
        for u in w.users.values()
        if (city is None or u.city.lower() == city.lower()) and (q in u.name.lower() or q in u.username.lower())
    ]
    return UserList(users=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_user(
    w: MarketWorld, user_id: Annotated[str, Field(description="User id, e.g. 'USR-0003' (from list_users)")]
) -> UserProfile:
    """Get a user's public profile with counts of their active and sold listings."""
    u = _user(w, user_id)
    mine = [li for li in w.listings.values() if li.seller_id == user_id]
    return UserProfile(
        **u.model_dump(),
        active_listings=sum(li.status == "active" for li in mine),
        sold_listings=sum(li.status == "sold" for li in mine),
    )


@TOOLS.tool(read_only=True)
def list_categories(w: MarketWorld) -> CategoryList:
    """List the listing categories and how many active listings each has."""
    out = [
        CategoryView(
            category=cid,
            name=name,
            active_listings=sum(li.category == cid and li.status == "active" for li in w.listings.values()),
        )
        for cid, name, _ in CATEGORIES
    ]
    return CategoryList(categories=out, total=len(out))


@TOOLS.tool(read_only=True)
def search_listings(
    w: MarketWorld,
    query: Annotated[str | None, Field(description="Words to look for in the title or description")] = None,
    category: Annotated[
        CATEGORY_IDS | None, Field(description="Only listings in this category (from list_categories)")
    ] = None,
    status: Annotated[ListingStatus | None, Field(description="Only listings in this status")] = "active",
    seller_id: Annotated[str | None, Field(description="Only listings by this seller's user id")] = None,
    max_price: Annotated[
        float | None, Field(description="Only listings whose next minimum bid is at most this", ge=0)
    ] = None,
    condition: Annotated[Condition | None, Field(description="Only items in this condition")] = None,
) -> ListingList:
    """Search listings by keywords, category, status (active by default; pass null for all), seller, price and condition."""
    words = (query or "").lower().split()
    out = []
    for li in w.listings.values():
        text = f"{li.title} {li.description}".lower()
        if words and not all(t in text for t in words):
            continue
        if (category is not None and li.category != category) or (status is not None and li.status != status):
            continue
        if (seller_id is not None and li.seller_id != seller_id) or (
            condition is not None and li.condition != condition
        ):
            continue
        v = _view(li)
        if max_price is not None and (v.min_next_bid is None or v.min_next_bid > max_price):
            continue
        out.append(v)
    return ListingList(listings=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_listing(w: MarketWorld, listing_id: ListingId) -> ListingView:
    """Get a listing: seller, reserve price, current highest bid, the minimum next bid and when it ends."""
    return _view(_listing(w, listing_id))


@TOOLS.tool(read_only=True)
def list_bids(
    w: MarketWorld,
    listing_id: Annotated[str | None, Field(description="Bids on this listing id")] = None,
    bidder_id: Annotated[str | None, Field(description="Bids placed by this user id")] = None,
    status: Annotated[BidStatus | None, Field(description="Only bids in this status")] = None,
) -> BidList:
    """List bids on a listing or by a bidder (at least one of listing_id or bidder_id), highest first."""
    if listing_id is None and bidder_id is None:
        raise InvalidArgument("give listing_id or bidder_id (or both) to list bids")
    if listing_id is not None:
        _listing(w, listing_id)
    if bidder_id is not None:
        _user(w, bidder_id, "bidder_id")
    out = [
        b
        for b in w.bids.values()
        if (listing_id is None or b.listing_id == listing_id)
        and (bidder_id is None or b.bidder_id == bidder_id)
        and (status is None or b.status == status)
    ]
    out.sort(key=lambda b: (-b.amount, b.bid_id))
    return BidList(bids=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_bid(
    w: MarketWorld, bid_id: Annotated[str, Field(description="Bid id, e.g. 'BID-00012' (from list_bids)")]
) -> Bid:
    """Get one bid: listing, bidder, amount and whether it is leading, outbid, accepted, retracted or lost."""
    b = w.bids.get(bid_id)
    if b is None:
        raise not_found("bid", bid_id, "list_bids shows bid ids")
    return b


@TOOLS.tool()
def create_listing(
    w: MarketWorld,
    seller_id: SellerId,
    title: Annotated[str, Field(description="Item title", min_length=3, max_length=80)],
    description: Annotated[str, Field(description="Item description", min_length=3, max_length=1000)],
    category: Annotated[CATEGORY_IDS, Field(description="Category id (from list_categories)")],
    condition: Annotated[Condition, Field(description="Condition of the item")],
    reserve_price: Annotated[float, Field(description="Lowest bid the seller will take", gt=0, le=1_000_000)],
    ends_on: Annotated[
        str, Field(description="Last day of bidding (YYYY-MM-DD), 1 to 30 days from today", pattern=DATE)
    ],
) -> ListingView:
    """Create a new auction listing for a seller."""
    u = _user(w, seller_id, "seller_id")
    if u.status != "active":
        raise PermissionDenied(f"user {seller_id} is suspended and cannot create listings")
    if not _days(TODAY, 1) <= ends_on <= _days(TODAY, 30):
        raise InvalidArgument(f"ends_on {ends_on} must be between {_days(TODAY, 1)} and {_days(TODAY, 30)}")
    lid = w.new_id("LST")
    reserve = round(reserve_price, 2)
    li = Listing(
        listing_id=lid,
        seller_id=seller_id,
        title=title,
        description=description,
        category=category,
        condition=condition,
        reserve_price=reserve,
        min_increment=_increment(reserve),
        created_on=TODAY,
        ends_on=ends_on,
    )
    w.listings[lid] = li
    return _view(li)


@TOOLS.tool(idempotent=True)
def update_listing(
    w: MarketWorld,
    listing_id: ListingId,
    seller_id: SellerId,
    title: Annotated[str | None, Field(description="New title", min_length=3, max_length=80)] = None,
    description: Annotated[str | None, Field(description="New description", min_length=3, max_length=1000)] = None,
    reserve_price: Annotated[
        float | None, Field(description="New reserve price; only before the first bid", gt=0)
    ] = None,
    ends_on: Annotated[
        str | None,
        Field(
            description="New last day of bidding (YYYY-MM-DD); can only be extended, up to 30 days from today",
            pattern=DATE,
        ),
    ] = None,
) -> ListingView:
    """Update an active listing's title, description, reserve price (before any bid) or end date (extend only)."""
    li = _listing(w, listing_id)
    _owned(w, li, seller_id)
    _open(li)
    if title is None and description is None and reserve_price is None and ends_on is None:
        raise InvalidArgument("give at least one of title, description, reserve_price or ends_on to change")
    if reserve_price is not None and li.bid_count > 0:
        raise StateConflict(f"listing {listing_id} already has {li.bid_count} bids; reserve_price can no longer change")
    if ends_on is not None and not li.ends_on <= ends_on <= _days(TODAY, 30):
        raise InvalidArgument(f"ends_on {ends_on} must be between the current end {li.ends_on} and {_days(TODAY, 30)}")
    if title is not None:
        li.title = title
    if description is not None:
        li.description = description
    if reserve_price is not None:
        li.reserve_price = round(reserve_price, 2)
        li.min_increment = _increment(li.reserve_price)
    if ends_on is not None:
        li.ends_on = ends_on
    return _view(li)


@TOOLS.tool(destructive=True)
def close_listing(w: MarketWorld, listing_id: ListingId, seller_id: SellerId) -> ListingView:
    """Close an active listing without selling it; all its open bids are released."""
    li = _listing(w, listing_id)
    _owned(w, li, seller_id)
    if li.status != "active":
        raise StateConflict(f"listing {listing_id} is already {li.status}")
    li.status = "closed"
    for b in w.bids.values():
        if b.listing_id == listing_id and b.status in ("leading", "outbid"):
            b.status = "lost"
    return _view(li)


@TOOLS.tool()
def place_bid(
    w: MarketWorld,
    listing_id: ListingId,
    bidder_id: BidderId,
    amount: Annotated[
        float,
        Field(
            description="Bid amount; at least the listing's min_next_bid (reserve price or highest bid plus increment)",
            gt=0,
        ),
    ],
) -> BidResult:
    """Bid on an active listing. The bid must reach the reserve price and beat the current highest bid by the minimum increment."""
    li = _listing(w, listing_id)
    u = _user(w, bidder_id, "bidder_id")
    if u.status != "active":
        raise PermissionDenied(f"user {bidder_id} is suspended and cannot bid")
    if li.seller_id == bidder_id:
        raise PermissionDenied(
            f"user {bidder_id} is the seller of listing {listing_id} and cannot bid on their own listing"
        )
    _open(li)
    amount = round(amount, 2)
    if li.current_highest_bid is None and amount < li.reserve_price:
        raise InvalidArgument(
            f"bid {amount} is below the reserve price {li.reserve_price} of listing {listing_id}; bid at least {li.reserve_price}"
        )
    if li.current_highest_bid is not None and amount < _min_next(li):
        raise InvalidArgument(
            f"bid {amount} is too low: the current highest bid on listing {listing_id} is {li.current_highest_bid} "
            f"and the minimum increment is {li.min_increment}; bid at least {_min_next(li)}"
        )
    if li.leading_bid_id is not None:
        w.bids[li.leading_bid_id].status = "outbid"
    bid_id = w.new_id("BID", 5)
    bid = Bid(bid_id=bid_id, listing_id=listing_id, bidder_id=bidder_id, amount=amount, status="leading", placed_at=NOW)
    w.bids[bid_id] = bid
    li.current_highest_bid, li.leading_bid_id = amount, bid_id
    li.bid_count += 1
    return BidResult(
        bid_id=bid_id,
        listing_id=listing_id,
        bidder_id=bidder_id,
        amount=amount,
        status="leading",
        current_highest_bid=amount,
        min_next_bid=_min_next(li),
    )


@TOOLS.tool(destructive=True)
def retract_bid(
    w: MarketWorld,
    bid_id: Annotated[str, Field(description="Bid id, e.g. 'BID-00012' (from list_bids)")],
    bidder_id: BidderId,
) -> BidResult:
    """Retract one of your bids on an active listing; if it was leading, the next highest remaining bid leads again."""
    b = w.bids.get(bid_id)
    if b is None:
        raise not_found("bid", bid_id, "list_bids shows bid ids")
    _user(w, bidder_id, "bidder_id")
    if b.bidder_id != bidder_id:
        raise PermissionDenied(f"bid {bid_id} was placed by {b.bidder_id}, not {bidder_id}")
    li = w.listings[b.listing_id]
    _open(li)
    if b.status not in ("leading", "outbid"):
        raise StateConflict(f"bid {bid_id} is {b.status} and cannot be retracted")
    b.status = "retracted"
    rest = sorted(
        (x for x in w.bids.values() if x.listing_id == li.listing_id and x.status == "outbid"),
        key=lambda x: (-x.amount, x.bid_id),
    )
    li.bid_count = sum(1 for x in w.bids.values() if x.listing_id == li.listing_id and x.status != "retracted")
    if li.leading_bid_id == bid_id:
        if rest:
            rest[0].status = "leading"
            li.current_highest_bid, li.leading_bid_id = rest[0].amount, rest[0].bid_id
        else:
            li.current_highest_bid, li.leading_bid_id = None, None
    return BidResult(
        bid_id=bid_id,
        listing_id=li.listing_id,
        bidder_id=bidder_id,
        amount=b.amount,
        status=b.status,
        current_highest_bid=li.current_highest_bid,
        min_next_bid=_min_next(li),
    )


@TOOLS.tool()
def accept_bid(
    w: MarketWorld,
    listing_id: ListingId,
    seller_id: SellerId,
    bid_id: Annotated[str, Field(description="Id of the listing's leading bid (get_listing shows leading_bid_id)")],
) -> SaleResult:
    """Accept the leading bid on your active listing: the item is sold to that bidder and the listing ends."""
    li = _listing(w, listing_id)
    _owned(w, li, seller_id)
    b = w.bids.get(bid_id)
    if b is None or b.listing_id != listing_id:
        raise not_found("bid", bid_id, f"list_bids with listing_id={listing_id!r} shows the bids on this listing")
    _open(li)
    if b.status != "leading":
        raise StateConflict(f"bid {bid_id} is {b.status}; only the leading bid {li.leading_bid_id} can be accepted")
    b.status = "accepted"
    li.status, li.sold_bid_id, li.sold_price = "sold", bid_id, b.amount
    for x in w.bids.values():
        if x.listing_id == listing_id and x.status == "outbid":
            x.status = "lost"
    return SaleResult(
        listing_id=listing_id, bid_id=bid_id, bidder_id=b.bidder_id, sold_price=b.amount, status=li.status
    )
