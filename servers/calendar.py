"""calendar: calendars, events, invitees, rooms and recurrence rules around a fixed "now"."""

from __future__ import annotations

import bisect
import random
from datetime import date, datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import EnvServer, InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found
from servers.names import FIRST_NAMES, LAST_NAMES

NOW = "2026-03-02T09:00"
HORIZON = "2027-03-02T00:00"  # open-ended series are expanded up to here
MAX_OCCURRENCES = 400
FMT = "%Y-%m-%dT%H:%M"

Access = Literal["owner", "writer", "reader"]
Color = Literal["blue", "green", "red", "orange", "purple", "teal", "gray"]
EventStatus = Literal["confirmed", "tentative", "cancelled"]
Response = Literal["needs_action", "accepted", "declined", "tentative"]
Frequency = Literal["daily", "weekly", "monthly"]
DEPARTMENTS = ["Engineering", "Design", "Product", "Sales", "Finance", "People", "Marketing"]


class Contact(BaseModel):
    contact_id: str
    name: str
    email: str
    department: str


class Calendar(BaseModel):
    calendar_id: str
    name: str
    owner_id: str
    access: Access
    color: Color
    description: str = ""


class Room(BaseModel):
    room_id: str
    name: str
    building: str
    floor: int
    capacity: int
    has_video: bool


class Attendee(BaseModel):
    contact_id: str
    response: Response = "needs_action"


class Recurrence(BaseModel):
    frequency: Frequency
    interval: int = 1
    count: int | None = None
    until: str | None = None


class Event(BaseModel):
    event_id: str
    calendar_id: str
    title: str
    description: str = ""
    start: str
    end: str
    organizer_id: str
    attendees: list[Attendee] = []
    room_id: str | None = None
    location: str | None = None
    status: EventStatus = "confirmed"
    recurrence: Recurrence | None = None
    created_at: str
    updated_at: str


class CalendarWorld(World):
    now: str = NOW
    me_id: str = ""
    contacts: dict[str, Contact] = {}
    calendars: dict[str, Calendar] = {}
    rooms: dict[str, Room] = {}
    events: dict[str, Event] = {}


# --------------------------------------------------------------------------- time helpers
def _dt(s: str) -> datetime:
    return datetime.strptime(s, FMT)


def _fmt(d: datetime) -> str:
    return d.strftime(FMT)


def _add_months(d: datetime, months: int) -> datetime | None:
    m = d.month - 1 + months
    y, m = d.year + m // 12, m % 12 + 1
    try:
        return d.replace(year=y, month=m)
    except ValueError:
        return None


def occurrences(ev: Event, lo: datetime | None = None, hi: datetime | None = None) -> list[tuple[datetime, datetime]]:
    """The (start, end) occurrences of an event overlapping [lo, hi)."""
    s0, e0 = _dt(ev.start), _dt(ev.end)
    dur = e0 - s0
    rec = ev.recurrence
    if rec is None:
        if (lo is None or e0 > lo) and (hi is None or s0 < hi):
            return [(s0, e0)]
        return []
    until = _dt(rec.until + "T23:59") if rec.until else _dt(HORIZON)
    count = rec.count or MAX_OCCURRENCES
    out: list[tuple[datetime, datetime]] = []
    k, made = 0, 0
    while made < count and k < 5000:
        if rec.frequency == "daily":
            s: datetime | None = s0 + timedelta(days=k * rec.interval)
        elif rec.frequency == "weekly":
            s = s0 + timedelta(weeks=k * rec.interval)
        else:
            s = _add_months(s0, k * rec.interval)
        k += 1
        if s is None:  # e.g. the 31st in a 30-day month: that month has no occurrence
            continue
        if s > until or (hi is not None and s >= hi):
            break
        made += 1
        if lo is None or s + dur > lo:
            out.append((s, s + dur))
    return out


# --------------------------------------------------------------------------- seeding
TITLES_1ON1 = "1:1 with {name}"
TEAM_TITLES = ["Sprint planning", "Design review", "Architecture sync", "Roadmap review", "Customer call",
               "Quarterly business review", "Hiring debrief", "Incident postmortem", "Budget review",
               "Demo day rehearsal", "Onboarding session", "Marketing sync", "Security training", "Retro"]
