"""crm tools, list_owners to list_activities (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.crm.world import (
    DATE_PATTERN,
    DAY0,
    OPEN_STAGES,
    PROBABILITY,
    TOOLS,
    TRANSITIONS,
    Activity,
    ActivityKind,
    ActivityList,
    Company,
    CompanyDetail,
    CompanyId,
    CompanyList,
    Contact,
    ContactId,
    ContactList,
    ConvertResult,
    CrmWorld,
    Deal,
    DealDetail,
    DealId,
    DealList,
    Email,
    Industry,
    Lead,
    LeadId,
    LeadList,
    LeadSource,
    LeadStatus,
    OwnerId,
    OwnerList,
    Stage,
    StageChange,
    _company,
    _contact,
    _deal,
    _email_owner,
    _lead,
    _owner,
    _valid_date,
)
from servers.kit import InvalidArgument, StateConflict


@TOOLS.tool(read_only=True)
def list_owners(
    w: CrmWorld,
    status: Annotated[Literal["active", "inactive"] | None, Field(description="Only owners with this status")] = None,
    region: Annotated[str | None, Field(description="Only owners in this sales region, e.g. 'EMEA'")] = None,
) -> OwnerList:
    """List the sales owners (reps) who can own companies, leads and deals. Inactive owners cannot take new records."""
    out = [
        o
        for o in w.owners.values()
        if (status is None or o.status == status) and (region is None or o.region.lower() == region.lower())
    ]
    return OwnerList(owners=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_companies(
    w: CrmWorld,
    industry: Annotated[Industry | None, Field(description="Only companies in this industry")] = None,
    owner_id: Annotated[str | None, Field(description="Only companies owned by this owner id")] = None,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the company name")] = None,
    city: Annotated[str | None, Field(description="Only companies in this city")] = None,
) -> CompanyList:
    """List companies (accounts), filtered by industry, owner, city or part of the name."""
    out = [
        c
        for c in w.companies.values()
        if (industry is None or c.industry == industry)
        and (owner_id is None or c.owner_id == owner_id)
        and (name_contains is None or name_contains.lower() in c.name.lower())
        and (city is None or c.city.lower() == city.lower())
    ]
    return CompanyList(companies=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_company(w: CrmWorld, company_id: CompanyId) -> CompanyDetail:
    """Get a company with its contacts, its deals and the total amount of its open pipeline."""
    c = _company(w, company_id)
    contacts = [k for k in w.contacts.values() if k.company_id == company_id]
    deals = [d for d in w.deals.values() if d.company_id == company_id]
    pipeline = round(sum(d.amount for d in deals if d.stage in OPEN_STAGES), 2)
    return CompanyDetail(**c.model_dump(), contacts=contacts, deals=deals, open_pipeline_amount=pipeline)


@TOOLS.tool()
def create_company(
    w: CrmWorld,
    name: Annotated[str, Field(description="Company name; must be unique in the CRM", min_length=2, max_length=80)],
    industry: Annotated[Industry, Field(description="Industry of the company")],
    owner_id: OwnerId,
    city: Annotated[str, Field(description="Headquarters city", min_length=2)] = "Boston",
    employees: Annotated[int, Field(description="Approximate headcount", ge=1, le=1_000_000)] = 10,
    website: Annotated[
        str | None, Field(description="Website URL, e.g. 'https://acme.example.com'", pattern=r"^https?://\S+$")
    ] = None,
) -> Company:
    """Create a company (account) owned by an active sales owner."""
    _owner(w, owner_id)
    clash = next((c for c in w.companies.values() if c.name.lower() == name.strip().lower()), None)
    if clash is not None:
        raise StateConflict(f"a company named {clash.name!r} already exists ({clash.company_id})")
    cid = w.new_id("COM")
    slug = "".join(ch for ch in name.lower() if ch.isalnum())[:20] or "company"
    c = Company(
        company_id=cid,
        name=name.strip(),
        industry=industry,
        city=city,
        employees=employees,
        website=website or f"https://{slug}.example.com",
        owner_id=owner_id,
        created_on=DAY0,
    )
    w.companies[cid] = c
    return c


@TOOLS.tool(read_only=True)
def list_contacts(
    w: CrmWorld,
    company_id: Annotated[str | None, Field(description="Only contacts of this company id")] = None,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the first or last name")] = None,
    email: Annotated[str | None, Field(description="Exact email address (case-insensitive)")] = None,
) -> ContactList:
    """List contacts (people), filtered by company, part of the name, or exact email."""
    if company_id is not None:
        _company(w, company_id)
    out = [
        c
        for c in w.contacts.values()
        if (company_id is None or c.company_id == company_id)
        and (name_contains is None or name_contains.lower() in f"{c.first_name} {c.last_name}".lower())
        and (email is None or c.email.lower() == email.lower())
    ]
    return ContactList(contacts=out, total=len(out))


@TOOLS.tool()
def create_contact(
    w: CrmWorld,
    first_name: Annotated[str, Field(description="First name", min_length=1)],
    last_name: Annotated[str, Field(description="Last name", min_length=1)],
    email: Email,
    company_id: Annotated[
        str | None, Field(description="Company id the contact works for (from list_companies)")
    ] = None,
    phone: Annotated[
        str | None, Field(description="Phone number, e.g. '+1-415-555-0100'", pattern=r"^\+?[\d\- ()]{7,20}$")
    ] = None,
    title: Annotated[str | None, Field(description="Job title")] = None,
) -> Contact:
    """Create a contact. Emails are unique: a second contact with the same email is rejected."""
    if company_id is not None:
        _company(w, company_id)
    dup = _email_owner(w, email)
    if dup is not None:
        raise StateConflict(
            f"email {email!r} already belongs to contact {dup.contact_id} "
            f"({dup.first_name} {dup.last_name}); use update_contact on it instead"
        )
    kid = w.new_id("CON")
    c = Contact(
        contact_id=kid,
        company_id=company_id,
        first_name=first_name,
        last_name=last_name,
        email=email,
        phone=phone or "",
        title=title,
        created_on=DAY0,
    )
    w.contacts[kid] = c
    return c


@TOOLS.tool(idempotent=True)
def update_contact(
    w: CrmWorld,
    contact_id: ContactId,
    email: Annotated[
        str | None,
        Field(
            description="New email address; must not belong to another contact", pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$"
        ),
    ] = None,
    phone: Annotated[str | None, Field(description="New phone number", pattern=r"^\+?[\d\- ()]{7,20}$")] = None,
    title: Annotated[str | None, Field(description="New job title")] = None,
    company_id: Annotated[str | None, Field(description="Move the contact to this company id")] = None,
) -> Contact:
    """Update a contact's email, phone, title or company. Only the given fields change."""
    c = _contact(w, contact_id)
    if email is None and phone is None and title is None and company_id is None:
        raise InvalidArgument("nothing to update: give at least one of email, phone, title, company_id")
    if email is not None:
        dup = _email_owner(w, email, exclude=contact_id)
        if dup is not None:
            raise StateConflict(
                f"email {email!r} already belongs to contact {dup.contact_id} ({dup.first_name} {dup.last_name})"
            )
    if company_id is not None:
        _company(w, company_id)
        c.company_id = company_id
    if email is not None:
        c.email = email
    if phone is not None:
        c.phone = phone
    if title is not None:
        c.title = title
    return c


