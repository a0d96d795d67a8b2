"""payments tools, list_merchants to register_webhook (in tools/list order)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.kit import InvalidArgument, PermissionDenied, StateConflict, not_found
from servers.payments.world import (
    NOW,
    TODAY,
    TOOLS,
    ApiToken,
    CustomerList,
    Invoice,
    InvoiceId,
    InvoiceList,
    InvoiceStatus,
    InvoiceSummary,
    MerchantId,
    MerchantList,
    PaymentMethod,
    PaymentsWorld,
    PublicMerchant,
    Refund,
    RefundReason,
    RefundResult,
    Webhook,
    WebhookEvent,
    WebhookList,
    _auth,
    _invoice,
    _merchant,
    _valid_url,
)


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
