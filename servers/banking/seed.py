"""banking: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random

from servers.banking.world import Account, BankWorld, Customer, Payee, _record
from servers.names import FIRST_NAMES, LAST_NAMES


def seed_world(rng: random.Random, seed: int) -> BankWorld:
    w = BankWorld(seed=seed)
    cities = ["Lisbon", "Denver", "Austin", "Leeds", "Lyon", "Porto", "Boston", "Dublin"]
    for _ in range(24):
        cid = w.new_id("CUS")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        w.customers[cid] = Customer(
            customer_id=cid,
            name=f"{first} {last}",
            email=f"{first.lower()}.{last.lower()}@example.com",
            city=rng.choice(cities),
            pin=f"{rng.randint(0, 9999):04d}",
        )
        for kind in rng.sample(["checking", "savings", "credit"], k=rng.randint(1, 3)):
            aid = w.new_id("ACC")
            bal = 0.0 if rng.random() < 0.12 else round(rng.uniform(20, 9000), 2)
            w.accounts[aid] = Account(
                account_id=aid,
                customer_id=cid,
                account_type=kind,  # type: ignore[arg-type]
                currency=rng.choice(["USD", "USD", "USD", "EUR", "GBP"]),  # type: ignore[arg-type]
                balance=bal,
                status="frozen" if rng.random() < 0.06 else "active",
                opened_on=f"20{rng.randint(15, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            )
            if bal:
                _record(w, aid, "deposit", bal, memo="opening deposit", date="2026-02-01")
    for cid in list(w.customers)[:12]:
        for _ in range(rng.randint(1, 3)):
            pid = w.new_id("PAY")
            w.payees[pid] = Payee(
                payee_id=pid,
                customer_id=cid,
                name=rng.choice(["City Power", "AquaWorks", "Metro Rent", "FiberNet", "Green Grocer", "Dr. Alvarez"]),
                account_number=f"{rng.randint(10**9, 10**10 - 1)}",
            )
    return w
