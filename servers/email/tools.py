"""email tools, list_messages to move_message (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.email.world import (
    DATE_PATTERN,
    NOW,
    TOOLS,
    Body,
    ContactList,
    Deleted,
    LabelInfo,
    LabelList,
    ListFolder,
    MailWorld,
    Message,
    MessageId,
    MessageList,
    OptAddresses,
    Subject,
    Thread,
    ThreadId,
    ThreadList,
    ThreadSummary,
    _addresses,
    _draft,
    _in_folder,
    _labels,
    _message,
    _not_draft,
    _quote,
    _send,
    _stamp,
    _summary,
    _t,
    _when,
)
from servers.kit import InvalidArgument, StateConflict, not_found


@TOOLS.tool(read_only=True)
def list_messages(
    w: MailWorld,
    folder: Annotated[
        ListFolder, Field(description="Folder to list; 'all' is every folder except spam and trash")
    ] = "inbox",
    label: Annotated[str | None, Field(description="Only messages carrying this label (from list_labels)")] = None,
    unread_only: Annotated[bool, Field(description="Only unread messages")] = False,
    starred_only: Annotated[bool, Field(description="Only starred messages")] = False,
    from_address: Annotated[str | None, Field(description="Only messages from this sender address")] = None,
    limit: Annotated[int, Field(description="At most this many messages, newest first", ge=1, le=200)] = 25,
) -> MessageList:
    """List messages in a folder, newest first, filtered by label, unread/starred state or sender."""
    if label is not None:
        _labels(w, [label], "label")
    out = [
        m
        for m in w.messages.values()
        if _in_folder(m, folder)
        and (label is None or label in m.labels)
        and (not unread_only or not m.is_read)
        and (not starred_only or m.is_starred)
        and (from_address is None or m.from_address.lower() == from_address.lower())
    ]
    out.sort(key=lambda m: (_when(m), m.message_id), reverse=True)
    return MessageList(messages=[_summary(m) for m in out[:limit]], total=len(out[:limit]))


@TOOLS.tool(read_only=True)
def search_messages(
    w: MailWorld,
    query: Annotated[
        str,
        Field(
            description="Words that must all appear in the subject, body, sender, recipients or attachment names",
            min_length=1,
        ),
    ],
    folder: Annotated[
        ListFolder, Field(description="Folder to search; 'all' is every folder except spam and trash")
    ] = "all",
    after: Annotated[
        str | None, Field(description="Only messages on or after this date, YYYY-MM-DD", pattern=DATE_PATTERN)
    ] = None,
    before: Annotated[
        str | None, Field(description="Only messages before this date, YYYY-MM-DD", pattern=DATE_PATTERN)
    ] = None,
    has_attachment: Annotated[
        bool | None, Field(description="Only messages with (true) or without (false) attachments")
    ] = None,
    limit: Annotated[int, Field(description="At most this many messages, newest first", ge=1, le=200)] = 25,
) -> MessageList:
    """Search messages by words (case-insensitive), optionally within a folder, a date range or by attachments."""
    if after and before and before <= after:
        raise InvalidArgument(f"invalid date range: before {before} must be later than after {after}")
    terms = query.lower().split()
    out = []
    for m in w.messages.values():
        if not _in_folder(m, folder):
            continue
        day = _when(m)[:10]
        if (after and day < after) or (before and day >= before):
            continue
        if has_attachment is not None and bool(m.attachments) != has_attachment:
            continue
        text = " ".join([m.subject, m.body, m.from_address, *m.to, *m.cc, *m.attachments]).lower()
        if all(t in text for t in terms):
            out.append(m)
    out.sort(key=lambda m: (_when(m), m.message_id), reverse=True)
    return MessageList(messages=[_summary(m) for m in out[:limit]], total=len(out[:limit]))


@TOOLS.tool(read_only=True)
def get_message(w: MailWorld, message_id: MessageId) -> Message:
    """Get a message's full content: sender, recipients, subject, body, attachments, labels and thread (does not mark it read)."""
    return _message(w, message_id)


