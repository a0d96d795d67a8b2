"""budget tools, list_categories to get_spending_report (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.budget.world import (
    DATE_PATTERN,
    DAY0,
    MONTH0,
    MONTH_PATTERN,
    TOOLS,
    Budget,
    BudgetWorld,
    Category,
    CategoryId,
    CategoryLine,
    CategoryList,
    CategoryStatus,
    DeletedCategory,
    DeletedExpense,
    Expense,
    ExpenseAdded,
    ExpenseList,
    Group,
    Income,
    IncomeKind,
    IncomeList,
    Month,
    MonthlyReport,
    PaymentMethod,
    SpendingReport,
    SpendingRow,
    _category,
    _date,
    _month,
    _spent,
)
from servers.kit import InvalidArgument, StateConflict, not_found


@TOOLS.tool(read_only=True)
def list_categories(
    w: BudgetWorld,
    month: Annotated[
        str | None,
        Field(
            description=f"Month YYYY-MM for the spent/remaining figures; default the current month {MONTH0}",
            pattern=MONTH_PATTERN,
        ),
    ] = None,
    group: Annotated[Group | None, Field(description="Only categories in this group")] = None,
) -> CategoryList:
    """List spending categories with their monthly limit and how much of it is spent and remaining in a month."""
    m = _month(month) if month is not None else MONTH0
    out = []
    for c in w.categories.values():
        if group is not None and c.group != group:
            continue
        spent = _spent(w, c.category_id, m)
        n = sum(1 for e in w.expenses.values() if e.category_id == c.category_id and e.month == m)
        out.append(
            CategoryStatus(
                category_id=c.category_id,
                name=c.name,
                group=c.group,
                monthly_limit=c.monthly_limit,
                month=m,
                spent=spent,
                remaining=round(c.monthly_limit - spent, 2),
                expense_count=n,
            )
        )
    return CategoryList(categories=out, total=len(out), month=m)


@TOOLS.tool()
def create_category(
    w: BudgetWorld,
    name: Annotated[str, Field(description="Category name, unique, e.g. 'Childcare'", min_length=2, max_length=40)],
    monthly_limit: Annotated[
        float, Field(description="Most that may be spent in the category per month", gt=0, le=1_000_000)
    ],
    group: Annotated[Group, Field(description="Group the category belongs to")] = "lifestyle",
) -> Category:
    """Create a spending category with a monthly limit."""
    clash = next((c for c in w.categories.values() if c.name.lower() == name.strip().lower()), None)
    if clash is not None:
        raise StateConflict(f"a category named {clash.name!r} already exists ({clash.category_id})")
    cid = w.new_id("CAT")
    c = Category(
        category_id=cid, name=name.strip(), group=group, monthly_limit=round(monthly_limit, 2), created_on=DAY0
    )
    w.categories[cid] = c
    return c


@TOOLS.tool(idempotent=True)
def update_category(
    w: BudgetWorld,
    category_id: CategoryId,
    monthly_limit: Annotated[
        float | None,
        Field(description="New monthly limit; not below what is already spent this month", gt=0, le=1_000_000),
    ] = None,
    name: Annotated[str | None, Field(description="New unique name", min_length=2, max_length=40)] = None,
    group: Annotated[Group | None, Field(description="New group")] = None,
) -> Category:
    """Rename a category, move it to another group, or change its monthly limit."""
    c = _category(w, category_id)
    if monthly_limit is None and name is None and group is None:
        raise InvalidArgument("nothing to update: give at least one of monthly_limit, name, group")
    if name is not None:
        clash = next(
            (
                x
                for x in w.categories.values()
                if x.name.lower() == name.strip().lower() and x.category_id != category_id
            ),
            None,
        )
        if clash is not None:
            raise StateConflict(f"a category named {clash.name!r} already exists ({clash.category_id})")
    if monthly_limit is not None:
        spent = _spent(w, category_id, MONTH0)
        if monthly_limit < spent:
            raise StateConflict(
                f"monthly_limit {monthly_limit:.2f} is below the {spent:.2f} already spent in {c.name} "
                f"({category_id}) in {MONTH0}; the limit must be at least {spent:.2f}"
            )
        c.monthly_limit = round(monthly_limit, 2)
    if name is not None:
        c.name = name.strip()
    if group is not None:
        c.group = group
    return c


@TOOLS.tool(destructive=True, idempotent=True)
def delete_category(w: BudgetWorld, category_id: CategoryId) -> DeletedCategory:
    """Delete a category. Only a category without any expenses (in any month) can be deleted."""
    c = _category(w, category_id)
    n = sum(1 for e in w.expenses.values() if e.category_id == category_id)
    if n:
        raise StateConflict(
            f"category {category_id} ({c.name}) still has {n} expense(s); only categories without expenses "
            f"can be deleted (list_expenses with category_id shows them, delete_expense removes them)"
        )
    del w.categories[category_id]
    return DeletedCategory(category_id=category_id, name=c.name, deleted=True)


@TOOLS.tool(read_only=True)
def list_expenses(
    w: BudgetWorld,
    month: Annotated[
        str | None, Field(description="Only expenses in this month YYYY-MM", pattern=MONTH_PATTERN)
    ] = None,
    category_id: Annotated[str | None, Field(description="Only expenses in this category id")] = None,
    merchant_contains: Annotated[str | None, Field(description="Case-insensitive part of the merchant name")] = None,
    min_amount: Annotated[float | None, Field(description="Only expenses of at least this amount", ge=0)] = None,
    limit: Annotated[int, Field(description="Most recent N expenses", ge=1, le=500)] = 50,
) -> ExpenseList:
    """List expenses, most recent first, filtered by month, category, merchant or minimum amount."""
    if month is not None:
        _month(month)
    if category_id is not None:
        _category(w, category_id)
    out = [
        e
        for e in w.expenses.values()
        if (month is None or e.month == month)
        and (category_id is None or e.category_id == category_id)
        and (merchant_contains is None or merchant_contains.lower() in e.merchant.lower())
        and (min_amount is None or e.amount >= min_amount)
    ]
    out.sort(key=lambda e: (e.date, e.expense_id), reverse=True)
    total_amount = round(sum(e.amount for e in out), 2)
    return ExpenseList(expenses=out[:limit], total=len(out), total_amount=total_amount)


@TOOLS.tool()
def add_expense(
    w: BudgetWorld,
    category_id: CategoryId,
    amount: Annotated[float, Field(description="Amount spent; greater than 0", gt=0, le=1_000_000)],
    merchant: Annotated[str, Field(description="Where the money was spent", min_length=1, max_length=80)],
    date: Annotated[
        str, Field(description=f"Date YYYY-MM-DD, not in the future; default today {DAY0}", pattern=DATE_PATTERN)
    ] = DAY0,
    payment_method: Annotated[PaymentMethod, Field(description="How it was paid")] = "card",
    note: Annotated[str | None, Field(description="Optional note")] = None,
) -> ExpenseAdded:
    """Record an expense. It is rejected if it would take its category over the monthly limit for that month."""
    c = _category(w, category_id)
    if amount <= 0:
        raise InvalidArgument(f"amount must be greater than 0, got {amount}")
    _date(date)
    month = date[:7]
    amount = round(amount, 2)
    spent = _spent(w, category_id, month)
    if spent + amount > c.monthly_limit + 1e-9:
        raise StateConflict(
            f"expense of {amount:.2f} would bring {c.name} ({category_id}) to {spent + amount:.2f} in {month}, "
            f"over its monthly limit of {c.monthly_limit:.2f} (remaining {c.monthly_limit - spent:.2f}); "
            f"raise the limit with update_category or use another category"
        )
    eid = w.new_id("EXP", 5)
    e = Expense(
        expense_id=eid,
        category_id=category_id,
        amount=amount,
        date=date,
        month=month,
        merchant=merchant,
        payment_method=payment_method,
        note=note,
    )
    w.expenses[eid] = e
    new_spent = round(spent + amount, 2)
    return ExpenseAdded(
        expense=e,
        expense_id=eid,
        category_id=category_id,
        month=month,
        category_spent=new_spent,
        category_remaining=round(c.monthly_limit - new_spent, 2),
    )


@TOOLS.tool(destructive=True, idempotent=True)
def delete_expense(
    w: BudgetWorld, expense_id: Annotated[str, Field(description="Expense id, e.g. 'EXP-00012' (from list_expenses)")]
) -> DeletedExpense:
    """Delete a recorded expense, freeing its amount in the category's monthly limit."""
    e = w.expenses.get(expense_id)
    if e is None:
        raise not_found("expense", expense_id, "list_expenses shows valid expense ids")
    del w.expenses[expense_id]
    return DeletedExpense(expense_id=expense_id, category_id=e.category_id, amount=e.amount, deleted=True)


