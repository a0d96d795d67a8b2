"""payments: merchants, their customers, invoices, payments, refunds and webhook endpoints (token-protected)."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.payments import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.payments.seed import seed_world
from servers.payments.world import TOOLS, PaymentsWorld

__all__ = ["TOOLS", "PaymentsWorld", "build", "seed_world"]


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
