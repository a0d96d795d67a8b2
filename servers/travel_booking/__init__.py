"""travel_booking: flights, hotels, travellers, bookings, itineraries and loyalty points."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.travel_booking import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.travel_booking.seed import seed_world
from servers.travel_booking.world import TODAY, TOOLS, TravelWorld

__all__ = ["TOOLS", "TravelWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[TravelWorld]:
    """A fresh travel_booking server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "travel_booking",
        seeder=seed_world,
        category="travel",
        description=f"Travel booking: flight and hotel search, travellers, bookings (book/change/cancel), itineraries and loyalty points. Today is {TODAY}.",
        tools=TOOLS,
        default_seed=seed,
    )
