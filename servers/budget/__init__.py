"""budget: personal budgeting with categories and monthly limits, expenses, income, monthly budgets and reports."""

from __future__ import annotations

from servers.budget import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.budget.seed import seed_world
from servers.budget.world import TOOLS, BudgetWorld
from servers.kit import EnvServer

__all__ = ["TOOLS", "BudgetWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[BudgetWorld]:
    """A fresh budget server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "budget",
        seeder=seed_world,
        category="knowledge / CRM",
        description="Personal budget: spending categories with monthly limits (an expense that would exceed its "
        "category's limit is rejected), expenses, income, monthly budgets and spending reports.",
        tools=TOOLS,
        default_seed=seed,
    )
