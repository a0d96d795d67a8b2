"""filesystem: a per-session virtual file tree with owners, rwx permissions, symlinks, tags, a trash and a cwd."""

from __future__ import annotations

from servers.kit import EnvServer

# isort: off
# the tool modules register their tools with TOOLS as they are imported: this order is the order of the server's tools
from servers.filesystem import tools_inspect, tools_change  # noqa: F401

# isort: on
from servers.filesystem.seed import seed_world
from servers.filesystem.world import TOOLS, FsWorld

__all__ = ["TOOLS", "FsWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[FsWorld]:
    """A fresh filesystem server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "filesystem",
        seeder=seed_world,
        category="productivity",
        description="A Linux-like virtual file system for one user: navigate, read, search, write, move, copy, link, tag and trash "
        "files, with owners, rwx permissions, a disk quota and a current working directory.",
        tools=TOOLS,
        default_seed=seed,
    )
