"""maps tools, list_cities to remove_saved_place (in tools/list order)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

from pydantic import Field

from servers.kit import InvalidArgument, NotFound, StateConflict, not_found
from servers.maps.world import (
    CATEGORIES,
    CITIES,
    NOW,
    TOOLS,
    Arrival,
    CategoryList,
    CityInfo,
    CityList,
    DateTimeStr,
    ListName,
    MapsWorld,
    Mode,
    ModeOption,
    OpeningHours,
    PlaceDetails,
    PlaceId,
    PlaceList,
    RemovedPlace,
    ReverseGeocode,
    ReviewList,
    Route,
    RouteComparison,
    SavedPlace,
    SavedPlaceList,
    _category,
    _km,
    _open_at,
    _place,
    _route,
    _summary,
    _when,
)


@TOOLS.tool(read_only=True)
def list_cities(w: MapsWorld) -> CityList:
    """List the cities covered by the map, with their centre coordinates and how many places each has."""
    out = []
    for city, country, lat, lon, _zone, _streets in CITIES:
        ps = [p for p in w.places.values() if p.city == city]
        out.append(
            CityInfo(
                city=city,
                country=country,
                lat=lat,
                lon=lon,
                poi_count=sum(p.kind == "poi" for p in ps),
                address_count=sum(p.kind == "address" for p in ps),
            )
        )
    return CityList(cities=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_categories(w: MapsWorld) -> CategoryList:
    """List the point-of-interest categories accepted by search_nearby and search_places."""
    cats = sorted(CATEGORIES)
    return CategoryList(categories=cats, total=len(cats))


@TOOLS.tool(read_only=True)
def geocode(
    w: MapsWorld,
    address: Annotated[
        str, Field(description="Street address or place name, e.g. '12 Rua Augusta, Lisbon'", min_length=3)
    ],
) -> PlaceList:
    """Turn an address or place name into matching places with coordinates and place ids."""
    q = " ".join(address.lower().replace(",", " ").split())
    tokens = q.split()
    out = []
    for p in w.places.values():
        hay = " ".join(f"{p.name} {p.formatted_address}".lower().replace(",", " ").split())
        if q in hay or all(t in hay for t in tokens):
            out.append(_summary(p))
    if not out:
        raise not_found(
            "address",
            address,
            "use a street address with number and city, e.g. '12 Rua Augusta, Lisbon'; list_cities shows covered cities",
        )
    return PlaceList(places=out[:10], total=len(out[:10]))


@TOOLS.tool(read_only=True)
def reverse_geocode(
    w: MapsWorld,
    lat: Annotated[float, Field(description="Latitude in degrees", ge=-90, le=90)],
    lon: Annotated[float, Field(description="Longitude in degrees", ge=-180, le=180)],
) -> ReverseGeocode:
    """Find the nearest known street address to a coordinate (within 1 km)."""
    best, dist = None, 1e9
    for p in w.places.values():
        if p.kind != "address":
            continue
        d = _km(lat, lon, p.lat, p.lon)
        if d < dist:
            best, dist = p, d
    if best is None or dist > 1.0:
        raise not_found("address near", f"{lat},{lon}", "no known address within 1 km; list_cities shows covered areas")
    return ReverseGeocode(
        place_id=best.place_id,
        formatted_address=best.formatted_address,
        city=best.city,
        country=best.country,
        lat=best.lat,
        lon=best.lon,
        distance_m=int(dist * 1000),
    )


@TOOLS.tool(read_only=True)
def search_places(
    w: MapsWorld,
    query: Annotated[
        str, Field(description="Words in the place's name, e.g. 'museum' or 'Copper Grill'", min_length=2)
    ],
    city: Annotated[str | None, Field(description="Only places in this city (from list_cities)")] = None,
    category: Annotated[str | None, Field(description="Only places of this category (from list_categories)")] = None,
) -> PlaceList:
    """Search points of interest by name, optionally within a city or category."""
    if city is not None and city.lower() not in {c[0].lower() for c in CITIES}:
        raise not_found("city", city, f"covered cities: {', '.join(c[0] for c in CITIES)}")
    cat = _category(category) if category is not None else None
    tokens = query.lower().split()
    out = [
        _summary(p)
        for p in w.places.values()
        if p.kind == "poi"
        and all(t in f"{p.name} {p.category}".lower() for t in tokens)
        and (city is None or p.city.lower() == city.lower())
        and (cat is None or p.category == cat)
    ]
    return PlaceList(places=out, total=len(out))


@TOOLS.tool(read_only=True)
def search_nearby(
    w: MapsWorld,
    place_id: Annotated[str, Field(description="Place id to search around (from geocode or search_places)")],
    category: Annotated[str, Field(description="Point-of-interest category, e.g. 'pharmacy' (from list_categories)")],
    radius_km: Annotated[float, Field(description="Search radius in kilometres", gt=0, le=50)] = 3.0,
    open_now: Annotated[bool, Field(description=f"Only places open now ({NOW})")] = False,
    min_rating: Annotated[float | None, Field(description="Only places rated at least this", ge=1, le=5)] = None,
) -> PlaceList:
    """Find points of interest of a category near a place, nearest first, with distance and whether they are open now."""
    origin = _place(w, place_id)
    cat = _category(category)
    out = []
    for p in w.places.values():
        if p.kind != "poi" or p.category != cat or p.place_id == place_id or p.permanently_closed:
            continue
        s = _summary(p, origin)
        if (
            (s.distance_km or 0) > radius_km
            or (open_now and not s.open_now)
            or (min_rating is not None and (p.rating or 0) < min_rating)
        ):
            continue
        out.append(s)
    out.sort(key=lambda s: s.distance_km or 0)
    return PlaceList(places=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_place_details(w: MapsWorld, place_id: PlaceId) -> PlaceDetails:
    """Get a place's details: address, coordinates, category, phone, website, rating, price level and whether it is open now."""
    p = _place(w, place_id)
    saved = w.saved.get(place_id)
    return PlaceDetails(
        place_id=p.place_id,
        kind=p.kind,
        name=p.name,
        formatted_address=p.formatted_address,
        city=p.city,
        country=p.country,
        lat=p.lat,
        lon=p.lon,
        category=p.category,
        phone=p.phone,
        website=p.website,
        rating=p.rating,
        review_count=sum(r.place_id == place_id for r in w.reviews.values()),
        price_level=p.price_level,
        permanently_closed=p.permanently_closed,
        open_now=None if p.kind != "poi" else _open_at(p, datetime.fromisoformat(NOW)),
        saved_in=saved.list_name if saved else None,
    )