PERSONAL = [("Dentist appointment", "City Dental Clinic", None), ("Gym session", "Riverside Gym", None),
            ("Lunch with {name}", "Green Bowl", 12), ("Parent-teacher meeting", "Oakwood Primary School", 16),
            ("Car service", "Main St Garage", 8), ("Yoga class", "Lotus Studio", 18), ("Haircut", "Studio 9 Barbers", None),
            ("Coffee with {name}", "Cafe Lumen", 10), ("Book club", "Central Library", 19)]
ROOM_NAMES = ["Aurora", "Baobab", "Cedar", "Delta", "Echo", "Fjord", "Granite", "Harbor", "Juniper"]


def seed_world(rng: random.Random, seed: int) -> CalendarWorld:
    w = CalendarWorld(seed=seed)
    used: set[str] = set()
    for i in range(22):
        for _ in range(50):
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            if f"{first} {last}" not in used:
                break
        used.add(f"{first} {last}")
        cid = w.new_id("CON")
        w.contacts[cid] = Contact(contact_id=cid, name=f"{first} {last}", email=f"{first.lower()}.{last.lower()}@northwind.example",
                                  department=rng.choice(DEPARTMENTS))
    ids = list(w.contacts)
    me = ids[0]
    w.me_id = me
    w.contacts[me].department = "Engineering"
    others = ids[1:]

    def cal(name: str, owner: str, access: Access, color: Color, desc: str = "") -> str:
        cid = w.new_id("CAL")
        w.calendars[cid] = Calendar(calendar_id=cid, name=name, owner_id=owner, access=access, color=color, description=desc)
        return cid

    work = cal("Work", me, "owner", "blue", "My work meetings")
    personal = cal("Personal", me, "owner", "green", "Appointments and personal plans")
    lead = rng.choice(others)
    team = cal("Team Engineering", lead, "writer", "purple", "Shared engineering team calendar")
    launch = cal("Product Launch", rng.choice(others), "writer", "orange", "Launch milestones and reviews")
    holidays = cal("Company Holidays", rng.choice(others), "reader", "red", "Office closures (read-only)")
    peers = rng.sample(others, 2)
    peer_cals = [cal(f"{w.contacts[p].name.split()[0]}'s calendar", p, "reader", "teal", "Shared with you (read-only)") for p in peers]

    for i in range(8):
        rid = w.new_id("ROOM")
        w.rooms[rid] = Room(room_id=rid, name=ROOM_NAMES[i], building=rng.choice(["HQ", "HQ", "Annex"]), floor=rng.randint(1, 5),
                            capacity=rng.choice([2, 4, 6, 8, 12, 20]), has_video=rng.random() < 0.6)
    rooms = list(w.rooms)

    def add(cal_id: str, title: str, start: datetime, minutes: int, organizer: str, attendees: list[str], room: str | None = None,
            location: str | None = None, rec: Recurrence | None = None, status: EventStatus = "confirmed", desc: str = "") -> None:
        ev = Event(event_id="?", calendar_id=cal_id, title=title, description=desc, start=_fmt(start),
                   end=_fmt(start + timedelta(minutes=minutes)), organizer_id=organizer,
                   attendees=[Attendee(contact_id=a, response=rng.choice(["accepted", "accepted", "tentative", "needs_action", "declined"])
                                       if a != me else ("accepted" if organizer == me else rng.choice(["needs_action", "accepted"])))
                              for a in attendees if a != organizer],
                   room_id=room, location=location, recurrence=rec, status=status,
                   created_at="2026-01-15T10:00", updated_at="2026-01-15T10:00")
        if room and w.rooms[room].capacity < len(ev.attendees) + 1:
            ev.room_id = None
        if status != "cancelled":
            involves_me = organizer == me or me in attendees
            if _conflict(w, ev, me if involves_me else None, ev.room_id, None):
                if ev.room_id and not (involves_me and _conflict(w, ev, me, None, None)):
                    ev.room_id = None
                else:
                    return
        ev.event_id = w.new_id("EVT")
        w.events[ev.event_id] = ev

    base = datetime(2026, 2, 2)
    # recurring series
    add(team, "Daily standup", datetime(2026, 2, 2, 9, 30), 15, lead, [me] + rng.sample(others, 5), rooms[0],
        rec=Recurrence(frequency="daily", interval=1), desc="15 minutes, blockers first")
    one = rng.choice([o for o in others if o != lead])
    add(work, TITLES_1ON1.format(name=w.contacts[one].name.split()[0]), datetime(2026, 2, 3, 14, 0), 30, me, [one],
        rec=Recurrence(frequency="weekly", interval=1))
    add(work, "Monthly metrics review", datetime(2026, 2, 10, 11, 0), 60, me, rng.sample(others, 4), rooms[1],
        rec=Recurrence(frequency="monthly", interval=1, count=6))
    add(team, "Sprint planning", datetime(2026, 2, 9, 10, 0), 60, lead, [me] + rng.sample(others, 6), rooms[2],
        rec=Recurrence(frequency="weekly", interval=2, until="2026-06-30"))
    add(personal, "Gym session", datetime(2026, 2, 4, 18, 30), 60, me, [], location="Riverside Gym",
        rec=Recurrence(frequency="weekly", interval=1))
    add(launch, "Launch readiness check", datetime(2026, 3, 4, 16, 0), 45, w.calendars[launch].owner_id, [me] + rng.sample(others, 3),
        rooms[3], rec=Recurrence(frequency="weekly", interval=1, count=5))
    # single events
    for _ in range(60):
        day = base + timedelta(days=rng.randint(0, 62))
        if day.weekday() >= 5 and rng.random() < 0.8:
            day += timedelta(days=2)
        start = day.replace(hour=rng.randint(8, 17), minute=rng.choice([0, 0, 15, 30, 45]))
        minutes = rng.choice([30, 30, 45, 60, 60, 90, 120])
        kind = rng.random()
        status: EventStatus = "cancelled" if rng.random() < 0.12 else ("tentative" if rng.random() < 0.12 else "confirmed")
        if kind < 0.45:
            t = rng.choice(TEAM_TITLES)
            add(rng.choice([work, work, team, launch]), t, start, minutes, me, rng.sample(others, rng.randint(1, 6)),
                rng.choice(rooms + [None]), status=status, desc=f"Agenda: {t.lower()} follow-ups")
        elif kind < 0.65:
            t, loc, hour = rng.choice(PERSONAL)
            if hour is not None:
                start = start.replace(hour=hour, minute=rng.choice([0, 30]))
            add(personal, t.format(name=w.contacts[rng.choice(others)].name.split()[0]), start, min(minutes, 90), me, [],
                location=loc, status=status)
        elif kind < 0.9:
            org = rng.choice(peers)
            t = rng.choice(TEAM_TITLES)
            att = [me] + rng.sample([o for o in others if o != org], rng.randint(1, 4)) if rng.random() < 0.7 else rng.sample(others, 2)
            add(peer_cals[peers.index(org)], t, start, minutes, org, att, rng.choice(rooms + [None]), status=status)
        else:
            org = lead
            t = rng.choice(TEAM_TITLES)
            add(team, t, start, minutes, org, [me] + rng.sample([o for o in others if o != org], 3), rng.choice(rooms), status=status)
    for d, name in [("2026-04-03", "Good Friday (office closed)"), ("2026-05-01", "Labour Day (office closed)"),
                    ("2026-03-17", "Company offsite")]:
        ev_id = w.new_id("EVT")
        w.events[ev_id] = Event(event_id=ev_id, calendar_id=holidays, title=name, start=f"{d}T00:00", end=f"{d}T23:59",
                                organizer_id=w.calendars[holidays].owner_id, created_at="2026-01-02T09:00", updated_at="2026-01-02T09:00")
    return w


