"""team_chat tools, list_users to search_messages (in tools/list order)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.kit import InvalidArgument, PermissionDenied, StateConflict, not_found
from servers.team_chat.world import (
    NOW,
    TOOLS,
    Channel,
    ChannelId,
    ChannelList,
    ChannelSummary,
    ChatWorld,
    MemberList,
    Membership,
    Message,
    MessageList,
    MessageText,
    MessageView,
    SearchResults,
    Thread,
    UserId,
    _can_read,
    _can_write,
    _channel,
    _member,
    _now,
)


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
