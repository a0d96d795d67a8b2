"""calendar: calendars, events, invitees, rooms and recurrence rules around a fixed "now"."""

from __future__ import annotations

from servers.calendar import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.calendar.seed import seed_world
from servers.calendar.world import NOW, TOOLS, CalendarWorld
from servers.kit import EnvServer

__all__ = ["TOOLS", "CalendarWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[CalendarWorld]:
    """A fresh calendar server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "calendar",
        seeder=seed_world,
        category="productivity",
        description="Work and personal calendars: events with invitees, meeting rooms, recurrence rules and free-slot search. "
        f"The current time is fixed at {NOW}.",
        tools=TOOLS,
        default_seed=seed,
    )