# --------------------------------------------------------------------------- domain helpers


def _busy_for(ev: Event, contact_id: str) -> bool:
    if ev.status == "cancelled":
        return False
    if ev.organizer_id == contact_id:
        return True
    return any(a.contact_id == contact_id and a.response != "declined" for a in ev.attendees)


def _conflict(w: CalendarWorld, ev: Event, contact_id: str | None, room_id: str | None, exclude: str | None) -> tuple[Event, datetime, str] | None:
    """The first existing event that overlaps ``ev`` for the contact or the room."""
    mine = occurrences(ev)
    if not mine or (contact_id is None and room_id is None):
        return None
    lo, hi = mine[0][0], mine[-1][1]
    for other in w.events.values():
        if other.event_id in (exclude, ev.event_id) or other.status == "cancelled":
            continue
        why = None
        if contact_id is not None and _busy_for(other, contact_id):
            why = "organizer"
        elif room_id is not None and other.room_id == room_id:
            why = "room"
        if why is None:
            continue
        occ = occurrences(other, lo, hi)
        if not occ:
            continue
        starts = [s for s, _ in occ]
        for s, e in mine:
            i = bisect.bisect_left(starts, e)
            # candidates: occurrences starting before our end; the nearest ones may overlap
            for j in range(max(0, i - 2), i):
                os_, oe = occ[j]
                if os_ < e and oe > s:
                    return other, os_, why
    return None


