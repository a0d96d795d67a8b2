"""email: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, StateConflict, ToolSet, World, not_found

NOW = datetime.fromisoformat(f"{REFERENCE_DAY}T09:00")
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
EXTERNAL = [
    ("Globex", "globex.com"),
    ("Acme Corp", "acme.io"),
    ("Initech", "initech.net"),
    ("Umbrella Ltd", "umbrella.co.uk"),
]
SERVICES = [
    (
        "SkyAir",
        "bookings@skyair.example",
        "travel",
        "Your booking confirmation {ref}",
        "Thank you for flying with SkyAir.\nBooking reference: {ref}\nFlight SA{n} departs 2026-03-{d:02d} 07:45.\n",
        ["eticket-{ref}.pdf"],
    ),
    (
        "First Harbor Bank",
        "alerts@firstharbor.example",
        "finance",
        "Your February statement is ready",
        "Your statement for February 2026 is available. Closing balance: {amt} EUR.\n",
        ["statement-2026-02.pdf"],
    ),
    (
        "CloudHost",
        "billing@cloudhost.example",
        "receipts",
        "Invoice {ref} paid",
        "We received your payment of {amt} USD for invoice {ref}. Thank you!\n",
        ["invoice-{ref}.pdf"],
    ),
    (
        "Tech Weekly",
        "newsletter@techweekly.example",
        "newsletters",
        "Tech Weekly #{n}: databases, AI and more",
        "This week: a deep dive on query planners, new open-source releases, and a job board.\nUnsubscribe at any time.\n",
        [],
    ),
    (
        "City Library",
        "noreply@citylibrary.example",
        "personal",
        "Reminder: 2 books due on 2026-03-{d:02d}",
        "Please return or renew your loans before the due date to avoid fees.\n",
        [],
    ),
    (
        "ShopRight",
        "orders@shopright.example",
        "receipts",
        "Order {ref} has shipped",
        "Your order {ref} (1 item, {amt} EUR) is on its way. Track it in your account.\n",
        [],
    ),
]
WORK_TOPICS = [
    (
        "Q1 roadmap review",
        "Can we go over the Q1 roadmap before Thursday? I've added comments on the migration milestone.",
        ["roadmap-q1.pdf"],
        "project-atlas",
    ),
    (
        "Incident 2026-02-14 postmortem",
        "Draft postmortem attached. Root cause was the expired TLS certificate on the API gateway.",
        ["postmortem.docx"],
        "work",
    ),
    (
        "Budget approval for conference travel",
        "Please approve the travel budget for the March conference: 1,850 EUR total.",
        [],
        "finance",
    ),
    (
        "Code review: payments retry logic",
        "I left a few comments on the retry backoff; the rest looks good to merge.",
        [],
        "project-atlas",
    ),
    (
        "Hiring: backend engineer loop",
        "Interview loop for Friday is set. Can you take the system design round?",
        ["candidate-cv.pdf"],
        "work",
    ),
    (
        "Contract renewal",
        "Our contract renews on 2026-04-01. Attached is the updated quote with the 8% discount we discussed.",
        ["quote-2026.pdf"],
        "clients",
    ),
    (
        "Data export request",
        "Could you send us the February usage export as CSV? Our auditors need it by next week.",
        [],
        "clients",
    ),
    (
        "Offsite planning",
        "Venue options for the team offsite are in the doc. Vote by Wednesday please.",
        ["venues.xlsx"],
        "work",
    ),
    (
        "Security training reminder",
        "Annual security training is due by 2026-03-15. It takes about 40 minutes.",
        [],
        "work",
    ),
    (
        "Design mockups v3",
        "New mockups for the onboarding flow, incorporating the feedback from the last review.",
        ["onboarding-v3.fig"],
        "project-atlas",
    ),
]
SPAM = [
    (
        "prize-center@winbig.example",
        "You have WON a $1000 gift card!!!",
        "Click here to claim your prize within 24 hours.",
    ),
    (
        "security@paypa1-verify.example",
        "Urgent: verify your account",
        "Your account will be suspended. Verify your password now.",
    ),
    ("deals@cheap-meds.example", "Limited offer just for you", "Best prices, no prescription needed."),
]
REPLIES = [
    "Thanks, looks good to me.",
    "Sounds good, let's discuss on Thursday.",
    "I'll take a look this afternoon.",
    "Can you share more details?",
    "Agreed. I'll update the doc.",
    "Done, see the updated version.",
]


def _t(d: datetime) -> str:
    return d.strftime(FMT)


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
        hint = (
            "move_message with folder='trash' removes it from view"
            if action == "deleted"
            else "only drafts can change: create_draft starts a new one, reply_to_message or forward_message follow up"
        )
        raise StateConflict(
            f"message {message_id} is not a draft (it is in '{m.folder}'); sent and received messages are append-only "
            f"and cannot be {action}; {hint}"
        )
    return m


def _not_draft(m: Message, action: str) -> None:
    if m.folder == "drafts":
        raise StateConflict(
            f"message {m.message_id} is a draft and cannot be {action}; send_draft sends it, update_draft edits it"
        )


def _addresses(values: list[str] | None, arg: str) -> list[str]:
    out: list[str] = []
    for v in values or []:
        a = v.strip()
        if not ADDRESS_RE.match(a):
            raise InvalidArgument(
                f"{arg}: {v!r} is not a valid email address; use a plain address like 'name@example.com' "
                "(list_contacts shows known addresses)"
            )
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
MessageId = Annotated[
    str, Field(description="Message id, e.g. 'MSG-0012' (from list_messages, search_messages or get_thread)")
]
ThreadId = Annotated[str, Field(description="Thread id, e.g. 'THR-0003' (from list_threads or a message's thread_id)")]
Addresses = Annotated[
    list[str], Field(description="Recipient email addresses, plain form like 'ana.silva@northwind.example'")
]
OptAddresses = Annotated[
    list[str] | None, Field(description="Email addresses, plain form like 'ana.silva@northwind.example'")
]
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
    return MessageSummary(
        message_id=m.message_id,
        thread_id=m.thread_id,
        folder=m.folder,
        from_address=m.from_address,
        to=m.to,
        subject=m.subject,
        snippet=snippet,
        sent_at=m.sent_at,
        is_read=m.is_read,
        is_starred=m.is_starred,
        labels=m.labels,
        has_attachments=bool(m.attachments),
    )


def _when(m: Message) -> str:
    return m.sent_at or m.updated_at


def _in_folder(m: Message, folder: str) -> bool:
    return m.folder not in ("spam", "trash") if folder == "all" else m.folder == folder


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[MailWorld] = ToolSet()
