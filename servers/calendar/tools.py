"""calendar tools, get_current_time to create_calendar (in tools/list order)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Annotated, Literal

from pydantic import Field

from servers.calendar.world import (
    DATE_PATTERN,
    DT_PATTERN,
    HHMM,
    TOOLS,
    Access,
    Attendee,
    Calendar,
    CalendarId,
    CalendarList,
    CalendarWorld,
    Color,
    ContactList,
    End,
    Event,
    EventDetail,
    EventId,
    EventList,
    InviteResult,
    Now,
    Occurrence,
    OccurrenceList,
    RemoveResult,
    ResponseResult,
    RoomList,
    Slot,
    SlotList,
    Start,
    _busy_for,
    _check_capacity,
    _check_future,
    _check_range,
    _conflict,
    _contact,
    _detail,
    _dt,
    _editable,
    _event,
    _fmt,
    _raise_conflict,
    _recurrence,
    _room,
    _writable,
    occurrences,
)
from servers.kit import InvalidArgument, StateConflict, not_found


@TOOLS.tool(read_only=True)
def get_current_time(w: CalendarWorld) -> Now:
    """Get the current date and time of this calendar and your own contact id (events you create are organized by you)."""
    me = w.contacts[w.me_id]
    return Now(now=w.now, weekday=_dt(w.now).strftime("%A"), contact_id=me.contact_id, name=me.name, email=me.email)


@TOOLS.tool(read_only=True)
def list_calendars(
    w: CalendarWorld,
    access: Annotated[Access | None, Field(description="Only calendars where you have this access level")] = None,
) -> CalendarList:
    """List the calendars you can see, with your access level (owner/writer can add events; reader is read-only)."""
    out = [c for c in w.calendars.values() if access is None or c.access == access]
    return CalendarList(calendars=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_contacts(
    w: CalendarWorld,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the name or email")] = None,
    department: Annotated[str | None, Field(description="Only people in this department, e.g. 'Engineering'")] = None,
) -> ContactList:
    """List people who can be invited to events, optionally filtered by name or department."""
    q = (name_contains or "").lower()
    out = [
        c
        for c in w.contacts.values()
        if (not q or q in c.name.lower() or q in c.email.lower())
        and (department is None or c.department.lower() == department.lower())
    ]
    return ContactList(contacts=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_rooms(
    w: CalendarWorld,
    min_capacity: Annotated[
        int | None, Field(description="Only rooms holding at least this many people", ge=1, le=100)
    ] = None,
    building: Annotated[Literal["HQ", "Annex"] | None, Field(description="Only rooms in this building")] = None,
    has_video: Annotated[
        bool | None, Field(description="Only rooms with (true) or without (false) video equipment")
    ] = None,
    start: Annotated[
        str | None, Field(description="With end: only rooms free from this time (YYYY-MM-DDTHH:MM)", pattern=DT_PATTERN)
    ] = None,
    end: Annotated[
        str | None,
        Field(description="With start: only rooms free until this time (YYYY-MM-DDTHH:MM)", pattern=DT_PATTERN),
    ] = None,
) -> RoomList:
    """List meeting rooms by capacity, building and equipment; with start and end, only rooms free in that window."""
    if (start is None) != (end is None):
        raise InvalidArgument("give both start and end to filter by availability, or neither")
    probe = None
    if start is not None and end is not None:
        _check_range(start, end)
        probe = Event(
            event_id="", calendar_id="", title="", start=start, end=end, organizer_id="", created_at="", updated_at=""
        )
    out = [
        r
        for r in w.rooms.values()
        if (min_capacity is None or r.capacity >= min_capacity)
        and (building is None or r.building == building)
        and (has_video is None or r.has_video == has_video)
        and (probe is None or _conflict(w, probe, None, r.room_id, None) is None)
    ]
    return RoomList(rooms=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_events(
    w: CalendarWorld,
    date_from: Annotated[
        str | None, Field(description="First day to include, YYYY-MM-DD (default: today)", pattern=DATE_PATTERN)
    ] = None,
    date_to: Annotated[
        str | None,
        Field(
            description="Last day to include, YYYY-MM-DD (default: 7 days after date_from); at most 92 days after date_from",
            pattern=DATE_PATTERN,
        ),
    ] = None,
    calendar_id: Annotated[str | None, Field(description="Only events of this calendar id")] = None,
    attendee_id: Annotated[
        str | None, Field(description="Only events this contact id organizes or is invited to")
    ] = None,
    include_cancelled: Annotated[bool, Field(description="Also list cancelled events")] = False,
) -> OccurrenceList:
    """List event occurrences in a date range (recurring events are expanded), filtered by calendar or attendee, in time order."""
    try:
        d0 = date.fromisoformat(date_from) if date_from else _dt(w.now).date()
        d1 = date.fromisoformat(date_to) if date_to else d0 + timedelta(days=7)
    except ValueError as exc:
        raise InvalidArgument(f"date_from/date_to must be real dates YYYY-MM-DD: {exc}") from None
    if d1 < d0:
        raise InvalidArgument(f"invalid range: date_to {d1} is before date_from {d0}")
    if (d1 - d0).days > 92:
        raise InvalidArgument("the range may span at most 92 days; narrow date_from/date_to")
    if calendar_id is not None and calendar_id not in w.calendars:
        raise not_found("calendar", calendar_id, "list_calendars shows valid ids")
    if attendee_id is not None:
        _contact(w, attendee_id, "attendee_id")
    lo, hi = datetime.combine(d0, datetime.min.time()), datetime.combine(d1 + timedelta(days=1), datetime.min.time())
    out: list[Occurrence] = []
    for ev in w.events.values():
        if (ev.status == "cancelled" and not include_cancelled) or (calendar_id and ev.calendar_id != calendar_id):
            continue
        if attendee_id and ev.organizer_id != attendee_id and all(a.contact_id != attendee_id for a in ev.attendees):
            continue
        mine = next((a.response for a in ev.attendees if a.contact_id == w.me_id), None)
        for s, e in occurrences(ev, lo, hi):
            out.append(
                Occurrence(
                    event_id=ev.event_id,
                    title=ev.title,
                    start=_fmt(s),
                    end=_fmt(e),
                    calendar_id=ev.calendar_id,
                    organizer_id=ev.organizer_id,
                    room_id=ev.room_id,
                    location=ev.location,
                    status=ev.status,
                    is_recurring=ev.recurrence is not None,
                    my_response=mine,
                )
            )
    out.sort(key=lambda o: (o.start, o.event_id))
    return OccurrenceList(events=out, total=len(out), date_from=d0.isoformat(), date_to=d1.isoformat())


@TOOLS.tool(read_only=True)
def search_events(
    w: CalendarWorld,
    query: Annotated[
        str,
        Field(description="Words to look for in the title, description or location (case-insensitive)", min_length=1),
    ],
    include_cancelled: Annotated[bool, Field(description="Also return cancelled events")] = False,
    limit: Annotated[int, Field(description="At most this many events", ge=1, le=100)] = 20,
) -> EventList:
    """Search events (whole series, not single occurrences) by words in the title, description or location."""
    terms = query.lower().split()
    out = []
    for ev in w.events.values():
        if ev.status == "cancelled" and not include_cancelled:
            continue
        text = " ".join([ev.title, ev.description, ev.location or ""]).lower()
        if all(t in text for t in terms):
            out.append(ev)
    out.sort(key=lambda e: (e.start, e.event_id))
    return EventList(events=out[:limit], total=len(out[:limit]))


@TOOLS.tool(read_only=True)
def get_event(w: CalendarWorld, event_id: EventId) -> EventDetail:
    """Get an event's full details: times, organizer, attendees and their responses, room, recurrence and next occurrences."""
    return _detail(w, _event(w, event_id))


