"""video_meeting: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from servers.names import FIRST_NAMES, LAST_NAMES
from servers.video_meeting.world import (
    GUEST_DOMAINS,
    NOW,
    PLAN_LIMIT,
    TITLES,
    Meeting,
    MeetingWorld,
    Participant,
    Recording,
    User,
    _join_url,
)


def _fmt(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M")


def seed_world(rng: random.Random, seed: int) -> MeetingWorld:
    w = MeetingWorld(seed=seed)
    tzs = [
        "Europe/Lisbon",
        "Europe/London",
        "America/New_York",
        "America/Chicago",
        "America/Los_Angeles",
        "Europe/Berlin",
    ]
    people: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _ in range(40):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        if f"{first} {last}" in seen:
            continue
        seen.add(f"{first} {last}")
        people.append((f"{first} {last}", f"{first.lower()}.{last.lower()}@acme.example"))
    for name, email in people[:14]:
        uid = w.new_id("USR")
        plan = rng.choice(["basic", "basic", "pro", "pro", "pro", "business"])
        w.users[uid] = User(
            user_id=uid, name=name, email=email, plan=plan, max_participants=PLAN_LIMIT[plan], timezone=rng.choice(tzs)
        )  # type: ignore[arg-type]
    guests = people[14:] + [(f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}", "") for _ in range(10)]
    guests = [(n, e or f"{n.split()[0].lower()}.{n.split()[1].lower()}@{rng.choice(GUEST_DOMAINS)}") for n, e in guests]
    now = datetime.fromisoformat(NOW)
    hosts = list(w.users.values())
    # 40 random meetings, then 4 that guarantee every state: a recording still processing, an expired one,
    # an available one, and an upcoming meeting already at its participant limit
    forced: list[int | None] = [None] * 40 + [-3, -24 * 20, -24 * 3, 24 * 2 + 5]
    for i, force in enumerate(forced):
        host = rng.choice(hosts)
        offset_h = (
            force
            if force is not None
            else rng.choice(
                [
                    -24 * rng.randint(1, 30),
                    -24 * rng.randint(1, 30),
                    -rng.randint(2, 8),
                    0,
                    24 * rng.randint(0, 14) + rng.randint(1, 8),
                    24 * rng.randint(0, 14) + rng.randint(1, 8),
                ]
            )
        )
        start = (now + timedelta(hours=offset_h)).replace(minute=rng.choice([0, 15, 30, 45]))
        if offset_h == 0:  # live right now
            start = now - timedelta(minutes=rng.choice([5, 15, 25]))
        dur = rng.choice([15, 30, 30, 45, 60, 60, 90])
        end = start + timedelta(minutes=dur)
        if end <= now:
            status = "ended"
        elif start <= now:
            status = "in_progress"
        else:
            status = "scheduled"
        if status != "ended" and rng.random() < 0.1 and force is None:
            status = "cancelled"
        limit = min(host.max_participants, rng.choice([4, 6, 8, 10, 25, 50]) if force is None else 6)
        mid = w.new_id("MTG")
        m = Meeting(
            meeting_id=mid,
            title=rng.choice(TITLES),
            host_id=host.user_id,
            start_time=_fmt(start),
            end_time=_fmt(end),
            status=status,
            participant_limit=limit,  # type: ignore[arg-type]
            passcode=f"{rng.randint(0, 999999):06d}" if rng.random() < 0.6 else None,
            recording_enabled=rng.random() < 0.55 or force is not None,
            join_url=_join_url(mid),
            participants=[Participant(email=host.email, name=host.name, role="host", rsvp="accepted")],
        )
        pool = [(u.name, u.email) for u in hosts if u.user_id != host.user_id] + guests
        full = rng.random() < 0.2 or i == len(forced) - 1
        k = limit - 1 if full else rng.randint(1, max(1, min(limit - 2, 7)))
        for name, email in rng.sample(pool, k=min(k, len(pool))):
            m.participants.append(
                Participant(
                    email=email,
                    name=name,
                    role="co_host" if rng.random() < 0.1 else "attendee",
                    rsvp=rng.choice(["accepted", "accepted", "pending", "declined"]),
                )
            )  # type: ignore[arg-type]
        w.meetings[mid] = m
        if status == "ended" and m.recording_enabled:
            rid = w.new_id("REC")
            rstatus = (
                "processing"
                if (now - end) < timedelta(hours=6)
                else "expired"
                if end + timedelta(days=14) <= now
                else "deleted"
                if rng.random() < 0.1 and force is None
                else "available"
            )
            w.recordings[rid] = Recording(
                recording_id=rid,
                meeting_id=mid,
                status=rstatus,
                duration_minutes=dur - rng.randint(0, 5),  # type: ignore[arg-type]
                size_mb=round(dur * rng.uniform(6, 14), 1),
                recorded_at=m.start_time,
                expires_on=(end + timedelta(days=14)).strftime("%Y-%m-%d"),
                download_url=f"https://meet.example.com/rec/{rid.lower().replace('-', '')}"
                if rstatus == "available"
                else None,
            )
    return w
