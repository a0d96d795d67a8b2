"""issue_tracker: projects, members, issues through a workflow, sprints, comments and issue links."""

from __future__ import annotations

from servers.issue_tracker import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.issue_tracker.seed import seed_world
from servers.issue_tracker.world import TOOLS, TrackerWorld
from servers.kit import EnvServer

__all__ = ["TOOLS", "TrackerWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[TrackerWorld]:
    """A fresh issue_tracker server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "issue_tracker",
        seeder=seed_world,
        category="knowledge / CRM",
        description="Issue tracker: projects and members, bugs/tasks/stories with priorities and labels, a workflow "
        "(open, in_progress, in_review, done), sprints, comments, and blocks/relates links between issues.",
        tools=TOOLS,
        default_seed=seed,
    )