@TOOLS.tool(read_only=True)
def list_leads(
    w: CrmWorld,
    status: Annotated[LeadStatus | None, Field(description="Only leads with this status")] = None,
    owner_id: Annotated[str | None, Field(description="Only leads owned by this owner id")] = None,
    source: Annotated[LeadSource | None, Field(description="Only leads from this source")] = None,
) -> LeadList:
    """List leads (unqualified prospects), filtered by status, owner or source. Converted leads show the contact, company and deal they became."""
    out = [
        lead
        for lead in w.leads.values()
        if (status is None or lead.status == status)
        and (owner_id is None or lead.owner_id == owner_id)
        and (source is None or lead.source == source)
    ]
    return LeadList(leads=out, total=len(out))


@TOOLS.tool()
def create_lead(
    w: CrmWorld,
    first_name: Annotated[str, Field(description="Prospect's first name", min_length=1)],
    last_name: Annotated[str, Field(description="Prospect's last name", min_length=1)],
    email: Email,
    company_name: Annotated[str, Field(description="Name of the prospect's company", min_length=2)],
    owner_id: OwnerId,
    source: Annotated[LeadSource, Field(description="Where the lead came from")] = "web",
) -> Lead:
    """Create a new lead assigned to an active sales owner."""
    _owner(w, owner_id)
    e = email.lower()
    dup = next((other for other in w.leads.values() if other.email.lower() == e and other.status != "converted"), None)
    if dup is not None:
        raise StateConflict(f"an open lead with email {email!r} already exists ({dup.lead_id})")
    lid = w.new_id("LEA")
    lead = Lead(
        lead_id=lid,
        first_name=first_name,
        last_name=last_name,
        email=email,
        company_name=company_name,
        source=source,
        status="new",
        owner_id=owner_id,
        created_on=DAY0,
    )
    w.leads[lid] = lead
    return lead


