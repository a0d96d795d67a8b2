"""payments: merchants, their customers, invoices, payments, refunds and webhook endpoints (token-protected)."""

from __future__ import annotations

import ipaddress
import random
from typing import Annotated, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import (
    EnvServer,
    InvalidArgument,
    PermissionDenied,
    StateConflict,
    ToolSet,
    World,
    not_found,
    sensitive,
)
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES

Currency = Literal["USD", "EUR", "GBP"]
InvoiceStatus = Literal["draft", "open", "paid", "partially_refunded", "refunded", "void"]
PaymentMethod = Literal["card", "bank_transfer", "wallet"]
RefundReason = Literal["requested_by_customer", "duplicate", "fraudulent", "product_not_received", "other"]
WebhookEvent = Literal["invoice.created", "invoice.paid", "invoice.voided", "refund.created", "customer.created"]
TODAY = REFERENCE_DAY
NOW = f"{REFERENCE_DAY}T09:00:00Z"

MERCHANTS = [
    ("Bluebird Coffee Roasters", "food_and_beverage"),
    ("Northwind Outfitters", "retail"),
    ("Pixel Forge Studio", "software"),
    ("Greenleaf Yoga", "fitness"),
    ("Harbor Freight Logistics", "logistics"),
    ("Lumen Dental Care", "healthcare"),
    ("Atlas Legal Partners", "professional_services"),
    ("Copper Kettle Bakery", "food_and_beverage"),
]
ITEMS = {
    "food_and_beverage": [
        ("Wholesale coffee beans 5kg", 85.0),
        ("Catering package", 420.0),
        ("Monthly subscription box", 39.0),
    ],
    "retail": [("Hiking boots", 149.0), ("Winter parka", 289.0), ("Camping gear bundle", 512.0)],
    "software": [
        ("Website redesign milestone", 2400.0),
        ("Monthly maintenance retainer", 650.0),
        ("Logo design", 480.0),
    ],
    "fitness": [("10-class pass", 120.0), ("Annual membership", 899.0), ("Private session", 75.0)],
    "logistics": [("Pallet shipment", 310.0), ("Express freight", 1280.0), ("Warehousing, monthly", 560.0)],
    "healthcare": [("Cleaning and check-up", 180.0), ("Crown fitting", 1150.0), ("Whitening treatment", 390.0)],
    "professional_services": [
        ("Contract review", 750.0),
        ("Consultation, 2 hours", 500.0),
        ("Incorporation filing", 1300.0),
    ],
}
COMPANY_SUFFIX = ["Ltd", "LLC", "GmbH", "& Sons", "Studio", "Co-op"]


class Merchant(BaseModel):
    merchant_id: str
    name: str
    industry: str
    country: str
    default_currency: Currency
    api_token: str
    status: Literal["active", "restricted"] = "active"


class Customer(BaseModel):
    customer_id: str
    merchant_id: str
    name: str
    email: str
    city: str
    created_on: str


class Refund(BaseModel):
    refund_id: str
    invoice_id: str
    amount: float
    reason: RefundReason
    created_at: str


class Invoice(BaseModel):
    invoice_id: str
    merchant_id: str
    customer_id: str
    description: str
    amount: float
    currency: Currency
    status: InvoiceStatus
    amount_paid: float = 0.0
    amount_refunded: float = 0.0
    payment_method: PaymentMethod | None = None
    issued_on: str
    due_date: str
    paid_at: str | None = None
    refunds: list[Refund] = []


class Webhook(BaseModel):
    webhook_id: str
    merchant_id: str
    url: str
    events: list[WebhookEvent]
    status: Literal["enabled", "disabled"] = "enabled"
    created_at: str


class PaymentsWorld(World):
    merchants: dict[str, Merchant] = {}
    customers: dict[str, Customer] = {}
    invoices: dict[str, Invoice] = {}
    webhooks: dict[str, Webhook] = {}


def _date(rng: random.Random, year: int, month_lo: int, month_hi: int) -> str:
    return f"{year}-{rng.randint(month_lo, month_hi):02d}-{rng.randint(1, 28):02d}"


