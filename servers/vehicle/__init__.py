"""vehicle: a small connected-car fleet: ignition, gears, locks, windows, climate, charging, navigation, trips."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.vehicle import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.vehicle.seed import seed_world
from servers.vehicle.world import TOOLS, VehicleWorld

__all__ = ["TOOLS", "VehicleWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[VehicleWorld]:
    """A fresh vehicle server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "vehicle",
        seeder=seed_world,
        category="IoT",
        description="Connected-car fleet: ignition, gears, door locks, trunk, windows, climate, seat heating, lights, "
        "charging, navigation with routes and ETAs, tire pressure and the trip log.",
        tools=TOOLS,
        default_seed=seed,
    )