@TOOLS.tool(read_only=True)
def list_threads(
    w: MailWorld,
    folder: Annotated[
        ListFolder, Field(description="Only threads with a message in this folder; 'all' excludes spam and trash")
    ] = "inbox",
    label: Annotated[str | None, Field(description="Only threads with a message carrying this label")] = None,
    unread_only: Annotated[bool, Field(description="Only threads with unread messages")] = False,
    limit: Annotated[
        int, Field(description="At most this many threads, most recent activity first", ge=1, le=200)
    ] = 25,
) -> ThreadList:
    """List conversations (threads) with their participants, message and unread counts, most recent first."""
    if label is not None:
        _labels(w, [label], "label")
    by: dict[str, list[Message]] = {}
    for m in w.messages.values():
        by.setdefault(m.thread_id, []).append(m)
    out = []
    for tid, ms in by.items():
        if not any(_in_folder(m, folder) for m in ms):
            continue
        if label is not None and not any(label in m.labels for m in ms):
            continue
        unread = sum(1 for m in ms if not m.is_read)
        if unread_only and not unread:
            continue
        ms.sort(key=lambda m: (_when(m), m.message_id))
        people: list[str] = []
        for m in ms:
            for a in [m.from_address, *m.to, *m.cc]:
                if a not in people:
                    people.append(a)
        out.append(
            ThreadSummary(
                thread_id=tid,
                subject=ms[0].subject,
                participants=people,
                message_count=len(ms),
                unread_count=unread,
                last_message_at=_when(ms[-1]),
                folders=sorted({m.folder for m in ms}),
                labels=sorted({lb for m in ms for lb in m.labels}),
                has_draft=any(m.folder == "drafts" for m in ms),
            )
        )
    out.sort(key=lambda t: (t.last_message_at, t.thread_id), reverse=True)
    return ThreadList(threads=out[:limit], total=len(out[:limit]))


@TOOLS.tool(read_only=True)
def get_thread(w: MailWorld, thread_id: ThreadId) -> Thread:
    """Get every message of a conversation in chronological order (drafts included)."""
    ms = sorted((m for m in w.messages.values() if m.thread_id == thread_id), key=lambda m: (_when(m), m.message_id))
    if not ms:
        raise not_found("thread", thread_id, "list_threads shows valid thread ids")
    return Thread(thread_id=thread_id, subject=ms[0].subject, messages=ms, total=len(ms))


