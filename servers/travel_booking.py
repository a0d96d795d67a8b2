"""travel_booking: flights, hotels, travellers, bookings, itineraries and loyalty points."""

from __future__ import annotations

import math
import random
from datetime import date, datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import EnvServer, InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found
from servers.names import FIRST_NAMES, LAST_NAMES

Cabin = Literal["economy", "premium_economy", "business"]
RoomType = Literal["standard", "deluxe", "suite"]
BookingKind = Literal["flight", "hotel"]
BookingStatus = Literal["confirmed", "cancelled"]
Tier = Literal["blue", "silver", "gold", "platinum"]
NOW = "2026-03-02T09:00:00"
TODAY = "2026-03-02"
CABINS: tuple[str, ...] = ("economy", "premium_economy", "business")
CHANGE_FEE = 75.0
POINT_VALUE = 0.01  # one loyalty point is worth one cent when paying with points
TIER_MULTIPLIER = {"blue": 1.0, "silver": 1.25, "gold": 1.5, "platinum": 2.0}

AIRPORTS: list[tuple[str, str, str, float, float]] = [
    ("LIS", "Lisbon", "Humberto Delgado Airport", 38.7742, -9.1342),
    ("DEN", "Denver", "Denver International Airport", 39.8561, -104.6737),
    ("AUS", "Austin", "Austin-Bergstrom International Airport", 30.1975, -97.6664),
    ("LBA", "Leeds", "Leeds Bradford Airport", 53.8659, -1.6606),
    ("LYS", "Lyon", "Lyon-Saint Exupery Airport", 45.7256, 5.0811),
    ("OPO", "Porto", "Francisco Sa Carneiro Airport", 41.2481, -8.6814),
    ("BOS", "Boston", "Logan International Airport", 42.3656, -71.0096),
    ("DUB", "Dublin", "Dublin Airport", 53.4264, -6.2499),
    ("SEA", "Seattle", "Seattle-Tacoma International Airport", 47.4502, -122.3088),
    ("MAD", "Madrid", "Adolfo Suarez Madrid-Barajas Airport", 40.4983, -3.5676),
    ("OSL", "Oslo", "Oslo Gardermoen Airport", 60.1976, 11.1004),
    ("YYZ", "Toronto", "Toronto Pearson International Airport", 43.6777, -79.6248),
]
AIRLINES = [("Aurora Airways", "AU"), ("Meridian Air", "MR"), ("Cobalt Wings", "CW"), ("Northstar", "NS"), ("Iberwind", "IW")]
HOTEL_PREFIXES = ["Grand", "Harbor View", "Old Town", "Riverside", "Park", "Central", "Garden", "Skyline", "Royal", "Station"]
HOTEL_SUFFIXES = ["Hotel", "Inn", "Suites", "Residences", "Boutique Hotel", "Lodge"]
AMENITIES = ["wifi", "breakfast", "gym", "pool", "spa", "parking", "airport_shuttle", "restaurant", "bar", "pet_friendly"]
STREETS = ["Market Street", "Station Road", "River Walk", "King Street", "Harbour Lane", "Elm Avenue", "Cathedral Square", "Mill Road"]
TRIP_NAMES = ["Spring conference", "Family visit", "Client workshop", "Weekend getaway", "Team offsite", "Research trip"]


class Airport(BaseModel):
    code: str
    city: str
    name: str


class Fare(BaseModel):
    cabin: Cabin
    price: float
    seats_left: int
    refundable: bool


class Flight(BaseModel):
    flight_id: str
    flight_number: str
    airline: str
    origin: str
    destination: str
    date: str
    departure_time: str
    arrival_time: str
    duration_minutes: int
    fares: list[Fare]


class Room(BaseModel):
    room_id: str
    hotel_id: str
    room_type: RoomType
    beds: str
    max_guests: int
    price_per_night: float
    refundable: bool
    inventory: int
    booked: dict[str, int] = {}  # night (YYYY-MM-DD) -> rooms taken


class Hotel(BaseModel):
    hotel_id: str
    name: str
    city: str
    address: str
    stars: int
    rating: float
    amenities: list[str]


class Traveller(BaseModel):
    traveller_id: str
    name: str
    email: str
    phone: str
    date_of_birth: str
    nationality: str
    home_airport: str


class LoyaltyAccount(BaseModel):
    loyalty_id: str
    traveller_id: str
    program: str = "Voyager Rewards"
    member_number: str
    tier: Tier
    points: int
    enrolled_on: str


class Booking(BaseModel):
    booking_id: str
    traveller_id: str
    kind: BookingKind
    status: BookingStatus
    confirmation_code: str
    itinerary_id: str | None = None
    flight_id: str | None = None
    cabin: Cabin | None = None
    hotel_id: str | None = None
    room_id: str | None = None
    check_in: str | None = None
    check_out: str | None = None
    price: float
    currency: str = "USD"
    refundable: bool
    paid_with_points: int = 0
    points_earned: int = 0
    booked_on: str


class Itinerary(BaseModel):
    itinerary_id: str
    traveller_id: str
    name: str
    created_on: str
    booking_ids: list[str] = []


