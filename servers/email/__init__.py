"""email: one mailbox with inbox, sent, drafts, archive, spam and trash folders, threads, labels and contacts.

Messages are append-only: once sent or received they are never edited (only their folder, labels and
read/starred flags change). Drafts are editable until sent.
"""

from __future__ import annotations

from servers.email import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.email.seed import seed_world
from servers.email.world import NOW, TOOLS, MailWorld
from servers.kit import EnvServer

__all__ = ["TOOLS", "MailWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[MailWorld]:
    """A fresh email server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "email",
        seeder=seed_world,
        category="productivity",
        description="An email mailbox: read, search, send, reply to and forward messages; drafts, threads, folders and labels. "
        f"Sent and received messages are never edited; drafts are. The current time is {NOW:%Y-%m-%dT%H:%M}.",
        tools=TOOLS,
        default_seed=seed,
    )
