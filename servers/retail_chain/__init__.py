"""retail_chain: a chain of stores in several cities: per-store stock by SKU, transfers, store hours, pickup reservations."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.retail_chain import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.retail_chain.seed import seed_world
from servers.retail_chain.world import TOOLS, RetailWorld

__all__ = ["TOOLS", "RetailWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[RetailWorld]:
    """A fresh retail_chain server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "retail_chain",
        seeder=seed_world,
        category="commerce",
        description="Store-chain inventory: stores in several cities with opening hours, stock per store and SKU, "
        "transfers between stores and reservations for in-store pickup.",
        tools=TOOLS,
        default_seed=seed,
    )
