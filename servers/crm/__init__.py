"""crm: sales owners, companies, contacts, leads, deals through a pipeline, and logged activities."""

from __future__ import annotations

from servers.crm import tools  # noqa: F401  (their tools register with TOOLS, in this order)
from servers.crm.seed import seed_world
from servers.crm.world import TOOLS, CrmWorld
from servers.kit import EnvServer

__all__ = ["TOOLS", "CrmWorld", "build", "seed_world"]


def build(seed: int = 0) -> EnvServer[CrmWorld]:
    """A fresh crm server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "crm",
        seeder=seed_world,
        category="knowledge / CRM",
        description="Sales CRM: owners, companies, contacts, leads and their conversion, deals through a pipeline "
        "(prospecting, qualification, proposal, negotiation, closed_won/closed_lost), and activities.",
        tools=TOOLS,
        default_seed=seed,
    )
