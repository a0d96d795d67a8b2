"""travel_booking: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import math
import random
from datetime import date, datetime, timedelta

from servers.names import FIRST_NAMES, LAST_NAMES
from servers.travel_booking.world import (
    AIRLINES,
    AIRPORTS,
    AMENITIES,
    HOTEL_PREFIXES,
    HOTEL_SUFFIXES,
    STREETS,
    TIER_MULTIPLIER,
    TRIP_NAMES,
    Airport,
    Booking,
    Fare,
    Flight,
    Hotel,
    Itinerary,
    LoyaltyAccount,
    Room,
    Traveller,
    TravelWorld,
    _available,
    _code,
    _fare,
    _nights,
)


# --------------------------------------------------------------------------- helpers
def _km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371 * math.asin(math.sqrt(h))


def _seed_hotels(w: TravelWorld, rng: random.Random) -> None:
    """Hotels: 2-3 per city, some with fully booked windows."""
    # hotels: 2-3 per city, some with fully booked windows
    for _iata, city, *_ in AIRPORTS:
        for _ in range(rng.randint(2, 3)):
            hid = w.new_id("HTL")
            stars = rng.choice([2, 3, 3, 4, 4, 5])
            name = f"{rng.choice(HOTEL_PREFIXES)} {city} {rng.choice(HOTEL_SUFFIXES)}"
            w.hotels[hid] = Hotel(
                hotel_id=hid,
                name=name,
                city=city,
                address=f"{rng.randint(1, 220)} {rng.choice(STREETS)}, {city}",
                stars=stars,
                rating=round(min(5.0, rng.uniform(2.9, 3.8) + 0.25 * (stars - 2)), 1),
                amenities=sorted(rng.sample(AMENITIES, k=rng.randint(2, 6))),
            )
            full_from = rng.randint(2, 20) if rng.random() < 0.3 else None
            for rt, beds, guests, mult in (
                ("standard", "1 queen", 2, 1.0),
                ("deluxe", "1 king", 2, 1.45),
                ("suite", "1 king + sofa bed", 4, 2.4),
            ):
                if rt == "suite" and stars < 4:
                    continue
                rid = w.new_id("RM")
                room = Room(
                    room_id=rid,
                    hotel_id=hid,
                    room_type=rt,
                    beds=beds,
                    max_guests=guests,  # type: ignore[arg-type]
                    price_per_night=round((40 + 32 * stars) * mult * rng.uniform(0.85, 1.2), 2),
                    refundable=rng.random() < 0.65,
                    inventory=rng.randint(1, 5),
                )
                if full_from is not None:  # a conference week: the whole hotel is sold out
                    for i in range(rng.randint(3, 6)):
                        room.booked[(date(2026, 3, 1) + timedelta(days=full_from + i)).isoformat()] = room.inventory
                elif rng.random() < 0.3:  # this room type alone sold out for a few nights
                    start = rng.randint(1, 24)
                    for i in range(rng.randint(2, 4)):
                        room.booked[(date(2026, 3, 1) + timedelta(days=start + i)).isoformat()] = room.inventory
                w.rooms[rid] = room


def _seed_flights(w: TravelWorld, rng: random.Random, codes: list[str], coords: dict[str, tuple[float, float]]) -> None:
    """Flights between 18 airport pairs, with fares per cabin (some sold out)."""
    # flights: ~18 city pairs, both directions, 2-4 dates each between 2026-02-26 and 2026-03-28
    pairs = rng.sample([(a, b) for i, a in enumerate(codes) for b in codes[i + 1 :]], k=18)
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
                dep = datetime.combine(day0 + timedelta(days=off), datetime.min.time()).replace(
                    hour=dep_h, minute=dep_m
                )
                arr = dep + timedelta(minutes=minutes)
                base = round(45 + km * rng.uniform(0.07, 0.11), 2)
                fares = []
                for cabin, mult, cap, refund_p in (
                    ("economy", 1.0, 60, 0.3),
                    ("premium_economy", 1.7, 20, 0.6),
                    ("business", 3.6, 8, 1.0),
                ):
                    if cabin == "premium_economy" and km < 1500:
                        continue  # short hops have no premium economy
                    zero = rng.random() < (0.12 if cabin == "economy" else 0.22)
                    fares.append(
                        Fare(
                            cabin=cabin,
                            price=round(base * mult * rng.uniform(0.9, 1.25), 2),  # type: ignore[arg-type]
                            seats_left=0 if zero else rng.randint(1, cap),
                            refundable=rng.random() < refund_p,
                        )
                    )
                w.flights[fid] = Flight(
                    flight_id=fid,
                    flight_number=number,
                    airline=airline,
                    origin=o,
                    destination=d,
                    date=dep.date().isoformat(),
                    departure_time=dep.strftime("%H:%M"),
                    arrival_time=arr.strftime("%H:%M") + ("" if arr.date() == dep.date() else " +1"),
                    duration_minutes=minutes,
                    fares=fares,
                )


def _seed_travellers(w: TravelWorld, rng: random.Random, codes: list[str]) -> None:
    """Travellers, most with a loyalty account."""
    nationalities = ["PT", "US", "GB", "FR", "ES", "IE", "NO", "CA", "DE", "BR", "IN", "JP"]
    used: set[str] = set()
    for _ in range(26):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        while f"{first} {last}" in used:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        used.add(f"{first} {last}")
        tid = w.new_id("TRV")
        w.travellers[tid] = Traveller(
            traveller_id=tid,
            name=f"{first} {last}",
            email=f"{first.lower()}.{last.lower()}@example.com",
            phone=f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            date_of_birth=f"{rng.randint(1950, 2006)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            nationality=rng.choice(nationalities),
            home_airport=rng.choice(codes),
        )
        if rng.random() < 0.7:
            tier = rng.choice(["blue", "blue", "silver", "silver", "gold", "platinum"])
            w.loyalty[tid] = LoyaltyAccount(
                loyalty_id=w.new_id("LOY"),
                traveller_id=tid,
                member_number=f"VR{rng.randint(10**7, 10**8 - 1)}",
                tier=tier,
                points=0 if rng.random() < 0.15 else rng.randint(500, 90000),  # type: ignore[arg-type]
                enrolled_on=f"20{rng.randint(16, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            )


def seed_world(rng: random.Random, seed: int) -> TravelWorld:
    w = TravelWorld(seed=seed)
    coords: dict[str, tuple[float, float]] = {}
    for code, city, name, lat, lon in AIRPORTS:
        w.airports[code] = Airport(code=code, city=city, name=name)
        coords[code] = (lat, lon)
    codes = [a[0] for a in AIRPORTS]
    _seed_flights(w, rng, codes, coords)
    _seed_hotels(w, rng)
    _seed_travellers(w, rng, codes)  # travellers and loyalty accounts

    # existing bookings and itineraries
    flights = list(w.flights.values())
    rooms = list(w.rooms.values())
    for tid in rng.sample(list(w.travellers), k=16):
        itin: Itinerary | None = None
        if rng.random() < 0.6:
            itin = Itinerary(
                itinerary_id=w.new_id("ITN"),
                traveller_id=tid,
                name=rng.choice(TRIP_NAMES),
                created_on=f"2026-02-{rng.randint(1, 27):02d}",
            )
            w.itineraries[itin.itinerary_id] = itin
        for _ in range(rng.randint(1, 3)):
            booked_on = f"2026-02-{rng.randint(1, 25):02d}"
            if rng.random() < 0.65:
                f = rng.choice(flights)
                fa = rng.choice([x for x in f.fares])
                if fa.seats_left <= 0:
                    continue
                fa.seats_left -= 1
                b = Booking(
                    booking_id=w.new_id("BKG"),
                    traveller_id=tid,
                    kind="flight",
                    status="confirmed",
                    confirmation_code=_code(rng, 0),
                    flight_id=f.flight_id,
                    cabin=fa.cabin,
                    price=fa.price,
                    refundable=fa.refundable,
                    booked_on=booked_on,
                )
            else:
                room = rng.choice(rooms)
                start = date(2026, 3, 1) + timedelta(days=rng.randint(0, 22))
                ci, co = start.isoformat(), (start + timedelta(days=rng.randint(1, 4))).isoformat()
                nights = _nights(ci, co)
                if _available(room, nights) <= 0:
                    continue
                for n in nights:
                    room.booked[n] = room.booked.get(n, 0) + 1
                b = Booking(
                    booking_id=w.new_id("BKG"),
                    traveller_id=tid,
                    kind="hotel",
                    status="confirmed",
                    confirmation_code=_code(rng, 0),
                    hotel_id=room.hotel_id,
                    room_id=room.room_id,
                    check_in=ci,
                    check_out=co,
                    price=round(room.price_per_night * len(nights), 2),
                    refundable=room.refundable,
                    booked_on=booked_on,
                )
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
