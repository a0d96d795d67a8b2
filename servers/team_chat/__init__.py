"""team_chat: a workspace's members, public/private/archived channels, append-only messages and threads."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import EnvServer, InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found
from servers.names import FIRST_NAMES, LAST_NAMES

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


def seed_world(rng: random.Random, seed: int) -> ChatWorld:
    w = ChatWorld(seed=seed)
    seen: set[str] = set()
    tzs = [
        "Europe/Lisbon",
        "Europe/London",
        "America/New_York",
        "America/Denver",
        "Europe/Paris",
        "America/Los_Angeles",
    ]
    for _ in range(28):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        while f"{first} {last}" in seen:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        seen.add(f"{first} {last}")
        uid = w.new_id("U")
        w.members[uid] = Member(
            user_id=uid,
            name=f"{first} {last}",
            handle=f"{first.lower()}.{last.lower()}",
            title=rng.choice(TITLES),
            email=f"{first.lower()}.{last.lower()}@acme.example",
            timezone=rng.choice(tzs),
        )
    uids = list(w.members)
    for name, topic, private in CHANNELS:
        cid = w.new_id("C")
        if name == "general":
            members = list(uids)
        else:
            members = rng.sample(uids, k=rng.randint(3, 7) if private else rng.randint(6, 18))
        w.channels[cid] = Channel(
            channel_id=cid,
            name=name,
            topic=topic,
            is_private=private,
            is_archived=name in ARCHIVED,
            created_by=members[0],
            created_on=f"20{rng.randint(21, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            member_ids=sorted(members),
        )
    start = datetime(2026, 2, 2, 8, 0, 0)
    for c in w.channels.values():
        n = rng.randint(2, 4) if c.is_archived else rng.randint(4, 9)
        base = start - timedelta(days=200) if c.is_archived else start
        stamps = sorted(base + timedelta(seconds=rng.randint(0, 27 * 86400)) for _ in range(n))
        for at in stamps:
            mid = w.new_id("M", 5)
            text = rng.choice(OPENERS).format(thing=rng.choice(THINGS), day=rng.choice(DAYS))
            w.messages[mid] = Message(
                message_id=mid, channel_id=c.channel_id, user_id=rng.choice(c.member_ids), text=text, posted_at=_ts(at)
            )
            if rng.random() < 0.45:
                for k in range(rng.randint(1, 4)):
                    rid = w.new_id("M", 5)
                    w.messages[rid] = Message(
                        message_id=rid,
                        channel_id=c.channel_id,
                        user_id=rng.choice(c.member_ids),
                        text=rng.choice(REPLIES),
                        posted_at=_ts(at + timedelta(minutes=5 * (k + 1) + rng.randint(0, 4))),
                        parent_message_id=mid,
                    )
    return w


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


def view(w: ChatWorld, m: Message) -> MessageView:
    return MessageView(
        message_id=m.message_id,
        channel_id=m.channel_id,
        user_id=m.user_id,
        user_name=w.members[m.user_id].name,
        text=m.text,
        posted_at=m.posted_at,
        parent_message_id=m.parent_message_id,
        reply_count=sum(x.parent_message_id == m.message_id for x in w.messages.values()),
    )


def summary(c: Channel, user_id: str | None) -> ChannelSummary:
    return ChannelSummary(
        channel_id=c.channel_id,
        name=c.name,
        topic=c.topic,
        is_private=c.is_private,
        is_archived=c.is_archived,
        member_count=len(c.member_ids),
        is_member=None if user_id is None else user_id in c.member_ids,
    )


def parent_of(w: ChatWorld, message_id: str) -> Message:
    m = w.messages.get(message_id)
    if m is None:
        raise not_found(
            "thread parent message", message_id, "list_messages shows the top-level message ids of a channel"
        )
    if m.parent_message_id is not None:
        raise InvalidArgument(
            f"message {message_id} is itself a reply in thread {m.parent_message_id}; use that parent message_id"
        )
    return m


@TOOLS.tool(read_only=True)
def list_users(
    w: ChatWorld,
    name_contains: Annotated[
        str | None, Field(description="Case-insensitive part of the member's name or handle")
    ] = None,
) -> MemberList:
    """List the workspace's members with their titles and handles."""
    out = [
        m
        for m in w.members.values()
        if name_contains is None or name_contains.lower() in f"{m.name} {m.handle}".lower()
    ]
    return MemberList(users=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_channels(
    w: ChatWorld,
    user_id: Annotated[
        str | None, Field(description="Show membership for this member id; with member_only, only their channels")
    ] = None,
    member_only: Annotated[bool, Field(description="Only channels user_id belongs to (needs user_id)")] = False,
    include_archived: Annotated[bool, Field(description="Also list archived (read-only) channels")] = True,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the channel name")] = None,
) -> ChannelList:
    """List the workspace's channels with topic, privacy, archived flag and member count."""
    if user_id is not None:
        _member(w, user_id)
    elif member_only:
        raise InvalidArgument("member_only needs user_id")
    out = [
        summary(c, user_id)
        for c in w.channels.values()
        if (include_archived or not c.is_archived)
        and (not member_only or user_id in c.member_ids)
        and (name_contains is None or name_contains.lower().lstrip("#") in c.name)
    ]
    return ChannelList(channels=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_channel(w: ChatWorld, channel_id: ChannelId) -> Channel:
    """Get a channel's details, including its member ids, creator and whether it is private or archived."""
    return _channel(w, channel_id)


@TOOLS.tool()
def create_channel(
    w: ChatWorld,
    user_id: UserId,
    name: Annotated[
        str,
        Field(
            description="Channel name: lowercase letters, digits, '-' or '_' (2 to 40 chars)",
            pattern=r"^[a-z0-9][a-z0-9_-]{1,39}$",
        ),
    ],
    is_private: Annotated[bool, Field(description="Private channels are visible only to their members")] = False,
    topic: Annotated[str, Field(description="Short channel topic", max_length=250)] = "",
    member_ids: Annotated[list[str], Field(description="Other member ids to add at creation (from list_users)")] = [],  # noqa: B006 -- never mutated; [] keeps the schema default
) -> Channel:
    """Create a channel; the creator and the listed members become its members."""
    _member(w, user_id)
    for mid in member_ids:
        _member(w, mid, "member_ids")
    if any(c.name == name for c in w.channels.values()):
        raise StateConflict(f"a channel named #{name} already exists; pick another name")
    cid = w.new_id("C")
    c = Channel(
        channel_id=cid,
        name=name,
        topic=topic,
        is_private=is_private,
        is_archived=False,
        created_by=user_id,
        created_on=NOW[:10],
        member_ids=sorted({user_id, *member_ids}),
    )
    w.channels[cid] = c
    return c


@TOOLS.tool(idempotent=True)
def join_channel(w: ChatWorld, user_id: UserId, channel_id: ChannelId) -> Membership:
    """Join a public, active channel; private channels require being added by a member."""
    _member(w, user_id)
    c = _channel(w, channel_id)
    if c.is_archived:
        raise StateConflict(f"#{c.name} ({channel_id}) is archived; archived channels cannot be joined")
    if user_id in c.member_ids:
        raise StateConflict(f"{user_id} is already a member of #{c.name} ({channel_id})")
    if c.is_private:
        raise PermissionDenied(
            f"#{c.name} ({channel_id}) is private; a member must add {user_id} with add_channel_member"
        )
    c.member_ids = sorted([*c.member_ids, user_id])
    return Membership(channel_id=channel_id, user_id=user_id, member_ids=c.member_ids, member_count=len(c.member_ids))


@TOOLS.tool(idempotent=True)
def add_channel_member(
    w: ChatWorld,
    user_id: UserId,
    channel_id: ChannelId,
    member_id: Annotated[str, Field(description="Id of the member to add (from list_users)")],
) -> Membership:
    """Add another member to a channel; the person adding must already be a member of it."""
    _member(w, user_id)
    _member(w, member_id, "member_id")
    c = _channel(w, channel_id)
    if c.is_archived:
        raise StateConflict(f"#{c.name} ({channel_id}) is archived; members cannot be added")
    if user_id not in c.member_ids:
        raise PermissionDenied(f"{user_id} is not a member of #{c.name} ({channel_id}) and cannot add others")
    if member_id in c.member_ids:
        raise StateConflict(f"{member_id} is already a member of #{c.name} ({channel_id})")
    c.member_ids = sorted([*c.member_ids, member_id])
    return Membership(channel_id=channel_id, user_id=member_id, member_ids=c.member_ids, member_count=len(c.member_ids))


@TOOLS.tool()
def post_message(w: ChatWorld, user_id: UserId, channel_id: ChannelId, text: MessageText) -> MessageView:
    """Post a new top-level message to a channel the user belongs to (messages cannot be edited or deleted)."""
    _member(w, user_id)
    c = _channel(w, channel_id)
    if not text.strip():
        raise InvalidArgument("text is empty: a message needs some text")
    _can_write(c, user_id)
    mid = w.new_id("M", 5)
    m = Message(message_id=mid, channel_id=channel_id, user_id=user_id, text=text.strip(), posted_at=_now(w))
    w.messages[mid] = m
    return view(w, m)


@TOOLS.tool()
def reply_in_thread(
    w: ChatWorld,
    user_id: UserId,
    message_id: Annotated[
        str, Field(description="Id of the thread's parent (top-level) message, e.g. 'M-00012' (from list_messages)")
    ],
    text: MessageText,
) -> MessageView:
    """Reply in the thread under a top-level message; the channel must be active and the user a member."""
    _member(w, user_id)
    parent = parent_of(w, message_id)
    c = w.channels[parent.channel_id]
    if not text.strip():
        raise InvalidArgument("text is empty: a reply needs some text")
    _can_write(c, user_id)
    rid = w.new_id("M", 5)
    m = Message(
        message_id=rid,
        channel_id=c.channel_id,
        user_id=user_id,
        text=text.strip(),
        posted_at=_now(w),
        parent_message_id=message_id,
    )
    w.messages[rid] = m
    return view(w, m)


@TOOLS.tool(read_only=True)
def list_messages(
    w: ChatWorld,
    channel_id: ChannelId,
    user_id: Annotated[
        str, Field(description="Id of the member reading (private channels are readable only by members)")
    ],
    limit: Annotated[int, Field(description="Most recent N top-level messages", ge=1, le=100)] = 20,
    from_user_id: Annotated[str | None, Field(description="Only messages posted by this member id")] = None,
) -> MessageList:
    """List a channel's top-level messages, newest first, with the reply count of each thread."""
    _member(w, user_id)
    c = _channel(w, channel_id)
    _can_read(c, user_id)
    ms = [
        m
        for m in w.messages.values()
        if m.channel_id == channel_id
        and m.parent_message_id is None
        and (from_user_id is None or m.user_id == from_user_id)
    ]
    ms.sort(key=lambda m: (m.posted_at, m.message_id), reverse=True)
    out = [view(w, m) for m in ms[:limit]]
    return MessageList(channel_id=channel_id, messages=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_thread(
    w: ChatWorld,
    message_id: Annotated[str, Field(description="Id of the thread's parent message (from list_messages)")],
    user_id: Annotated[str, Field(description="Id of the member reading")],
) -> Thread:
    """Get a thread: its parent message and all replies, oldest first."""
    _member(w, user_id)
    parent = parent_of(w, message_id)
    _can_read(w.channels[parent.channel_id], user_id)
    replies = sorted(
        (m for m in w.messages.values() if m.parent_message_id == message_id), key=lambda m: (m.posted_at, m.message_id)
    )
    return Thread(
        channel_id=parent.channel_id,
        message_id=message_id,
        parent=view(w, parent),
        replies=[view(w, r) for r in replies],
        reply_count=len(replies),
    )


@TOOLS.tool(read_only=True)
def search_messages(
    w: ChatWorld,
    query: Annotated[str, Field(description="Words to find in message text (case-insensitive)", min_length=2)],
    user_id: Annotated[
        str, Field(description="Id of the member searching; private channels they are not in are skipped")
    ],
    channel_id: Annotated[str | None, Field(description="Only search this channel")] = None,
    limit: Annotated[int, Field(description="At most N results, newest first", ge=1, le=100)] = 20,
) -> SearchResults:
    """Search messages and replies across the channels a member can read."""
    _member(w, user_id)
    if channel_id is not None:
        _can_read(_channel(w, channel_id), user_id)
    tokens = query.lower().split()
    ms = [
        m
        for m in w.messages.values()
        if (channel_id is None or m.channel_id == channel_id)
        and (not w.channels[m.channel_id].is_private or user_id in w.channels[m.channel_id].member_ids)
        and all(t in m.text.lower() for t in tokens)
    ]
    ms.sort(key=lambda m: (m.posted_at, m.message_id), reverse=True)
    out = [view(w, m) for m in ms[:limit]]
    return SearchResults(query=query, messages=out, total=len(out))


def build(seed: int = 0) -> EnvServer[ChatWorld]:
    """A fresh team_chat server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "team_chat",
        seeder=seed_world,
        category="social",
        description="Team chat workspace: members, public and private channels (some archived), append-only messages and threaded replies.",
        tools=TOOLS,
        default_seed=seed,
    )