def _raise_conflict(w: CalendarWorld, ev: Event, exclude: str | None) -> None:
    hit = _conflict(w, ev, w.me_id, ev.room_id, exclude)
    if hit:
        other, when, why = hit
        who = f"room {ev.room_id}" if why == "room" else f"organizer {w.me_id}"
        raise StateConflict(f"double booking: {who} is already busy with event {other.event_id} ({other.title!r}) at {_fmt(when)}; "
                            "find_free_slots shows open times, or pick another room with list_rooms")


def _event(w: CalendarWorld, event_id: str) -> Event:
    ev = w.events.get(event_id)
    if ev is None:
        raise not_found("event", event_id, "list_events or search_events show valid event ids")
    return ev


def _writable(w: CalendarWorld, ev_or_cal_id: str) -> Calendar:
    cal = w.calendars[ev_or_cal_id]
    if cal.access == "reader":
        raise PermissionDenied(f"calendar {cal.calendar_id} ({cal.name!r}) is read-only for you; "
                               "use a calendar with owner or writer access (list_calendars)")
    return cal


def _editable(w: CalendarWorld, event_id: str) -> Event:
    ev = _event(w, event_id)
    _writable(w, ev.calendar_id)
    if ev.status == "cancelled":
        raise StateConflict(f"event {event_id} is cancelled and can no longer be edited; create_event makes a new one")
    return ev


def _contact(w: CalendarWorld, contact_id: str, arg: str = "contact_id") -> Contact:
    c = w.contacts.get(contact_id)
    if c is None:
        raise not_found("contact", contact_id, f"{arg} must be a contact id from list_contacts, e.g. 'CON-0002'")
    return c


def _room(w: CalendarWorld, room_id: str) -> Room:
    r = w.rooms.get(room_id)
    if r is None:
        raise not_found("room", room_id, "list_rooms shows valid room ids")
    return r


def _check_range(start: str, end: str) -> None:
    try:
        s, e = _dt(start), _dt(end)
    except ValueError as exc:
        raise InvalidArgument(f"start/end must be real dates in YYYY-MM-DDTHH:MM form: {exc}") from None
    if e <= s:
        raise InvalidArgument(f"invalid time range: end {end} must be after start {start}")
    if e - s > timedelta(hours=24):
        raise InvalidArgument(f"invalid time range: an event may last at most 24 hours, got {start} to {end}")


def _check_future(w: CalendarWorld, start: str) -> None:
    if _dt(start) < _dt(w.now):
        raise InvalidArgument(f"start {start} is in the past; the current time is {w.now}")


def _check_capacity(w: CalendarWorld, ev: Event) -> None:
    if ev.room_id:
        r = w.rooms[ev.room_id]
        n = len(ev.attendees) + 1
        if r.capacity < n:
            raise StateConflict(f"room {r.room_id} ({r.name}) holds {r.capacity} people but the event has {n} (organizer + attendees); "
                                "list_rooms with min_capacity finds a larger room")


def _recurrence(frequency: str, interval: int, count: int | None, until: str | None, start: str) -> Recurrence | None:
    if frequency == "none":
        if count is not None or until is not None:
            raise InvalidArgument("count and until only apply when frequency is daily, weekly or monthly")
        return None
    if count is not None and until is not None:
        raise InvalidArgument("give either count or until, not both")
    if until is not None:
        try:
            date.fromisoformat(until)
        except ValueError:
            raise InvalidArgument(f"until {until!r} is not a real date (YYYY-MM-DD)") from None
        if until < start[:10]:
            raise InvalidArgument(f"until {until} is before the event's start {start}")
    return Recurrence(frequency=frequency, interval=interval, count=count, until=until)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- parameter types
DT_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
EventId = Annotated[str, Field(description="Event id, e.g. 'EVT-0004' (from list_events or search_events)")]
CalendarId = Annotated[str, Field(description="Calendar id, e.g. 'CAL-0001' (from list_calendars)")]
Start = Annotated[str, Field(description="Start time, local, YYYY-MM-DDTHH:MM (e.g. 2026-03-05T14:00)", pattern=DT_PATTERN)]
End = Annotated[str, Field(description="End time, local, YYYY-MM-DDTHH:MM; must be after start", pattern=DT_PATTERN)]
OptDate = Annotated[str | None, Field(description="Date YYYY-MM-DD", pattern=DATE_PATTERN)]
HHMM = r"^([01]\d|2[0-3]):[0-5]\d$"


