"""calendar: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from servers.calendar.world import (
    DEPARTMENTS,
    PERSONAL,
    ROOM_NAMES,
    TEAM_TITLES,
    TITLES_1ON1,
    Access,
    Attendee,
    Calendar,
    CalendarWorld,
    Color,
    Contact,
    Event,
    EventStatus,
    Recurrence,
    Room,
    _conflict,
    _fmt,
)
from servers.names import FIRST_NAMES, LAST_NAMES


@dataclass(frozen=True)
class _Cast:
    """Who and where the seeded events involve: the user, the other contacts, the calendars and the rooms."""

    me: str
    others: list[str]
    lead: str  # owner of the team calendar
    peers: list[str]  # the two contacts who share their calendar with the user
    work: str
    personal: str
    team: str
    launch: str
    holidays: str
    peer_cals: list[str]
    rooms: list[str]


def _seed_contacts(w: CalendarWorld, rng: random.Random) -> None:
    """22 contacts with distinct names; the first is the user."""
    used: set[str] = set()
    for _i in range(22):
        for _ in range(50):
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            if f"{first} {last}" not in used:
                break
        used.add(f"{first} {last}")
        cid = w.new_id("CON")
        w.contacts[cid] = Contact(
            contact_id=cid,
            name=f"{first} {last}",
            email=f"{first.lower()}.{last.lower()}@northwind.example",
            department=rng.choice(DEPARTMENTS),
        )


def _seed_calendars(w: CalendarWorld, rng: random.Random) -> _Cast:
    """The user's calendars, the shared team, launch, holiday and peer calendars, and the meeting rooms."""
    ids = list(w.contacts)
    me = ids[0]
    w.me_id = me
    w.contacts[me].department = "Engineering"
    others = ids[1:]

    def cal(name: str, owner: str, access: Access, color: Color, desc: str = "") -> str:
        cid = w.new_id("CAL")
        w.calendars[cid] = Calendar(
            calendar_id=cid, name=name, owner_id=owner, access=access, color=color, description=desc
        )
        return cid

    work = cal("Work", me, "owner", "blue", "My work meetings")
    personal = cal("Personal", me, "owner", "green", "Appointments and personal plans")
    lead = rng.choice(others)
    team = cal("Team Engineering", lead, "writer", "purple", "Shared engineering team calendar")
    launch = cal("Product Launch", rng.choice(others), "writer", "orange", "Launch milestones and reviews")
    holidays = cal("Company Holidays", rng.choice(others), "reader", "red", "Office closures (read-only)")
    peers = rng.sample(others, 2)
    peer_cals = [
        cal(f"{w.contacts[p].name.split()[0]}'s calendar", p, "reader", "teal", "Shared with you (read-only)")
        for p in peers
    ]

    for i in range(8):
        rid = w.new_id("ROOM")
        w.rooms[rid] = Room(
            room_id=rid,
            name=ROOM_NAMES[i],
            building=rng.choice(["HQ", "HQ", "Annex"]),
            floor=rng.randint(1, 5),
            capacity=rng.choice([2, 4, 6, 8, 12, 20]),
            has_video=rng.random() < 0.6,
        )
    rooms = list(w.rooms)
    return _Cast(
        me=me,
        others=others,
        lead=lead,
        peers=peers,
        work=work,
        personal=personal,
        team=team,
        launch=launch,
        holidays=holidays,
        peer_cals=peer_cals,
        rooms=rooms,
    )


def _event_adder(w: CalendarWorld, rng: random.Random, me: str) -> Callable[..., None]:
    """``add(...)``: add an event unless it clashes with the user's or the room's other events (then it drops
    the room, or the event)."""

    def add(
        cal_id: str,
        title: str,
        start: datetime,
        minutes: int,
        organizer: str,
        attendees: list[str],
        room: str | None = None,
        location: str | None = None,
        rec: Recurrence | None = None,
        status: EventStatus = "confirmed",
        desc: str = "",
    ) -> None:
        ev = Event(
            event_id="?",
            calendar_id=cal_id,
            title=title,
            description=desc,
            start=_fmt(start),
            end=_fmt(start + timedelta(minutes=minutes)),
            organizer_id=organizer,
            attendees=[
                Attendee(
                    contact_id=a,
                    response=rng.choice(["accepted", "accepted", "tentative", "needs_action", "declined"])
                    if a != me
                    else ("accepted" if organizer == me else rng.choice(["needs_action", "accepted"])),
                )
                for a in attendees
                if a != organizer
            ],
            room_id=room,
            location=location,
            recurrence=rec,
            status=status,
            created_at="2026-01-15T10:00",
            updated_at="2026-01-15T10:00",
        )
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

    return add


