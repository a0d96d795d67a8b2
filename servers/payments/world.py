"""payments: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, PermissionDenied, ToolSet, World, not_found, sensitive

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