# --------------------------------------------------------------------------- results
class CalendarList(BaseModel):
    calendars: list[Calendar]
    total: int


class ContactList(BaseModel):
    contacts: list[Contact]
    total: int


class RoomList(BaseModel):
    rooms: list[Room]
    total: int


class Occurrence(BaseModel):
    event_id: str
    title: str
    start: str
    end: str
    calendar_id: str
    organizer_id: str
    room_id: str | None
    location: str | None
    status: EventStatus
    is_recurring: bool
    my_response: Response | None = None


class OccurrenceList(BaseModel):
    events: list[Occurrence]
    total: int
    date_from: str
    date_to: str


class EventList(BaseModel):
    events: list[Event]
    total: int


class EventDetail(Event):
    upcoming_occurrences: list[str] = Field(description="Start times of the next occurrences after now (at most 5)")


class Slot(BaseModel):
    start: str
    end: str
    minutes: int


class SlotList(BaseModel):
    date: str
    duration_minutes: int
    attendee_ids: list[str]
    room_id: str | None
    slots: list[Slot]
    total: int


class Now(BaseModel):
    now: str
    weekday: str
    contact_id: str = Field(description="Your own contact id (you are the organizer of events you create)")
    name: str
    email: str


class InviteResult(BaseModel):
    event_id: str
    added: list[str]
    already_invited: list[str]
    attendees: list[Attendee]


class RemoveResult(BaseModel):
    event_id: str
    contact_id: str
    attendees: list[Attendee]


class ResponseResult(BaseModel):
    event_id: str
    contact_id: str
    response: Response


def _detail(w: CalendarWorld, ev: Event) -> EventDetail:
    now = _dt(w.now)
    nxt = [] if ev.status == "cancelled" else [_fmt(s) for s, _ in occurrences(ev, now) if s >= now][:5]
    return EventDetail(**ev.model_dump(), upcoming_occurrences=nxt)


