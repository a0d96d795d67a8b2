"""email: one mailbox with inbox, sent, drafts, archive, spam and trash folders, threads, labels and contacts.

Messages are append-only: once sent or received they are never edited (only their folder, labels and
read/starred flags change). Drafts are editable until sent.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import EnvServer, InvalidArgument, StateConflict, ToolSet, World, not_found
from servers.names import FIRST_NAMES, LAST_NAMES

NOW = datetime(2026, 3, 2, 9, 0)
FMT = "%Y-%m-%dT%H:%M"
DOMAIN = "northwind.example"
ADDRESS_RE = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")

Folder = Literal["inbox", "sent", "drafts", "archive", "spam", "trash"]
LabelColor = Literal["red", "orange", "yellow", "green", "blue", "purple", "gray"]


class Contact(BaseModel):
    contact_id: str
    name: str
    email: str
    organization: str


class Label(BaseModel):
    label: str
    color: LabelColor
    description: str = ""


class Message(BaseModel):
    message_id: str
    thread_id: str
    folder: Folder
    from_address: str
    to: list[str] = []
    cc: list[str] = []
    subject: str = ""
    body: str = ""
    sent_at: str | None = Field(default=None, description="When it was sent or received; null for drafts")
    updated_at: str
    is_read: bool = True
    is_starred: bool = False
    labels: list[str] = []
    attachments: list[str] = []
    in_reply_to: str | None = None


class MailWorld(World):
    me_name: str = ""
    me_address: str = ""
    contacts: dict[str, Contact] = {}
    labels: dict[str, Label] = {}
    messages: dict[str, Message] = {}
    clock: int = 0


# --------------------------------------------------------------------------- seeding
EXTERNAL = [("Globex", "globex.com"), ("Acme Corp", "acme.io"), ("Initech", "initech.net"), ("Umbrella Ltd", "umbrella.co.uk")]
SERVICES = [
    ("SkyAir", "bookings@skyair.example", "travel", "Your booking confirmation {ref}",
     "Thank you for flying with SkyAir.\nBooking reference: {ref}\nFlight SA{n} departs 2026-03-{d:02d} 07:45.\n", ["eticket-{ref}.pdf"]),
    ("First Harbor Bank", "alerts@firstharbor.example", "finance", "Your February statement is ready",
     "Your statement for February 2026 is available. Closing balance: {amt} EUR.\n", ["statement-2026-02.pdf"]),
    ("CloudHost", "billing@cloudhost.example", "receipts", "Invoice {ref} paid",
     "We received your payment of {amt} USD for invoice {ref}. Thank you!\n", ["invoice-{ref}.pdf"]),
    ("Tech Weekly", "newsletter@techweekly.example", "newsletters", "Tech Weekly #{n}: databases, AI and more",
     "This week: a deep dive on query planners, new open-source releases, and a job board.\nUnsubscribe at any time.\n", []),
    ("City Library", "noreply@citylibrary.example", "personal", "Reminder: 2 books due on 2026-03-{d:02d}",
     "Please return or renew your loans before the due date to avoid fees.\n", []),
    ("ShopRight", "orders@shopright.example", "receipts", "Order {ref} has shipped",
     "Your order {ref} (1 item, {amt} EUR) is on its way. Track it in your account.\n", []),
]
WORK_TOPICS = [
    ("Q1 roadmap review", "Can we go over the Q1 roadmap before Thursday? I've added comments on the migration milestone.",
     ["roadmap-q1.pdf"], "project-atlas"),
    ("Incident 2026-02-14 postmortem", "Draft postmortem attached. Root cause was the expired TLS certificate on the API gateway.",
     ["postmortem.docx"], "work"),
    ("Budget approval for conference travel", "Please approve the travel budget for the March conference: 1,850 EUR total.",
     [], "finance"),
    ("Code review: payments retry logic", "I left a few comments on the retry backoff; the rest looks good to merge.", [], "project-atlas"),
    ("Hiring: backend engineer loop", "Interview loop for Friday is set. Can you take the system design round?", ["candidate-cv.pdf"], "work"),
    ("Contract renewal", "Our contract renews on 2026-04-01. Attached is the updated quote with the 8% discount we discussed.",
     ["quote-2026.pdf"], "clients"),
    ("Data export request", "Could you send us the February usage export as CSV? Our auditors need it by next week.", [], "clients"),
    ("Offsite planning", "Venue options for the team offsite are in the doc. Vote by Wednesday please.", ["venues.xlsx"], "work"),
    ("Security training reminder", "Annual security training is due by 2026-03-15. It takes about 40 minutes.", [], "work"),
    ("Design mockups v3", "New mockups for the onboarding flow, incorporating the feedback from the last review.",
     ["onboarding-v3.fig"], "project-atlas"),
]
SPAM = [("prize-center@winbig.example", "You have WON a $1000 gift card!!!", "Click here to claim your prize within 24 hours."),
        ("security@paypa1-verify.example", "Urgent: verify your account", "Your account will be suspended. Verify your password now."),
        ("deals@cheap-meds.example", "Limited offer just for you", "Best prices, no prescription needed.")]
REPLIES = ["Thanks, looks good to me.", "Sounds good, let's discuss on Thursday.", "I'll take a look this afternoon.",
           "Can you share more details?", "Agreed. I'll update the doc.", "Done, see the updated version."]


def _t(d: datetime) -> str:
    return d.strftime(FMT)


def seed_world(rng: random.Random, seed: int) -> MailWorld:
    w = MailWorld(seed=seed)
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    w.me_name, w.me_address = f"{first} {last}", f"{first.lower()}.{last.lower()}@{DOMAIN}"
    seen = {w.me_address}
    for i in range(22):
        for _ in range(50):
            fn, ln = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            org, dom = ("Northwind", DOMAIN) if i < 12 else rng.choice(EXTERNAL)
            addr = f"{fn.lower()}.{ln.lower()}@{dom}" if i < 12 else f"{fn[0].lower()}{ln.lower()}@{dom}"
            if addr not in seen:
                break
        seen.add(addr)
        cid = w.new_id("CON")
        w.contacts[cid] = Contact(contact_id=cid, name=f"{fn} {ln}", email=addr, organization=org)
    for name, email, *_ in SERVICES:
        cid = w.new_id("CON")
        w.contacts[cid] = Contact(contact_id=cid, name=name, email=email, organization=name)
    for name, color, desc in [("work", "blue", "Work mail"), ("project-atlas", "purple", "Project Atlas"), ("clients", "orange", "Client mail"),
                              ("finance", "green", "Banking and budgets"), ("travel", "yellow", "Trips and bookings"),
                              ("receipts", "gray", "Orders and invoices"), ("newsletters", "gray", "Subscriptions"),
                              ("personal", "red", "Personal"), ("follow-up", "red", "Needs an answer")]:
        w.labels[name] = Label(label=name, color=color, description=desc)  # type: ignore[arg-type]
    people = [c for c in w.contacts.values() if c.organization != c.name]
    colleagues = [c for c in people if c.email.endswith(DOMAIN)]
    externals = [c for c in people if not c.email.endswith(DOMAIN)]

    def msg(thread: str, folder: str, frm: str, to: list[str], subject: str, body: str, when: datetime, cc: list[str] | None = None,
            labels: list[str] | None = None, attachments: list[str] | None = None, reply_to: str | None = None, read: bool = True) -> Message:
        mid = w.new_id("MSG")
        m = Message(message_id=mid, thread_id=thread, folder=folder, from_address=frm, to=to, cc=cc or [], subject=subject, body=body,  # type: ignore[arg-type]
                    sent_at=_t(when), updated_at=_t(when), is_read=read, is_starred=rng.random() < 0.12, labels=sorted(set(labels or [])),
                    attachments=attachments or [], in_reply_to=reply_to)
        w.messages[mid] = m
        return m

    start = datetime(2026, 2, 2, 8, 0)
    for subject, body, att, label in WORK_TOPICS:
        tid = w.new_id("THR")
        pool = colleagues if label != "clients" else externals
        sender = rng.choice(pool)
        ccs = [c.email for c in rng.sample(colleagues, rng.randint(0, 2)) if c.email != sender.email]
        when = start + timedelta(days=rng.randint(0, 26), hours=rng.randint(0, 9), minutes=rng.randint(0, 59))
        first_folder = "archive" if rng.random() < 0.2 else "inbox"
        m = msg(tid, first_folder, sender.email, [w.me_address], subject,
                f"Hi {first},\n\n{body}\n\nBest,\n{sender.name.split()[0]}", when, ccs, [label], att, read=rng.random() < 0.6)
        for k in range(rng.randint(0, 4)):
            when = when + timedelta(hours=rng.randint(1, 30))
            if when >= NOW:
                break
            if k % 2 == 0:
                r = msg(tid, "sent", w.me_address, [m.from_address if m.from_address != w.me_address else m.to[0]], "Re: " + subject,
                        f"{rng.choice(REPLIES)}\n\n{first}", when, m.cc, [label], reply_to=m.message_id)
            else:
                r = msg(tid, first_folder, sender.email, [w.me_address], "Re: " + subject,
                        f"{rng.choice(REPLIES)}\n\n{sender.name.split()[0]}", when, ccs, [label], reply_to=m.message_id, read=rng.random() < 0.5)
            m = r
        if rng.random() < 0.3:
            w.messages[m.message_id].labels = sorted(set(m.labels) | {"follow-up"})
    for name, email, label, subj, body, att in SERVICES:
        for _ in range(rng.randint(1, 2)):
            tid = w.new_id("THR")
            vals = dict(ref=f"{rng.choice('ABCDEFGHJK')}{rng.randint(10000, 99999)}", n=rng.randint(100, 999), d=rng.randint(5, 28),
                        amt=f"{rng.randint(10, 4000)}.{rng.randint(0, 99):02d}")
            when = start + timedelta(days=rng.randint(0, 27), hours=rng.randint(0, 12))
            msg(tid, "archive" if rng.random() < 0.3 else "inbox", email, [w.me_address], subj.format(**vals), body.format(**vals), when,
                labels=[label], attachments=[a.format(**vals) for a in att], read=rng.random() < 0.5)
    for frm, subj, body in SPAM:
        msg(w.new_id("THR"), "spam", frm, [w.me_address], subj, body, start + timedelta(days=rng.randint(0, 27)), read=False)
    for _ in range(2):
        c = rng.choice(colleagues)
        msg(w.new_id("THR"), "trash", c.email, [w.me_address], rng.choice(["Lunch today?", "Parking spot swap", "Old build logs"]),
            "Not needed anymore.", start + timedelta(days=rng.randint(0, 20)), labels=[])
    # a few outgoing messages that started threads
    for subj in ["Weekly status update", "Question about the invoice"]:
        tid = w.new_id("THR")
        c = rng.choice(colleagues if subj.startswith("Weekly") else externals)
        msg(tid, "sent", w.me_address, [c.email], subj, f"Hi {c.name.split()[0]},\n\nQuick note on {subj.lower()}.\n\n{first}",
            start + timedelta(days=rng.randint(0, 27)), labels=["work"] if subj.startswith("Weekly") else ["clients"])
    # drafts: editable; two have no recipients yet
    received = [m for m in w.messages.values() if m.folder == "inbox" and m.from_address != w.me_address]
    target = rng.choice(received)
    draft_specs = [
        ([], "Team offsite agenda", "Draft agenda:\n1. Roadmap\n2. Retro\n3. Dinner", None),
        ([], "", "Notes to self: follow up with finance", None),
        ([rng.choice(externals).email], "Proposal follow-up", "Hi,\n\nFollowing up on our proposal from last week.", None),
        ([target.from_address], "Re: " + target.subject.removeprefix("Re: "), "Thanks! I'll get back to you by Friday.", target),
    ]
    for to, subj, body, reply in draft_specs:
        mid = w.new_id("MSG")
        w.messages[mid] = Message(message_id=mid, thread_id=reply.thread_id if reply else w.new_id("THR"), folder="drafts",
                                  from_address=w.me_address, to=to, subject=subj, body=body,
                                  updated_at=_t(start + timedelta(days=rng.randint(20, 27))), in_reply_to=reply.message_id if reply else None)
    return w


# --------------------------------------------------------------------------- helpers


def _stamp(w: MailWorld) -> str:
    w.clock += 1
    return _t(NOW + timedelta(minutes=w.clock))


def _message(w: MailWorld, message_id: str) -> Message:
    m = w.messages.get(message_id)
    if m is None:
        raise not_found("message", message_id, "list_messages or search_messages show valid message ids")
    return m


def _draft(w: MailWorld, message_id: str, action: str = "edited") -> Message:
    m = _message(w, message_id)
    if m.folder != "drafts":
        hint = ("move_message with folder='trash' removes it from view" if action == "deleted" else
                "only drafts can change: create_draft starts a new one, reply_to_message or forward_message follow up")
        raise StateConflict(f"message {message_id} is not a draft (it is in '{m.folder}'); sent and received messages are append-only "
                            f"and cannot be {action}; {hint}")
    return m


def _not_draft(m: Message, action: str) -> None:
    if m.folder == "drafts":
        raise StateConflict(f"message {m.message_id} is a draft and cannot be {action}; send_draft sends it, update_draft edits it")


def _addresses(values: list[str] | None, arg: str) -> list[str]:
    out: list[str] = []
    for v in values or []:
        a = v.strip()
        if not ADDRESS_RE.match(a):
            raise InvalidArgument(f"{arg}: {v!r} is not a valid email address; use a plain address like 'name@example.com' "
                                  "(list_contacts shows known addresses)")
        if a.lower() not in (x.lower() for x in out):
            out.append(a)
    return out


def _labels(w: MailWorld, names: list[str], arg: str) -> list[str]:
    for n in names:
        if n not in w.labels:
            raise not_found("label", n, f"{arg} must name existing labels: {', '.join(sorted(w.labels))}")
    return names


def _quote(m: Message) -> str:
    quoted = "\n".join("> " + line for line in m.body.splitlines())
    return f"\n\nOn {m.sent_at}, {m.from_address} wrote:\n{quoted}"


def _send(w: MailWorld, m: Message) -> Message:
    if not m.to and not m.cc:
        raise StateConflict(f"draft {m.message_id} has no recipients; update_draft with to=[...] first")
    t = _stamp(w)
    m.folder, m.sent_at, m.updated_at, m.is_read = "sent", t, t, True
    return m


# --------------------------------------------------------------------------- parameter types
MessageId = Annotated[str, Field(description="Message id, e.g. 'MSG-0012' (from list_messages, search_messages or get_thread)")]
ThreadId = Annotated[str, Field(description="Thread id, e.g. 'THR-0003' (from list_threads or a message's thread_id)")]
Addresses = Annotated[list[str], Field(description="Recipient email addresses, plain form like 'ana.silva@northwind.example'")]
OptAddresses = Annotated[list[str] | None, Field(description="Email addresses, plain form like 'ana.silva@northwind.example'")]
Subject = Annotated[str, Field(description="Subject line", max_length=200)]
Body = Annotated[str, Field(description="Plain-text body", max_length=20_000)]
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
ListFolder = Literal["inbox", "sent", "drafts", "archive", "spam", "trash", "all"]


# --------------------------------------------------------------------------- results
class MessageSummary(BaseModel):
    message_id: str
    thread_id: str
    folder: Folder
    from_address: str
    to: list[str]
    subject: str
    snippet: str
    sent_at: str | None
    is_read: bool
    is_starred: bool
    labels: list[str]
    has_attachments: bool


class MessageList(BaseModel):
    messages: list[MessageSummary]
    total: int


class ThreadSummary(BaseModel):
    thread_id: str
    subject: str
    participants: list[str]
    message_count: int
    unread_count: int
    last_message_at: str
    folders: list[Folder]
    labels: list[str]
    has_draft: bool


class ThreadList(BaseModel):
    threads: list[ThreadSummary]
    total: int


class Thread(BaseModel):
    thread_id: str
    subject: str
    messages: list[Message]
    total: int


class LabelInfo(Label):
    message_count: int
    unread_count: int


class LabelList(BaseModel):
    labels: list[LabelInfo]
    total: int


class ContactList(BaseModel):
    contacts: list[Contact]
    total: int


class Deleted(BaseModel):
    message_id: str
    deleted: bool


def _summary(m: Message) -> MessageSummary:
    snippet = " ".join(m.body.split())[:100]
    return MessageSummary(message_id=m.message_id, thread_id=m.thread_id, folder=m.folder, from_address=m.from_address, to=m.to,
                          subject=m.subject, snippet=snippet, sent_at=m.sent_at, is_read=m.is_read, is_starred=m.is_starred,
                          labels=m.labels, has_attachments=bool(m.attachments))


def _when(m: Message) -> str:
    return m.sent_at or m.updated_at


def _in_folder(m: Message, folder: str) -> bool:
    return m.folder not in ("spam", "trash") if folder == "all" else m.folder == folder


TOOLS: ToolSet[MailWorld] = ToolSet()


@TOOLS.tool(read_only=True)
def list_messages(
    w: MailWorld,
    folder: Annotated[ListFolder, Field(description="Folder to list; 'all' is every folder except spam and trash")] = "inbox",
    label: Annotated[str | None, Field(description="Only messages carrying this label (from list_labels)")] = None,
    unread_only: Annotated[bool, Field(description="Only unread messages")] = False,
    starred_only: Annotated[bool, Field(description="Only starred messages")] = False,
    from_address: Annotated[str | None, Field(description="Only messages from this sender address")] = None,
    limit: Annotated[int, Field(description="At most this many messages, newest first", ge=1, le=200)] = 25,
) -> MessageList:
    """List messages in a folder, newest first, filtered by label, unread/starred state or sender."""
    if label is not None:
        _labels(w, [label], "label")
    out = [m for m in w.messages.values() if _in_folder(m, folder)
           and (label is None or label in m.labels) and (not unread_only or not m.is_read)
           and (not starred_only or m.is_starred) and (from_address is None or m.from_address.lower() == from_address.lower())]
    out.sort(key=lambda m: (_when(m), m.message_id), reverse=True)
    return MessageList(messages=[_summary(m) for m in out[:limit]], total=len(out[:limit]))


@TOOLS.tool(read_only=True)
def search_messages(
    w: MailWorld,
    query: Annotated[str, Field(description="Words that must all appear in the subject, body, sender, recipients or attachment names", min_length=1)],
    folder: Annotated[ListFolder, Field(description="Folder to search; 'all' is every folder except spam and trash")] = "all",
    after: Annotated[str | None, Field(description="Only messages on or after this date, YYYY-MM-DD", pattern=DATE_PATTERN)] = None,
    before: Annotated[str | None, Field(description="Only messages before this date, YYYY-MM-DD", pattern=DATE_PATTERN)] = None,
    has_attachment: Annotated[bool | None, Field(description="Only messages with (true) or without (false) attachments")] = None,
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
    folder: Annotated[ListFolder, Field(description="Only threads with a message in this folder; 'all' excludes spam and trash")] = "inbox",
    label: Annotated[str | None, Field(description="Only threads with a message carrying this label")] = None,
    unread_only: Annotated[bool, Field(description="Only threads with unread messages")] = False,
    limit: Annotated[int, Field(description="At most this many threads, most recent activity first", ge=1, le=200)] = 25,
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
        out.append(ThreadSummary(thread_id=tid, subject=ms[0].subject, participants=people, message_count=len(ms), unread_count=unread,
                                 last_message_at=_when(ms[-1]), folders=sorted({m.folder for m in ms}),
                                 labels=sorted({lb for m in ms for lb in m.labels}), has_draft=any(m.folder == "drafts" for m in ms)))
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
        out.append(LabelInfo(**lb.model_dump(), message_count=len(ms), unread_count=sum(1 for m in ms if not m.is_read)))
    return LabelList(labels=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_contacts(
    w: MailWorld,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the name or email address")] = None,
    organization: Annotated[str | None, Field(description="Only contacts from this organization, e.g. 'Northwind'")] = None,
) -> ContactList:
    """List address-book contacts (name, email, organization) to find recipients' addresses."""
    q = (name_contains or "").lower()
    out = [c for c in w.contacts.values() if (not q or q in c.name.lower() or q in c.email.lower())
           and (organization is None or c.organization.lower() == organization.lower())]
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
    m = Message(message_id=mid, thread_id=w.new_id("THR"), folder="drafts", from_address=w.me_address, to=to_, cc=cc_,
                subject=subject, body=body, updated_at=_stamp(w))
    w.messages[mid] = m
    return m