def seed_world(rng: random.Random, seed: int) -> PaymentsWorld:
    w = PaymentsWorld(seed=seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    for name, industry in MERCHANTS:
        mid = w.new_id("MER")
        country, cur = rng.choice([("US", "USD"), ("US", "USD"), ("IE", "EUR"), ("DE", "EUR"), ("GB", "GBP")])
        w.merchants[mid] = Merchant(
            merchant_id=mid,
            name=name,
            industry=industry,
            country=country,
            default_currency=cur,  # type: ignore[arg-type]
            api_token="sk_live_" + "".join(rng.choice(alphabet) for _ in range(16)),
            status="restricted" if industry == "logistics" else "active",
        )
    mids = list(w.merchants)
    for _ in range(30):
        cid = w.new_id("CUS")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        mid = rng.choice(mids)
        if rng.random() < 0.3:
            name = f"{last} {rng.choice(COMPANY_SUFFIX)}"
            email = f"billing@{last.lower()}-{rng.randint(2, 99)}.example.com"
        else:
            name, email = f"{first} {last}", f"{first.lower()}.{last.lower()}@example.com"
        w.customers[cid] = Customer(
            customer_id=cid,
            merchant_id=mid,
            name=name,
            email=email,
            city=rng.choice(CITIES),
            created_on=_date(rng, 2025, 1, 12),
        )
    for cid, cust in w.customers.items():
        m = w.merchants[cust.merchant_id]
        for _ in range(rng.randint(1, 3)):
            iid = w.new_id("INV", 5)
            desc, base = rng.choice(ITEMS[m.industry])
            amount = round(base * rng.choice([1, 1, 1, 2, 3]) * rng.uniform(0.9, 1.1), 2)
            status = rng.choices(
                ["open", "paid", "void", "draft", "partially_refunded", "refunded"], weights=[6, 7, 1, 1, 2, 1]
            )[0]
            issued = _date(rng, 2026, 1, 2)
            due = f"2026-{rng.randint(2, 4):02d}-{rng.randint(1, 28):02d}"
            inv = Invoice(
                invoice_id=iid,
                merchant_id=m.merchant_id,
                customer_id=cid,
                description=desc,
                amount=amount,
                currency=m.default_currency,
                status=status,
                issued_on=issued,
                due_date=due,
            )  # type: ignore[arg-type]
            if status in ("paid", "partially_refunded", "refunded"):
                inv.amount_paid = amount
                inv.payment_method = rng.choice(["card", "card", "bank_transfer", "wallet"])  # type: ignore[assignment]
                inv.paid_at = f"{issued}T{rng.randint(8, 20):02d}:{rng.randint(0, 59):02d}:00Z"
                if status != "paid":
                    ramount = amount if status == "refunded" else round(amount * rng.choice([0.1, 0.25, 0.5]), 2)
                    rid = w.new_id("RFD")
                    inv.refunds.append(
                        Refund(
                            refund_id=rid,
                            invoice_id=iid,
                            amount=ramount,
                            reason=rng.choice(["requested_by_customer", "duplicate", "product_not_received"]),  # type: ignore[arg-type]
                            created_at=f"2026-02-{rng.randint(1, 28):02d}T12:00:00Z",
                        )
                    )
                    inv.amount_refunded = ramount
            w.invoices[iid] = inv
    for mid in mids[:6]:
        for _ in range(rng.randint(1, 2)):
            wid = w.new_id("WHK")
            host = w.merchants[mid].name.split()[0].lower()
            w.webhooks[wid] = Webhook(
                webhook_id=wid,
                merchant_id=mid,
                url=f"https://hooks.{host}.example.com/{rng.choice(['payments', 'billing', 'events'])}",
                events=sorted(
                    rng.sample(
                        ["invoice.created", "invoice.paid", "invoice.voided", "refund.created", "customer.created"],
                        k=rng.randint(1, 3),
                    )
                ),  # type: ignore[arg-type]
                status="disabled" if rng.random() < 0.25 else "enabled",
                created_at=f"2025-{rng.randint(1, 12):02d}-10T10:00:00Z",
            )
    return w


def _merchant(w: PaymentsWorld, merchant_id: str) -> Merchant:
    m = w.merchants.get(merchant_id)
    if m is None:
        raise not_found("merchant", merchant_id, "list_merchants shows valid merchant ids")
    return m


def _invoice(w: PaymentsWorld, invoice_id: str) -> Invoice:
    inv = w.invoices.get(invoice_id)
    if inv is None:
        raise not_found("invoice", invoice_id, "list_invoices shows valid invoice ids")
    return inv


def _auth(m: Merchant, api_token: str) -> None:
    if m.api_token != api_token:
        raise PermissionDenied(
            f"api_token is not valid for merchant {m.merchant_id}; use that merchant's secret API token"
        )


def _valid_url(url: str) -> None:
    p = urlparse(url)
    if p.scheme != "https":
        raise InvalidArgument(
            f"url {url!r} is not a valid webhook URL: it must use https:// (e.g. 'https://hooks.example.com/payments')"
        )
    host = p.hostname or ""
    if not host or "." not in host or " " in url:
        raise InvalidArgument(
            f"url {url!r} is not a valid webhook URL: it needs a public host name such as 'hooks.example.com'"
        )
    if host == "localhost" or host.endswith(".local") or host.endswith(".internal"):
        raise InvalidArgument(
            f"url {url!r} is not a valid webhook URL: host {host!r} is not reachable from the internet"
        )
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return
    if ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved:
        raise InvalidArgument(f"url {url!r} is not a valid webhook URL: {host} is a private or loopback address")


MerchantId = Annotated[str, Field(description="Merchant id, e.g. 'MER-0002' (from list_merchants)")]
InvoiceId = Annotated[str, Field(description="Invoice id, e.g. 'INV-00007' (from list_invoices)")]
ApiToken = Annotated[str, sensitive("The merchant's secret API token (starts with 'sk_live_')", min_length=8)]


class PublicMerchant(BaseModel):
    merchant_id: str
    name: str
    industry: str
    country: str
    default_currency: Currency
    status: str


class MerchantList(BaseModel):
    merchants: list[PublicMerchant]
    total: int


class CustomerList(BaseModel):
    customers: list[Customer]
    total: int


class InvoiceSummary(BaseModel):
    invoice_id: str
    merchant_id: str
    customer_id: str
    description: str
    amount: float
    currency: Currency
    status: InvoiceStatus
    amount_paid: float
    amount_refunded: float
    due_date: str


class InvoiceList(BaseModel):
    invoices: list[InvoiceSummary]
    total: int


class RefundResult(BaseModel):
    refund_id: str
    invoice_id: str
    amount: float
    reason: RefundReason
    invoice_status: InvoiceStatus
    amount_refunded: float
    refundable_amount: float
    created_at: str


class WebhookList(BaseModel):
    webhooks: list[Webhook]
    total: int


TOOLS: ToolSet[PaymentsWorld] = ToolSet()


def summary(i: Invoice) -> InvoiceSummary:
    return InvoiceSummary(
        invoice_id=i.invoice_id,
        merchant_id=i.merchant_id,
        customer_id=i.customer_id,
        description=i.description,
        amount=i.amount,
        currency=i.currency,
        status=i.status,
        amount_paid=i.amount_paid,
        amount_refunded=i.amount_refunded,
        due_date=i.due_date,
    )


@TOOLS.tool(read_only=True)
def list_merchants(
    w: PaymentsWorld,
    industry: Annotated[
        str | None, Field(description="Only merchants in this industry, e.g. 'retail' or 'software'")
    ] = None,
) -> MerchantList:
    """List the merchants on the platform with their country, default currency and account status."""
    out = [
        PublicMerchant(
            merchant_id=m.merchant_id,
            name=m.name,
            industry=m.industry,
            country=m.country,
            default_currency=m.default_currency,
            status=m.status,
        )
        for m in w.merchants.values()
        if industry is None or m.industry == industry
    ]
    return MerchantList(merchants=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_customers(
    w: PaymentsWorld,
    merchant_id: Annotated[str | None, Field(description="Only customers of this merchant id")] = None,
    name_contains: Annotated[
        str | None, Field(description="Case-insensitive part of the customer's name or email")
    ] = None,
) -> CustomerList:
    """List merchants' customers, optionally filtered by merchant or by part of the name or email."""
    if merchant_id is not None:
        _merchant(w, merchant_id)
    q = (name_contains or "").lower()
    out = [
        c
        for c in w.customers.values()
        if (merchant_id is None or c.merchant_id == merchant_id) and (q in c.name.lower() or q in c.email.lower())
    ]
    return CustomerList(customers=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_invoices(
    w: PaymentsWorld,
    merchant_id: Annotated[str | None, Field(description="Only invoices issued by this merchant id")] = None,
    customer_id: Annotated[
        str | None, Field(description="Only invoices billed to this customer id, e.g. 'CUS-0004'")
    ] = None,
    status: Annotated[InvoiceStatus | None, Field(description="Only invoices in this status")] = None,
    due_before: Annotated[
        str | None,
        Field(description="Only invoices due on or before this date (YYYY-MM-DD)", pattern=r"^\d{4}-\d{2}-\d{2}$"),
    ] = None,
) -> InvoiceList:
    """List invoices, filtered by merchant, customer, status or due date."""
    if merchant_id is not None:
        _merchant(w, merchant_id)
    if customer_id is not None and customer_id not in w.customers:
        raise not_found("customer", customer_id, "list_customers shows valid customer ids")
    out = [
        summary(i)
        for i in w.invoices.values()
        if (merchant_id is None or i.merchant_id == merchant_id)
        and (customer_id is None or i.customer_id == customer_id)
        and (status is None or i.status == status)
        and (due_before is None or i.due_date <= due_before)
    ]
    return InvoiceList(invoices=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_invoice(w: PaymentsWorld, invoice_id: InvoiceId) -> Invoice:
    """Get an invoice with its amount, status, payment details and the refunds issued against it."""
    return _invoice(w, invoice_id)


@TOOLS.tool()
def create_invoice(
    w: PaymentsWorld,
    merchant_id: MerchantId,
    customer_id: Annotated[
        str, Field(description="Id of one of the merchant's customers, e.g. 'CUS-0004' (from list_customers)")
    ],
    amount: Annotated[float, Field(description="Invoice total in the merchant's default currency", gt=0, le=1_000_000)],
    description: Annotated[
        str, Field(description="What the invoice is for, shown to the customer", min_length=3, max_length=200)
    ],
    due_date: Annotated[
        str, Field(description="Payment due date (YYYY-MM-DD), today or later", pattern=r"^\d{4}-\d{2}-\d{2}$")
    ],
    api_token: ApiToken,
) -> Invoice:
    """Issue a new open invoice from a merchant to one of its customers."""
    m = _merchant(w, merchant_id)
    _auth(m, api_token)
    c = w.customers.get(customer_id)
    if c is None:
        raise not_found("customer", customer_id, "list_customers shows valid customer ids")
    if c.merchant_id != merchant_id:
        raise PermissionDenied(f"customer {customer_id} belongs to merchant {c.merchant_id}, not {merchant_id}")
    if m.status != "active":
        raise StateConflict(f"merchant {merchant_id} is {m.status} and cannot issue invoices")
    if due_date < TODAY:
        raise InvalidArgument(f"due_date {due_date} is in the past; use {TODAY} or later")
    iid = w.new_id("INV", 5)
    inv = Invoice(
        invoice_id=iid,
        merchant_id=merchant_id,
        customer_id=customer_id,
        description=description,
        amount=round(amount, 2),
        currency=m.default_currency,
        status="open",
        issued_on=TODAY,
        due_date=due_date,
    )
    w.invoices[iid] = inv
    return inv


@TOOLS.tool()
def pay_invoice(
    w: PaymentsWorld,
    invoice_id: InvoiceId,
    payment_method: Annotated[PaymentMethod, Field(description="How the customer pays")],
    amount: Annotated[float, Field(description="Amount paid; must equal the invoice amount", gt=0)],
) -> Invoice:
    """Record the customer's full payment of an open invoice. Paid, refunded, draft and void invoices cannot be paid."""
    inv = _invoice(w, invoice_id)
    if inv.status in ("paid", "partially_refunded", "refunded"):
        raise StateConflict(f"invoice {invoice_id} is already paid (status {inv.status}); it cannot be paid again")
    if inv.status == "void":
        raise StateConflict(f"invoice {invoice_id} is void and cannot be paid; create_invoice issues a new one")
    if inv.status == "draft":
        raise StateConflict(f"invoice {invoice_id} is a draft that was never issued; only open invoices can be paid")
    if round(amount, 2) != inv.amount:
        raise InvalidArgument(
            f"amount {amount} does not match invoice {invoice_id}'s total of {inv.amount} {inv.currency}"
        )
    inv.status, inv.amount_paid, inv.payment_method, inv.paid_at = "paid", inv.amount, payment_method, NOW
    return inv


@TOOLS.tool(destructive=True)
def void_invoice(w: PaymentsWorld, invoice_id: InvoiceId, api_token: ApiToken) -> Invoice:
    """Void an open or draft invoice so it can no longer be paid. Paid invoices must be refunded instead."""
    inv = _invoice(w, invoice_id)
    _auth(w.merchants[inv.merchant_id], api_token)
    if inv.status == "void":
        raise StateConflict(f"invoice {invoice_id} is already void")
    if inv.status not in ("open", "draft"):
        raise StateConflict(
            f"invoice {invoice_id} is {inv.status}; only open or draft invoices can be voided (use create_refund for paid ones)"
        )
    inv.status = "void"
    return inv


@TOOLS.tool()
def create_refund(
    w: PaymentsWorld,
    invoice_id: InvoiceId,
    amount: Annotated[float, Field(description="Amount to refund; at most what was paid minus earlier refunds", gt=0)],
    reason: Annotated[RefundReason, Field(description="Why the money is returned")],
    api_token: ApiToken,
) -> RefundResult:
    """Refund all or part of a paid invoice back to the customer's payment method."""
    inv = _invoice(w, invoice_id)
    _auth(w.merchants[inv.merchant_id], api_token)
    if inv.status not in ("paid", "partially_refunded"):
        raise StateConflict(
            f"invoice {invoice_id} is {inv.status}; only paid or partially refunded invoices can be refunded"
        )
    refundable = round(inv.amount_paid - inv.amount_refunded, 2)
    amount = round(amount, 2)
    if amount > refundable:
        raise InvalidArgument(
            f"refund amount {amount} exceeds the refundable amount of invoice {invoice_id}: "
            f"{inv.amount_paid} paid - {inv.amount_refunded} already refunded = {refundable} {inv.currency}"
        )
    rid = w.new_id("RFD")
    ref = Refund(refund_id=rid, invoice_id=invoice_id, amount=amount, reason=reason, created_at=NOW)
    inv.refunds.append(ref)
    inv.amount_refunded = round(inv.amount_refunded + amount, 2)
    inv.status = "refunded" if inv.amount_refunded >= inv.amount_paid else "partially_refunded"
    return RefundResult(
        refund_id=rid,
        invoice_id=invoice_id,
        amount=amount,
        reason=reason,
        invoice_status=inv.status,
        amount_refunded=inv.amount_refunded,
        refundable_amount=round(inv.amount_paid - inv.amount_refunded, 2),
        created_at=NOW,
    )


@TOOLS.tool(read_only=True)
def list_webhooks(w: PaymentsWorld, merchant_id: MerchantId) -> WebhookList:
    """List a merchant's webhook endpoints and the events each one receives."""
    _merchant(w, merchant_id)
    out = [h for h in w.webhooks.values() if h.merchant_id == merchant_id]
    return WebhookList(webhooks=out, total=len(out))


@TOOLS.tool()
def register_webhook(
    w: PaymentsWorld,
    merchant_id: MerchantId,
    url: Annotated[
        str,
        Field(description="Public https:// endpoint that receives event notifications", min_length=1, max_length=500),
    ],
    events: Annotated[list[WebhookEvent], Field(description="Event types to deliver to this endpoint", min_length=1)],
    api_token: ApiToken,
) -> Webhook:
    """Register a webhook endpoint for a merchant. The URL must be a public https address."""
    m = _merchant(w, merchant_id)
    _auth(m, api_token)
    _valid_url(url)
    if any(h.merchant_id == merchant_id and h.url == url and h.status == "enabled" for h in w.webhooks.values()):
        raise StateConflict(f"merchant {merchant_id} already has an enabled webhook for {url}")
    wid = w.new_id("WHK")
    hook = Webhook(webhook_id=wid, merchant_id=merchant_id, url=url, events=sorted(set(events)), created_at=NOW)  # type: ignore[arg-type]
    w.webhooks[wid] = hook
    return hook


def build(seed: int = 0) -> EnvServer[PaymentsWorld]:
    """A fresh payments server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "payments",
        seeder=seed_world,
        category="finance",
        description="Payment processing for merchants: customers, invoices, card/bank/wallet payments, refunds and webhook endpoints.",
        tools=TOOLS,
        default_seed=seed,
    )