class TravelWorld(World):
    airports: dict[str, Airport] = {}
    flights: dict[str, Flight] = {}
    hotels: dict[str, Hotel] = {}
    rooms: dict[str, Room] = {}
    travellers: dict[str, Traveller] = {}
    loyalty: dict[str, LoyaltyAccount] = {}  # by traveller_id
    bookings: dict[str, Booking] = {}
    itineraries: dict[str, Itinerary] = {}


# --------------------------------------------------------------------------- helpers
def _km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371 * math.asin(math.sqrt(h))


def _nights(check_in: str, check_out: str) -> list[str]:
    d0, d1 = date.fromisoformat(check_in), date.fromisoformat(check_out)
    return [(d0 + timedelta(days=i)).isoformat() for i in range((d1 - d0).days)]


def _code(rng_or_world: random.Random | TravelWorld, n: int) -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    if isinstance(rng_or_world, random.Random):
        return "".join(rng_or_world.choice(alphabet) for _ in range(6))
    # deterministic code derived from the booking counter
    x = n * 2654435761 % (32 ** 6)
    out = ""
    for _ in range(6):
        out += alphabet[x % 32]
        x //= 32
    return out


def _available(room: Room, nights: list[str]) -> int:
    return min((room.inventory - room.booked.get(n, 0) for n in nights), default=room.inventory)


def _departed(f: Flight) -> bool:
    return f"{f.date}T{f.departure_time}:00" <= NOW


def _fare(f: Flight, cabin: str) -> Fare:
    for fa in f.fares:
        if fa.cabin == cabin:
            return fa
    raise InvalidArgument(f"flight {f.flight_id} has no {cabin} cabin; cabins: {', '.join(x.cabin for x in f.fares)}")


