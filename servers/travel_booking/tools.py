"""travel_booking tools, list_airports to enroll_loyalty_program (in tools/list order)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.kit import InvalidArgument, PermissionDenied, StateConflict, not_found
from servers.travel_booking.world import (
    CHANGE_FEE,
    NOW,
    TODAY,
    TOOLS,
    AirportCode,
    AirportList,
    Booking,
    BookingId,
    BookingKind,
    BookingList,
    BookingStatus,
    Cabin,
    CancelResult,
    ChangeResult,
    DateStr,
    Flight,
    FlightId,
    FlightList,
    HotelDetails,
    HotelId,
    HotelSummary,
    HotelSummaryList,
    Itinerary,
    ItineraryDetails,
    ItineraryList,
    LoyaltyAccount,
    RoomOfferList,
    Traveller,
    TravellerId,
    TravellerList,
    TravelWorld,
    _airport,
    _available,
    _booking,
    _code,
    _date_arg,
    _departed,
    _fare,
    _flight,
    _hotel,
    _itinerary_for,
    _nights,
    _traveller,
    earn,
    offer,
    pay_points,
    stay,
)


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
    date: Annotated[
        str | None,
        Field(
            description="Departure date YYYY-MM-DD (today or later); omit to list all upcoming flights on the route",
            pattern=r"^\d{4}-\d{2}-\d{2}$",
        ),
    ] = None,
    cabin: Annotated[Cabin | None, Field(description="Only flights that still have seats in this cabin")] = None,
    max_price: Annotated[
        float | None, Field(description="Only flights with a fare at or below this price (USD)", gt=0)
    ] = None,
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
    max_price_per_night: Annotated[
        float | None, Field(description="Only hotels with an available room at or below this nightly price", gt=0)
    ] = None,
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
        out.append(
            HotelSummary(
                hotel_id=h.hotel_id,
                name=h.name,
                city=h.city,
                stars=h.stars,
                rating=h.rating,
                check_in=check_in,
                check_out=check_out,
                available_rooms=sum(o.available for o in avail),
                fully_booked=not avail,
                lowest_price_per_night=min((o.price_per_night for o in avail), default=None),
            )
        )
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
    t = Traveller(
        traveller_id=tid,
        name=name.strip(),
        email=email,
        phone=phone or "",
        date_of_birth=date_of_birth,
        nationality=nationality.upper(),
        home_airport=code,
    )
    w.travellers[tid] = t
    return t


@TOOLS.tool()
def book_flight(
    w: TravelWorld,
    traveller_id: TravellerId,
    flight_id: FlightId,
    cabin: Annotated[Cabin, Field(description="Cabin to book")] = "economy",
    itinerary_id: Annotated[
        str | None, Field(description="Add the booking to this itinerary of the same traveller (from list_itineraries)")
    ] = None,
    pay_with_points: Annotated[
        bool, Field(description="Pay with loyalty points (1 point = $0.01) instead of card")
    ] = False,
) -> Booking:
    """Book one seat on a flight for a traveller in a cabin; fails if the flight has departed or the cabin is sold out."""
    _traveller(w, traveller_id)
    f = _flight(w, flight_id)
    if _departed(f):
        raise StateConflict(
            f"flight {flight_id} departed on {f.date} {f.departure_time}, before now ({NOW}); search_flights shows upcoming flights"
        )
    fa = _fare(f, cabin)
    if fa.seats_left <= 0:
        others = [x.cabin for x in f.fares if x.seats_left > 0]
        raise StateConflict(
            f"no seats left in {cabin} on flight {flight_id}"
            + (f"; seats remain in: {', '.join(others)}" if others else "; the flight is sold out")
        )
    it = _itinerary_for(w, itinerary_id, traveller_id)
    if any(
        b.traveller_id == traveller_id and b.flight_id == flight_id and b.status == "confirmed"
        for b in w.bookings.values()
    ):
        raise StateConflict(f"traveller {traveller_id} already holds a confirmed booking on flight {flight_id}")
    points = pay_points(w, traveller_id, fa.price) if pay_with_points else 0
    fa.seats_left -= 1
    n = w.counters.get("BKG", 0) + 1
    b = Booking(
        booking_id=w.new_id("BKG"),
        traveller_id=traveller_id,
        kind="flight",
        status="confirmed",
        confirmation_code=_code(w, n),
        itinerary_id=itinerary_id,
        flight_id=flight_id,
        cabin=cabin,
        price=fa.price,
        refundable=fa.refundable,
        paid_with_points=points,
        booked_on=TODAY,
    )
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
    itinerary_id: Annotated[
        str | None, Field(description="Add the booking to this itinerary of the same traveller (from list_itineraries)")
    ] = None,
    pay_with_points: Annotated[
        bool, Field(description="Pay with loyalty points (1 point = $0.01) instead of card")
    ] = False,
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
        raise StateConflict(
            msg
            + (f"; still available: {', '.join(others)}" if others else "; the hotel is fully booked for these dates")
        )
    it = _itinerary_for(w, itinerary_id, traveller_id)
    price = round(room.price_per_night * len(nights), 2)
    points = pay_points(w, traveller_id, price) if pay_with_points else 0
    for n in nights:
        room.booked[n] = room.booked.get(n, 0) + 1
    n = w.counters.get("BKG", 0) + 1
    b = Booking(
        booking_id=w.new_id("BKG"),
        traveller_id=traveller_id,
        kind="hotel",
        status="confirmed",
        confirmation_code=_code(w, n),
        itinerary_id=itinerary_id,
        hotel_id=room.hotel_id,
        room_id=room_id,
        check_in=check_in,
        check_out=check_out,
        price=price,
        refundable=room.refundable,
        paid_with_points=points,
        booked_on=TODAY,
    )
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
    out = [
        b
        for b in w.bookings.values()
        if (traveller_id is None or b.traveller_id == traveller_id)
        and (kind is None or b.kind == kind)
        and (status is None or b.status == status)
    ]
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
            raise StateConflict(
                f"flight {f.flight_id} of booking {booking_id} already departed on {f.date}; it cannot be cancelled"
            )
    elif (b.check_in or "") < TODAY:
        raise StateConflict(
            f"the stay of booking {booking_id} began on {b.check_in}, before today ({TODAY}); it cannot be cancelled"
        )
    if not b.refundable:
        hint = "; change_flight_booking can move it to another flight for a fee" if b.kind == "flight" else ""
        raise StateConflict(
            f"booking {booking_id} is a non-refundable {'fare' if b.kind == 'flight' else 'rate'} and cannot be cancelled{hint}"
        )
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
    return CancelResult(
        booking_id=booking_id,
        status="cancelled",
        refund_amount=0.0 if b.paid_with_points else b.price,
        points_refunded=b.paid_with_points,
    )


@TOOLS.tool()
def change_flight_booking(
    w: TravelWorld,
    booking_id: BookingId,
    new_flight_id: Annotated[
        str, Field(description="Flight id to move to; same origin and destination (from search_flights)")
    ],
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
        raise InvalidArgument(
            f"new_flight_id {new_flight_id} flies {new.origin}-{new.destination}; the booking is for {old.origin}-{old.destination}"
        )
    if _departed(new):
        raise StateConflict(
            f"flight {new_flight_id} departed on {new.date} {new.departure_time}; pick an upcoming flight"
        )
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
    return ChangeResult(
        booking_id=booking_id,
        old_flight_id=old.flight_id,
        flight_id=new.flight_id,
        cabin=cab,  # type: ignore[arg-type]
        price=b.price,
        fare_difference=diff,
        change_fee=fee,
        amount_charged=round(max(diff, 0) + fee, 2),
    )


@TOOLS.tool()
def create_itinerary(
    w: TravelWorld,
    traveller_id: TravellerId,
    name: Annotated[str, Field(description="Trip name, e.g. 'Lyon conference'", min_length=2, max_length=80)],
    booking_ids: Annotated[
        list[str], Field(description="Existing booking ids of the same traveller to group into the itinerary")
    ] = [],  # noqa: B006 -- never mutated (only iterated); [] keeps the schema default
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
    it = Itinerary(
        itinerary_id=w.new_id("ITN"),
        traveller_id=traveller_id,
        name=name.strip(),
        created_on=TODAY,
        booking_ids=[b.booking_id for b in bs],
    )
    for b in bs:
        b.itinerary_id = it.itinerary_id
    w.itineraries[it.itinerary_id] = it
    return ItineraryDetails(
        itinerary_id=it.itinerary_id,
        traveller_id=traveller_id,
        name=it.name,
        created_on=TODAY,
        bookings=bs,
        total_price=round(sum(b.price for b in bs if b.status == "confirmed"), 2),
    )


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
def get_itinerary(
    w: TravelWorld,
    itinerary_id: Annotated[str, Field(description="Itinerary id, e.g. 'ITN-0002' (from list_itineraries)")],
) -> ItineraryDetails:
    """Get an itinerary with all its bookings and the total price of the confirmed ones."""
    it = w.itineraries.get(itinerary_id)
    if it is None:
        raise not_found("itinerary", itinerary_id, "list_itineraries shows valid ids")
    bs = [w.bookings[b] for b in it.booking_ids]
    return ItineraryDetails(
        itinerary_id=it.itinerary_id,
        traveller_id=it.traveller_id,
        name=it.name,
        created_on=it.created_on,
        bookings=bs,
        total_price=round(sum(b.price for b in bs if b.status == "confirmed"), 2),
    )


@TOOLS.tool(read_only=True)
def get_loyalty_account(w: TravelWorld, traveller_id: TravellerId) -> LoyaltyAccount:
    """Get a traveller's Voyager Rewards loyalty account: member number, tier and points balance."""
    _traveller(w, traveller_id)
    acct = w.loyalty.get(traveller_id)
    if acct is None:
        raise not_found(
            "loyalty account of traveller",
            traveller_id,
            "the traveller is not enrolled; enroll_loyalty_program enrolls them",
        )
    return acct


@TOOLS.tool(idempotent=True)
def enroll_loyalty_program(w: TravelWorld, traveller_id: TravellerId) -> LoyaltyAccount:
    """Enroll a traveller in the Voyager Rewards loyalty program (blue tier, 0 points); later bookings earn points."""
    _traveller(w, traveller_id)
    if traveller_id in w.loyalty:
        raise StateConflict(
            f"traveller {traveller_id} is already enrolled as member {w.loyalty[traveller_id].member_number}"
        )
    lid = w.new_id("LOY")
    acct = LoyaltyAccount(
        loyalty_id=lid,
        traveller_id=traveller_id,
        member_number=f"VR{50000000 + int(lid.split('-')[1])}",
        tier="blue",
        points=0,
        enrolled_on=TODAY,
    )
    w.loyalty[traveller_id] = acct
    return acct