@TOOLS.tool(read_only=True)
def list_labels(w: MailWorld) -> LabelList:
    """List the mailbox's labels with how many messages (and unread messages) carry each."""
    out = []
    for lb in w.labels.values():
        ms = [m for m in w.messages.values() if lb.label in m.labels]
        out.append(
            LabelInfo(**lb.model_dump(), message_count=len(ms), unread_count=sum(1 for m in ms if not m.is_read))
        )
    return LabelList(labels=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_contacts(
    w: MailWorld,
    name_contains: Annotated[
        str | None, Field(description="Case-insensitive part of the name or email address")
    ] = None,
    organization: Annotated[
        str | None, Field(description="Only contacts from this organization, e.g. 'Northwind'")
    ] = None,
) -> ContactList:
    """List address-book contacts (name, email, organization) to find recipients' addresses."""
    q = (name_contains or "").lower()
    out = [
        c
        for c in w.contacts.values()
        if (not q or q in c.name.lower() or q in c.email.lower())
        and (organization is None or c.organization.lower() == organization.lower())
    ]
    return ContactList(contacts=out, total=len(out))


@TOOLS.tool()
def create_draft(
    w: MailWorld,
    to: OptAddresses = None,
    cc: OptAddresses = None,
    subject: Subject = "",
    body: Body = "",
) -> Message:
    """Start a new draft (recipients may be added later with update_draft); send it with send_draft."""
    to_, cc_ = _addresses(to, "to"), _addresses(cc, "cc")
    mid = w.new_id("MSG")
    m = Message(
        message_id=mid,
        thread_id=w.new_id("THR"),
        folder="drafts",
        from_address=w.me_address,
        to=to_,
        cc=cc_,
        subject=subject,
        body=body,
        updated_at=_stamp(w),
    )
    w.messages[mid] = m
    return m


@TOOLS.tool(idempotent=True)
def update_draft(
    w: MailWorld,
    message_id: MessageId,
    to: OptAddresses = None,
    cc: OptAddresses = None,
    subject: Annotated[str | None, Field(description="New subject line", max_length=200)] = None,
    body: Annotated[
        str | None, Field(description="New plain-text body (replaces the old one)", max_length=20_000)
    ] = None,
) -> Message:
    """Edit a draft's recipients, subject or body; fields left out stay as they are. Sent messages cannot be edited."""
    m = _draft(w, message_id)
    if to is None and cc is None and subject is None and body is None:
        raise InvalidArgument("nothing to change: give at least one of to, cc, subject, body")
    to_ = _addresses(to, "to") if to is not None else m.to
    cc_ = _addresses(cc, "cc") if cc is not None else m.cc
    m.to, m.cc = to_, cc_
    if subject is not None:
        m.subject = subject
    if body is not None:
        m.body = body
    m.updated_at = _stamp(w)
    return m


@TOOLS.tool(destructive=True, idempotent=True)
def delete_draft(w: MailWorld, message_id: MessageId) -> Deleted:
    """Delete a draft permanently. Sent or received messages cannot be deleted this way (move_message them to trash)."""
    m = _draft(w, message_id, "deleted")
    del w.messages[m.message_id]
    return Deleted(message_id=message_id, deleted=True)


@TOOLS.tool()
def send_draft(w: MailWorld, message_id: MessageId) -> Message:
    """Send a draft: it moves to the sent folder and can no longer be edited. It needs at least one recipient."""
    m = _draft(w, message_id, "sent again")
    return _send(w, m)


@TOOLS.tool()
def send_message(
    w: MailWorld,
    to: Annotated[
        list[str],
        Field(description="Recipient email addresses, plain form like 'ana.silva@northwind.example'", min_length=1),
    ],
    subject: Annotated[str, Field(description="Subject line", min_length=1, max_length=200)],
    body: Body,
    cc: OptAddresses = None,
) -> Message:
    """Compose and send a new message in a new thread."""
    to_, cc_ = _addresses(to, "to"), _addresses(cc, "cc")
    mid = w.new_id("MSG")
    m = Message(
        message_id=mid,
        thread_id=w.new_id("THR"),
        folder="drafts",
        from_address=w.me_address,
        to=to_,
        cc=cc_,
        subject=subject,
        body=body,
        updated_at=_t(NOW),
    )
    w.messages[mid] = m
    return _send(w, m)


@TOOLS.tool()
def reply_to_message(
    w: MailWorld,
    message_id: MessageId,
    body: Annotated[
        str, Field(description="Your reply; the original is quoted below it", min_length=1, max_length=20_000)
    ],
    reply_all: Annotated[bool, Field(description="Also send to everyone else on the original To and Cc lines")] = False,
) -> Message:
    """Reply to a received or sent message in the same thread (to its sender; with reply_all, to all recipients)."""
    orig = _message(w, message_id)
    _not_draft(orig, "replied to")
    me = w.me_address.lower()
    to = list(orig.to) if orig.from_address.lower() == me else [orig.from_address]
    cc: list[str] = []
    if reply_all:
        for a in [*orig.to, *orig.cc]:
            if a.lower() != me and a not in to and a not in cc:
                cc.append(a)
    subject = orig.subject if orig.subject.lower().startswith("re:") else f"Re: {orig.subject}"
    mid = w.new_id("MSG")
    m = Message(
        message_id=mid,
        thread_id=orig.thread_id,
        folder="drafts",
        from_address=w.me_address,
        to=to,
        cc=cc,
        subject=subject,
        body=body + _quote(orig),
        updated_at=_t(NOW),
        labels=[lb for lb in orig.labels if lb != "follow-up"],
        in_reply_to=orig.message_id,
    )
    w.messages[mid] = m
    return _send(w, m)


@TOOLS.tool()
def forward_message(
    w: MailWorld,
    message_id: MessageId,
    to: Annotated[
        list[str],
        Field(description="Addresses to forward to, plain form like 'ana.silva@northwind.example'", min_length=1),
    ],
    note: Annotated[str, Field(description="Optional text above the forwarded message", max_length=5000)] = "",
) -> Message:
    """Forward a received or sent message (with its attachments) to new recipients, as a new thread."""
    orig = _message(w, message_id)
    _not_draft(orig, "forwarded")
    to_ = _addresses(to, "to")
    subject = orig.subject if orig.subject.lower().startswith("fwd:") else f"Fwd: {orig.subject}"
    body = (f"{note}\n\n" if note else "") + (
        f"---------- Forwarded message ----------\nFrom: {orig.from_address}\n"
        f"Date: {orig.sent_at}\nSubject: {orig.subject}\nTo: {', '.join(orig.to)}\n\n{orig.body}"
    )
    mid = w.new_id("MSG")
    m = Message(
        message_id=mid,
        thread_id=w.new_id("THR"),
        folder="drafts",
        from_address=w.me_address,
        to=to_,
        subject=subject,
        body=body,
        updated_at=_t(NOW),
        attachments=list(orig.attachments),
    )
    w.messages[mid] = m
    return _send(w, m)


@TOOLS.tool(idempotent=True)
def label_message(
    w: MailWorld,
    message_id: MessageId,
    add_labels: Annotated[list[str] | None, Field(description="Label names to add (from list_labels)")] = None,
    remove_labels: Annotated[list[str] | None, Field(description="Label names to remove")] = None,
) -> Message:
    """Add and/or remove labels on a message (labels are mailbox metadata; the message itself is unchanged)."""
    m = _message(w, message_id)
    add, rem = _labels(w, add_labels or [], "add_labels"), _labels(w, remove_labels or [], "remove_labels")
    if not add and not rem:
        raise InvalidArgument("give at least one label in add_labels or remove_labels")
    both = set(add) & set(rem)
    if both:
        raise InvalidArgument(f"labels {sorted(both)} are both added and removed")
    m.labels = sorted((set(m.labels) | set(add)) - set(rem))
    return m


@TOOLS.tool(idempotent=True)
def mark_message(
    w: MailWorld,
    message_id: MessageId,
    is_read: Annotated[bool | None, Field(description="Mark read (true) or unread (false)")] = None,
    is_starred: Annotated[bool | None, Field(description="Star (true) or unstar (false)")] = None,
) -> Message:
    """Mark a message read/unread and/or starred/unstarred."""
    m = _message(w, message_id)
    if is_read is None and is_starred is None:
        raise InvalidArgument("give is_read and/or is_starred")
    if is_read is not None:
        if m.folder == "drafts":
            raise StateConflict(f"message {message_id} is a draft; drafts have no read state")
        m.is_read = is_read
    if is_starred is not None:
        m.is_starred = is_starred
    return m


@TOOLS.tool(idempotent=True)
def move_message(
    w: MailWorld,
    message_id: MessageId,
    folder: Annotated[Literal["inbox", "sent", "archive", "spam", "trash"], Field(description="Destination folder")],
) -> Message:
    """Move a message to another folder (archive, trash, spam, back to inbox; messages you sent can return to sent)."""
    m = _message(w, message_id)
    if m.folder == "drafts":
        raise StateConflict(
            f"message {message_id} is a draft; drafts stay in drafts until sent (delete_draft removes one)"
        )
    mine = m.from_address.lower() == w.me_address.lower()
    if folder == "sent" and not mine:
        raise InvalidArgument(
            f"message {message_id} was sent by {m.from_address}, not by you; it cannot go to 'sent' "
            "(valid: inbox, archive, spam, trash)"
        )
    if folder in ("inbox", "spam") and mine:
        raise InvalidArgument(f"message {message_id} was sent by you; it can go to 'sent', 'archive' or 'trash'")
    m.folder = folder
    return m
