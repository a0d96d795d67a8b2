"""food_delivery: restaurants, menus, carts, promo codes, orders with tracking, cancellation and ratings."""

from __future__ import annotations

from servers.food_delivery import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.food_delivery.seed import seed_world
from servers.food_delivery.world import TOOLS, FoodWorld
from servers.kit import EnvServer

__all__ = ["TOOLS", "FoodWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[FoodWorld]:
    """A fresh food_delivery server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "food_delivery",
        seeder=seed_world,
        category="lifestyle",
        description="Food delivery: restaurants with hours and delivery zones, menus with options, carts, promo codes, "
        "orders with live status tracking, cancellation and ratings.",
        tools=TOOLS,
        default_seed=seed,
    )
