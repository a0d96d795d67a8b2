"""crm: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, StateConflict, ToolSet, World, not_found

Industry = Literal["software", "manufacturing", "retail", "healthcare", "finance", "logistics", "education", "energy"]
LeadStatus = Literal["new", "contacted", "qualified", "unqualified", "converted"]
LeadSource = Literal["web", "referral", "event", "cold_call", "partner"]
Stage = Literal["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"]
ActivityKind = Literal["call", "email", "meeting", "note"]
DAY0 = REFERENCE_DAY
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"

OPEN_STAGES: tuple[str, ...] = ("prospecting", "qualification", "proposal", "negotiation")
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "prospecting": ("qualification", "closed_lost"),
    "qualification": ("proposal", "prospecting", "closed_lost"),
    "proposal": ("negotiation", "qualification", "closed_lost"),
    "negotiation": ("closed_won", "proposal", "closed_lost"),
    "closed_won": (),
    "closed_lost": (),
}
PROBABILITY = {
    "prospecting": 10,
    "qualification": 25,
    "proposal": 50,
    "negotiation": 75,
    "closed_won": 100,
    "closed_lost": 0,
}

COMPANY_PREFIXES = [
    "Northwind",
    "Bluepeak",
    "Ironleaf",
    "Suncrest",
    "Redwood",
    "Clearwater",
    "Silverline",
    "Brightpath",
    "Stonebridge",
    "Harbor",
    "Evergreen",
    "Quantum",
    "Granite",
    "Skyline",
    "Cobalt",
    "Maple",
    "Vertex",
    "Lumen",
    "Summit",
    "Orchid",
]
COMPANY_SUFFIXES = {
    "software": ["Software", "Labs", "Analytics", "Systems"],
    "manufacturing": ["Industries", "Fabrication", "Components", "Works"],
    "retail": ["Outfitters", "Market", "Goods", "Stores"],
    "healthcare": ["Health", "Clinics", "Medical", "Care"],
    "finance": ["Capital", "Financial", "Partners", "Advisors"],
    "logistics": ["Logistics", "Freight", "Shipping", "Transport"],
    "education": ["Academy", "Learning", "Institute", "Education"],
    "energy": ["Energy", "Power", "Solar", "Utilities"],
}
TITLES = [
    "CEO",
    "CTO",
    "VP Sales",
    "Head of Operations",
    "Procurement Manager",
    "IT Director",
    "CFO",
    "Marketing Lead",
    "Office Manager",
    "Product Manager",
]
PRODUCTS = [
    "Platform license",
    "Annual support",
    "Onboarding package",
    "Data migration",
    "Analytics add-on",
    "Enterprise upgrade",
    "Pilot project",
    "Seat expansion",
    "Security audit",
    "Training bundle",
]
REGIONS = ["North America", "EMEA", "APAC", "LATAM"]
ACTIVITY_SUBJECTS = {
    "call": ["Discovery call", "Follow-up call", "Pricing discussion", "Check-in call"],
    "email": ["Sent proposal", "Sent case study", "Intro email", "Follow-up on quote"],
    "meeting": ["Product demo", "On-site visit", "Stakeholder workshop", "Contract review"],
    "note": ["Budget confirmed", "Decision maker identified", "Competitor in play", "Renewal risk"],
}


class Owner(BaseModel):
    owner_id: str
    name: str
    email: str
    region: str
    status: Literal["active", "inactive"] = "active"


class Company(BaseModel):
    company_id: str
    name: str
    industry: Industry
    city: str
    employees: int
    website: str
    owner_id: str
    created_on: str


class Contact(BaseModel):
    contact_id: str
    company_id: str | None
    first_name: str
    last_name: str
    email: str
    phone: str
    title: str | None = None
    created_on: str


class Lead(BaseModel):
    lead_id: str
    first_name: str
    last_name: str
    email: str
    company_name: str
    source: LeadSource
    status: LeadStatus
    owner_id: str
    created_on: str
    contact_id: str | None = Field(None, description="Contact created when the lead was converted")
    company_id: str | None = Field(None, description="Company the converted lead was attached to")
    deal_id: str | None = Field(None, description="Deal opened when the lead was converted, if any")
    converted_on: str | None = None


class Deal(BaseModel):
    deal_id: str
    name: str
    company_id: str
    contact_id: str | None
    owner_id: str
    amount: float
    currency: Literal["USD", "EUR", "GBP"] = "USD"
    stage: Stage
    probability: int
    expected_close_date: str
    created_on: str
    closed_on: str | None = None
    lost_reason: str | None = None


class Activity(BaseModel):
    activity_id: str
    kind: ActivityKind
    subject: str
    notes: str | None = None
    date: str
    owner_id: str
    contact_id: str | None = None
    deal_id: str | None = None
    lead_id: str | None = None


class CrmWorld(World):
    owners: dict[str, Owner] = {}
    companies: dict[str, Company] = {}
    contacts: dict[str, Contact] = {}
    leads: dict[str, Lead] = {}
    deals: dict[str, Deal] = {}
    activities: dict[str, Activity] = {}


def _owner(w: CrmWorld, owner_id: str, *, must_be_active: bool = True) -> Owner:
    o = w.owners.get(owner_id)
    if o is None:
        raise not_found("owner", owner_id, "list_owners shows valid owner ids")
    if must_be_active and o.status != "active":
        act = ", ".join(x.owner_id for x in w.owners.values() if x.status == "active")
        raise StateConflict(f"owner {owner_id} ({o.name}) is inactive and cannot own new records; active owners: {act}")
    return o


def _company(w: CrmWorld, company_id: str) -> Company:
    c = w.companies.get(company_id)
    if c is None:
        raise not_found("company", company_id, "list_companies shows valid company ids")
    return c


def _contact(w: CrmWorld, contact_id: str) -> Contact:
    c = w.contacts.get(contact_id)
    if c is None:
        raise not_found("contact", contact_id, "list_contacts shows valid contact ids")
    return c


def _deal(w: CrmWorld, deal_id: str) -> Deal:
    d = w.deals.get(deal_id)
    if d is None:
        raise not_found("deal", deal_id, "list_deals shows valid deal ids")
    return d


def _lead(w: CrmWorld, lead_id: str) -> Lead:
    lead = w.leads.get(lead_id)
    if lead is None:
        raise not_found("lead", lead_id, "list_leads shows valid lead ids")
    return lead


def _valid_date(value: str, arg: str) -> str:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise InvalidArgument(f"{arg} {value!r} is not a real calendar date (expected YYYY-MM-DD)") from None
    return value


def _email_owner(w: CrmWorld, email: str, exclude: str | None = None) -> Contact | None:
    e = email.lower()
    return next((c for c in w.contacts.values() if c.email.lower() == e and c.contact_id != exclude), None)


OwnerId = Annotated[str, Field(description="Sales owner id, e.g. 'OWN-0002' (from list_owners)")]
CompanyId = Annotated[str, Field(description="Company id, e.g. 'COM-0004' (from list_companies)")]
ContactId = Annotated[str, Field(description="Contact id, e.g. 'CON-0010' (from list_contacts)")]
DealId = Annotated[str, Field(description="Deal id, e.g. 'DEA-0007' (from list_deals)")]
LeadId = Annotated[str, Field(description="Lead id, e.g. 'LEA-0003' (from list_leads)")]
Email = Annotated[str, Field(description="Email address", pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]


class OwnerList(BaseModel):
    owners: list[Owner]
    total: int


class CompanyList(BaseModel):
    companies: list[Company]
    total: int


class CompanyDetail(BaseModel):
    company_id: str
    name: str
    industry: Industry
    city: str
    employees: int
    website: str
    owner_id: str
    created_on: str
    contacts: list[Contact]
    deals: list[Deal]
    open_pipeline_amount: float = Field(description="Sum of amounts of the company's open deals")


class ContactList(BaseModel):
    contacts: list[Contact]
    total: int


class LeadList(BaseModel):
    leads: list[Lead]
    total: int


class ConvertResult(BaseModel):
    lead_id: str
    status: LeadStatus
    contact_id: str
    company_id: str
    company_created: bool = Field(description="True when a new company was created from the lead's company name")
    deal_id: str | None = None


class DealList(BaseModel):
    deals: list[Deal]
    total: int
    total_amount: float


class DealDetail(BaseModel):
    deal: Deal
    deal_id: str
    allowed_next_stages: list[Stage] = Field(description="Stages update_deal_stage accepts from the current stage")
    activity_count: int


class StageChange(BaseModel):
    deal_id: str
    previous_stage: Stage
    stage: Stage
    probability: int
    closed_on: str | None = None
    allowed_next_stages: list[Stage]


class ActivityList(BaseModel):
    activities: list[Activity]
    total: int


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[CrmWorld] = ToolSet()
