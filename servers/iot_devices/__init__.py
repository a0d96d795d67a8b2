"""iot_devices: smart homes with rooms, sensors, actuators, scenes, automations and device groups."""

from __future__ import annotations

from servers.iot_devices import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.iot_devices.seed import seed_world
from servers.iot_devices.world import TOOLS, IotWorld
from servers.kit import EnvServer

__all__ = ["TOOLS", "IotWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[IotWorld]:
    """A fresh iot_devices server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "iot_devices",
        seeder=seed_world,
        category="IoT",
        description="Smart homes: rooms, sensors (temperature, humidity, motion, contact, smoke), lights, thermostats, "
        "locks, blinds, plugs and cameras, with scenes, automations and device groups.",
        tools=TOOLS,
        default_seed=seed,
    )