@TOOLS.tool(read_only=True)
def get_opening_hours(w: MapsWorld, place_id: PlaceId, at: DateTimeStr = None) -> OpeningHours:
    """Get a point of interest's weekly opening hours and whether it is open at a given local time (default now)."""
    p = _place(w, place_id)
    if p.kind != "poi":
        raise InvalidArgument(f"place {place_id} is a street address, not a business; it has no opening hours")
    when = _when(at, "at")
    is_open = _open_at(p, when)
    nxt = None
    if not p.permanently_closed:
        t = when
        for _ in range(7 * 24 * 4):
            t += timedelta(minutes=15)
            if _open_at(p, t) != is_open:
                nxt = t.strftime("%Y-%m-%dT%H:%M")
                break
    return OpeningHours(
        place_id=p.place_id,
        name=p.name,
        hours=p.opening_hours,
        permanently_closed=p.permanently_closed,
        at=when.strftime("%Y-%m-%dT%H:%M"),
        open_at=is_open,
        next_change=nxt,
    )


@TOOLS.tool(read_only=True)
def get_route(
    w: MapsWorld,
    origin_place_id: Annotated[str, Field(description="Start place id (from geocode or search_places)")],
    destination_place_id: Annotated[str, Field(description="End place id (from geocode or search_places)")],
    mode: Annotated[Mode, Field(description="Travel mode")] = "driving",
) -> Route:
    """Get a route between two places for a travel mode: distance, duration and turn-by-turn summary."""
    a, b = _place(w, origin_place_id, "origin_place_id"), _place(w, destination_place_id, "destination_place_id")
    km, minutes = _route(a, b, mode)
    verb = {"driving": "Drive", "walking": "Walk", "cycling": "Cycle", "transit": "Take transit"}[mode]
    steps = [f"Head out from {a.formatted_address}"]
    if a.city != b.city:
        if a.zone != b.zone:
            steps.append("Cross the river by bridge" if mode == "driving" else "Take the river ferry")
        steps.append(f"{verb} {km:.1f} km towards {b.city}")
    else:
        steps.append(f"{verb} {km:.1f} km through {a.city}")
    steps.append(f"Arrive at {b.name}, {b.formatted_address}")
    return Route(
        origin_place_id=a.place_id,
        destination_place_id=b.place_id,
        mode=mode,
        distance_km=km,
        duration_minutes=minutes,
        summary=f"{verb} {km:.1f} km, about {minutes} min",
        steps=steps,
    )


@TOOLS.tool(read_only=True)
def compare_routes(
    w: MapsWorld,
    origin_place_id: Annotated[str, Field(description="Start place id (from geocode or search_places)")],
    destination_place_id: Annotated[str, Field(description="End place id (from geocode or search_places)")],
) -> RouteComparison:
    """Compare all travel modes between two places: which are possible, distance and duration of each, and the fastest."""
    a, b = _place(w, origin_place_id, "origin_place_id"), _place(w, destination_place_id, "destination_place_id")
    opts = []
    for mode in ("driving", "walking", "cycling", "transit"):
        try:
            km, minutes = _route(a, b, mode)
            opts.append(ModeOption(mode=mode, available=True, distance_km=km, duration_minutes=minutes))  # type: ignore[arg-type]
        except NotFound as exc:  # the mode has no route
            opts.append(ModeOption(mode=mode, available=False, reason=exc.message))  # type: ignore[arg-type]
    ok = [o for o in opts if o.available]
    return RouteComparison(
        origin_place_id=a.place_id,
        destination_place_id=b.place_id,
        options=opts,
        fastest_mode=min(ok, key=lambda o: o.duration_minutes or 0).mode if ok else None,
    )


