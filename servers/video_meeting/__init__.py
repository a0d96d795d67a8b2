"""video_meeting: hosts and plans, scheduled/live/ended meetings, participants and cloud recordings."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.video_meeting import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.video_meeting.seed import seed_world
from servers.video_meeting.world import NOW, TOOLS, MeetingWorld

__all__ = ["TOOLS", "MeetingWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[MeetingWorld]:
    """A fresh video_meeting server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "video_meeting",
        seeder=seed_world,
        category="lifestyle",
        description=f"Video meetings: hosts and their plans, scheduling, rescheduling and cancelling meetings, participants and cloud recordings. Now is {NOW}.",
        tools=TOOLS,
        default_seed=seed,
    )