@TOOLS.tool()
def add_income(
    w: BudgetWorld,
    amount: Annotated[float, Field(description="Amount received; greater than 0", gt=0, le=10_000_000)],
    source: Annotated[
        str, Field(description="Who paid, e.g. 'Salary - Acme' or 'Tax refund'", min_length=2, max_length=80)
    ],
    kind: Annotated[IncomeKind, Field(description="Kind of income")] = "other",
    date: Annotated[
        str, Field(description=f"Date YYYY-MM-DD, not in the future; default today {DAY0}", pattern=DATE_PATTERN)
    ] = DAY0,
) -> Income:
    """Record income received."""
    if amount <= 0:
        raise InvalidArgument(f"amount must be greater than 0, got {amount}")
    _date(date)
    iid = w.new_id("INC")
    inc = Income(income_id=iid, amount=round(amount, 2), date=date, month=date[:7], source=source, kind=kind)
    w.incomes[iid] = inc
    return inc


@TOOLS.tool(read_only=True)
def list_income(
    w: BudgetWorld,
    month: Annotated[str | None, Field(description="Only income in this month YYYY-MM", pattern=MONTH_PATTERN)] = None,
    kind: Annotated[IncomeKind | None, Field(description="Only income of this kind")] = None,
) -> IncomeList:
    """List income entries, most recent first, optionally for one month or kind."""
    if month is not None:
        _month(month)
    out = [i for i in w.incomes.values() if (month is None or i.month == month) and (kind is None or i.kind == kind)]
    out.sort(key=lambda i: (i.date, i.income_id), reverse=True)
    return IncomeList(incomes=out, total=len(out), total_amount=round(sum(i.amount for i in out), 2))