@TOOLS.tool(idempotent=True)
def update_draft(
    w: MailWorld,
    message_id: MessageId,
    to: OptAddresses = None,
    cc: OptAddresses = None,
    subject: Annotated[str | None, Field(description="New subject line", max_length=200)] = None,
    body: Annotated[str | None, Field(description="New plain-text body (replaces the old one)", max_length=20_000)] = None,
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
    to: Annotated[list[str], Field(description="Recipient email addresses, plain form like 'ana.silva@northwind.example'", min_length=1)],
    subject: Annotated[str, Field(description="Subject line", min_length=1, max_length=200)],
    body: Body,
    cc: OptAddresses = None,
) -> Message:
    """Compose and send a new message in a new thread."""
    to_, cc_ = _addresses(to, "to"), _addresses(cc, "cc")
    mid = w.new_id("MSG")
    m = Message(message_id=mid, thread_id=w.new_id("THR"), folder="drafts", from_address=w.me_address, to=to_, cc=cc_,
                subject=subject, body=body, updated_at=_t(NOW))
    w.messages[mid] = m
    return _send(w, m)


@TOOLS.tool()
def reply_to_message(
    w: MailWorld,
    message_id: MessageId,
    body: Annotated[str, Field(description="Your reply; the original is quoted below it", min_length=1, max_length=20_000)],
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
    m = Message(message_id=mid, thread_id=orig.thread_id, folder="drafts", from_address=w.me_address, to=to, cc=cc,
                subject=subject, body=body + _quote(orig), updated_at=_t(NOW), labels=[lb for lb in orig.labels if lb != "follow-up"],
                in_reply_to=orig.message_id)
    w.messages[mid] = m
    return _send(w, m)


@TOOLS.tool()
def forward_message(
    w: MailWorld,
    message_id: MessageId,
    to: Annotated[list[str], Field(description="Addresses to forward to, plain form like 'ana.silva@northwind.example'", min_length=1)],
    note: Annotated[str, Field(description="Optional text above the forwarded message", max_length=5000)] = "",
) -> Message:
    """Forward a received or sent message (with its attachments) to new recipients, as a new thread."""
    orig = _message(w, message_id)
    _not_draft(orig, "forwarded")
    to_ = _addresses(to, "to")
    subject = orig.subject if orig.subject.lower().startswith("fwd:") else f"Fwd: {orig.subject}"
    body = (f"{note}\n\n" if note else "") + (f"---------- Forwarded message ----------\nFrom: {orig.from_address}\n"
                                              f"Date: {orig.sent_at}\nSubject: {orig.subject}\nTo: {', '.join(orig.to)}\n\n{orig.body}")
    mid = w.new_id("MSG")
    m = Message(message_id=mid, thread_id=w.new_id("THR"), folder="drafts", from_address=w.me_address, to=to_, subject=subject,
                body=body, updated_at=_t(NOW), attachments=list(orig.attachments))
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
        raise StateConflict(f"message {message_id} is a draft; drafts stay in drafts until sent (delete_draft removes one)")
    mine = m.from_address.lower() == w.me_address.lower()
    if folder == "sent" and not mine:
        raise InvalidArgument(f"message {message_id} was sent by {m.from_address}, not by you; it cannot go to 'sent' "
                              "(valid: inbox, archive, spam, trash)")
    if folder in ("inbox", "spam") and mine:
        raise InvalidArgument(f"message {message_id} was sent by you; it can go to 'sent', 'archive' or 'trash'")
    m.folder = folder
    return m


def build(seed: int = 0) -> EnvServer[MailWorld]:
    """A fresh email server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "email", seeder=seed_world, category="productivity",
        description="An email mailbox: read, search, send, reply to and forward messages; drafts, threads, folders and labels. "
                    "Sent and received messages are never edited; drafts are. The current time is 2026-03-02T09:00.",
        tools=TOOLS, default_seed=seed,
    )
