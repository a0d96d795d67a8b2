"""budget: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import InvalidArgument, ToolSet, World, not_found

Group = Literal["essentials", "lifestyle", "financial"]
PaymentMethod = Literal["card", "cash", "bank_transfer"]
IncomeKind = Literal["salary", "freelance", "interest", "refund", "gift", "other"]
DAY0 = "2026-03-20"
MONTH0 = DAY0[:7]
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
MONTH_PATTERN = r"^\d{4}-\d{2}$"
HISTORY = ["2025-10", "2025-11", "2025-12", "2026-01", "2026-02", "2026-03"]

# name, group, base monthly limit, merchants, (min, max) single expense, typical count per month
CATEGORIES: list[tuple[str, str, float, list[str], tuple[float, float], int]] = [
    ("Rent", "essentials", 1850.0, ["Maple Court Apartments"], (1850, 1850), 1),
    (
        "Groceries",
        "essentials",
        650.0,
        ["FreshMart", "Green Grocer", "Corner Deli", "Costwise", "Farmers Market"],
        (18, 95),
        9,
    ),
    ("Utilities", "essentials", 260.0, ["City Power", "AquaWorks", "FiberNet", "GasCo"], (35, 90), 3),
    ("Transport", "essentials", 220.0, ["Metro Transit", "Shell", "RideNow", "City Parking"], (6, 60), 6),
    ("Health", "essentials", 180.0, ["CityCare Pharmacy", "Dr. Alvarez", "Smile Dental"], (12, 110), 2),
    (
        "Dining Out",
        "lifestyle",
        320.0,
        ["Luigi's Trattoria", "Sushi Go", "Bean There Cafe", "Taco Loco", "The Burger Joint"],
        (9, 70),
        7,
    ),
    ("Entertainment", "lifestyle", 160.0, ["CineMax", "Steam", "City Bowling", "Jazz Club"], (8, 55), 3),
    ("Shopping", "lifestyle", 260.0, ["Amazon", "UrbanThreads", "HomeGoods", "TechHub"], (15, 120), 3),
    ("Subscriptions", "lifestyle", 70.0, ["StreamFlix", "Spotify", "CloudDrive", "NewsDaily"], (5, 18), 4),
    ("Gifts", "lifestyle", 120.0, ["Flower Shop", "BookNook", "Amazon"], (15, 60), 1),
    ("Savings Transfer", "financial", 600.0, ["High-Yield Savings"], (300, 300), 1),
    ("Insurance", "financial", 140.0, ["SafeHome Insurance", "AutoShield"], (45, 95), 1),
]
UNUSED_CATEGORIES = [("Education", "lifestyle", 150.0), ("Pets", "essentials", 90.0)]
NEAR_FULL = ("Dining Out", "Entertainment", "Subscriptions")


class Category(BaseModel):
    category_id: str
    name: str
    group: Group
    monthly_limit: float
    created_on: str


class Expense(BaseModel):
    expense_id: str
    category_id: str
    amount: float
    date: str
    month: str
    merchant: str
    payment_method: PaymentMethod
    note: str | None = None


class Income(BaseModel):
    income_id: str
    amount: float
    date: str
    month: str
    source: str
    kind: IncomeKind


class Budget(BaseModel):
    month: str
    total_limit: float = Field(description="Planned total spending for the month")
    savings_goal: float = Field(description="Amount the household wants left over (income minus spending)")


class BudgetWorld(World):
    categories: dict[str, Category] = {}
    expenses: dict[str, Expense] = {}
    incomes: dict[str, Income] = {}
    budgets: dict[str, Budget] = {}


def _month(value: str, arg: str = "month") -> str:
    try:
        y, m = value.split("-")
        ok = len(y) == 4 and len(m) == 2 and y.isdigit() and m.isdigit() and 1 <= int(m) <= 12 and int(y) >= 1900
    except ValueError:
        ok = False
    if not ok:
        raise InvalidArgument(
            f"{arg} {value!r} is not a valid month: expected YYYY-MM with the month 01-12, e.g. {MONTH0!r}"
        )
    return value


def _date(value: str, arg: str = "date") -> str:
    try:
        dt.date.fromisoformat(value)
        if len(value) != 10:
            raise ValueError
    except ValueError:
        raise InvalidArgument(f"{arg} {value!r} is not a valid date: expected YYYY-MM-DD, e.g. {DAY0!r}") from None
    if value > DAY0:
        raise InvalidArgument(f"{arg} {value} is in the future; today is {DAY0}")
    return value


def _category(w: BudgetWorld, category_id: str) -> Category:
    c = w.categories.get(category_id)
    if c is None:
        names = ", ".join(f"{x.category_id} ({x.name})" for x in w.categories.values())
        raise not_found("category", category_id, f"known categories: {names}")
    return c


def _spent(w: BudgetWorld, category_id: str, month: str) -> float:
    return round(sum(e.amount for e in w.expenses.values() if e.category_id == category_id and e.month == month), 2)


CategoryId = Annotated[str, Field(description="Category id, e.g. 'CAT-0002' (from list_categories)")]
Month = Annotated[str, Field(description="Month as YYYY-MM, e.g. '2026-03'", pattern=MONTH_PATTERN)]


class CategoryStatus(BaseModel):
    category_id: str
    name: str
    group: Group
    monthly_limit: float
    month: str
    spent: float
    remaining: float = Field(description="monthly_limit minus spent in the month; a new expense must not exceed it")
    expense_count: int


class CategoryList(BaseModel):
    categories: list[CategoryStatus]
    total: int
    month: str


class DeletedCategory(BaseModel):
    category_id: str
    name: str
    deleted: bool


class ExpenseList(BaseModel):
    expenses: list[Expense]
    total: int
    total_amount: float


class ExpenseAdded(BaseModel):
    expense: Expense
    expense_id: str
    category_id: str
    month: str
    category_spent: float = Field(description="Spent in the category this month, including this expense")
    category_remaining: float


class DeletedExpense(BaseModel):
    expense_id: str
    category_id: str
    amount: float
    deleted: bool


class IncomeList(BaseModel):
    incomes: list[Income]
    total: int
    total_amount: float


class CategoryLine(BaseModel):
    category_id: str
    name: str
    monthly_limit: float
    spent: float
    remaining: float
    percent_used: float


class MonthlyReport(BaseModel):
    month: str
    income: float
    spending: float
    net: float = Field(description="income minus spending")
    budget: Budget | None = Field(description="The month's budget from set_budget, or null if none was set")
    budget_remaining: float | None = None
    savings_goal_met: bool | None = None
    categories: list[CategoryLine]


class SpendingRow(BaseModel):
    month: str | None = None
    category_id: str | None = None
    name: str | None = Field(None, description="Category name when grouped by category")
    total: float
    count: int


class SpendingReport(BaseModel):
    start_month: str
    end_month: str
    group_by: Literal["category", "month"]
    rows: list[SpendingRow]
    grand_total: float


TOOLS: ToolSet[BudgetWorld] = ToolSet()