@TOOLS.tool()
def convert_lead(
    w: CrmWorld,
    lead_id: LeadId,
    deal_name: Annotated[
        str | None, Field(description="If given, also open a deal with this name in the prospecting stage")
    ] = None,
    deal_amount: Annotated[
        float, Field(description="Amount of the opened deal (0 or more); used only with deal_name", ge=0)
    ] = 0.0,
) -> ConvertResult:
    """Convert a lead into a contact, attached to the company of the same name (created if missing), optionally opening a deal.

    A lead can be converted once; unqualified leads cannot be converted.
    """
    lead = _lead(w, lead_id)
    if lead.status == "converted":
        raise StateConflict(
            f"lead {lead_id} was already converted on {lead.converted_on} into contact {lead.contact_id} "
            f"at company {lead.company_id}"
        )
    if lead.status == "unqualified":
        raise StateConflict(
            f"lead {lead_id} is unqualified and cannot be converted; only new, contacted or qualified leads can"
        )
    dup = _email_owner(w, lead.email)
    if dup is not None:
        raise StateConflict(
            f"converting lead {lead_id} would duplicate contact {dup.contact_id}, which already has email "
            f"{lead.email!r}; contact emails must be unique"
        )
    if deal_amount < 0:
        raise InvalidArgument(f"deal_amount must be 0 or more, got {deal_amount}")
    owner = w.owners[lead.owner_id]
    if deal_name is not None and owner.status != "active":
        raise StateConflict(f"lead owner {owner.owner_id} is inactive and cannot own the new deal")
    company = next((c for c in w.companies.values() if c.name.lower() == lead.company_name.lower()), None)
    created = company is None
    if company is None:
        cid = w.new_id("COM")
        slug = "".join(ch for ch in lead.company_name.lower() if ch.isalnum())[:20] or "company"
        company = Company(
            company_id=cid,
            name=lead.company_name,
            industry="software",
            city="Boston",
            employees=10,
            website=f"https://{slug}.example.com",
            owner_id=lead.owner_id,
            created_on=DAY0,
        )
        w.companies[cid] = company
    kid = w.new_id("CON")
    w.contacts[kid] = Contact(
        contact_id=kid,
        company_id=company.company_id,
        first_name=lead.first_name,
        last_name=lead.last_name,
        email=lead.email,
        phone="",
        created_on=DAY0,
    )
    deal_id = None
    if deal_name is not None:
        deal_id = w.new_id("DEA")
        w.deals[deal_id] = Deal(
            deal_id=deal_id,
            name=deal_name,
            company_id=company.company_id,
            contact_id=kid,
            owner_id=lead.owner_id,
            amount=round(deal_amount, 2),
            stage="prospecting",
            probability=PROBABILITY["prospecting"],
            expected_close_date="2026-06-30",
            created_on=DAY0,
        )
    lead.status, lead.contact_id, lead.company_id, lead.deal_id, lead.converted_on = (
        "converted",
        kid,
        company.company_id,
        deal_id,
        DAY0,
    )
    return ConvertResult(
        lead_id=lead_id,
        status="converted",
        contact_id=kid,
        company_id=company.company_id,
        company_created=created,
        deal_id=deal_id,
    )


