"""maps: geocoding, reverse geocoding, routing by mode, points of interest, opening hours, saved places."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import EnvServer, InvalidArgument, NotFound, StateConflict, ToolSet, World, not_found
from servers.names import FIRST_NAMES, LAST_NAMES

Mode = Literal["driving", "walking", "cycling", "transit"]
PlaceKind = Literal["address", "poi"]
ListName = Literal["favorites", "want_to_go", "home", "work", "other"]
Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NOW = "2026-03-02T09:00"  # a Monday
WEEKDAYS: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

# city, country, centre lat/lon, zone (routes exist only within a zone or across a listed link), streets
CITIES: list[tuple[str, str, float, float, str, list[str]]] = [
    ("Lisbon", "Portugal", 38.7223, -9.1393, "iberia", ["Rua Augusta", "Avenida da Liberdade", "Rua do Ouro", "Rua da Prata", "Calcada do Combro", "Rua Garrett"]),
    ("Almada", "Portugal", 38.6790, -9.1569, "tagus_south", ["Rua Capitao Leitao", "Avenida Dom Nuno Alvares Pereira", "Rua Candido dos Reis"]),
    ("Porto", "Portugal", 41.1579, -8.6291, "iberia", ["Rua de Santa Catarina", "Avenida dos Aliados", "Rua das Flores", "Rua de Cedofeita"]),
    ("Madrid", "Spain", 40.4168, -3.7038, "iberia", ["Calle Mayor", "Gran Via", "Calle de Alcala", "Calle de Atocha", "Paseo del Prado"]),
    ("Lyon", "France", 45.7640, 4.8357, "iberia", ["Rue de la Republique", "Quai Saint-Antoine", "Rue Merciere", "Cours Lafayette"]),
    ("Dublin", "Ireland", 53.3498, -6.2603, "ireland", ["Grafton Street", "O'Connell Street", "Dame Street", "Camden Street"]),
    ("Leeds", "United Kingdom", 53.8008, -1.5491, "britain", ["Briggate", "Boar Lane", "Park Row", "Kirkgate", "The Headrow"]),
    ("Boston", "United States", 42.3601, -71.0589, "north_america", ["Boylston Street", "Newbury Street", "Tremont Street", "Hanover Street", "Beacon Street"]),
    ("Toronto", "Canada", 43.6532, -79.3832, "north_america", ["Queen Street West", "King Street East", "Yonge Street", "Spadina Avenue"]),
    ("Seattle", "United States", 47.6062, -122.3321, "north_america", ["Pike Street", "Pine Street", "1st Avenue", "Westlake Avenue"]),
]
# modes that can cross between two different zones (a bridge for cars, a ferry for transit)
ZONE_LINKS: dict[frozenset[str], set[str]] = {frozenset({"iberia", "tagus_south"}): {"driving", "transit"}}
DIAL = {"Portugal": 351, "Spain": 34, "France": 33, "Ireland": 353, "United Kingdom": 44, "United States": 1, "Canada": 1}
DETOUR = {"driving": 1.3, "walking": 1.2, "cycling": 1.25, "transit": 1.4}
MAX_KM = {"walking": 60.0, "cycling": 250.0, "transit": 1500.0, "driving": 5000.0}

CATEGORIES: dict[str, tuple[list[str], list[str]]] = {
    "restaurant": (["Tasca", "Bistro", "Kitchen", "Grill", "Trattoria", "Table"], ["Olive", "Harbor", "Copper", "Saffron", "Lantern", "Fig"]),
    "cafe": (["Cafe", "Coffee House", "Roasters", "Espresso Bar"], ["Morning", "Blue Door", "Velvet", "Corner", "Little Bean"]),
    "bar": (["Bar", "Tavern", "Pub", "Wine Bar"], ["Crown", "Anchor", "Fox", "Cellar", "Moonlight"]),
    "museum": (["Museum", "Gallery", "Art Centre"], ["City", "Modern Art", "Maritime", "Design", "Natural History"]),
    "park": (["Park", "Gardens", "Green"], ["Riverside", "Botanical", "Central", "Hilltop", "Memorial"]),
    "pharmacy": (["Pharmacy", "Chemist"], ["Central", "Family", "Health Plus", "Corner"]),
    "hospital": (["Hospital", "Medical Centre"], ["General", "St. Mary's", "University", "Children's"]),
    "supermarket": (["Market", "Supermarket", "Grocer"], ["Fresh", "Daily", "Green Basket", "Neighbourhood"]),
    "gas_station": (["Fuel", "Service Station"], ["Express", "Highway", "City"]),
    "hotel": (["Hotel", "Inn", "Suites"], ["Grand", "Harbour View", "Old Town", "Station"]),
    "library": (["Library", "Reading Room"], ["Public", "Central", "University"]),
    "train_station": (["Station"], ["Central", "North", "Riverside"]),
}
HOURS_BY_CATEGORY: dict[str, list[str]] = {
    "restaurant": ["12:00-15:00,19:00-23:00", "12:00-23:00", "18:00-23:30"],
    "cafe": ["07:00-19:00", "08:00-18:00", "07:30-16:00"],
    "bar": ["17:00-02:00", "18:00-01:00", "16:00-00:00"],
    "museum": ["10:00-18:00", "09:30-17:30", "10:00-20:00"],
    "park": ["06:00-22:00", "00:00-24:00", "07:00-20:00"],
    "pharmacy": ["08:30-20:00", "09:00-21:00", "00:00-24:00"],
    "hospital": ["00:00-24:00"],
    "supermarket": ["08:00-21:00", "07:00-22:00", "09:00-20:00"],
    "gas_station": ["00:00-24:00", "06:00-23:00"],
    "hotel": ["00:00-24:00"],
    "library": ["09:00-19:00", "10:00-18:00"],
    "train_station": ["05:00-01:00", "00:00-24:00"],
}
REVIEW_TEXTS = {
    5: ["Absolutely wonderful, will come back.", "Best in the neighbourhood.", "Friendly staff and spotless."],
    4: ["Very good overall, a bit busy at peak times.", "Great spot, slightly pricey.", "Solid choice, recommended."],
    3: ["Decent but nothing special.", "OK for a quick visit.", "Mixed experience, service was slow."],
    2: ["Disappointing visit.", "Long wait and rude staff.", "Not worth the price."],
    1: ["Closed when it should have been open.", "Would not recommend.", "Terrible experience."],
}


class Place(BaseModel):
    place_id: str
    kind: PlaceKind
    name: str
    formatted_address: str
    city: str
    country: str
    lat: float
    lon: float
    zone: str
    category: str | None = None
    phone: str | None = None
    website: str | None = None
    rating: float | None = None
    price_level: int | None = None
    opening_hours: dict[str, str] = {}  # weekday -> "HH:MM-HH:MM[,HH:MM-HH:MM]" or "closed"
    permanently_closed: bool = False


class Review(BaseModel):
    review_id: str
    place_id: str
    author: str
    rating: int
    text: str
    date: str


class SavedPlace(BaseModel):
    place_id: str
    name: str
    list_name: ListName
    note: str | None = None
    saved_on: str


class MapsWorld(World):
    places: dict[str, Place] = {}
    reviews: dict[str, Review] = {}
    saved: dict[str, SavedPlace] = {}  # by place_id


def _km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, l1, p2, l2 = map(math.radians, (lat1, lon1, lat2, lon2))
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin((l2 - l1) / 2) ** 2
    return 2 * 6371 * math.asin(math.sqrt(min(1.0, h)))


def seed_world(rng: random.Random, seed: int) -> MapsWorld:
    w = MapsWorld(seed=seed)
    for city, country, clat, clon, zone, streets in CITIES:
        used: set[str] = set()
        for _ in range(rng.randint(5, 7)):  # street addresses
            street = rng.choice(streets)
            num = rng.randint(1, 240)
            while f"{num} {street}" in used:
                num = rng.randint(1, 240)
            used.add(f"{num} {street}")
            pid = w.new_id("PLC")
            w.places[pid] = Place(place_id=pid, kind="address", name=f"{num} {street}", formatted_address=f"{num} {street}, {city}, {country}",
                                  city=city, country=country, lat=round(clat + rng.uniform(-0.025, 0.025), 5),
                                  lon=round(clon + rng.uniform(-0.03, 0.03), 5), zone=zone)
        cats = list(CATEGORIES)
        picks = rng.sample(cats, k=8 if city != "Almada" else 5) + ["restaurant", "cafe"]
        names: set[str] = set()
        for cat in picks:
            kinds, words = CATEGORIES[cat]
            name = f"{rng.choice(words)} {rng.choice(kinds)}"
            if cat in ("museum", "library", "train_station", "hospital") and rng.random() < 0.6:
                name = f"{city} {rng.choice(words)} {rng.choice(kinds)}"
            if name in names:
                name = f"{name} {city}"
            if name in names:
                continue
            names.add(name)
            base = rng.choice(HOURS_BY_CATEGORY[cat])
            hours = {d: base for d in WEEKDAYS}
            if cat in ("restaurant", "museum", "library") and rng.random() < 0.6:
                hours[rng.choice(["monday", "sunday"])] = "closed"
            if cat in ("cafe", "pharmacy", "supermarket", "library") and rng.random() < 0.5:
                hours["sunday"] = "closed" if rng.random() < 0.5 else "10:00-14:00"
            pid = w.new_id("PLC")
            street = rng.choice(streets)
            w.places[pid] = Place(
                place_id=pid, kind="poi", name=name, formatted_address=f"{rng.randint(1, 240)} {street}, {city}, {country}",
                city=city, country=country, lat=round(clat + rng.uniform(-0.03, 0.03), 5), lon=round(clon + rng.uniform(-0.035, 0.035), 5),
                zone=zone, category=cat, phone=f"+{DIAL[country]} {rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
                website=None if rng.random() < 0.3 else f"https://{name.lower().replace(' ', '').replace(chr(39), '').replace('.', '')}.example.com",
                rating=round(rng.uniform(2.6, 4.9), 1), price_level=rng.randint(1, 4) if cat in ("restaurant", "bar", "cafe", "hotel") else None,
                opening_hours=hours, permanently_closed=rng.random() < 0.05,
            )
            for _ in range(rng.randint(0, 4)):
                stars = rng.choice([5, 5, 4, 4, 4, 3, 3, 2, 1])
                rid = w.new_id("REV")
                w.reviews[rid] = Review(review_id=rid, place_id=pid, author=f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)[0]}.",
                                        rating=stars, text=rng.choice(REVIEW_TEXTS[stars]),
                                        date=f"202{rng.randint(4, 6)}-{rng.randint(1, 2):02d}-{rng.randint(1, 28):02d}")
    pois = [p for p in w.places.values() if p.kind == "poi"]
    for p in rng.sample(pois, k=8):
        w.saved[p.place_id] = SavedPlace(place_id=p.place_id, name=p.name, list_name=rng.choice(["favorites", "favorites", "want_to_go", "want_to_go", "other"]),  # type: ignore[arg-type]
                                         note=rng.choice([None, "Try on the weekend", "Recommended by Ana", "Good for meetings", None]),
                                         saved_on=f"2026-02-{rng.randint(1, 28):02d}")
    homes = [p for p in w.places.values() if p.kind == "address"]
    for lst, p in zip(("home", "work"), rng.sample(homes, k=2)):
        w.saved[p.place_id] = SavedPlace(place_id=p.place_id, name=p.name, list_name=lst, saved_on="2025-11-03")  # type: ignore[arg-type]
    return w


def _place(w: MapsWorld, place_id: str, arg: str = "place_id") -> Place:
    p = w.places.get(place_id)
    if p is None:
        raise not_found("place", place_id, f"{arg} must be a place id from geocode, search_places or search_nearby")
    return p


def _category(category: str) -> str:
    c = category.strip().lower().replace(" ", "_")
    if c not in CATEGORIES:
        raise InvalidArgument(f"unknown category {category!r}; valid categories: {', '.join(sorted(CATEGORIES))}")
    return c


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _open_at(p: Place, when: datetime) -> bool:
    if p.permanently_closed:
        return False
    t = when.hour * 60 + when.minute
    day = WEEKDAYS[when.weekday()]
    prev = WEEKDAYS[(when.weekday() - 1) % 7]
    for spec, offset in ((p.opening_hours.get(day, "closed"), 0), (p.opening_hours.get(prev, "closed"), 1440)):
        if spec == "closed":
            continue
        for span in spec.split(","):
            a, b = span.split("-")
            s, e = _minutes(a), _minutes(b)
            if e <= s:  # past midnight
                e += 1440
            if s <= t + offset < e:
                return True
    return False


def _when(value: str | None, arg: str) -> datetime:
    if value is None:
        return datetime.fromisoformat(NOW)
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise InvalidArgument(f"{arg} {value!r} is not a valid date-time (YYYY-MM-DDTHH:MM)") from None


PlaceId = Annotated[str, Field(description="Place id, e.g. 'PLC-0012' (from geocode, search_places or search_nearby)")]
DateTimeStr = Annotated[str | None, Field(description="Local date-time YYYY-MM-DDTHH:MM; defaults to now (2026-03-02T09:00, a Monday)", pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")]


class CityInfo(BaseModel):
    city: str
    country: str
    lat: float
    lon: float
    poi_count: int
    address_count: int


class CityList(BaseModel):
    cities: list[CityInfo]
    total: int


class CategoryList(BaseModel):
    categories: list[str]
    total: int


class PlaceSummary(BaseModel):
    place_id: str
    kind: PlaceKind
    name: str
    formatted_address: str
    city: str
    lat: float
    lon: float
    category: str | None = None
    rating: float | None = None
    distance_km: float | None = None
    open_now: bool | None = None


class PlaceList(BaseModel):
    places: list[PlaceSummary]
    total: int


class PlaceDetails(BaseModel):
    place_id: str
    kind: PlaceKind
    name: str
    formatted_address: str
    city: str
    country: str
    lat: float
    lon: float
    category: str | None
    phone: str | None
    website: str | None
    rating: float | None
    review_count: int
    price_level: int | None
    permanently_closed: bool
    open_now: bool | None
    saved_in: ListName | None


class ReverseGeocode(BaseModel):
    place_id: str
    formatted_address: str
    city: str
    country: str
    lat: float
    lon: float
    distance_m: int


class OpeningHours(BaseModel):
    place_id: str
    name: str
    hours: dict[str, str]
    permanently_closed: bool
    at: str
    open_at: bool
    next_change: str | None


class Route(BaseModel):
    origin_place_id: str
    destination_place_id: str
    mode: Mode
    distance_km: float
    duration_minutes: int
    summary: str
    steps: list[str]


class ModeOption(BaseModel):
    mode: Mode
    available: bool
    distance_km: float | None = None
    duration_minutes: int | None = None
    reason: str | None = None


class RouteComparison(BaseModel):
    origin_place_id: str
    destination_place_id: str
    options: list[ModeOption]
    fastest_mode: Mode | None


class Arrival(BaseModel):
    origin_place_id: str
    destination_place_id: str
    mode: Mode
    departure_time: str
    arrival_time: str
    duration_minutes: int
    open_on_arrival: bool | None


class ReviewList(BaseModel):
    place_id: str
    reviews: list[Review]
    total: int
    average_rating: float | None


class SavedPlaceList(BaseModel):
    saved_places: list[SavedPlace]
    total: int


class RemovedPlace(BaseModel):
    place_id: str
    removed: bool


def _summary(p: Place, origin: Place | None = None, when: datetime | None = None) -> PlaceSummary:
    return PlaceSummary(place_id=p.place_id, kind=p.kind, name=p.name, formatted_address=p.formatted_address, city=p.city,
                        lat=p.lat, lon=p.lon, category=p.category, rating=p.rating,
                        distance_km=None if origin is None else round(_km(origin.lat, origin.lon, p.lat, p.lon), 2),
                        open_now=None if p.kind != "poi" else _open_at(p, when or datetime.fromisoformat(NOW)))


def _route(a: Place, b: Place, mode: str) -> tuple[float, int]:
    """(distance_km, minutes) or raise NotFound when no route exists for the mode."""
    if a.place_id == b.place_id:
        raise InvalidArgument("origin_place_id and destination_place_id are the same place")
    if a.zone != b.zone and mode not in ZONE_LINKS.get(frozenset({a.zone, b.zone}), set()):
        allowed = sorted(ZONE_LINKS.get(frozenset({a.zone, b.zone}), set()))
        hint = f"; try mode {' or '.join(repr(m) for m in allowed)}" if allowed else "; no travel mode connects them"
        raise NotFound(f"no {mode} route from {a.place_id} ({a.name}, {a.city}) to {b.place_id} ({b.name}, {b.city}): "
                       f"they are separated by water{hint}")
    km = _km(a.lat, a.lon, b.lat, b.lon) * DETOUR[mode]
    if km > MAX_KM[mode]:
        raise NotFound(f"no {mode} route from {a.place_id} ({a.city}) to {b.place_id} ({b.city}): {km:.0f} km is beyond "
                       f"the {MAX_KM[mode]:.0f} km limit for {mode}; try mode 'driving' or 'transit'")
    if a.zone != b.zone:
        km += 2.0  # the bridge or ferry crossing
    if mode == "driving":
        speed = 28 if km < 25 else 85
    else:
        speed = {"walking": 4.8, "cycling": 15.0, "transit": 22.0 if km < 30 else 95.0}[mode]
    minutes = int(math.ceil(km / speed * 60)) + (6 if mode == "transit" else 0) + (10 if a.zone != b.zone and mode == "transit" else 0)
    return round(km, 2), max(1, minutes)


TOOLS: ToolSet[MapsWorld] = ToolSet()


@TOOLS.tool(read_only=True)
def list_cities(w: MapsWorld) -> CityList:
    """List the cities covered by the map, with their centre coordinates and how many places each has."""
    out = []
    for city, country, lat, lon, _zone, _streets in CITIES:
        ps = [p for p in w.places.values() if p.city == city]
        out.append(CityInfo(city=city, country=country, lat=lat, lon=lon, poi_count=sum(p.kind == "poi" for p in ps),
                            address_count=sum(p.kind == "address" for p in ps)))
    return CityList(cities=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_categories(w: MapsWorld) -> CategoryList:
    """List the point-of-interest categories accepted by search_nearby and search_places."""
    cats = sorted(CATEGORIES)
    return CategoryList(categories=cats, total=len(cats))


@TOOLS.tool(read_only=True)
def geocode(
    w: MapsWorld,
    address: Annotated[str, Field(description="Street address or place name, e.g. '12 Rua Augusta, Lisbon'", min_length=3)],
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
        raise not_found("address", address, "use a street address with number and city, e.g. '12 Rua Augusta, Lisbon'; list_cities shows covered cities")
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
    return ReverseGeocode(place_id=best.place_id, formatted_address=best.formatted_address, city=best.city, country=best.country,
                          lat=best.lat, lon=best.lon, distance_m=int(dist * 1000))


@TOOLS.tool(read_only=True)
def search_places(
    w: MapsWorld,
    query: Annotated[str, Field(description="Words in the place's name, e.g. 'museum' or 'Copper Grill'", min_length=2)],
    city: Annotated[str | None, Field(description="Only places in this city (from list_cities)")] = None,
    category: Annotated[str | None, Field(description="Only places of this category (from list_categories)")] = None,
) -> PlaceList:
    """Search points of interest by name, optionally within a city or category."""
    if city is not None and city.lower() not in {c[0].lower() for c in CITIES}:
        raise not_found("city", city, f"covered cities: {', '.join(c[0] for c in CITIES)}")
    cat = _category(category) if category is not None else None
    tokens = query.lower().split()
    out = [_summary(p) for p in w.places.values() if p.kind == "poi"
           and all(t in f"{p.name} {p.category}".lower() for t in tokens)
           and (city is None or p.city.lower() == city.lower()) and (cat is None or p.category == cat)]
    return PlaceList(places=out, total=len(out))


@TOOLS.tool(read_only=True)
def search_nearby(
    w: MapsWorld,
    place_id: Annotated[str, Field(description="Place id to search around (from geocode or search_places)")],
    category: Annotated[str, Field(description="Point-of-interest category, e.g. 'pharmacy' (from list_categories)")],
    radius_km: Annotated[float, Field(description="Search radius in kilometres", gt=0, le=50)] = 3.0,
    open_now: Annotated[bool, Field(description="Only places open now (2026-03-02T09:00)")] = False,
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
        if (s.distance_km or 0) > radius_km or (open_now and not s.open_now) or (min_rating is not None and (p.rating or 0) < min_rating):
            continue
        out.append(s)
    out.sort(key=lambda s: s.distance_km or 0)
    return PlaceList(places=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_place_details(w: MapsWorld, place_id: PlaceId) -> PlaceDetails:
    """Get a place's details: address, coordinates, category, phone, website, rating, price level and whether it is open now."""
    p = _place(w, place_id)
    saved = w.saved.get(place_id)
    return PlaceDetails(place_id=p.place_id, kind=p.kind, name=p.name, formatted_address=p.formatted_address, city=p.city,
                        country=p.country, lat=p.lat, lon=p.lon, category=p.category, phone=p.phone, website=p.website,
                        rating=p.rating, review_count=sum(r.place_id == place_id for r in w.reviews.values()),
                        price_level=p.price_level, permanently_closed=p.permanently_closed,
                        open_now=None if p.kind != "poi" else _open_at(p, datetime.fromisoformat(NOW)),
                        saved_in=saved.list_name if saved else None)


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
    return OpeningHours(place_id=p.place_id, name=p.name, hours=p.opening_hours, permanently_closed=p.permanently_closed,
                        at=when.strftime("%Y-%m-%dT%H:%M"), open_at=is_open, next_change=nxt)


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
    return Route(origin_place_id=a.place_id, destination_place_id=b.place_id, mode=mode, distance_km=km, duration_minutes=minutes,
                 summary=f"{verb} {km:.1f} km, about {minutes} min", steps=steps)


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
    return RouteComparison(origin_place_id=a.place_id, destination_place_id=b.place_id, options=opts,
                           fastest_mode=min(ok, key=lambda o: o.duration_minutes or 0).mode if ok else None)


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
    return Arrival(origin_place_id=a.place_id, destination_place_id=b.place_id, mode=mode,
                   departure_time=dep.strftime("%Y-%m-%dT%H:%M"), arrival_time=arr.strftime("%Y-%m-%dT%H:%M"),
                   duration_minutes=minutes, open_on_arrival=None if b.kind != "poi" else _open_at(b, arr))


