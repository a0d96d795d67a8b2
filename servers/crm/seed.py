"""crm: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import datetime as dt
import random

from servers.crm.world import (
    ACTIVITY_SUBJECTS,
    COMPANY_PREFIXES,
    COMPANY_SUFFIXES,
    PROBABILITY,
    PRODUCTS,
    REGIONS,
    TITLES,
    Activity,
    Company,
    Contact,
    CrmWorld,
    Deal,
    Lead,
    Owner,
)
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES


def _date(rng: random.Random, start: str, end: str) -> str:
    a, b = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    return (a + dt.timedelta(days=rng.randint(0, (b - a).days))).isoformat()


def _phone(rng: random.Random) -> str:
    return f"+1-{rng.randint(200, 989)}-555-{rng.randint(0, 9999):04d}"


def _unique_email(taken: set[str], local: str, domain: str) -> str:
    email, n = f"{local}@{domain}", 2
    while email in taken:
        email, n = f"{local}{n}@{domain}", n + 1
    taken.add(email)
    return email


def seed_world(rng: random.Random, seed: int) -> CrmWorld:
    w = CrmWorld(seed=seed)
    owners: list[str] = []
    for i in range(8):
        oid = w.new_id("OWN")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        w.owners[oid] = Owner(
            owner_id=oid,
            name=f"{first} {last}",
            email=f"{first.lower()}.{last.lower()}@salesco.example",
            region=rng.choice(REGIONS),
            status="inactive" if i in (5,) else "active",
        )
        owners.append(oid)
    active = [o for o in owners if w.owners[o].status == "active"]

    taken_emails: set[str] = set()
    prefixes = rng.sample(COMPANY_PREFIXES, k=18)
    companies: list[str] = []
    for prefix in prefixes:
        cid = w.new_id("COM")
        industry = rng.choice(list(COMPANY_SUFFIXES))
        name = f"{prefix} {rng.choice(COMPANY_SUFFIXES[industry])}"
        domain = f"{prefix.lower()}.example.com"
        w.companies[cid] = Company(
            company_id=cid,
            name=name,
            industry=industry,
            city=rng.choice(CITIES),  # type: ignore[arg-type]
            employees=rng.choice([12, 25, 40, 80, 150, 300, 600, 1200, 5000]),
            website=f"https://{domain}",
            owner_id=rng.choice(owners),
            created_on=_date(rng, "2023-01-01", "2025-12-31"),
        )
        companies.append(cid)
        for title in rng.sample(TITLES, k=rng.randint(1, 4)):
            kid = w.new_id("CON")
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            w.contacts[kid] = Contact(
                contact_id=kid,
                company_id=cid,
                first_name=first,
                last_name=last,
                email=_unique_email(taken_emails, f"{first.lower()}.{last.lower()}", domain),
                phone=_phone(rng),
                title=title,
                created_on=_date(rng, w.companies[cid].created_on, "2026-02-27"),
            )

    # leads: some for companies already known, most for new prospects
    new_prospects = [p for p in COMPANY_PREFIXES if p not in prefixes]
    lead_statuses = ["new"] * 7 + ["contacted"] * 6 + ["qualified"] * 6 + ["unqualified"] * 3 + ["converted"] * 4
    rng.shuffle(lead_statuses)
    contact_ids = list(w.contacts)
    for i, status in enumerate(lead_statuses):
        lid = w.new_id("LEA")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        if i % 4 == 0:
            company_name = w.companies[rng.choice(companies)].name
            domain = company_name.split()[0].lower() + ".example.com"
        else:
            industry = rng.choice(list(COMPANY_SUFFIXES))
            pre = rng.choice(new_prospects)
            company_name = f"{pre} {rng.choice(COMPANY_SUFFIXES[industry])}"
            domain = f"{pre.lower()}.example.com"
        email = _unique_email(taken_emails, f"{first.lower()}.{last.lower()}", domain)
        lead = Lead(
            lead_id=lid,
            first_name=first,
            last_name=last,
            email=email,
            company_name=company_name,
            source=rng.choice(["web", "referral", "event", "cold_call", "partner"]),  # type: ignore[arg-type]
            status=status,  # type: ignore[arg-type]
            owner_id=rng.choice(owners),
            created_on=_date(rng, "2025-10-01", "2026-02-28"),
        )
        if status == "converted":
            # converted earlier: a contact was created under an existing company
            com = rng.choice(companies)
            kid = w.new_id("CON")
            w.contacts[kid] = Contact(
                contact_id=kid,
                company_id=com,
                first_name=first,
                last_name=last,
                email=email,
                phone=_phone(rng),
                title=None,
                created_on=lead.created_on,
            )
            lead.company_name = w.companies[com].name
            lead.contact_id, lead.company_id, lead.converted_on = kid, com, lead.created_on
        w.leads[lid] = lead
    # two open leads whose email already belongs to a contact (conversion would duplicate it)
    open_leads = [lead for lead in w.leads.values() if lead.status in ("qualified", "contacted")]
    for lead in open_leads[:2]:
        c = w.contacts[rng.choice(contact_ids)]
        lead.first_name, lead.last_name, lead.email = c.first_name, c.last_name, c.email
        lead.company_name = w.companies[c.company_id].name if c.company_id else lead.company_name
    _seed_deals_and_activities(w, rng, companies, active, contact_ids)
    return w


def _seed_deals_and_activities(
    w: CrmWorld, rng: random.Random, companies: list[str], active: list[str], contact_ids: list[str]
) -> None:
    """Deals across every stage, then activities on deals, contacts (``contact_ids``) and open leads."""
    stages = (
        ["prospecting"] * 6
        + ["qualification"] * 6
        + ["proposal"] * 6
        + ["negotiation"] * 5
        + ["closed_won"] * 5
        + ["closed_lost"] * 4
    )
    rng.shuffle(stages)
    for stage in stages:
        did = w.new_id("DEA")
        com = rng.choice(companies)
        people = [c.contact_id for c in w.contacts.values() if c.company_id == com]
        created = _date(rng, "2025-06-01", "2026-02-20")
        closed = stage in ("closed_won", "closed_lost")
        d = Deal(
            deal_id=did,
            name=f"{w.companies[com].name} - {rng.choice(PRODUCTS)}",
            company_id=com,
            contact_id=rng.choice(people) if people else None,
            owner_id=rng.choice(active),
            amount=float(rng.choice([1500, 4800, 9900, 12000, 18500, 25000, 42000, 60000, 95000, 150000])),
            currency=rng.choice(["USD", "USD", "USD", "EUR", "GBP"]),  # type: ignore[arg-type]
            stage=stage,
            probability=PROBABILITY[stage],  # type: ignore[arg-type]
            expected_close_date=_date(rng, "2026-03-05", "2026-09-30")
            if not closed
            else _date(rng, created, "2026-02-28"),
            created_on=created,
        )
        if closed:
            d.closed_on = d.expected_close_date
            if stage == "closed_lost":
                d.lost_reason = rng.choice(["price", "competitor", "no budget", "timing", "no decision"])
        w.deals[did] = d

    deal_ids = list(w.deals)
    for _ in range(45):
        aid = w.new_id("ACT")
        kind = rng.choice(["call", "email", "meeting", "note"])
        a = Activity(
            activity_id=aid,
            kind=kind,
            subject=rng.choice(ACTIVITY_SUBJECTS[kind]),  # type: ignore[arg-type]
            date=_date(rng, "2025-11-01", "2026-03-01"),
            owner_id=rng.choice(active),
        )
        r = rng.random()
        if r < 0.55:
            d = w.deals[rng.choice(deal_ids)]
            a.deal_id, a.contact_id = d.deal_id, d.contact_id
        elif r < 0.8:
            a.contact_id = rng.choice(contact_ids)
        else:
            lead = rng.choice(
                [other for other in w.leads.values() if other.status in ("contacted", "qualified", "unqualified")]
            )
            a.lead_id = lead.lead_id
        w.activities[aid] = a