@TOOLS.tool(read_only=True)
def list_deals(
    w: CrmWorld,
    stage: Annotated[Stage | None, Field(description="Only deals in this pipeline stage")] = None,
    owner_id: Annotated[str | None, Field(description="Only deals owned by this owner id")] = None,
    company_id: Annotated[str | None, Field(description="Only deals with this company id")] = None,
    min_amount: Annotated[float | None, Field(description="Only deals worth at least this amount", ge=0)] = None,
    open_only: Annotated[bool, Field(description="Only deals that are not closed (won or lost)")] = False,
) -> DealList:
    """List deals in the pipeline, filtered by stage, owner, company or minimum amount, with their total amount."""
    out = [
        d
        for d in w.deals.values()
        if (stage is None or d.stage == stage)
        and (owner_id is None or d.owner_id == owner_id)
        and (company_id is None or d.company_id == company_id)
        and (min_amount is None or d.amount >= min_amount)
        and (not open_only or d.stage in OPEN_STAGES)
    ]
    return DealList(deals=out, total=len(out), total_amount=round(sum(d.amount for d in out), 2))


@TOOLS.tool(read_only=True)
def get_deal(w: CrmWorld, deal_id: DealId) -> DealDetail:
    """Get a deal with the stages it may move to next and how many activities are logged on it."""
    d = _deal(w, deal_id)
    n = sum(1 for a in w.activities.values() if a.deal_id == deal_id)
    return DealDetail(deal=d, deal_id=deal_id, allowed_next_stages=list(TRANSITIONS[d.stage]), activity_count=n)  # type: ignore[arg-type]


@TOOLS.tool()
def create_deal(
    w: CrmWorld,
    name: Annotated[str, Field(description="Deal name, e.g. 'Acme - Platform license'", min_length=2)],
    company_id: CompanyId,
    owner_id: OwnerId,
    amount: Annotated[float, Field(description="Deal value; 0 or more", ge=0)],
    expected_close_date: Annotated[
        str, Field(description="Expected close date YYYY-MM-DD, not in the past", pattern=DATE_PATTERN)
    ],
    contact_id: Annotated[
        str | None, Field(description="Primary contact id; must work at the company (from list_contacts)")
    ] = None,
    currency: Annotated[Literal["USD", "EUR", "GBP"], Field(description="Deal currency")] = "USD",
    stage: Annotated[Literal["prospecting", "qualification"], Field(description="Starting stage")] = "prospecting",
) -> Deal:
    """Open a new deal for a company, owned by an active owner, starting in prospecting or qualification."""
    _company(w, company_id)
    _owner(w, owner_id)
    if amount < 0:
        raise InvalidArgument(f"amount must be 0 or more, got {amount}")
    _valid_date(expected_close_date, "expected_close_date")
    if expected_close_date < DAY0:
        raise InvalidArgument(f"expected_close_date {expected_close_date} is in the past; today is {DAY0}")
    if contact_id is not None:
        k = _contact(w, contact_id)
        if k.company_id != company_id:
            raise InvalidArgument(f"contact {contact_id} works at {k.company_id}, not at company {company_id}")
    did = w.new_id("DEA")
    d = Deal(
        deal_id=did,
        name=name,
        company_id=company_id,
        contact_id=contact_id,
        owner_id=owner_id,
        amount=round(amount, 2),
        currency=currency,
        stage=stage,
        probability=PROBABILITY[stage],
        expected_close_date=expected_close_date,
        created_on=DAY0,
    )
    w.deals[did] = d
    return d


