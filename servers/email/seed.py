"""email: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta

from servers.email.world import (
    DOMAIN,
    EXTERNAL,
    NOW,
    REPLIES,
    SERVICES,
    SPAM,
    WORK_TOPICS,
    Contact,
    Label,
    MailWorld,
    Message,
    _t,
)
from servers.names import FIRST_NAMES, LAST_NAMES

LABELS = [
    ("work", "blue", "Work mail"),
    ("project-atlas", "purple", "Project Atlas"),
    ("clients", "orange", "Client mail"),
    ("finance", "green", "Banking and budgets"),
    ("travel", "yellow", "Trips and bookings"),
    ("receipts", "gray", "Orders and invoices"),
    ("newsletters", "gray", "Subscriptions"),
    ("personal", "red", "Personal"),
    ("follow-up", "red", "Needs an answer"),
]


def _seed_contacts(w: MailWorld, rng: random.Random) -> str:
    """The user, colleagues and external contacts, the services that mail them, and the labels.

    Returns the user's first name (letters sign off with it)."""
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
    for name, color, desc in LABELS:
        w.labels[name] = Label(label=name, color=color, description=desc)  # type: ignore[arg-type]
    return first


def _messenger(w: MailWorld, rng: random.Random) -> Callable[..., Message]:
    """``msg(...)``: add a message to ``w`` (starred at random) and return it."""

    def msg(
        thread: str,
        folder: str,
        frm: str,
        to: list[str],
        subject: str,
        body: str,
        when: datetime,
        cc: list[str] | None = None,
        labels: list[str] | None = None,
        attachments: list[str] | None = None,
        reply_to: str | None = None,
        read: bool = True,
    ) -> Message:
        mid = w.new_id("MSG")
        m = Message(
            message_id=mid,
            thread_id=thread,
            folder=folder,
            from_address=frm,
            to=to,
            cc=cc or [],
            subject=subject,
            body=body,  # type: ignore[arg-type]
            sent_at=_t(when),
            updated_at=_t(when),
            is_read=read,
            is_starred=rng.random() < 0.12,
            labels=sorted(set(labels or [])),
            attachments=attachments or [],
            in_reply_to=reply_to,
        )
        w.messages[mid] = m
        return m

    return msg


def _seed_work_threads(
    w: MailWorld,
    rng: random.Random,
    msg: Callable[..., Message],
    first: str,
    colleagues: list[Contact],
    externals: list[Contact],
    start: datetime,
) -> None:
    """A thread per work topic: a first message to the user and up to four replies back and forth."""
    for subject, body, att, label in WORK_TOPICS:
        tid = w.new_id("THR")
        pool = colleagues if label != "clients" else externals
        sender = rng.choice(pool)
        ccs = [c.email for c in rng.sample(colleagues, rng.randint(0, 2)) if c.email != sender.email]
        when = start + timedelta(days=rng.randint(0, 26), hours=rng.randint(0, 9), minutes=rng.randint(0, 59))
        first_folder = "archive" if rng.random() < 0.2 else "inbox"
        m = msg(
            tid,
            first_folder,
            sender.email,
            [w.me_address],
            subject,
            f"Hi {first},\n\n{body}\n\nBest,\n{sender.name.split()[0]}",
            when,
            ccs,
            [label],
            att,
            read=rng.random() < 0.6,
        )
        for k in range(rng.randint(0, 4)):
            when = when + timedelta(hours=rng.randint(1, 30))
            if when >= NOW:
                break
            if k % 2 == 0:
                r = msg(
                    tid,
                    "sent",
                    w.me_address,
                    [m.from_address if m.from_address != w.me_address else m.to[0]],
                    "Re: " + subject,
                    f"{rng.choice(REPLIES)}\n\n{first}",
                    when,
                    m.cc,
                    [label],
                    reply_to=m.message_id,
                )
            else:
                r = msg(
                    tid,
                    first_folder,
                    sender.email,
                    [w.me_address],
                    "Re: " + subject,
                    f"{rng.choice(REPLIES)}\n\n{sender.name.split()[0]}",
                    when,
                    ccs,
                    [label],
                    reply_to=m.message_id,
                    read=rng.random() < 0.5,
                )
            m = r
        if rng.random() < 0.3:
            w.messages[m.message_id].labels = sorted(set(m.labels) | {"follow-up"})


