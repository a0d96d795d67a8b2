"""video_meeting: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, StateConflict, ToolSet, World, not_found

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


def _join_url(meeting_id: str) -> str:
    return f"https://meet.example.com/j/{meeting_id.lower().replace('-', '')}"


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