@TOOLS.tool(idempotent=True)
def set_budget(
    w: BudgetWorld,
    month: Month,
    total_limit: Annotated[float, Field(description="Planned total spending for the month", gt=0, le=10_000_000)],
    savings_goal: Annotated[
        float, Field(description="Amount to keep (income minus spending) in the month", ge=0, le=10_000_000)
    ] = 0.0,
) -> Budget:
    """Create or replace the budget of a month (the current month or later; past months are locked)."""
    _month(month)
    if month < MONTH0:
        raise StateConflict(
            f"month {month} is in the past and its budget is locked; budgets can be set for {MONTH0} or later"
        )
    b = Budget(month=month, total_limit=round(total_limit, 2), savings_goal=round(savings_goal, 2))
    w.budgets[month] = b
    return b


@TOOLS.tool(read_only=True)
def get_monthly_report(w: BudgetWorld, month: Month) -> MonthlyReport:
    """Report one month: income, spending, net, the month's budget and what remains of it, and spending per category against its limit."""
    _month(month)
    income = round(sum(i.amount for i in w.incomes.values() if i.month == month), 2)
    spending = round(sum(e.amount for e in w.expenses.values() if e.month == month), 2)
    lines = []
    for c in w.categories.values():
        spent = _spent(w, c.category_id, month)
        lines.append(
            CategoryLine(
                category_id=c.category_id,
                name=c.name,
                monthly_limit=c.monthly_limit,
                spent=spent,
                remaining=round(c.monthly_limit - spent, 2),
                percent_used=round(100 * spent / c.monthly_limit, 1) if c.monthly_limit else 0.0,
            )
        )
    b = w.budgets.get(month)
    net = round(income - spending, 2)
    return MonthlyReport(
        month=month,
        income=income,
        spending=spending,
        net=net,
        budget=b,
        budget_remaining=round(b.total_limit - spending, 2) if b else None,
        savings_goal_met=(net >= b.savings_goal) if b else None,
        categories=lines,
    )


@TOOLS.tool(read_only=True)
def get_spending_report(
    w: BudgetWorld,
    start_month: Annotated[str, Field(description="First month YYYY-MM of the range", pattern=MONTH_PATTERN)],
    end_month: Annotated[str, Field(description="Last month YYYY-MM of the range (inclusive)", pattern=MONTH_PATTERN)],
    group_by: Annotated[
        Literal["category", "month"], Field(description="Total the spending per category or per month")
    ] = "category",
    category_id: Annotated[str | None, Field(description="Only spending in this category id")] = None,
) -> SpendingReport:
    """Total spending over a range of months, grouped by category or by month."""
    _month(start_month, "start_month")
    _month(end_month, "end_month")
    if end_month < start_month:
        raise InvalidArgument(f"end_month {end_month} is before start_month {start_month}")
    if category_id is not None:
        _category(w, category_id)
    sel = [
        e
        for e in w.expenses.values()
        if start_month <= e.month <= end_month and (category_id is None or e.category_id == category_id)
    ]
    rows: dict[str, SpendingRow] = {}
    for e in sel:
        if group_by == "category":
            c = w.categories.get(e.category_id)
            row = rows.setdefault(
                e.category_id, SpendingRow(category_id=e.category_id, name=c.name if c else None, total=0, count=0)
            )
        else:
            row = rows.setdefault(e.month, SpendingRow(month=e.month, total=0, count=0))
        row.total = round(row.total + e.amount, 2)
        row.count += 1
    ordered = sorted(rows.values(), key=(lambda r: -r.total) if group_by == "category" else (lambda r: r.month or ""))
    return SpendingReport(
        start_month=start_month,
        end_month=end_month,
        group_by=group_by,
        rows=ordered,
        grand_total=round(sum(e.amount for e in sel), 2),
    )