@TOOLS.tool(read_only=True)
def list_place_reviews(
    w: MapsWorld,
    place_id: PlaceId,
    min_rating: Annotated[int | None, Field(description="Only reviews with at least this many stars", ge=1, le=5)] = None,
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
        raise StateConflict(f"place {place_id} ({p.name}) is already saved in '{w.saved[place_id].list_name}'; update_saved_place moves it")
    if list_name in ("home", "work"):
        taken = next((s for s in w.saved.values() if s.list_name == list_name), None)
        if taken is not None:
            raise StateConflict(f"'{list_name}' is already set to {taken.place_id} ({taken.name}); remove_saved_place it first")
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
            raise StateConflict(f"'{list_name}' is already set to {taken.place_id} ({taken.name}); remove_saved_place it first")
    if list_name is not None:
        s.list_name = list_name
    if note is not None:
        s.note = note
    return s


@TOOLS.tool(destructive=True, idempotent=True)
def remove_saved_place(w: MapsWorld, place_id: Annotated[str, Field(description="Place id of a saved place (from list_saved_places)")]) -> RemovedPlace:
    """Remove a place from your saved places."""
    if place_id not in w.saved:
        raise not_found("saved place", place_id, "list_saved_places shows saved place ids")
    del w.saved[place_id]
    return RemovedPlace(place_id=place_id, removed=True)


def build(seed: int = 0) -> EnvServer[MapsWorld]:
    """A fresh maps server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "maps", seeder=seed_world, category="travel",
        description="Maps: geocoding, reverse geocoding, routes by driving/walking/cycling/transit, points of interest near a place, opening hours, reviews and saved places. Now is 2026-03-02T09:00 (Monday).",
        tools=TOOLS, default_seed=seed,
    )
