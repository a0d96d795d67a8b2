"""payments: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random

from servers.names import CITIES, FIRST_NAMES, LAST_NAMES
from servers.payments.world import (
    COMPANY_SUFFIX,
    ITEMS,
    MERCHANTS,
    Customer,
    Invoice,
    Merchant,
    PaymentsWorld,
    Refund,
    Webhook,
)


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
