"""video_meeting: hosts and plans, scheduled/live/ended meetings, participants and cloud recordings."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import (
    EnvServer,
    InvalidArgument,
    PermissionDenied,
    StateConflict,
    ToolSet,
    World,
    not_found,
    sensitive,
)
from servers.names import FIRST_NAMES, LAST_NAMES

Plan = Literal["basic", "pro", "business"]
MeetingStatus = Literal["scheduled", "in_progress", "ended", "cancelled"]
Role = Literal["host", "co_host", "attendee"]
Rsvp = Literal["accepted", "declined", "pending"]
RecordingStatus = Literal["processing", "available", "expired", "deleted"]
NOW = f"{REFERENCE_DAY}T09:00"
PLAN_LIMIT = {"basic": 10, "pro": 100, "business": 300}
TITLES = [
    "Weekly sync",
    "Sprint planning",
    "Design review",
    "1:1",
    "Customer onboarding",
    "Quarterly business review",
    "Interview loop",
    "Incident postmortem",
    "All hands",
    "Product demo",
    "Budget check-in",
    "Roadmap workshop",
    "Vendor call",
    "Team retro",
    "Office hours",
]
GUEST_DOMAINS = ["example.com", "partner.example", "client.example", "contractor.example"]


class User(BaseModel):
    user_id: str
    name: str
    email: str
    plan: Plan
    max_participants: int
    timezone: str


class Participant(BaseModel):
    email: str
    name: str
    role: Role
    rsvp: Rsvp


class Meeting(BaseModel):
    meeting_id: str
    title: str
    host_id: str
    start_time: str
    end_time: str
    status: MeetingStatus
    participant_limit: int
    passcode: str | None = None
    recording_enabled: bool
    join_url: str
    participants: list[Participant] = []


class Recording(BaseModel):
    recording_id: str
    meeting_id: str
    status: RecordingStatus
    duration_minutes: int
    size_mb: float
    recorded_at: str
    expires_on: str
    download_url: str | None = None


class MeetingWorld(World):
    users: dict[str, User] = {}
    meetings: dict[str, Meeting] = {}
    recordings: dict[str, Recording] = {}


def _fmt(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M")


def _join_url(meeting_id: str) -> str:
    return f"https://meet.example.com/j/{meeting_id.lower().replace('-', '')}"


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


def _meeting(w: MeetingWorld, meeting_id: str) -> Meeting:
    m = w.meetings.get(meeting_id)
    if m is None:
        raise not_found("meeting", meeting_id, "list_meetings shows meeting ids")
    return m


def _host(w: MeetingWorld, host_id: str) -> User:
    u = w.users.get(host_id)
    if u is None:
        raise not_found("host", host_id, "host_id must be a user id from list_users")
    return u


def _dt(name: str, value: str) -> datetime:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise InvalidArgument(f"{name} {value!r} is not a valid date-time (YYYY-MM-DDTHH:MM)") from None


def _window(start_time: str, end_time: str) -> None:
    s, e = _dt("start_time", start_time), _dt("end_time", end_time)
    if e <= s:
        raise InvalidArgument(f"end_time {end_time} must be after start_time {start_time}")
    if start_time < NOW:
        raise InvalidArgument(f"start_time {start_time} is in the past; now is {NOW}")
    if e - s > timedelta(hours=24):
        raise InvalidArgument("a meeting can last at most 24 hours")


def _changeable(m: Meeting, action: str) -> None:
    if m.status == "ended":
        raise StateConflict(f"meeting {m.meeting_id} ('{m.title}') already ended at {m.end_time}; cannot {action}")
    if m.status == "cancelled":
        raise StateConflict(f"meeting {m.meeting_id} ('{m.title}') is cancelled; cannot {action}")


def _overlap(w: MeetingWorld, host_id: str, start_time: str, end_time: str, skip: str | None = None) -> Meeting | None:
    for m in w.meetings.values():
        if (
            m.host_id == host_id
            and m.meeting_id != skip
            and m.status in ("scheduled", "in_progress")
            and m.start_time < end_time
            and start_time < m.end_time
        ):
            return m
    return None


MeetingId = Annotated[str, Field(description="Meeting id, e.g. 'MTG-0007' (from list_meetings)")]
DateTime = Annotated[
    str, Field(description="Local date-time YYYY-MM-DDTHH:MM", pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")
]


class UserList(BaseModel):
    users: list[User]
    total: int


class MeetingSummary(BaseModel):
    meeting_id: str
    title: str
    host_id: str
    start_time: str
    end_time: str
    status: MeetingStatus
    participant_count: int
    participant_limit: int
    recording_enabled: bool
    has_passcode: bool


class MeetingList(BaseModel):
    meetings: list[MeetingSummary]
    total: int


class MeetingDetails(BaseModel):
    meeting_id: str
    title: str
    host_id: str
    host_name: str
    start_time: str
    end_time: str
    status: MeetingStatus
    participant_limit: int
    participant_count: int
    recording_enabled: bool
    has_passcode: bool
    join_url: str
    participants: list[Participant]
    recording_ids: list[str]


class CancelledMeeting(BaseModel):
    meeting_id: str
    status: MeetingStatus
    notified: int


class ParticipantChange(BaseModel):
    meeting_id: str
    email: str
    participant_count: int
    participant_limit: int
    participants: list[Participant]


class RecordingList(BaseModel):
    recordings: list[Recording]
    total: int


class RecordingLink(BaseModel):
    recording_id: str
    meeting_id: str
    download_url: str
    expires_on: str
    duration_minutes: int
    size_mb: float


TOOLS: ToolSet[MeetingWorld] = ToolSet()


def summary(m: Meeting) -> MeetingSummary:
    return MeetingSummary(
        meeting_id=m.meeting_id,
        title=m.title,
        host_id=m.host_id,
        start_time=m.start_time,
        end_time=m.end_time,
        status=m.status,
        participant_count=len(m.participants),
        participant_limit=m.participant_limit,
        recording_enabled=m.recording_enabled,
        has_passcode=m.passcode is not None,
    )


def details(w: MeetingWorld, m: Meeting) -> MeetingDetails:
    return MeetingDetails(
        meeting_id=m.meeting_id,
        title=m.title,
        host_id=m.host_id,
        host_name=w.users[m.host_id].name,
        start_time=m.start_time,
        end_time=m.end_time,
        status=m.status,
        participant_limit=m.participant_limit,
        participant_count=len(m.participants),
        recording_enabled=m.recording_enabled,
        has_passcode=m.passcode is not None,
        join_url=m.join_url,
        participants=m.participants,
        recording_ids=[r.recording_id for r in w.recordings.values() if r.meeting_id == m.meeting_id],
    )


def change(m: Meeting, email: str) -> ParticipantChange:
    return ParticipantChange(
        meeting_id=m.meeting_id,
        email=email,
        participant_count=len(m.participants),
        participant_limit=m.participant_limit,
        participants=m.participants,
    )


@TOOLS.tool(read_only=True)
def list_users(
    w: MeetingWorld,
    plan: Annotated[Plan | None, Field(description="Only users on this plan")] = None,
) -> UserList:
    """List the account's users who can host meetings, with their plan and maximum participants per meeting."""
    out = [u for u in w.users.values() if plan is None or u.plan == plan]
    return UserList(users=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_meetings(
    w: MeetingWorld,
    host_id: Annotated[str | None, Field(description="Only meetings hosted by this user id (from list_users)")] = None,
    status: Annotated[MeetingStatus | None, Field(description="Only meetings in this status")] = None,
    date: Annotated[
        str | None, Field(description="Only meetings starting on this date, YYYY-MM-DD", pattern=r"^\d{4}-\d{2}-\d{2}$")
    ] = None,
    participant_email: Annotated[str | None, Field(description="Only meetings this email is invited to")] = None,
) -> MeetingList:
    """List meetings, filtered by host, status, start date or participant; ordered by start time."""
    if host_id is not None:
        _host(w, host_id)
    out = [
        summary(m)
        for m in sorted(w.meetings.values(), key=lambda m: (m.start_time, m.meeting_id))
        if (host_id is None or m.host_id == host_id)
        and (status is None or m.status == status)
        and (date is None or m.start_time.startswith(date))
        and (participant_email is None or any(p.email.lower() == participant_email.lower() for p in m.participants))
    ]
    return MeetingList(meetings=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_meeting(w: MeetingWorld, meeting_id: MeetingId) -> MeetingDetails:
    """Get a meeting's details: schedule, status, join link, participants with roles and RSVPs, and its recording ids."""
    return details(w, _meeting(w, meeting_id))


@TOOLS.tool()
def schedule_meeting(
    w: MeetingWorld,
    host_id: Annotated[str, Field(description="User id of the host (from list_users)")],
    title: Annotated[str, Field(description="Meeting title", min_length=1, max_length=120)],
    start_time: DateTime,
    end_time: DateTime,
    participant_limit: Annotated[
        int | None,
        Field(description="Maximum participants including the host; defaults to the host's plan maximum", ge=2, le=300),
    ] = None,
    passcode: Annotated[
        str | None, sensitive("Optional 6-digit passcode participants must enter", pattern=r"^\d{6}$")
    ] = None,
    recording_enabled: Annotated[bool, Field(description="Record the meeting to the cloud")] = False,
) -> MeetingDetails:
    """Schedule a meeting for a host; the end must be after the start, the start in the future, and the limit within the host's plan."""
    host = _host(w, host_id)
    if not title.strip():
        raise InvalidArgument("title is empty")
    _window(start_time, end_time)
    limit = participant_limit or host.max_participants
    if limit > host.max_participants:
        raise InvalidArgument(
            f"participant_limit {limit} exceeds the {host.plan} plan maximum of {host.max_participants} for host {host_id}"
        )
    clash = _overlap(w, host_id, start_time, end_time)
    if clash is not None:
        raise StateConflict(
            f"host {host_id} already hosts meeting {clash.meeting_id} ('{clash.title}') from {clash.start_time} to {clash.end_time}"
        )
    mid = w.new_id("MTG")
    m = Meeting(
        meeting_id=mid,
        title=title.strip(),
        host_id=host_id,
        start_time=start_time,
        end_time=end_time,
        status="scheduled",
        participant_limit=limit,
        passcode=passcode,
        recording_enabled=recording_enabled,
        join_url=_join_url(mid),
        participants=[Participant(email=host.email, name=host.name, role="host", rsvp="accepted")],
    )
    w.meetings[mid] = m
    return details(w, m)


@TOOLS.tool(idempotent=True)
def reschedule_meeting(
    w: MeetingWorld, meeting_id: MeetingId, start_time: DateTime, end_time: DateTime
) -> MeetingDetails:
    """Move a scheduled meeting to a new start and end time (not possible once it has started, ended or been cancelled)."""
    m = _meeting(w, meeting_id)
    _changeable(m, "reschedule it")
    if m.status == "in_progress":
        raise StateConflict(f"meeting {meeting_id} is in progress since {m.start_time}; it cannot be rescheduled now")
    _window(start_time, end_time)
    clash = _overlap(w, m.host_id, start_time, end_time, skip=meeting_id)
    if clash is not None:
        raise StateConflict(
            f"host {m.host_id} already hosts meeting {clash.meeting_id} ('{clash.title}') from {clash.start_time} to {clash.end_time}"
        )
    m.start_time, m.end_time = start_time, end_time
    for p in m.participants:
        if p.role != "host":
            p.rsvp = "pending"
    return details(w, m)


@TOOLS.tool(destructive=True, idempotent=True)
def cancel_meeting(w: MeetingWorld, meeting_id: MeetingId) -> CancelledMeeting:
    """Cancel a scheduled or in-progress meeting and notify its participants."""
    m = _meeting(w, meeting_id)
    _changeable(m, "cancel it")
    m.status = "cancelled"
    return CancelledMeeting(meeting_id=meeting_id, status="cancelled", notified=len(m.participants) - 1)


@TOOLS.tool()
def add_participant(
    w: MeetingWorld,
    meeting_id: MeetingId,
    email: Annotated[str, Field(description="Participant's email address", pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")],
    name: Annotated[str, Field(description="Participant's display name", min_length=1, max_length=80)],
    role: Annotated[Literal["co_host", "attendee"], Field(description="Role in the meeting")] = "attendee",
) -> ParticipantChange:
    """Invite a participant to a meeting that has not ended; fails when the meeting is at its participant limit."""
    m = _meeting(w, meeting_id)
    _changeable(m, "add participants")
    if any(p.email.lower() == email.lower() for p in m.participants):
        raise StateConflict(f"{email} is already a participant of meeting {meeting_id}")
    if len(m.participants) >= m.participant_limit:
        raise StateConflict(
            f"meeting {meeting_id} is full: {len(m.participants)} of {m.participant_limit} participants; "
            "remove_participant someone first or schedule a larger meeting"
        )
    m.participants.append(Participant(email=email.lower(), name=name.strip(), role=role, rsvp="pending"))
    return change(m, email.lower())


@TOOLS.tool(destructive=True, idempotent=True)
def remove_participant(
    w: MeetingWorld,
    meeting_id: MeetingId,
    email: Annotated[str, Field(description="Email of the participant to remove (from get_meeting)")],
) -> ParticipantChange:
    """Remove an invited participant from a meeting that has not ended; the host cannot be removed."""
    m = _meeting(w, meeting_id)
    _changeable(m, "remove participants")
    p = next((p for p in m.participants if p.email.lower() == email.lower()), None)
    if p is None:
        raise not_found("participant", email, f"get_meeting {meeting_id} lists its participants")
    if p.role == "host":
        raise PermissionDenied(f"{email} is the host of meeting {meeting_id} and cannot be removed")
    m.participants.remove(p)
    return change(m, p.email)


@TOOLS.tool(read_only=True)
def list_recordings(
    w: MeetingWorld,
    meeting_id: Annotated[str | None, Field(description="Only recordings of this meeting id")] = None,
    host_id: Annotated[str | None, Field(description="Only recordings of meetings hosted by this user id")] = None,
    status: Annotated[RecordingStatus | None, Field(description="Only recordings in this status")] = None,
) -> RecordingList:
    """List cloud recordings with their status (processing, available, expired, deleted), duration and size."""
    if meeting_id is not None:
        _meeting(w, meeting_id)
    if host_id is not None:
        _host(w, host_id)
    out = [
        r
        for r in w.recordings.values()
        if (meeting_id is None or r.meeting_id == meeting_id)
        and (status is None or r.status == status)
        and (host_id is None or w.meetings[r.meeting_id].host_id == host_id)
    ]
    return RecordingList(recordings=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_recording_link(
    w: MeetingWorld,
    recording_id: Annotated[
        str, Field(description="Recording id, e.g. 'REC-0003' (from list_recordings or get_meeting)")
    ],
) -> RecordingLink:
    """Get the download link of an available recording; processing, expired or deleted recordings have none."""
    r = w.recordings.get(recording_id)
    if r is None:
        raise not_found("recording", recording_id, "list_recordings shows recording ids")
    if r.status == "processing":
        raise StateConflict(f"recording {recording_id} is still processing; it is not available yet, try again later")
    if r.status in ("expired", "deleted"):
        raise StateConflict(
            f"recording {recording_id} is not available: it {'expired on ' + r.expires_on if r.status == 'expired' else 'was deleted'}"
        )
    return RecordingLink(
        recording_id=recording_id,
        meeting_id=r.meeting_id,
        download_url=r.download_url or "",
        expires_on=r.expires_on,
        duration_minutes=r.duration_minutes,
        size_mb=r.size_mb,
    )


def build(seed: int = 0) -> EnvServer[MeetingWorld]:
    """A fresh video_meeting server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "video_meeting",
        seeder=seed_world,
        category="lifestyle",
        description=f"Video meetings: hosts and their plans, scheduling, rescheduling and cancelling meetings, participants and cloud recordings. Now is {NOW}.",
        tools=TOOLS,
        default_seed=seed,
    )