TOOLS: ToolSet[CalendarWorld] = ToolSet()


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
    out = [c for c in w.contacts.values()
           if (not q or q in c.name.lower() or q in c.email.lower())
           and (department is None or c.department.lower() == department.lower())]
    return ContactList(contacts=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_rooms(
    w: CalendarWorld,
    min_capacity: Annotated[int | None, Field(description="Only rooms holding at least this many people", ge=1, le=100)] = None,
    building: Annotated[Literal["HQ", "Annex"] | None, Field(description="Only rooms in this building")] = None,
    has_video: Annotated[bool | None, Field(description="Only rooms with (true) or without (false) video equipment")] = None,
    start: Annotated[str | None, Field(description="With end: only rooms free from this time (YYYY-MM-DDTHH:MM)", pattern=DT_PATTERN)] = None,
    end: Annotated[str | None, Field(description="With start: only rooms free until this time (YYYY-MM-DDTHH:MM)", pattern=DT_PATTERN)] = None,
) -> RoomList:
    """List meeting rooms by capacity, building and equipment; with start and end, only rooms free in that window."""
    if (start is None) != (end is None):
        raise InvalidArgument("give both start and end to filter by availability, or neither")
    probe = None
    if start is not None and end is not None:
        _check_range(start, end)
        probe = Event(event_id="", calendar_id="", title="", start=start, end=end, organizer_id="", created_at="", updated_at="")
    out = [r for r in w.rooms.values()
           if (min_capacity is None or r.capacity >= min_capacity)
           and (building is None or r.building == building)
           and (has_video is None or r.has_video == has_video)
           and (probe is None or _conflict(w, probe, None, r.room_id, None) is None)]
    return RoomList(rooms=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_events(
    w: CalendarWorld,
    date_from: Annotated[str | None, Field(description="First day to include, YYYY-MM-DD (default: today)", pattern=DATE_PATTERN)] = None,
    date_to: Annotated[str | None, Field(description="Last day to include, YYYY-MM-DD (default: 7 days after date_from); at most 92 days after date_from", pattern=DATE_PATTERN)] = None,
    calendar_id: Annotated[str | None, Field(description="Only events of this calendar id")] = None,
    attendee_id: Annotated[str | None, Field(description="Only events this contact id organizes or is invited to")] = None,
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
            out.append(Occurrence(event_id=ev.event_id, title=ev.title, start=_fmt(s), end=_fmt(e), calendar_id=ev.calendar_id,
                                  organizer_id=ev.organizer_id, room_id=ev.room_id, location=ev.location, status=ev.status,
                                  is_recurring=ev.recurrence is not None, my_response=mine))
    out.sort(key=lambda o: (o.start, o.event_id))
    return OccurrenceList(events=out, total=len(out), date_from=d0.isoformat(), date_to=d1.isoformat())


@TOOLS.tool(read_only=True)
def search_events(
    w: CalendarWorld,
    query: Annotated[str, Field(description="Words to look for in the title, description or location (case-insensitive)", min_length=1)],
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
    attendee_ids: Annotated[list[str] | None, Field(description="Contact ids who must all be free (default: only you)")] = None,
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
            slots.append(Slot(start=_fmt(cur), end=_fmt(min(s, hi)), minutes=int((min(s, hi) - cur).total_seconds() // 60)))
        cur = max(cur, e)
        if cur >= hi:
            break
    return SlotList(date=date, duration_minutes=duration_minutes, attendee_ids=people, room_id=room_id, slots=slots, total=len(slots))


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
    frequency: Annotated[Literal["none", "daily", "weekly", "monthly"], Field(description="Recurrence frequency")] = "none",
    interval: Annotated[int, Field(description="Repeat every N days/weeks/months", ge=1, le=4)] = 1,
    count: Annotated[int | None, Field(description="Number of occurrences (recurring events only)", ge=1, le=365)] = None,
    until: Annotated[str | None, Field(description="Last date of the series, YYYY-MM-DD (recurring events only)", pattern=DATE_PATTERN)] = None,
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
    ev = Event(event_id="", calendar_id=calendar_id, title=title, description=description, start=start, end=end,
               organizer_id=w.me_id, attendees=[Attendee(contact_id=a) for a in invited], room_id=room_id, location=location,
               recurrence=rec, created_at=w.now, updated_at=w.now)
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
    start: Annotated[str | None, Field(description="New start, YYYY-MM-DDTHH:MM (without end, the duration is kept)", pattern=DT_PATTERN)] = None,
    end: Annotated[str | None, Field(description="New end, YYYY-MM-DDTHH:MM", pattern=DT_PATTERN)] = None,
    description: Annotated[str | None, Field(description="New agenda or notes", max_length=2000)] = None,
    location: Annotated[str | None, Field(description="New free-text location")] = None,
    status: Annotated[Literal["confirmed", "tentative"] | None, Field(description="Mark the event confirmed or tentative")] = None,
) -> EventDetail:
    """Change an event's title, times, description, location or status (a recurring event changes as a whole series)."""
    ev = _editable(w, event_id)
    if all(v is None for v in (title, start, end, description, location, status)):
        raise InvalidArgument("nothing to change: give at least one of title, start, end, description, location, status")
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
    response: Annotated[Literal["accepted", "declined", "tentative"], Field(description="Your answer to the invitation")],
) -> ResponseResult:
    """Answer an invitation you received (accept, decline or tentatively accept); declined events no longer block your time."""
    ev = _event(w, event_id)
    if ev.status == "cancelled":
        raise StateConflict(f"event {event_id} is cancelled; there is nothing to respond to")
    if ev.organizer_id == w.me_id:
        raise StateConflict(f"you organize event {event_id}; only invitees respond")
    me = next((a for a in ev.attendees if a.contact_id == w.me_id), None)
    if me is None:
        raise StateConflict(f"you ({w.me_id}) are not invited to event {event_id}; list_events with attendee_id={w.me_id} shows your invitations")
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
        raise StateConflict(f"double booking: room {room_id} is already booked by event {other.event_id} ({other.title!r}) at {_fmt(when)}; "
                            "list_rooms with start and end shows free rooms")
    ev.room_id = room_id
    ev.updated_at = w.now
    return _detail(w, ev)


@TOOLS.tool(idempotent=True)
def set_recurrence(
    w: CalendarWorld,
    event_id: EventId,
    frequency: Annotated[Literal["none", "daily", "weekly", "monthly"], Field(description="How often the event repeats; 'none' makes it a single event")],
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
            raise StateConflict(f"double booking: with this rule {who} would be busy with event {other.event_id} "
                                f"({other.title!r}) at {_fmt(when)}; try another count, until or interval")
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


def build(seed: int = 0) -> EnvServer[CalendarWorld]:
    """A fresh calendar server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "calendar", seeder=seed_world, category="productivity",
        description="Work and personal calendars: events with invitees, meeting rooms, recurrence rules and free-slot search. "
                    f"The current time is fixed at {NOW}.",
        tools=TOOLS, default_seed=seed,
    )
