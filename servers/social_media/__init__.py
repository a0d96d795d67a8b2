"""social_media: users, follows (with private accounts), posts, feeds, likes and comments."""

from __future__ import annotations

from servers.kit import EnvServer
from servers.social_media import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.social_media.seed import seed_world
from servers.social_media.world import TOOLS, SocialWorld

__all__ = ["TOOLS", "SocialWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[SocialWorld]:
    """A fresh social_media server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "social_media",
        seeder=seed_world,
        category="social",
        description="Social network: user profiles, follows (private accounts need approval), posts, home feeds, likes and comments.",
        tools=TOOLS,
        default_seed=seed,
    )
