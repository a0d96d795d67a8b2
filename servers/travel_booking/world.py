"""travel_booking: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

import math
import random
from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found

Cabin = Literal["economy", "premium_economy", "business"]
RoomType = Literal["standard", "deluxe", "suite"]
BookingKind = Literal["flight", "hotel"]
BookingStatus = Literal["confirmed", "cancelled"]
Tier = Literal["blue", "silver", "gold", "platinum"]
NOW = f"{REFERENCE_DAY}T09:00:00"
TODAY = REFERENCE_DAY
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
AIRLINES = [
    ("Aurora Airways", "AU"),
    ("Meridian Air", "MR"),
    ("Cobalt Wings", "CW"),
    ("Northstar", "NS"),
    ("Iberwind", "IW"),
]
HOTEL_PREFIXES = [
    "Grand",
    "Harbor View",
    "Old Town",
    "Riverside",
    "Park",
    "Central",
    "Garden",
    "Skyline",
    "Royal",
    "Station",
]
HOTEL_SUFFIXES = ["Hotel", "Inn", "Suites", "Residences", "Boutique Hotel", "Lodge"]
AMENITIES = [
    "wifi",
    "breakfast",
    "gym",
    "pool",
    "spa",
    "parking",
    "airport_shuttle",
    "restaurant",
    "bar",
    "pet_friendly",
]
STREETS = [
    "Market Street",
    "Station Road",
    "River Walk",
    "King Street",
    "Harbour Lane",
    "Elm Avenue",
    "Cathedral Square",
    "Mill Road",
]
TRIP_NAMES = [
    "Spring conference",
    "Family visit",
    "Client workshop",
    "Weekend getaway",
    "Team offsite",
    "Research trip",
]


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


def _nights(check_in: str, check_out: str) -> list[str]:
    d0, d1 = date.fromisoformat(check_in), date.fromisoformat(check_out)
    return [(d0 + timedelta(days=i)).isoformat() for i in range((d1 - d0).days)]


def _code(rng_or_world: random.Random | TravelWorld, n: int) -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    if isinstance(rng_or_world, random.Random):
        return "".join(rng_or_world.choice(alphabet) for _ in range(6))
    # deterministic code derived from the booking counter
    x = n * 2654435761 % (32**6)
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
        raise not_found(
            "traveller", traveller_id, "list_travellers shows valid traveller ids; add_traveller creates one"
        )
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
        raise not_found(
            "itinerary", itinerary_id, "list_itineraries shows a traveller's itineraries; create_itinerary makes one"
        )
    if it.traveller_id != traveller_id:
        raise PermissionDenied(f"itinerary {itinerary_id} belongs to traveller {it.traveller_id}, not {traveller_id}")
    return it


def _airport(w: TravelWorld, name: str, code: str) -> str:
    code = code.upper()
    if code not in w.airports:
        raise not_found(
            "airport", code, f"{name} must be an IATA code from list_airports: {', '.join(sorted(w.airports))}"
        )
    return code


TravellerId = Annotated[str, Field(description="Traveller id, e.g. 'TRV-0004' (from list_travellers)")]
FlightId = Annotated[str, Field(description="Flight id, e.g. 'FL-0012' (from search_flights)")]
HotelId = Annotated[str, Field(description="Hotel id, e.g. 'HTL-0003' (from search_hotels)")]
BookingId = Annotated[str, Field(description="Booking id, e.g. 'BKG-0007' (from list_bookings)")]
DateStr = Annotated[str, Field(description="Date as YYYY-MM-DD", pattern=r"^\d{4}-\d{2}-\d{2}$")]
AirportCode = Annotated[
    str, Field(description="3-letter IATA airport code, e.g. 'LIS' (from list_airports)", pattern=r"^[A-Za-z]{3}$")
]


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


def offer(room: Room, check_in: str, check_out: str) -> RoomOffer:
    nights = _nights(check_in, check_out)
    return RoomOffer(
        room_id=room.room_id,
        hotel_id=room.hotel_id,
        room_type=room.room_type,
        beds=room.beds,
        max_guests=room.max_guests,
        price_per_night=room.price_per_night,
        total_price=round(room.price_per_night * len(nights), 2),
        refundable=room.refundable,
        available=max(0, _available(room, nights)),
        check_in=check_in,
        check_out=check_out,
    )


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
        raise StateConflict(
            f"traveller {traveller_id} has no loyalty account; enroll_loyalty_program first or pay by card"
        )
    need = int(math.ceil(price / POINT_VALUE))
    if acct.points < need:
        raise StateConflict(f"not enough loyalty points: {need} needed, traveller {traveller_id} has {acct.points}")
    acct.points -= need
    return need


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[TravelWorld] = ToolSet()