@TOOLS.tool(read_only=True)
def find_free_slots(
    w: CalendarWorld,
    date: Annotated[str, Field(description="The day to search, YYYY-MM-DD", pattern=DATE_PATTERN)],
    duration_minutes: Annotated[int, Field(description="Length of the meeting in minutes", ge=15, le=480)],
    attendee_ids: Annotated[
        list[str] | None, Field(description="Contact ids who must all be free (default: only you)")
    ] = None,
    room_id: Annotated[str | None, Field(description="Room id that must also be free")] = None,
    day_start: Annotated[str, Field(description="Earliest start, HH:MM", pattern=HHMM)] = "09:00",
    day_end: Annotated[str, Field(description="Latest end, HH:MM", pattern=HHMM)] = "18:00",
) -> SlotList:
    """Find open time windows on one day when all given people (and optionally a room) are free for the requested duration."""
    try:
        lo, hi = _dt(f"{date}T{day_start}"), _dt(f"{date}T{day_end}")
    except ValueError:
        raise InvalidArgument(f"date {date!r} is not a real date (YYYY-MM-DD)") from None
    if hi <= lo:
        raise InvalidArgument(f"invalid time range: day_end {day_end} must be after day_start {day_start}")
    people = attendee_ids or [w.me_id]
    for p in people:
        _contact(w, p, "attendee_ids")
    if room_id is not None:
        _room(w, room_id)
    lo = max(lo, _dt(w.now))
    busy: list[tuple[datetime, datetime]] = []
    for ev in w.events.values():
        if ev.status == "cancelled":
            continue
        if any(_busy_for(ev, p) for p in people) or (room_id is not None and ev.room_id == room_id):
            busy.extend(occurrences(ev, lo, hi))
    busy.sort()
    slots, cur = [], lo
    for s, e in busy + [(hi, hi)]:
        if s > cur and (min(s, hi) - cur) >= timedelta(minutes=duration_minutes):
            slots.append(
                Slot(start=_fmt(cur), end=_fmt(min(s, hi)), minutes=int((min(s, hi) - cur).total_seconds() // 60))
            )
        cur = max(cur, e)
        if cur >= hi:
            break
    return SlotList(
        date=date,
        duration_minutes=duration_minutes,
        attendee_ids=people,
        room_id=room_id,
        slots=slots,
        total=len(slots),
    )


@TOOLS.tool()
def create_event(
    w: CalendarWorld,
    calendar_id: CalendarId,
    title: Annotated[str, Field(description="Event title", min_length=1, max_length=120)],
    start: Start,
    end: End,
    attendee_ids: Annotated[list[str] | None, Field(description="Contact ids to invite (from list_contacts)")] = None,
    room_id: Annotated[str | None, Field(description="Room id to book (from list_rooms)")] = None,
    location: Annotated[str | None, Field(description="Free-text location when no room is booked")] = None,
    description: Annotated[str, Field(description="Agenda or notes", max_length=2000)] = "",
    frequency: Annotated[
        Literal["none", "daily", "weekly", "monthly"], Field(description="Recurrence frequency")
    ] = "none",
    interval: Annotated[int, Field(description="Repeat every N days/weeks/months", ge=1, le=4)] = 1,
    count: Annotated[
        int | None, Field(description="Number of occurrences (recurring events only)", ge=1, le=365)
    ] = None,
    until: Annotated[
        str | None,
        Field(description="Last date of the series, YYYY-MM-DD (recurring events only)", pattern=DATE_PATTERN),
    ] = None,
) -> EventDetail:
    """Create an event you organize in a calendar you can write to; fails on double booking of you or the room."""
    if calendar_id not in w.calendars:
        raise not_found("calendar", calendar_id, "list_calendars shows valid ids")
    _writable(w, calendar_id)
    _check_range(start, end)
    _check_future(w, start)
    invited: list[str] = []
    for a in attendee_ids or []:
        _contact(w, a, "attendee_ids")
        if a != w.me_id and a not in invited:
            invited.append(a)
    if room_id is not None:
        _room(w, room_id)
    rec = _recurrence(frequency, interval, count, until, start)
    ev = Event(
        event_id="",
        calendar_id=calendar_id,
        title=title,
        description=description,
        start=start,
        end=end,
        organizer_id=w.me_id,
        attendees=[Attendee(contact_id=a) for a in invited],
        room_id=room_id,
        location=location,
        recurrence=rec,
        created_at=w.now,
        updated_at=w.now,
    )
    _check_capacity(w, ev)
    _raise_conflict(w, ev, None)
    ev.event_id = w.new_id("EVT")
    w.events[ev.event_id] = ev
    return _detail(w, ev)


@TOOLS.tool(idempotent=True)
def update_event(
    w: CalendarWorld,
    event_id: EventId,
    title: Annotated[str | None, Field(description="New title", min_length=1, max_length=120)] = None,
    start: Annotated[
        str | None,
        Field(description="New start, YYYY-MM-DDTHH:MM (without end, the duration is kept)", pattern=DT_PATTERN),
    ] = None,
    end: Annotated[str | None, Field(description="New end, YYYY-MM-DDTHH:MM", pattern=DT_PATTERN)] = None,
    description: Annotated[str | None, Field(description="New agenda or notes", max_length=2000)] = None,
    location: Annotated[str | None, Field(description="New free-text location")] = None,
    status: Annotated[
        Literal["confirmed", "tentative"] | None, Field(description="Mark the event confirmed or tentative")
    ] = None,
) -> EventDetail:
    """Change an event's title, times, description, location or status (a recurring event changes as a whole series)."""
    ev = _editable(w, event_id)
    if all(v is None for v in (title, start, end, description, location, status)):
        raise InvalidArgument(
            "nothing to change: give at least one of title, start, end, description, location, status"
        )
    new = ev.model_copy(deep=True)
    if start is not None or end is not None:
        dur = _dt(ev.end) - _dt(ev.start)
        ns = start or ev.start
        ne = end or (_fmt(_dt(ns) + dur) if start else ev.end)
        _check_range(ns, ne)
        if ns != ev.start:
            _check_future(w, ns)
        new.start, new.end = ns, ne
        _raise_conflict(w, new, ev.event_id)
    for k, v in (("title", title), ("description", description), ("location", location), ("status", status)):
        if v is not None:
            setattr(new, k, v)
    new.updated_at = w.now
    w.events[event_id] = new
    return _detail(w, new)


@TOOLS.tool(destructive=True, idempotent=True)
def cancel_event(
    w: CalendarWorld,
    event_id: EventId,
    reason: Annotated[str | None, Field(description="Optional note for attendees", max_length=300)] = None,
) -> EventDetail:
    """Cancel an event (the whole series if recurring); attendees see it as cancelled and it frees you and its room."""
    ev = _event(w, event_id)
    _writable(w, ev.calendar_id)
    if ev.status == "cancelled":
        raise StateConflict(f"event {event_id} is already cancelled")
    ev.status = "cancelled"
    if reason:
        ev.description = (ev.description + f"\n[cancelled: {reason}]").strip()
    ev.updated_at = w.now
    return _detail(w, ev)


@TOOLS.tool(idempotent=True)
def invite_attendees(
    w: CalendarWorld,
    event_id: EventId,
    attendee_ids: Annotated[list[str], Field(description="Contact ids to invite (from list_contacts)", min_length=1)],
) -> InviteResult:
    """Invite more people to an event; people already invited are reported and left unchanged."""
    ev = _editable(w, event_id)
    for a in attendee_ids:
        _contact(w, a, "attendee_ids")
    present = {a.contact_id for a in ev.attendees} | {ev.organizer_id}
    added, already = [], []
    new = ev.model_copy(deep=True)
    for a in attendee_ids:
        if a in present:
            if a not in already:
                already.append(a)
            continue
        present.add(a)
        added.append(a)
        new.attendees.append(Attendee(contact_id=a))
    _check_capacity(w, new)
    ev.attendees = new.attendees
    if added:
        ev.updated_at = w.now
    return InviteResult(event_id=event_id, added=added, already_invited=already, attendees=ev.attendees)


@TOOLS.tool(destructive=True, idempotent=True)
def remove_attendee(
    w: CalendarWorld,
    event_id: EventId,
    contact_id: Annotated[str, Field(description="Contact id of the attendee to remove (from get_event)")],
) -> RemoveResult:
    """Remove one invited person from an event."""
    ev = _editable(w, event_id)
    _contact(w, contact_id)
    if contact_id == ev.organizer_id:
        raise InvalidArgument(f"contact {contact_id} is the organizer of event {event_id} and cannot be removed")
    if all(a.contact_id != contact_id for a in ev.attendees):
        invited = ", ".join(a.contact_id for a in ev.attendees) or "nobody"
        raise StateConflict(f"contact {contact_id} is not invited to event {event_id}; invited: {invited}")
    ev.attendees = [a for a in ev.attendees if a.contact_id != contact_id]
    ev.updated_at = w.now
    return RemoveResult(event_id=event_id, contact_id=contact_id, attendees=ev.attendees)


@TOOLS.tool(idempotent=True)
def respond_to_event(
    w: CalendarWorld,
    event_id: EventId,
    response: Annotated[
        Literal["accepted", "declined", "tentative"], Field(description="Your answer to the invitation")
    ],
) -> ResponseResult:
    """Answer an invitation you received (accept, decline or tentatively accept); declined events no longer block your time."""
    ev = _event(w, event_id)
    if ev.status == "cancelled":
        raise StateConflict(f"event {event_id} is cancelled; there is nothing to respond to")
    if ev.organizer_id == w.me_id:
        raise StateConflict(f"you organize event {event_id}; only invitees respond")
    me = next((a for a in ev.attendees if a.contact_id == w.me_id), None)
    if me is None:
        raise StateConflict(
            f"you ({w.me_id}) are not invited to event {event_id}; list_events with attendee_id={w.me_id} shows your invitations"
        )
    me.response = response
    return ResponseResult(event_id=event_id, contact_id=w.me_id, response=response)


@TOOLS.tool(idempotent=True)
def book_room(
    w: CalendarWorld,
    event_id: EventId,
    room_id: Annotated[str, Field(description="Room id to book (from list_rooms); replaces any room already booked")],
) -> EventDetail:
    """Book a meeting room for an event (every occurrence of a series); fails if the room is taken or too small."""
    ev = _editable(w, event_id)
    _room(w, room_id)
    new = ev.model_copy(deep=True)
    new.room_id = room_id
    _check_capacity(w, new)
    hit = _conflict(w, new, None, room_id, event_id)
    if hit:
        other, when, _ = hit
        raise StateConflict(
            f"double booking: room {room_id} is already booked by event {other.event_id} ({other.title!r}) at {_fmt(when)}; "
            "list_rooms with start and end shows free rooms"
        )
    ev.room_id = room_id
    ev.updated_at = w.now
    return _detail(w, ev)


@TOOLS.tool(idempotent=True)
def set_recurrence(
    w: CalendarWorld,
    event_id: EventId,
    frequency: Annotated[
        Literal["none", "daily", "weekly", "monthly"],
        Field(description="How often the event repeats; 'none' makes it a single event"),
    ],
    interval: Annotated[int, Field(description="Repeat every N days/weeks/months", ge=1, le=4)] = 1,
    count: Annotated[int | None, Field(description="Number of occurrences", ge=1, le=365)] = None,
    until: Annotated[str | None, Field(description="Last date of the series, YYYY-MM-DD", pattern=DATE_PATTERN)] = None,
) -> EventDetail:
    """Set, change or remove an event's recurrence rule (daily, weekly or monthly, ending after a count or on a date)."""
    ev = _editable(w, event_id)
    new = ev.model_copy(deep=True)
    new.recurrence = _recurrence(frequency, interval, count, until, ev.start)
    if ev.organizer_id == w.me_id or ev.room_id:
        hit = _conflict(w, new, w.me_id if _busy_for(ev, w.me_id) else None, new.room_id, event_id)
        if hit:
            other, when, why = hit
            who = f"room {new.room_id}" if why == "room" else f"organizer {w.me_id}"
            raise StateConflict(
                f"double booking: with this rule {who} would be busy with event {other.event_id} "
                f"({other.title!r}) at {_fmt(when)}; try another count, until or interval"
            )
    new.updated_at = w.now
    w.events[event_id] = new
    return _detail(w, new)


@TOOLS.tool()
def create_calendar(
    w: CalendarWorld,
    name: Annotated[str, Field(description="Calendar name, unique among your calendars", min_length=1, max_length=60)],
    color: Annotated[Color, Field(description="Display color")] = "blue",
    description: Annotated[str, Field(description="What the calendar is for", max_length=300)] = "",
) -> Calendar:
    """Create a new calendar that you own."""
    if any(c.name.lower() == name.lower() for c in w.calendars.values()):
        raise StateConflict(f"a calendar named {name!r} already exists; list_calendars shows existing calendars")
    cid = w.new_id("CAL")
    c = Calendar(calendar_id=cid, name=name, owner_id=w.me_id, access="owner", color=color, description=description)
    w.calendars[cid] = c
    return c
