"""marketplace: auction-style listings between users: sellers list, update and close; buyers bid; sellers accept bids."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.marketplace import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.marketplace.seed import seed_world
from servers.marketplace.world import TOOLS, MarketWorld

__all__ = ["TOOLS", "MarketWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[MarketWorld]:
    """A fresh marketplace server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "marketplace",
        seeder=seed_world,
        category="commerce",
        description="Peer-to-peer auction marketplace: users list items, bid on others' listings, and sellers accept bids.",
        tools=TOOLS,
        default_seed=seed,
    )
