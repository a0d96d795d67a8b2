"""shopping: an online store account: catalog, cart, coupons, checkout, orders, returns, addresses and wishlist."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.shopping import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.shopping.seed import seed_world
from servers.shopping.world import TOOLS, ShopWorld

__all__ = ["TOOLS", "ShopWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[ShopWorld]:
    """A fresh shopping server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "shopping",
        seeder=seed_world,
        category="commerce",
        description="Online store for one signed-in shopper: catalog search, cart, coupons, checkout, orders, returns, addresses and wishlist.",
        tools=TOOLS,
        default_seed=seed,
    )
