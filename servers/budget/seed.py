"""budget: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import datetime as dt
import random

from servers.budget.world import (
    CATEGORIES,
    DAY0,
    HISTORY,
    MONTH0,
    NEAR_FULL,
    UNUSED_CATEGORIES,
    Budget,
    BudgetWorld,
    Category,
    Expense,
    Income,
)


def _days_in(month: str) -> int:
    y, m = int(month[:4]), int(month[5:])
    nxt = dt.date(y + (m == 12), m % 12 + 1, 1)
    return (nxt - dt.date(y, m, 1)).days


def seed_world(rng: random.Random, seed: int) -> BudgetWorld:
    w = BudgetWorld(seed=seed)
    by_name: dict[str, str] = {}
    for name, group, base, _, _, _ in CATEGORIES:
        cid = w.new_id("CAT")
        limit = base if name in ("Rent", "Savings Transfer") else round(base * rng.uniform(0.9, 1.15) / 10) * 10.0
        w.categories[cid] = Category(
            category_id=cid, name=name, group=group, monthly_limit=limit, created_on="2025-09-28"
        )  # type: ignore[arg-type]
        by_name[name] = cid
    for name, group, limit in UNUSED_CATEGORIES:
        cid = w.new_id("CAT")
        w.categories[cid] = Category(
            category_id=cid, name=name, group=group, monthly_limit=limit, created_on="2026-02-15"
        )  # type: ignore[arg-type]

    salary = float(rng.choice([4200, 4600, 5100, 5800]))
    employer = rng.choice(["Northwind Logistics", "Bluepeak Analytics", "Harbor Health", "Summit Capital"])
    for month in HISTORY:
        last_day = int(DAY0[8:]) if month == MONTH0 else _days_in(month)
        entries: list[tuple[str, str, float, str]] = []
        for name, _, _, merchants, (lo, hi), count in CATEGORIES:
            cid = by_name[name]
            limit = w.categories[cid].monthly_limit
            n = max(1, count + rng.randint(-1, 1)) if count > 1 else count
            if month == MONTH0 and count > 1:
                n = max(1, round(n * last_day / 31))
            spent = 0.0
            for _ in range(n):
                amt = round(rng.uniform(lo, hi), 2)
                if spent + amt > limit:
                    break
                spent = round(spent + amt, 2)
                day = 1 if name in ("Rent", "Savings Transfer") else rng.randint(1, last_day)
                entries.append((cid, f"{month}-{day:02d}", amt, rng.choice(merchants)))
            if month == MONTH0 and name in NEAR_FULL:
                # top the category up to within a few dollars of its limit: almost any new expense is rejected
                gap = round(limit - spent - rng.uniform(2, 9), 2)
                if gap > 0:
                    entries.append((cid, f"{month}-{rng.randint(1, last_day):02d}", gap, rng.choice(merchants)))
        entries.sort(key=lambda e: e[1])
        for cid, date, amt, merchant in entries:
            eid = w.new_id("EXP", 5)
            w.expenses[eid] = Expense(
                expense_id=eid,
                category_id=cid,
                amount=amt,
                date=date,
                month=month,
                merchant=merchant,
                payment_method="bank_transfer" if amt >= 300 else rng.choice(["card", "card", "card", "cash"]),  # type: ignore[arg-type]
                note=rng.choice([None, None, None, "split with roommate", "birthday", "monthly", "reimbursable"]),
            )
        pay_days = [15] if month == MONTH0 else [15, _days_in(month)]
        for day in pay_days:
            iid = w.new_id("INC")
            w.incomes[iid] = Income(
                income_id=iid,
                amount=round(salary / 2, 2),
                date=f"{month}-{day:02d}",
                month=month,
                source=f"Salary - {employer}",
                kind="salary",
            )
        if rng.random() < 0.5:
            iid = w.new_id("INC")
            w.incomes[iid] = Income(
                income_id=iid,
                amount=round(rng.uniform(150, 900), 2),
                date=f"{month}-{rng.randint(1, last_day):02d}",
                month=month,
                source=rng.choice(["Freelance design", "Tutoring", "Etsy shop"]),
                kind="freelance",
            )
        iid = w.new_id("INC")
        w.incomes[iid] = Income(
            income_id=iid,
            amount=round(rng.uniform(3, 12), 2),
            date=f"{month}-{min(28, last_day):02d}",
            month=month,
            source="High-Yield Savings interest",
            kind="interest",
        )
        total = sum(c.monthly_limit for c in w.categories.values() if c.name not in ("Education", "Pets"))
        w.budgets[month] = Budget(
            month=month,
            total_limit=round(total * rng.uniform(0.85, 1.0) / 50) * 50.0,
            savings_goal=float(rng.choice([500, 750, 1000])),
        )
    return w
