"""maps: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, NotFound, ToolSet, World, not_found

Mode = Literal["driving", "walking", "cycling", "transit"]
PlaceKind = Literal["address", "poi"]
ListName = Literal["favorites", "want_to_go", "home", "work", "other"]
Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NOW = f"{REFERENCE_DAY}T09:00"  # a Monday
WEEKDAYS: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

# city, country, centre lat/lon, zone (routes exist only within a zone or across a listed link), streets
CITIES: list[tuple[str, str, float, float, str, list[str]]] = [
    (
        "Lisbon",
        "Portugal",
        38.7223,
        -9.1393,
        "iberia",
        ["Rua Augusta", "Avenida da Liberdade", "Rua do Ouro", "Rua da Prata", "Calcada do Combro", "Rua Garrett"],
    ),
    (
        "Almada",
        "Portugal",
        38.6790,
        -9.1569,
        "tagus_south",
        ["Rua Capitao Leitao", "Avenida Dom Nuno Alvares Pereira", "Rua Candido dos Reis"],
    ),
    (
        "Porto",
        "Portugal",
        41.1579,
        -8.6291,
        "iberia",
        ["Rua de Santa Catarina", "Avenida dos Aliados", "Rua das Flores", "Rua de Cedofeita"],
    ),
    (
        "Madrid",
        "Spain",
        40.4168,
        -3.7038,
        "iberia",
        ["Calle Mayor", "Gran Via", "Calle de Alcala", "Calle de Atocha", "Paseo del Prado"],
    ),
    (
        "Lyon",
        "France",
        45.7640,
        4.8357,
        "iberia",
        ["Rue de la Republique", "Quai Saint-Antoine", "Rue Merciere", "Cours Lafayette"],
    ),
    (
        "Dublin",
        "Ireland",
        53.3498,
        -6.2603,
        "ireland",
        ["Grafton Street", "O'Connell Street", "Dame Street", "Camden Street"],
    ),
    (
        "Leeds",
        "United Kingdom",
        53.8008,
        -1.5491,
        "britain",
        ["Briggate", "Boar Lane", "Park Row", "Kirkgate", "The Headrow"],
    ),
    (
        "Boston",
        "United States",
        42.3601,
        -71.0589,
        "north_america",
        ["Boylston Street", "Newbury Street", "Tremont Street", "Hanover Street", "Beacon Street"],
    ),
    (
        "Toronto",
        "Canada",
        43.6532,
        -79.3832,
        "north_america",
        ["Queen Street West", "King Street East", "Yonge Street", "Spadina Avenue"],
    ),
    (
        "Seattle",
        "United States",
        47.6062,
        -122.3321,
        "north_america",
        ["Pike Street", "Pine Street", "1st Avenue", "Westlake Avenue"],
    ),
]
# modes that can cross between two different zones (a bridge for cars, a ferry for transit)
ZONE_LINKS: dict[frozenset[str], set[str]] = {frozenset({"iberia", "tagus_south"}): {"driving", "transit"}}
DIAL = {
    "Portugal": 351,
    "Spain": 34,
    "France": 33,
    "Ireland": 353,
    "United Kingdom": 44,
    "United States": 1,
    "Canada": 1,
}
DETOUR = {"driving": 1.3, "walking": 1.2, "cycling": 1.25, "transit": 1.4}
MAX_KM = {"walking": 60.0, "cycling": 250.0, "transit": 1500.0, "driving": 5000.0}

CATEGORIES: dict[str, tuple[list[str], list[str]]] = {
    "restaurant": (
        ["Tasca", "Bistro", "Kitchen", "Grill", "Trattoria", "Table"],
        ["Olive", "Harbor", "Copper", "Saffron", "Lantern", "Fig"],
    ),
    "cafe": (
        ["Cafe", "Coffee House", "Roasters", "Espresso Bar"],
        ["Morning", "Blue Door", "Velvet", "Corner", "Little Bean"],
    ),
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
DateTimeStr = Annotated[
    str | None,
    Field(
        description=f"Local date-time YYYY-MM-DDTHH:MM; defaults to now ({NOW}, a Monday)",
        pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$",
    ),
]


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
    return PlaceSummary(
        place_id=p.place_id,
        kind=p.kind,
        name=p.name,
        formatted_address=p.formatted_address,
        city=p.city,
        lat=p.lat,
        lon=p.lon,
        category=p.category,
        rating=p.rating,
        distance_km=None if origin is None else round(_km(origin.lat, origin.lon, p.lat, p.lon), 2),
        open_now=None if p.kind != "poi" else _open_at(p, when or datetime.fromisoformat(NOW)),
    )


def _route(a: Place, b: Place, mode: str) -> tuple[float, int]:
    """(distance_km, minutes) or raise NotFound when no route exists for the mode."""
    if a.place_id == b.place_id:
        raise InvalidArgument("origin_place_id and destination_place_id are the same place")
    if a.zone != b.zone and mode not in ZONE_LINKS.get(frozenset({a.zone, b.zone}), set()):
        allowed = sorted(ZONE_LINKS.get(frozenset({a.zone, b.zone}), set()))
        hint = f"; try mode {' or '.join(repr(m) for m in allowed)}" if allowed else "; no travel mode connects them"
        raise NotFound(
            f"no {mode} route from {a.place_id} ({a.name}, {a.city}) to {b.place_id} ({b.name}, {b.city}): "
            f"they are separated by water{hint}"
        )
    km = _km(a.lat, a.lon, b.lat, b.lon) * DETOUR[mode]
    if km > MAX_KM[mode]:
        raise NotFound(
            f"no {mode} route from {a.place_id} ({a.city}) to {b.place_id} ({b.city}): {km:.0f} km is beyond "
            f"the {MAX_KM[mode]:.0f} km limit for {mode}; try mode 'driving' or 'transit'"
        )
    if a.zone != b.zone:
        km += 2.0  # the bridge or ferry crossing
    if mode == "driving":
        speed = 28 if km < 25 else 85
    else:
        speed = {"walking": 4.8, "cycling": 15.0, "transit": 22.0 if km < 30 else 95.0}[mode]
    minutes = (
        int(math.ceil(km / speed * 60))
        + (6 if mode == "transit" else 0)
        + (10 if a.zone != b.zone and mode == "transit" else 0)
    )
    return round(km, 2), max(1, minutes)


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[MapsWorld] = ToolSet()