def _seed_drafts(w: MailWorld, rng: random.Random, externals: list[Contact], start: datetime) -> None:
    """Drafts: editable; two have no recipients yet, one replies to a received message."""
    received = [m for m in w.messages.values() if m.folder == "inbox" and m.from_address != w.me_address]
    target = rng.choice(received)
    draft_specs = [
        ([], "Team offsite agenda", "Draft agenda:\n1. Roadmap\n2. Retro\n3. Dinner", None),
        ([], "", "Notes to self: follow up with finance", None),
        (
            [rng.choice(externals).email],
            "Proposal follow-up",
            "Hi,\n\nFollowing up on our proposal from last week.",
            None,
        ),
        (
            [target.from_address],
            "Re: " + target.subject.removeprefix("Re: "),
            "Thanks! I'll get back to you by Friday.",
            target,
        ),
    ]
    for to, subj, body, reply in draft_specs:
        mid = w.new_id("MSG")
        w.messages[mid] = Message(
            message_id=mid,
            thread_id=reply.thread_id if reply else w.new_id("THR"),
            folder="drafts",
            from_address=w.me_address,
            to=to,
            subject=subj,
            body=body,
            updated_at=_t(start + timedelta(days=rng.randint(20, 27))),
            in_reply_to=reply.message_id if reply else None,
        )


def seed_world(rng: random.Random, seed: int) -> MailWorld:
    w = MailWorld(seed=seed)
    first = _seed_contacts(w, rng)
    people = [c for c in w.contacts.values() if c.organization != c.name]
    colleagues = [c for c in people if c.email.endswith(DOMAIN)]
    externals = [c for c in people if not c.email.endswith(DOMAIN)]
    msg = _messenger(w, rng)
    start = datetime(2026, 2, 2, 8, 0)
    _seed_work_threads(w, rng, msg, first, colleagues, externals, start)
    for _name, email, label, subj, body, att in SERVICES:
        for _ in range(rng.randint(1, 2)):
            tid = w.new_id("THR")
            vals = dict(
                ref=f"{rng.choice('ABCDEFGHJK')}{rng.randint(10000, 99999)}",
                n=rng.randint(100, 999),
                d=rng.randint(5, 28),
                amt=f"{rng.randint(10, 4000)}.{rng.randint(0, 99):02d}",
            )
            when = start + timedelta(days=rng.randint(0, 27), hours=rng.randint(0, 12))
            msg(
                tid,
                "archive" if rng.random() < 0.3 else "inbox",
                email,
                [w.me_address],
                subj.format(**vals),
                body.format(**vals),
                when,
                labels=[label],
                attachments=[a.format(**vals) for a in att],
                read=rng.random() < 0.5,
            )
    for frm, subj, body in SPAM:
        msg(
            w.new_id("THR"),
            "spam",
            frm,
            [w.me_address],
            subj,
            body,
            start + timedelta(days=rng.randint(0, 27)),
            read=False,
        )
    for _ in range(2):
        c = rng.choice(colleagues)
        msg(
            w.new_id("THR"),
            "trash",
            c.email,
            [w.me_address],
            rng.choice(["Lunch today?", "Parking spot swap", "Old build logs"]),
            "Not needed anymore.",
            start + timedelta(days=rng.randint(0, 20)),
            labels=[],
        )
    # a few outgoing messages that started threads
    for subj in ["Weekly status update", "Question about the invoice"]:
        tid = w.new_id("THR")
        c = rng.choice(colleagues if subj.startswith("Weekly") else externals)
        msg(
            tid,
            "sent",
            w.me_address,
            [c.email],
            subj,
            f"Hi {c.name.split()[0]},\n\nQuick note on {subj.lower()}.\n\n{first}",
            start + timedelta(days=rng.randint(0, 27)),
            labels=["work"] if subj.startswith("Weekly") else ["clients"],
        )
    _seed_drafts(w, rng, externals, start)
    return w
