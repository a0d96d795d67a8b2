"""maps: geocoding, reverse geocoding, routing by mode, points of interest, opening hours, saved places."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.maps import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.maps.seed import seed_world
from servers.maps.world import NOW, TOOLS, MapsWorld

__all__ = ["TOOLS", "MapsWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[MapsWorld]:
    """A fresh maps server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "maps",
        seeder=seed_world,
        category="travel",
        description=f"Maps: geocoding, reverse geocoding, routes by driving/walking/cycling/transit, points of interest near a place, opening hours, reviews and saved places. Now is {NOW} (Monday).",
        tools=TOOLS,
        default_seed=seed,
    )
