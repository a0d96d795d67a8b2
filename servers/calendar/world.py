"""calendar: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

import bisect
from datetime import date, datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found

NOW = f"{REFERENCE_DAY}T09:00"
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
TEAM_TITLES = [
    "Sprint planning",
    "Design review",
    "Architecture sync",
    "Roadmap review",
    "Customer call",
    "Quarterly business review",
    "Hiring debrief",
    "Incident postmortem",
    "Budget review",
    "Demo day rehearsal",
    "Onboarding session",
    "Marketing sync",
    "Security training",
    "Retro",
]
PERSONAL = [
    ("Dentist appointment", "City Dental Clinic", None),
    ("Gym session", "Riverside Gym", None),
    ("Lunch with {name}", "Green Bowl", 12),
    ("Parent-teacher meeting", "Oakwood Primary School", 16),
    ("Car service", "Main St Garage", 8),
    ("Yoga class", "Lotus Studio", 18),
    ("Haircut", "Studio 9 Barbers", None),
    ("Coffee with {name}", "Cafe Lumen", 10),
    ("Book club", "Central Library", 19),
]
ROOM_NAMES = ["Aurora", "Baobab", "Cedar", "Delta", "Echo", "Fjord", "Granite", "Harbor", "Juniper"]


# --------------------------------------------------------------------------- domain helpers


def _busy_for(ev: Event, contact_id: str) -> bool:
    if ev.status == "cancelled":
        return False
    if ev.organizer_id == contact_id:
        return True
    return any(a.contact_id == contact_id and a.response != "declined" for a in ev.attendees)


def _conflict(
    w: CalendarWorld, ev: Event, contact_id: str | None, room_id: str | None, exclude: str | None
) -> tuple[Event, datetime, str] | None:
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
        raise StateConflict(
            f"double booking: {who} is already busy with event {other.event_id} ({other.title!r}) at {_fmt(when)}; "
            "find_free_slots shows open times, or pick another room with list_rooms"
        )


def _event(w: CalendarWorld, event_id: str) -> Event:
    ev = w.events.get(event_id)
    if ev is None:
        raise not_found("event", event_id, "list_events or search_events show valid event ids")
    return ev


def _writable(w: CalendarWorld, ev_or_cal_id: str) -> Calendar:
    cal = w.calendars[ev_or_cal_id]
    if cal.access == "reader":
        raise PermissionDenied(
            f"calendar {cal.calendar_id} ({cal.name!r}) is read-only for you; "
            "use a calendar with owner or writer access (list_calendars)"
        )
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
            raise StateConflict(
                f"room {r.room_id} ({r.name}) holds {r.capacity} people but the event has {n} (organizer + attendees); "
                "list_rooms with min_capacity finds a larger room"
            )


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
Start = Annotated[
    str, Field(description="Start time, local, YYYY-MM-DDTHH:MM (e.g. 2026-03-05T14:00)", pattern=DT_PATTERN)
]
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


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[CalendarWorld] = ToolSet()