@TOOLS.tool(destructive=True, idempotent=True)
def update_deal_stage(
    w: CrmWorld,
    deal_id: DealId,
    stage: Annotated[
        Stage, Field(description="Target stage; must be one of the deal's allowed next stages (see get_deal)")
    ],
    lost_reason: Annotated[
        str | None, Field(description="Why the deal was lost; required when stage is closed_lost")
    ] = None,
) -> StageChange:
    """Move a deal along the pipeline: one step forward, one step back, or to closed_lost; closed_won only from negotiation.

    Closed deals (closed_won, closed_lost) are final and cannot be reopened.
    """
    d = _deal(w, deal_id)
    allowed = TRANSITIONS[d.stage]
    if stage not in allowed:
        if not allowed:
            raise StateConflict(
                f"deal {deal_id} is {d.stage} (closed on {d.closed_on}); closed deals cannot be reopened or moved"
            )
        raise StateConflict(
            f"deal {deal_id} cannot move from {d.stage} to {stage}; allowed next stages: {', '.join(allowed)}"
        )
    if stage == "closed_lost" and not lost_reason:
        raise InvalidArgument("lost_reason is required when stage is closed_lost")
    prev = d.stage
    d.stage, d.probability = stage, PROBABILITY[stage]
    if stage in ("closed_won", "closed_lost"):
        d.closed_on = DAY0
        d.lost_reason = lost_reason if stage == "closed_lost" else None
    return StageChange(
        deal_id=deal_id,
        previous_stage=prev,
        stage=stage,
        probability=d.probability,  # type: ignore[arg-type]
        closed_on=d.closed_on,
        allowed_next_stages=list(TRANSITIONS[stage]),
    )  # type: ignore[arg-type]


@TOOLS.tool()
def log_activity(
    w: CrmWorld,
    kind: Annotated[ActivityKind, Field(description="Kind of activity")],
    subject: Annotated[str, Field(description="Short subject line", min_length=2, max_length=120)],
    owner_id: OwnerId,
    contact_id: Annotated[str | None, Field(description="Contact the activity was with (from list_contacts)")] = None,
    deal_id: Annotated[str | None, Field(description="Deal the activity concerns (from list_deals)")] = None,
    lead_id: Annotated[str | None, Field(description="Lead the activity concerns (from list_leads)")] = None,
    notes: Annotated[str | None, Field(description="Free-text notes")] = None,
    date: Annotated[
        str, Field(description="Date of the activity YYYY-MM-DD, not in the future", pattern=DATE_PATTERN)
    ] = DAY0,
) -> Activity:
    """Log a call, email, meeting or note against a contact, deal and/or lead. A call, email or meeting on a new lead marks it contacted."""
    _owner(w, owner_id, must_be_active=False)
    if contact_id is None and deal_id is None and lead_id is None:
        raise InvalidArgument("give at least one of contact_id, deal_id or lead_id to attach the activity to")
    if contact_id is not None:
        _contact(w, contact_id)
    if deal_id is not None:
        _deal(w, deal_id)
    lead = _lead(w, lead_id) if lead_id is not None else None
    _valid_date(date, "date")
    if date > DAY0:
        raise InvalidArgument(f"date {date} is in the future; today is {DAY0}")
    aid = w.new_id("ACT")
    a = Activity(
        activity_id=aid,
        kind=kind,
        subject=subject,
        notes=notes,
        date=date,
        owner_id=owner_id,
        contact_id=contact_id,
        deal_id=deal_id,
        lead_id=lead_id,
    )
    w.activities[aid] = a
    if lead is not None and lead.status == "new" and kind != "note":
        lead.status = "contacted"
    return a


@TOOLS.tool(read_only=True)
def list_activities(
    w: CrmWorld,
    contact_id: Annotated[str | None, Field(description="Only activities with this contact id")] = None,
    deal_id: Annotated[str | None, Field(description="Only activities on this deal id")] = None,
    lead_id: Annotated[str | None, Field(description="Only activities on this lead id")] = None,
    owner_id: Annotated[str | None, Field(description="Only activities logged by this owner id")] = None,
    kind: Annotated[ActivityKind | None, Field(description="Only activities of this kind")] = None,
    limit: Annotated[int, Field(description="Most recent N activities", ge=1, le=100)] = 20,
) -> ActivityList:
    """List logged activities, most recent first, filtered by contact, deal, lead, owner or kind."""
    out = [
        a
        for a in w.activities.values()
        if (contact_id is None or a.contact_id == contact_id)
        and (deal_id is None or a.deal_id == deal_id)
        and (lead_id is None or a.lead_id == lead_id)
        and (owner_id is None or a.owner_id == owner_id)
        and (kind is None or a.kind == kind)
    ]
    out.sort(key=lambda a: (a.date, a.activity_id), reverse=True)
    out = out[:limit]
    return ActivityList(activities=out, total=len(out))