def _seed_series(w: CalendarWorld, rng: random.Random, c: _Cast, add: Callable[..., None]) -> None:
    """The recurring series: standup, a 1:1, metrics review, sprint planning, gym, launch readiness."""
    me, others, lead, rooms = c.me, c.others, c.lead, c.rooms
    work, personal, team, launch = c.work, c.personal, c.team, c.launch
    add(
        team,
        "Daily standup",
        datetime(2026, 2, 2, 9, 30),
        15,
        lead,
        [me] + rng.sample(others, 5),
        rooms[0],
        rec=Recurrence(frequency="daily", interval=1),
        desc="15 minutes, blockers first",
    )
    one = rng.choice([o for o in others if o != lead])
    add(
        work,
        TITLES_1ON1.format(name=w.contacts[one].name.split()[0]),
        datetime(2026, 2, 3, 14, 0),
        30,
        me,
        [one],
        rec=Recurrence(frequency="weekly", interval=1),
    )
    add(
        work,
        "Monthly metrics review",
        datetime(2026, 2, 10, 11, 0),
        60,
        me,
        rng.sample(others, 4),
        rooms[1],
        rec=Recurrence(frequency="monthly", interval=1, count=6),
    )
    add(
        team,
        "Sprint planning",
        datetime(2026, 2, 9, 10, 0),
        60,
        lead,
        [me] + rng.sample(others, 6),
        rooms[2],
        rec=Recurrence(frequency="weekly", interval=2, until="2026-06-30"),
    )
    add(
        personal,
        "Gym session",
        datetime(2026, 2, 4, 18, 30),
        60,
        me,
        [],
        location="Riverside Gym",
        rec=Recurrence(frequency="weekly", interval=1),
    )
    add(
        launch,
        "Launch readiness check",
        datetime(2026, 3, 4, 16, 0),
        45,
        w.calendars[launch].owner_id,
        [me] + rng.sample(others, 3),
        rooms[3],
        rec=Recurrence(frequency="weekly", interval=1, count=5),
    )


def _seed_single_events(w: CalendarWorld, rng: random.Random, c: _Cast, add: Callable[..., None]) -> None:
    """60 one-off events: team meetings, personal appointments, peers' meetings, team-calendar meetings."""
    me, others, lead, rooms = c.me, c.others, c.lead, c.rooms
    work, personal, team, launch = c.work, c.personal, c.team, c.launch
    peers, peer_cals = c.peers, c.peer_cals
    base = datetime(2026, 2, 2)
    for _ in range(60):
        day = base + timedelta(days=rng.randint(0, 62))
        if day.weekday() >= 5 and rng.random() < 0.8:
            day += timedelta(days=2)
        start = day.replace(hour=rng.randint(8, 17), minute=rng.choice([0, 0, 15, 30, 45]))
        minutes = rng.choice([30, 30, 45, 60, 60, 90, 120])
        kind = rng.random()
        status: EventStatus = (
            "cancelled" if rng.random() < 0.12 else ("tentative" if rng.random() < 0.12 else "confirmed")
        )
        if kind < 0.45:
            t = rng.choice(TEAM_TITLES)
            add(
                rng.choice([work, work, team, launch]),
                t,
                start,
                minutes,
                me,
                rng.sample(others, rng.randint(1, 6)),
                rng.choice(rooms + [None]),
                status=status,
                desc=f"Agenda: {t.lower()} follow-ups",
            )
        elif kind < 0.65:
            t, loc, hour = rng.choice(PERSONAL)
            if hour is not None:
                start = start.replace(hour=hour, minute=rng.choice([0, 30]))
            add(
                personal,
                t.format(name=w.contacts[rng.choice(others)].name.split()[0]),
                start,
                min(minutes, 90),
                me,
                [],
                location=loc,
                status=status,
            )
        elif kind < 0.9:
            org = rng.choice(peers)
            t = rng.choice(TEAM_TITLES)
            att = (
                [me] + rng.sample([o for o in others if o != org], rng.randint(1, 4))
                if rng.random() < 0.7
                else rng.sample(others, 2)
            )
            add(peer_cals[peers.index(org)], t, start, minutes, org, att, rng.choice(rooms + [None]), status=status)
        else:
            org = lead
            t = rng.choice(TEAM_TITLES)
            add(
                team,
                t,
                start,
                minutes,
                org,
                [me] + rng.sample([o for o in others if o != org], 3),
                rng.choice(rooms),
                status=status,
            )


def seed_world(rng: random.Random, seed: int) -> CalendarWorld:
    w = CalendarWorld(seed=seed)
    _seed_contacts(w, rng)
    c = _seed_calendars(w, rng)
    add = _event_adder(w, rng, c.me)
    _seed_series(w, rng, c, add)  # recurring series
    _seed_single_events(w, rng, c, add)
    for d, name in [
        ("2026-04-03", "Good Friday (office closed)"),
        ("2026-05-01", "Labour Day (office closed)"),
        ("2026-03-17", "Company offsite"),
    ]:
        ev_id = w.new_id("EVT")
        w.events[ev_id] = Event(
            event_id=ev_id,
            calendar_id=c.holidays,
            title=name,
            start=f"{d}T00:00",
            end=f"{d}T23:59",
            organizer_id=w.calendars[c.holidays].owner_id,
            created_at="2026-01-02T09:00",
            updated_at="2026-01-02T09:00",
        )
    return w
