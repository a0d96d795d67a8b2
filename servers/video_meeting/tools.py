"""video_meeting tools, list_users to get_recording_link (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import InvalidArgument, PermissionDenied, StateConflict, not_found, sensitive
from servers.video_meeting.world import (
    TOOLS,
    CancelledMeeting,
    DateTime,
    Meeting,
    MeetingDetails,
    MeetingId,
    MeetingList,
    MeetingStatus,
    MeetingSummary,
    MeetingWorld,
    Participant,
    ParticipantChange,
    Plan,
    RecordingLink,
    RecordingList,
    RecordingStatus,
    UserList,
    _changeable,
    _host,
    _join_url,
    _meeting,
    _overlap,
    _window,
)


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
