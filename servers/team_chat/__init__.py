"""team_chat: a workspace's members, public/private/archived channels, append-only messages and threads."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.team_chat import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.team_chat.seed import seed_world
from servers.team_chat.world import TOOLS, ChatWorld

__all__ = ["TOOLS", "ChatWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[ChatWorld]:
    """A fresh team_chat server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "team_chat",
        seeder=seed_world,
        category="social",
        description="Team chat workspace: members, public and private channels (some archived), append-only messages and threaded replies.",
        tools=TOOLS,
        default_seed=seed,
    )
