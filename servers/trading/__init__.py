"""trading: brokerage portfolios, positions, market/limit orders, quotes, exchanges and order books."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.trading import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.trading.seed import seed_world
from servers.trading.world import TOOLS, TradingWorld

__all__ = ["TOOLS", "TradingWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[TradingWorld]:
    """A fresh trading server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "trading",
        seeder=seed_world,
        category="finance",
        description="Brokerage trading: portfolios, positions, cash, market and limit orders, quotes, exchanges and order books.",
        tools=TOOLS,
        default_seed=seed,
    )
