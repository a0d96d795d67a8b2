"""banking: customers, accounts, transfers, balances, payees; PIN-protected money movement."""

from __future__ import annotations

from servers.banking import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.banking.seed import seed_world
from servers.banking.world import TOOLS, BankWorld
from servers.kit import EnvServer

__all__ = ["TOOLS", "BankWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[BankWorld]:
    """A fresh banking server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "banking",
        seeder=seed_world,
        category="finance",
        description="Retail banking: customers, checking/savings/credit accounts, transfers, payees and bill payments.",
        tools=TOOLS,
        default_seed=seed,
    )
