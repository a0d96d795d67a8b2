"""team_chat: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import PermissionDenied, StateConflict, ToolSet, World, not_found

NOW = f"{REFERENCE_DAY}T09:00:00"
TITLES = [
    "Software Engineer",
    "Product Manager",
    "Designer",
    "Data Analyst",
    "Engineering Manager",
    "QA Engineer",
    "Support Lead",
    "Marketing Manager",
    "Sales Engineer",
    "DevOps Engineer",
    "Recruiter",
    "Finance Partner",
]
CHANNELS: list[tuple[str, str, bool]] = [  # name, topic, private
    ("general", "Company-wide announcements and chatter", False),
    ("random", "Anything goes", False),
    ("engineering", "Engineering discussions", False),
    ("design", "Design reviews and inspiration", False),
    ("product-roadmap", "Roadmap planning and priorities", False),
    ("support-escalations", "Customer issues that need engineering", False),
    ("releases", "Release coordination and changelogs", False),
    ("data-platform", "Pipelines, warehouse and dashboards", False),
    ("incident-response", "Active incidents only", False),
    ("lunch-club", "Where are we eating today?", False),
    ("leadership", "Leadership team, confidential", True),
    ("hiring-committee", "Candidate debriefs", True),
    ("finance-ops", "Budgets and invoices", True),
    ("security-private", "Vulnerability reports, do not share", True),
    ("project-atlas", "Stealth project Atlas", True),
    ("q3-offsite-2025", "Planning the 2025 offsite (done)", False),
    ("legacy-billing", "Old billing system, migrated", False),
    ("hackweek-2025", "Hack week projects", False),
    ("old-leads", "Former leads channel", True),
]
ARCHIVED = {"q3-offsite-2025", "legacy-billing", "hackweek-2025", "old-leads"}
OPENERS = [
    "Heads up: the {thing} deploy is scheduled for {day}.",
    "Can someone review my PR for the {thing}?",
    "Reminder: {thing} retro at 3pm {day}.",
    "The {thing} dashboard looks off since {day}, anyone else seeing this?",
    "Shipped the new {thing} today. Thanks everyone!",
    "Who owns the {thing}? Need a quick answer for a customer.",
    "Draft doc for the {thing} is up, comments welcome by {day}.",
    "FYI {thing} is down for maintenance on {day} morning.",
    "Any objections to moving the {thing} sync to {day}?",
    "Great demo of the {thing} yesterday!",
]
THINGS = [
    "search service",
    "billing API",
    "onboarding flow",
    "mobile app",
    "data pipeline",
    "status page",
    "auth service",
    "pricing page",
    "analytics export",
    "notification system",
    "design system",
    "admin console",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
REPLIES = [
    "On it.",
    "Thanks for the heads up!",
    "Looking now.",
    "+1",
    "I can take this one.",
    "Works for me.",
    "Can we push it a day?",
    "Done, please check.",
    "Great work!",
    "I'll add it to the agenda.",
    "Which environment?",
]


class Member(BaseModel):
    user_id: str
    name: str
    handle: str
    title: str
    email: str
    timezone: str


class Channel(BaseModel):
    channel_id: str
    name: str
    topic: str
    is_private: bool
    is_archived: bool
    created_by: str
    created_on: str
    member_ids: list[str]


class Message(BaseModel):
    message_id: str
    channel_id: str
    user_id: str
    text: str
    posted_at: str
    parent_message_id: str | None = None


class ChatWorld(World):
    members: dict[str, Member] = {}
    channels: dict[str, Channel] = {}
    messages: dict[str, Message] = {}
    clock: int = 0


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S")


def _now(w: ChatWorld) -> str:
    w.clock += 1
    return _ts(datetime.fromisoformat(NOW) + timedelta(seconds=w.clock))


def _member(w: ChatWorld, user_id: str, arg: str = "user_id") -> Member:
    m = w.members.get(user_id)
    if m is None:
        raise not_found("workspace member", user_id, f"{arg} must be a user id from list_users")
    return m


def _channel(w: ChatWorld, channel_id: str) -> Channel:
    c = w.channels.get(channel_id)
    if c is None:
        raise not_found("channel", channel_id, "list_channels shows channel ids")
    return c


def _can_read(c: Channel, user_id: str) -> None:
    if c.is_private and user_id not in c.member_ids:
        raise PermissionDenied(
            f"#{c.name} ({c.channel_id}) is a private channel and {user_id} is not a member; a member must add them with add_channel_member"
        )


def _can_write(c: Channel, user_id: str) -> None:
    if c.is_archived:
        raise StateConflict(f"#{c.name} ({c.channel_id}) is archived and read-only; post in an active channel instead")
    _can_read(c, user_id)
    if user_id not in c.member_ids:
        raise PermissionDenied(f"{user_id} is not a member of #{c.name} ({c.channel_id}); join_channel first")


UserId = Annotated[str, Field(description="Id of the workspace member acting, e.g. 'U-0003' (from list_users)")]
ChannelId = Annotated[str, Field(description="Channel id, e.g. 'C-0002' (from list_channels)")]
MessageText = Annotated[
    str, Field(description="Message text (1 to 4000 characters, not only whitespace)", max_length=4000)
]


class MemberList(BaseModel):
    users: list[Member]
    total: int


class ChannelSummary(BaseModel):
    channel_id: str
    name: str
    topic: str
    is_private: bool
    is_archived: bool
    member_count: int
    is_member: bool | None = None


class ChannelList(BaseModel):
    channels: list[ChannelSummary]
    total: int


class MessageView(BaseModel):
    message_id: str
    channel_id: str
    user_id: str
    user_name: str
    text: str
    posted_at: str
    parent_message_id: str | None
    reply_count: int


class MessageList(BaseModel):
    channel_id: str
    messages: list[MessageView]
    total: int


class Thread(BaseModel):
    channel_id: str
    message_id: str
    parent: MessageView
    replies: list[MessageView]
    reply_count: int


class SearchResults(BaseModel):
    query: str
    messages: list[MessageView]
    total: int


class Membership(BaseModel):
    channel_id: str
    user_id: str
    member_ids: list[str]
    member_count: int


TOOLS: ToolSet[ChatWorld] = ToolSet()