@TOOLS.tool(read_only=True)
def estimate_arrival(
    w: MapsWorld,
    origin_place_id: Annotated[str, Field(description="Start place id")],
    destination_place_id: Annotated[str, Field(description="End place id")],
    mode: Annotated[Mode, Field(description="Travel mode")] = "driving",
    departure_time: DateTimeStr = None,
) -> Arrival:
    """Estimate the arrival time when leaving at departure_time, and whether the destination will be open on arrival."""
    a, b = _place(w, origin_place_id, "origin_place_id"), _place(w, destination_place_id, "destination_place_id")
    dep = _when(departure_time, "departure_time")
    _km_, minutes = _route(a, b, mode)
    arr = dep + timedelta(minutes=minutes)
    return Arrival(
        origin_place_id=a.place_id,
        destination_place_id=b.place_id,
        mode=mode,
        departure_time=dep.strftime("%Y-%m-%dT%H:%M"),
        arrival_time=arr.strftime("%Y-%m-%dT%H:%M"),
        duration_minutes=minutes,
        open_on_arrival=None if b.kind != "poi" else _open_at(b, arr),
    )


@TOOLS.tool(read_only=True)
def list_place_reviews(
    w: MapsWorld,
    place_id: PlaceId,
    min_rating: Annotated[
        int | None, Field(description="Only reviews with at least this many stars", ge=1, le=5)
    ] = None,
) -> ReviewList:
    """List the reviews of a point of interest, newest first, with the average rating."""
    p = _place(w, place_id)
    rs = sorted((r for r in w.reviews.values() if r.place_id == p.place_id), key=lambda r: r.date, reverse=True)
    avg = round(sum(r.rating for r in rs) / len(rs), 2) if rs else None
    rs = [r for r in rs if min_rating is None or r.rating >= min_rating]
    return ReviewList(place_id=place_id, reviews=rs, total=len(rs), average_rating=avg)


@TOOLS.tool(read_only=True)
def list_saved_places(
    w: MapsWorld,
    list_name: Annotated[ListName | None, Field(description="Only places saved in this list")] = None,
) -> SavedPlaceList:
    """List your saved places (favorites, want_to_go, home, work, other)."""
    out = [s for s in w.saved.values() if list_name is None or s.list_name == list_name]
    return SavedPlaceList(saved_places=out, total=len(out))


@TOOLS.tool()
def save_place(
    w: MapsWorld,
    place_id: PlaceId,
    list_name: Annotated[ListName, Field(description="List to save the place in")] = "favorites",
    note: Annotated[str | None, Field(description="Optional private note", max_length=200)] = None,
) -> SavedPlace:
    """Save a place to one of your lists; 'home' and 'work' hold a single place each."""
    p = _place(w, place_id)
    if place_id in w.saved:
        raise StateConflict(
            f"place {place_id} ({p.name}) is already saved in '{w.saved[place_id].list_name}'; update_saved_place moves it"
        )
    if list_name in ("home", "work"):
        taken = next((s for s in w.saved.values() if s.list_name == list_name), None)
        if taken is not None:
            raise StateConflict(
                f"'{list_name}' is already set to {taken.place_id} ({taken.name}); remove_saved_place it first"
            )
    s = SavedPlace(place_id=place_id, name=p.name, list_name=list_name, note=note, saved_on=NOW[:10])
    w.saved[place_id] = s
    return s


@TOOLS.tool(idempotent=True)
def update_saved_place(
    w: MapsWorld,
    place_id: Annotated[str, Field(description="Place id of a saved place (from list_saved_places)")],
    list_name: Annotated[ListName | None, Field(description="Move the place to this list")] = None,
    note: Annotated[str | None, Field(description="Replace the note", max_length=200)] = None,
) -> SavedPlace:
    """Move a saved place to another list or change its note."""
    s = w.saved.get(place_id)
    if s is None:
        raise not_found("saved place", place_id, "list_saved_places shows saved place ids; save_place saves one")
    if list_name is None and note is None:
        raise InvalidArgument("give list_name or note (or both) to update")
    if list_name in ("home", "work") and s.list_name != list_name:
        taken = next((x for x in w.saved.values() if x.list_name == list_name), None)
        if taken is not None:
            raise StateConflict(
                f"'{list_name}' is already set to {taken.place_id} ({taken.name}); remove_saved_place it first"
            )
    if list_name is not None:
        s.list_name = list_name
    if note is not None:
        s.note = note
    return s


@TOOLS.tool(destructive=True, idempotent=True)
def remove_saved_place(
    w: MapsWorld, place_id: Annotated[str, Field(description="Place id of a saved place (from list_saved_places)")]
) -> RemovedPlace:
    """Remove a place from your saved places."""
    if place_id not in w.saved:
        raise not_found("saved place", place_id, "list_saved_places shows saved place ids")
    del w.saved[place_id]
    return RemovedPlace(place_id=place_id, removed=True)