def seed_world(rng: random.Random, seed: int) -> TravelWorld:
    w = TravelWorld(seed=seed)
    coords: dict[str, tuple[float, float]] = {}
    for code, city, name, lat, lon in AIRPORTS:
        w.airports[code] = Airport(code=code, city=city, name=name)
        coords[code] = (lat, lon)
    codes = [a[0] for a in AIRPORTS]

    # flights: ~18 city pairs, both directions, 2-4 dates each between 2026-02-26 and 2026-03-28
    pairs = rng.sample([(a, b) for i, a in enumerate(codes) for b in codes[i + 1:]], k=18)
    day0 = date(2026, 2, 26)
    for a, b in pairs:
        airline, prefix = rng.choice(AIRLINES)
        km = _km(coords[a], coords[b])
        minutes = int(km / 820 * 60 + 40)
        for o, d in ((a, b), (b, a)):
            number = f"{prefix} {rng.randint(100, 2999)}"
            days = sorted(rng.sample(range(0, 31), k=rng.randint(2, 4)))
            if rng.random() < 0.5:  # many routes also fly today or tomorrow
                days = sorted(set(days) | {rng.choice([4, 5])})
            dep_h, dep_m = rng.randint(6, 21), rng.choice([0, 10, 15, 25, 30, 40, 45, 55])
            for off in days:
                fid = w.new_id("FL")
                dep = datetime.combine(day0 + timedelta(days=off), datetime.min.time()).replace(hour=dep_h, minute=dep_m)
                arr = dep + timedelta(minutes=minutes)
                base = round(45 + km * rng.uniform(0.07, 0.11), 2)
                fares = []
                for cabin, mult, cap, refund_p in (("economy", 1.0, 60, 0.3), ("premium_economy", 1.7, 20, 0.6), ("business", 3.6, 8, 1.0)):
                    if cabin == "premium_economy" and km < 1500:
                        continue  # short hops have no premium economy
                    zero = rng.random() < (0.12 if cabin == "economy" else 0.22)
                    fares.append(Fare(cabin=cabin, price=round(base * mult * rng.uniform(0.9, 1.25), 2),  # type: ignore[arg-type]
                                      seats_left=0 if zero else rng.randint(1, cap), refundable=rng.random() < refund_p))
                w.flights[fid] = Flight(
                    flight_id=fid, flight_number=number, airline=airline, origin=o, destination=d,
                    date=dep.date().isoformat(), departure_time=dep.strftime("%H:%M"),
                    arrival_time=arr.strftime("%H:%M") + ("" if arr.date() == dep.date() else " +1"),
                    duration_minutes=minutes, fares=fares,
                )

    # hotels: 2-3 per city, some with fully booked windows
    for code, city, *_ in AIRPORTS:
        for _ in range(rng.randint(2, 3)):
            hid = w.new_id("HTL")
            stars = rng.choice([2, 3, 3, 4, 4, 5])
            name = f"{rng.choice(HOTEL_PREFIXES)} {city} {rng.choice(HOTEL_SUFFIXES)}"
            w.hotels[hid] = Hotel(
                hotel_id=hid, name=name, city=city, address=f"{rng.randint(1, 220)} {rng.choice(STREETS)}, {city}",
                stars=stars, rating=round(min(5.0, rng.uniform(2.9, 3.8) + 0.25 * (stars - 2)), 1),
                amenities=sorted(rng.sample(AMENITIES, k=rng.randint(2, 6))),
            )
            full_from = rng.randint(2, 20) if rng.random() < 0.3 else None
            for rt, beds, guests, mult in (("standard", "1 queen", 2, 1.0), ("deluxe", "1 king", 2, 1.45), ("suite", "1 king + sofa bed", 4, 2.4)):
                if rt == "suite" and stars < 4:
                    continue
                rid = w.new_id("RM")
                room = Room(room_id=rid, hotel_id=hid, room_type=rt, beds=beds, max_guests=guests,  # type: ignore[arg-type]
                            price_per_night=round((40 + 32 * stars) * mult * rng.uniform(0.85, 1.2), 2),
                            refundable=rng.random() < 0.65, inventory=rng.randint(1, 5))
                if full_from is not None:  # a conference week: the whole hotel is sold out
                    for i in range(rng.randint(3, 6)):
                        room.booked[(date(2026, 3, 1) + timedelta(days=full_from + i)).isoformat()] = room.inventory
                elif rng.random() < 0.3:  # this room type alone sold out for a few nights
                    start = rng.randint(1, 24)
                    for i in range(rng.randint(2, 4)):
                        room.booked[(date(2026, 3, 1) + timedelta(days=start + i)).isoformat()] = room.inventory
                w.rooms[rid] = room

    # travellers and loyalty accounts
    nationalities = ["PT", "US", "GB", "FR", "ES", "IE", "NO", "CA", "DE", "BR", "IN", "JP"]
    used: set[str] = set()
    for _ in range(26):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        while f"{first} {last}" in used:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        used.add(f"{first} {last}")
        tid = w.new_id("TRV")
        w.travellers[tid] = Traveller(
            traveller_id=tid, name=f"{first} {last}", email=f"{first.lower()}.{last.lower()}@example.com",
            phone=f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            date_of_birth=f"{rng.randint(1950, 2006)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            nationality=rng.choice(nationalities), home_airport=rng.choice(codes),
        )
        if rng.random() < 0.7:
            tier = rng.choice(["blue", "blue", "silver", "silver", "gold", "platinum"])
            w.loyalty[tid] = LoyaltyAccount(
                loyalty_id=w.new_id("LOY"), traveller_id=tid, member_number=f"VR{rng.randint(10**7, 10**8 - 1)}",
                tier=tier, points=0 if rng.random() < 0.15 else rng.randint(500, 90000),  # type: ignore[arg-type]
                enrolled_on=f"20{rng.randint(16, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            )

    # existing bookings and itineraries
    flights = list(w.flights.values())
    rooms = list(w.rooms.values())
    for tid in rng.sample(list(w.travellers), k=16):
        itin: Itinerary | None = None
        if rng.random() < 0.6:
            itin = Itinerary(itinerary_id=w.new_id("ITN"), traveller_id=tid, name=rng.choice(TRIP_NAMES),
                             created_on=f"2026-02-{rng.randint(1, 27):02d}")
            w.itineraries[itin.itinerary_id] = itin
        for _ in range(rng.randint(1, 3)):
            booked_on = f"2026-02-{rng.randint(1, 25):02d}"
            if rng.random() < 0.65:
                f = rng.choice(flights)
                fa = rng.choice([x for x in f.fares])
                if fa.seats_left <= 0:
                    continue
                fa.seats_left -= 1
                b = Booking(booking_id=w.new_id("BKG"), traveller_id=tid, kind="flight", status="confirmed",
                            confirmation_code=_code(rng, 0), flight_id=f.flight_id, cabin=fa.cabin, price=fa.price,
                            refundable=fa.refundable, booked_on=booked_on)
            else:
                room = rng.choice(rooms)
                start = date(2026, 3, 1) + timedelta(days=rng.randint(0, 22))
                ci, co = start.isoformat(), (start + timedelta(days=rng.randint(1, 4))).isoformat()
                nights = _nights(ci, co)
                if _available(room, nights) <= 0:
                    continue
                for n in nights:
                    room.booked[n] = room.booked.get(n, 0) + 1
                b = Booking(booking_id=w.new_id("BKG"), traveller_id=tid, kind="hotel", status="confirmed",
                            confirmation_code=_code(rng, 0), hotel_id=room.hotel_id, room_id=room.room_id,
                            check_in=ci, check_out=co, price=round(room.price_per_night * len(nights), 2),
                            refundable=room.refundable, booked_on=booked_on)
            if rng.random() < 0.12 and b.refundable:  # a refunded cancellation: give the seat or room back
                b.status = "cancelled"
                if b.kind == "flight":
                    _fare(w.flights[b.flight_id or ""], b.cabin or "economy").seats_left += 1
                else:
                    room = w.rooms[b.room_id or ""]
                    for n in _nights(b.check_in or "", b.check_out or ""):
                        room.booked[n] -= 1
            acct = w.loyalty.get(tid)
            if acct is not None and b.status == "confirmed":
                b.points_earned = int(b.price * 5 * TIER_MULTIPLIER[acct.tier])
            if itin is not None:
                b.itinerary_id = itin.itinerary_id
                itin.booking_ids.append(b.booking_id)
            w.bookings[b.booking_id] = b
    return w


def _date_arg(name: str, value: str, *, future: bool = True) -> date:
    try:
        d = date.fromisoformat(value)
    except ValueError:
        raise InvalidArgument(f"{name} {value!r} is not a valid calendar date (YYYY-MM-DD)") from None
    if future and value < TODAY:
        raise InvalidArgument(f"{name} {value} is in the past; today is {TODAY}, choose {TODAY} or later")
    return d


def _traveller(w: TravelWorld, traveller_id: str) -> Traveller:
    t = w.travellers.get(traveller_id)
    if t is None:
        raise not_found("traveller", traveller_id, "list_travellers shows valid traveller ids; add_traveller creates one")
    return t


def _flight(w: TravelWorld, flight_id: str) -> Flight:
    f = w.flights.get(flight_id)
    if f is None:
        raise not_found("flight", flight_id, "search_flights shows flights on a route")
    return f


def _hotel(w: TravelWorld, hotel_id: str) -> Hotel:
    h = w.hotels.get(hotel_id)
    if h is None:
        raise not_found("hotel", hotel_id, "search_hotels shows the hotels of a city")
    return h


def _booking(w: TravelWorld, booking_id: str) -> Booking:
    b = w.bookings.get(booking_id)
    if b is None:
        raise not_found("booking", booking_id, "list_bookings shows a traveller's bookings")
    return b


def _itinerary_for(w: TravelWorld, itinerary_id: str | None, traveller_id: str) -> Itinerary | None:
    if itinerary_id is None:
        return None
    it = w.itineraries.get(itinerary_id)
    if it is None:
        raise not_found("itinerary", itinerary_id, "list_itineraries shows a traveller's itineraries; create_itinerary makes one")
    if it.traveller_id != traveller_id:
        raise PermissionDenied(f"itinerary {itinerary_id} belongs to traveller {it.traveller_id}, not {traveller_id}")
    return it


def _airport(w: TravelWorld, name: str, code: str) -> str:
    code = code.upper()
    if code not in w.airports:
        raise not_found("airport", code, f"{name} must be an IATA code from list_airports: {', '.join(sorted(w.airports))}")
    return code


TravellerId = Annotated[str, Field(description="Traveller id, e.g. 'TRV-0004' (from list_travellers)")]
FlightId = Annotated[str, Field(description="Flight id, e.g. 'FL-0012' (from search_flights)")]
HotelId = Annotated[str, Field(description="Hotel id, e.g. 'HTL-0003' (from search_hotels)")]
BookingId = Annotated[str, Field(description="Booking id, e.g. 'BKG-0007' (from list_bookings)")]
DateStr = Annotated[str, Field(description="Date as YYYY-MM-DD", pattern=r"^\d{4}-\d{2}-\d{2}$")]
AirportCode = Annotated[str, Field(description="3-letter IATA airport code, e.g. 'LIS' (from list_airports)", pattern=r"^[A-Za-z]{3}$")]


class AirportList(BaseModel):
    airports: list[Airport]
    total: int


class FlightList(BaseModel):
    flights: list[Flight]
    total: int


class HotelSummary(BaseModel):
    hotel_id: str
    name: str
    city: str
    stars: int
    rating: float
    check_in: str
    check_out: str
    available_rooms: int
    fully_booked: bool
    lowest_price_per_night: float | None


class HotelSummaryList(BaseModel):
    hotels: list[HotelSummary]
    total: int


class HotelDetails(Hotel):
    room_ids: list[str]


class RoomOffer(BaseModel):
    room_id: str
    hotel_id: str
    room_type: RoomType
    beds: str
    max_guests: int
    price_per_night: float
    total_price: float
    refundable: bool
    available: int
    check_in: str
    check_out: str


class RoomOfferList(BaseModel):
    rooms: list[RoomOffer]
    total: int


class TravellerList(BaseModel):
    travellers: list[Traveller]
    total: int


class BookingList(BaseModel):
    bookings: list[Booking]
    total: int


class CancelResult(BaseModel):
    booking_id: str
    status: BookingStatus
    refund_amount: float
    points_refunded: int


class ChangeResult(BaseModel):
    booking_id: str
    old_flight_id: str
    flight_id: str
    cabin: Cabin
    price: float
    fare_difference: float
    change_fee: float
    amount_charged: float


class ItineraryList(BaseModel):
    itineraries: list[Itinerary]
    total: int


class ItineraryDetails(BaseModel):
    itinerary_id: str
    traveller_id: str
    name: str
    created_on: str
    bookings: list[Booking]
    total_price: float


TOOLS: ToolSet[TravelWorld] = ToolSet()


def offer(room: Room, check_in: str, check_out: str) -> RoomOffer:
    nights = _nights(check_in, check_out)
    return RoomOffer(room_id=room.room_id, hotel_id=room.hotel_id, room_type=room.room_type, beds=room.beds,
                     max_guests=room.max_guests, price_per_night=room.price_per_night,
                     total_price=round(room.price_per_night * len(nights), 2), refundable=room.refundable,
                     available=max(0, _available(room, nights)), check_in=check_in, check_out=check_out)


def stay(check_in: str, check_out: str) -> None:
    _date_arg("check_in", check_in)
    _date_arg("check_out", check_out, future=False)
    if check_out <= check_in:
        raise InvalidArgument(f"check_out {check_out} must be after check_in {check_in}")
    if len(_nights(check_in, check_out)) > 30:
        raise InvalidArgument("a stay can be at most 30 nights")


def earn(w: TravelWorld, b: Booking) -> None:
    acct = w.loyalty.get(b.traveller_id)
    if acct is not None and b.paid_with_points == 0:
        b.points_earned = int(b.price * 5 * TIER_MULTIPLIER[acct.tier])
        acct.points += b.points_earned


def pay_points(w: TravelWorld, traveller_id: str, price: float) -> int:
    acct = w.loyalty.get(traveller_id)
    if acct is None:
        raise StateConflict(f"traveller {traveller_id} has no loyalty account; enroll_loyalty_program first or pay by card")
    need = int(math.ceil(price / POINT_VALUE))
    if acct.points < need:
        raise StateConflict(f"not enough loyalty points: {need} needed, traveller {traveller_id} has {acct.points}")
    acct.points -= need
    return need


@TOOLS.tool(read_only=True)
def list_airports(w: TravelWorld) -> AirportList:
    """List the airports served, with their IATA codes and cities (use the codes in search_flights)."""
    out = list(w.airports.values())
    return AirportList(airports=out, total=len(out))


@TOOLS.tool(read_only=True)
def search_flights(
    w: TravelWorld,
    origin: AirportCode,
    destination: AirportCode,
    date: Annotated[str | None, Field(description="Departure date YYYY-MM-DD (today or later); omit to list all upcoming flights on the route", pattern=r"^\d{4}-\d{2}-\d{2}$")] = None,
    cabin: Annotated[Cabin | None, Field(description="Only flights that still have seats in this cabin")] = None,
    max_price: Annotated[float | None, Field(description="Only flights with a fare at or below this price (USD)", gt=0)] = None,
) -> FlightList:
    """Search scheduled flights from origin to destination, with fares and seats left by cabin."""
    o, d = _airport(w, "origin", origin), _airport(w, "destination", destination)
    if o == d:
        raise InvalidArgument("origin and destination must differ")
    if date is not None:
        _date_arg("date", date)
    out = []
    for f in w.flights.values():
        if f.origin != o or f.destination != d or _departed(f) or (date is not None and f.date != date):
            continue
        fares = [fa for fa in f.fares if cabin is None or fa.cabin == cabin]
        if cabin is not None and not any(fa.seats_left > 0 for fa in fares):
            continue
        if max_price is not None and not any(fa.price <= max_price for fa in fares):
            continue
        out.append(f)
    out.sort(key=lambda f: (f.date, f.departure_time))
    return FlightList(flights=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_flight(w: TravelWorld, flight_id: FlightId) -> Flight:
    """Get one flight: airline, route, schedule, and the fare, seats left and refundability of each cabin."""
    return _flight(w, flight_id)


@TOOLS.tool(read_only=True)
def search_hotels(
    w: TravelWorld,
    city: Annotated[str, Field(description="City name, e.g. 'Lisbon' (cities of list_airports)", min_length=2)],
    check_in: DateStr,
    check_out: DateStr,
    min_stars: Annotated[int | None, Field(description="Only hotels with at least this many stars", ge=1, le=5)] = None,
    max_price_per_night: Annotated[float | None, Field(description="Only hotels with an available room at or below this nightly price", gt=0)] = None,
) -> HotelSummaryList:
    """Search hotels in a city for a stay, with rooms available and the lowest nightly price; fully booked hotels are flagged."""
    stay(check_in, check_out)
    cities = {h.city.lower() for h in w.hotels.values()}
    if city.lower() not in cities:
        raise not_found("city", city, f"hotels exist in: {', '.join(sorted({h.city for h in w.hotels.values()}))}")
    out = []
    for h in w.hotels.values():
        if h.city.lower() != city.lower() or (min_stars is not None and h.stars < min_stars):
            continue
        offers = [offer(r, check_in, check_out) for r in w.rooms.values() if r.hotel_id == h.hotel_id]
        avail = [o for o in offers if o.available > 0]
        if max_price_per_night is not None:
            avail = [o for o in avail if o.price_per_night <= max_price_per_night]
            if not avail and any(o.available > 0 for o in offers):
                continue
        out.append(HotelSummary(hotel_id=h.hotel_id, name=h.name, city=h.city, stars=h.stars, rating=h.rating,
                                check_in=check_in, check_out=check_out, available_rooms=sum(o.available for o in avail),
                                fully_booked=not avail,
                                lowest_price_per_night=min((o.price_per_night for o in avail), default=None)))
    return HotelSummaryList(hotels=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_hotel(w: TravelWorld, hotel_id: HotelId) -> HotelDetails:
    """Get a hotel's details: address, stars, rating, amenities and its room ids."""
    h = _hotel(w, hotel_id)
    return HotelDetails(**h.model_dump(), room_ids=[r.room_id for r in w.rooms.values() if r.hotel_id == hotel_id])


@TOOLS.tool(read_only=True)
def list_hotel_rooms(w: TravelWorld, hotel_id: HotelId, check_in: DateStr, check_out: DateStr) -> RoomOfferList:
    """List a hotel's room types for a stay with nightly and total price, refundability and how many are still available."""
    _hotel(w, hotel_id)
    stay(check_in, check_out)
    out = [offer(r, check_in, check_out) for r in w.rooms.values() if r.hotel_id == hotel_id]
    return RoomOfferList(rooms=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_travellers(
    w: TravelWorld,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the traveller's name")] = None,
) -> TravellerList:
    """List the travellers (passenger profiles) on file, optionally filtered by name."""
    out = [t for t in w.travellers.values() if name_contains is None or name_contains.lower() in t.name.lower()]
    return TravellerList(travellers=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_traveller(w: TravelWorld, traveller_id: TravellerId) -> Traveller:
    """Get a traveller's profile: contact details, date of birth, nationality and home airport."""
    return _traveller(w, traveller_id)


@TOOLS.tool()
def add_traveller(
    w: TravelWorld,
    name: Annotated[str, Field(description="Full name as on the passport", min_length=3)],
    email: Annotated[str, Field(description="Contact email", pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")],
    date_of_birth: Annotated[str, Field(description="Date of birth YYYY-MM-DD", pattern=r"^\d{4}-\d{2}-\d{2}$")],
    nationality: Annotated[str, Field(description="2-letter country code, e.g. 'PT'", pattern=r"^[A-Za-z]{2}$")],
    home_airport: AirportCode,
    phone: Annotated[str | None, Field(description="Contact phone number")] = None,
) -> Traveller:
    """Add a traveller (passenger profile) so flights and hotels can be booked for them."""
    _date_arg("date_of_birth", date_of_birth, future=False)
    if date_of_birth >= TODAY:
        raise InvalidArgument(f"date_of_birth {date_of_birth} must be before today ({TODAY})")
    code = _airport(w, "home_airport", home_airport)
    if any(t.email.lower() == email.lower() for t in w.travellers.values()):
        raise StateConflict(f"a traveller with email {email} already exists; list_travellers finds it")
    tid = w.new_id("TRV")
    t = Traveller(traveller_id=tid, name=name.strip(), email=email, phone=phone or "", date_of_birth=date_of_birth,
                  nationality=nationality.upper(), home_airport=code)
    w.travellers[tid] = t
    return t


@TOOLS.tool()
def book_flight(
    w: TravelWorld,
    traveller_id: TravellerId,
    flight_id: FlightId,
    cabin: Annotated[Cabin, Field(description="Cabin to book")] = "economy",
    itinerary_id: Annotated[str | None, Field(description="Add the booking to this itinerary of the same traveller (from list_itineraries)")] = None,
    pay_with_points: Annotated[bool, Field(description="Pay with loyalty points (1 point = $0.01) instead of card")] = False,
) -> Booking:
    """Book one seat on a flight for a traveller in a cabin; fails if the flight has departed or the cabin is sold out."""
    _traveller(w, traveller_id)
    f = _flight(w, flight_id)
    if _departed(f):
        raise StateConflict(f"flight {flight_id} departed on {f.date} {f.departure_time}, before now ({NOW}); search_flights shows upcoming flights")
    fa = _fare(f, cabin)
    if fa.seats_left <= 0:
        others = [x.cabin for x in f.fares if x.seats_left > 0]
        raise StateConflict(f"no seats left in {cabin} on flight {flight_id}" + (f"; seats remain in: {', '.join(others)}" if others else "; the flight is sold out"))
    it = _itinerary_for(w, itinerary_id, traveller_id)
    if any(b.traveller_id == traveller_id and b.flight_id == flight_id and b.status == "confirmed" for b in w.bookings.values()):
        raise StateConflict(f"traveller {traveller_id} already holds a confirmed booking on flight {flight_id}")
    points = pay_points(w, traveller_id, fa.price) if pay_with_points else 0
    fa.seats_left -= 1
    n = w.counters.get("BKG", 0) + 1
    b = Booking(booking_id=w.new_id("BKG"), traveller_id=traveller_id, kind="flight", status="confirmed",
                confirmation_code=_code(w, n), itinerary_id=itinerary_id, flight_id=flight_id, cabin=cabin,
                price=fa.price, refundable=fa.refundable, paid_with_points=points, booked_on=TODAY)
    earn(w, b)
    w.bookings[b.booking_id] = b
    if it is not None:
        it.booking_ids.append(b.booking_id)
    return b


@TOOLS.tool()
def book_hotel(
    w: TravelWorld,
    traveller_id: TravellerId,
    room_id: Annotated[str, Field(description="Room id, e.g. 'RM-0005' (from list_hotel_rooms)")],
    check_in: DateStr,
    check_out: DateStr,
    itinerary_id: Annotated[str | None, Field(description="Add the booking to this itinerary of the same traveller (from list_itineraries)")] = None,
    pay_with_points: Annotated[bool, Field(description="Pay with loyalty points (1 point = $0.01) instead of card")] = False,
) -> Booking:
    """Book a hotel room for a traveller from check_in to check_out; fails if the room type is fully booked on any night."""
    _traveller(w, traveller_id)
    room = w.rooms.get(room_id)
    if room is None:
        raise not_found("room", room_id, "list_hotel_rooms shows a hotel's room ids")
    stay(check_in, check_out)
    nights = _nights(check_in, check_out)
    if _available(room, nights) <= 0:
        hotel = w.hotels[room.hotel_id]
        others = [r.room_type for r in w.rooms.values() if r.hotel_id == room.hotel_id and _available(r, nights) > 0]
        full = [n for n in nights if room.booked.get(n, 0) >= room.inventory]
        msg = f"{room.room_type} rooms at {hotel.name} ({room.hotel_id}) are fully booked on {', '.join(full)}"
        raise StateConflict(msg + (f"; still available: {', '.join(others)}" if others else "; the hotel is fully booked for these dates"))
    it = _itinerary_for(w, itinerary_id, traveller_id)
    price = round(room.price_per_night * len(nights), 2)
    points = pay_points(w, traveller_id, price) if pay_with_points else 0
    for n in nights:
        room.booked[n] = room.booked.get(n, 0) + 1
    n = w.counters.get("BKG", 0) + 1
    b = Booking(booking_id=w.new_id("BKG"), traveller_id=traveller_id, kind="hotel", status="confirmed",
                confirmation_code=_code(w, n), itinerary_id=itinerary_id, hotel_id=room.hotel_id, room_id=room_id,
                check_in=check_in, check_out=check_out, price=price, refundable=room.refundable,
                paid_with_points=points, booked_on=TODAY)
    earn(w, b)
    w.bookings[b.booking_id] = b
    if it is not None:
        it.booking_ids.append(b.booking_id)
    return b


@TOOLS.tool(read_only=True)
def list_bookings(
    w: TravelWorld,
    traveller_id: Annotated[str | None, Field(description="Only bookings of this traveller id")] = None,
    kind: Annotated[BookingKind | None, Field(description="Only flight or only hotel bookings")] = None,
    status: Annotated[BookingStatus | None, Field(description="Only bookings in this status")] = None,
) -> BookingList:
    """List bookings, filtered by traveller, kind (flight/hotel) or status."""
    if traveller_id is not None:
        _traveller(w, traveller_id)
    out = [b for b in w.bookings.values()
           if (traveller_id is None or b.traveller_id == traveller_id)
           and (kind is None or b.kind == kind) and (status is None or b.status == status)]
    return BookingList(bookings=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_booking(w: TravelWorld, booking_id: BookingId) -> Booking:
    """Get one booking: what was booked, price, refundability, points and status."""
    return _booking(w, booking_id)


@TOOLS.tool(destructive=True, idempotent=True)
def cancel_booking(w: TravelWorld, booking_id: BookingId) -> CancelResult:
    """Cancel a confirmed booking and refund it; non-refundable fares and rooms, and past trips, cannot be cancelled."""
    b = _booking(w, booking_id)
    if b.status == "cancelled":
        raise StateConflict(f"booking {booking_id} is already cancelled")
    if b.kind == "flight":
        f = w.flights[b.flight_id or ""]
        if _departed(f):
            raise StateConflict(f"flight {f.flight_id} of booking {booking_id} already departed on {f.date}; it cannot be cancelled")
    elif (b.check_in or "") < TODAY:
        raise StateConflict(f"the stay of booking {booking_id} began on {b.check_in}, before today ({TODAY}); it cannot be cancelled")
    if not b.refundable:
        hint = "; change_flight_booking can move it to another flight for a fee" if b.kind == "flight" else ""
        raise StateConflict(f"booking {booking_id} is a non-refundable {'fare' if b.kind == 'flight' else 'rate'} and cannot be cancelled{hint}")
    b.status = "cancelled"
    if b.kind == "flight":
        _fare(w.flights[b.flight_id or ""], b.cabin or "economy").seats_left += 1
    else:
        room = w.rooms[b.room_id or ""]
        for n in _nights(b.check_in or "", b.check_out or ""):
            room.booked[n] = max(0, room.booked.get(n, 0) - 1)
    acct = w.loyalty.get(b.traveller_id)
    if acct is not None:
        acct.points = max(0, acct.points - b.points_earned + b.paid_with_points)
    return CancelResult(booking_id=booking_id, status="cancelled",
                        refund_amount=0.0 if b.paid_with_points else b.price, points_refunded=b.paid_with_points)


@TOOLS.tool()
def change_flight_booking(
    w: TravelWorld,
    booking_id: BookingId,
    new_flight_id: Annotated[str, Field(description="Flight id to move to; same origin and destination (from search_flights)")],
    cabin: Annotated[Cabin | None, Field(description="Cabin on the new flight; defaults to the booked cabin")] = None,
) -> ChangeResult:
    """Move a confirmed flight booking to another flight on the same route; non-refundable fares pay a $75 change fee plus any fare difference."""
    b = _booking(w, booking_id)
    if b.kind != "flight":
        raise InvalidArgument(f"booking {booking_id} is a hotel booking; only flight bookings can be changed")
    if b.status != "confirmed":
        raise StateConflict(f"booking {booking_id} is {b.status}; only confirmed bookings can be changed")
    old = w.flights[b.flight_id or ""]
    if _departed(old):
        raise StateConflict(f"flight {old.flight_id} of booking {booking_id} already departed on {old.date}")
    new = _flight(w, new_flight_id)
    if new.flight_id == old.flight_id and (cabin is None or cabin == b.cabin):
        raise InvalidArgument(f"booking {booking_id} is already on flight {new_flight_id} in {b.cabin}")
    if (new.origin, new.destination) != (old.origin, old.destination):
        raise InvalidArgument(f"new_flight_id {new_flight_id} flies {new.origin}-{new.destination}; the booking is for {old.origin}-{old.destination}")
    if _departed(new):
        raise StateConflict(f"flight {new_flight_id} departed on {new.date} {new.departure_time}; pick an upcoming flight")
    cab = cabin or b.cabin or "economy"
    fa = _fare(new, cab)
    if fa.seats_left <= 0:
        raise StateConflict(f"no seats left in {cab} on flight {new_flight_id}")
    diff = round(fa.price - b.price, 2)
    fee = 0.0 if b.refundable else CHANGE_FEE
    _fare(old, b.cabin or "economy").seats_left += 1
    fa.seats_left -= 1
    b.flight_id, b.cabin = new.flight_id, cab  # type: ignore[assignment]
    b.price = max(b.price, fa.price)
    b.refundable = b.refundable and fa.refundable
    return ChangeResult(booking_id=booking_id, old_flight_id=old.flight_id, flight_id=new.flight_id, cabin=cab,  # type: ignore[arg-type]
                        price=b.price, fare_difference=diff, change_fee=fee, amount_charged=round(max(diff, 0) + fee, 2))


@TOOLS.tool()
def create_itinerary(
    w: TravelWorld,
    traveller_id: TravellerId,
    name: Annotated[str, Field(description="Trip name, e.g. 'Lyon conference'", min_length=2, max_length=80)],
    booking_ids: Annotated[list[str], Field(description="Existing booking ids of the same traveller to group into the itinerary")] = [],
) -> ItineraryDetails:
    """Create an itinerary (a named trip) for a traveller, optionally grouping existing bookings into it."""
    _traveller(w, traveller_id)
    bs = []
    for bid in booking_ids:
        b = _booking(w, bid)
        if b.traveller_id != traveller_id:
            raise PermissionDenied(f"booking {bid} belongs to traveller {b.traveller_id}, not {traveller_id}")
        if b.itinerary_id is not None:
            raise StateConflict(f"booking {bid} is already part of itinerary {b.itinerary_id}")
        bs.append(b)
    it = Itinerary(itinerary_id=w.new_id("ITN"), traveller_id=traveller_id, name=name.strip(), created_on=TODAY,
                   booking_ids=[b.booking_id for b in bs])
    for b in bs:
        b.itinerary_id = it.itinerary_id
    w.itineraries[it.itinerary_id] = it
    return ItineraryDetails(itinerary_id=it.itinerary_id, traveller_id=traveller_id, name=it.name, created_on=TODAY,
                            bookings=bs, total_price=round(sum(b.price for b in bs if b.status == "confirmed"), 2))


@TOOLS.tool(read_only=True)
def list_itineraries(
    w: TravelWorld,
    traveller_id: Annotated[str | None, Field(description="Only itineraries of this traveller id")] = None,
) -> ItineraryList:
    """List itineraries (named trips grouping bookings), optionally of one traveller."""
    if traveller_id is not None:
        _traveller(w, traveller_id)
    out = [i for i in w.itineraries.values() if traveller_id is None or i.traveller_id == traveller_id]
    return ItineraryList(itineraries=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_itinerary(w: TravelWorld, itinerary_id: Annotated[str, Field(description="Itinerary id, e.g. 'ITN-0002' (from list_itineraries)")]) -> ItineraryDetails:
    """Get an itinerary with all its bookings and the total price of the confirmed ones."""
    it = w.itineraries.get(itinerary_id)
    if it is None:
        raise not_found("itinerary", itinerary_id, "list_itineraries shows valid ids")
    bs = [w.bookings[b] for b in it.booking_ids]
    return ItineraryDetails(itinerary_id=it.itinerary_id, traveller_id=it.traveller_id, name=it.name, created_on=it.created_on,
                            bookings=bs, total_price=round(sum(b.price for b in bs if b.status == "confirmed"), 2))


@TOOLS.tool(read_only=True)
def get_loyalty_account(w: TravelWorld, traveller_id: TravellerId) -> LoyaltyAccount:
    """Get a traveller's Voyager Rewards loyalty account: member number, tier and points balance."""
    _traveller(w, traveller_id)
    acct = w.loyalty.get(traveller_id)
    if acct is None:
        raise not_found("loyalty account of traveller", traveller_id, "the traveller is not enrolled; enroll_loyalty_program enrolls them")
    return acct


@TOOLS.tool(idempotent=True)
def enroll_loyalty_program(w: TravelWorld, traveller_id: TravellerId) -> LoyaltyAccount:
    """Enroll a traveller in the Voyager Rewards loyalty program (blue tier, 0 points); later bookings earn points."""
    _traveller(w, traveller_id)
    if traveller_id in w.loyalty:
        raise StateConflict(f"traveller {traveller_id} is already enrolled as member {w.loyalty[traveller_id].member_number}")
    lid = w.new_id("LOY")
    acct = LoyaltyAccount(loyalty_id=lid, traveller_id=traveller_id, member_number=f"VR{50000000 + int(lid.split('-')[1])}",
                          tier="blue", points=0, enrolled_on=TODAY)
    w.loyalty[traveller_id] = acct
    return acct


def build(seed: int = 0) -> EnvServer[TravelWorld]:
    """A fresh travel_booking server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "travel_booking", seeder=seed_world, category="travel",
        description="Travel booking: flight and hotel search, travellers, bookings (book/change/cancel), itineraries and loyalty points. Today is 2026-03-02.",
        tools=TOOLS, default_seed=seed,
    )
