"""The catalogue of built-in servers: name, category, tool count of PAPER.md section 1, module."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any

from servers.kit import EnvServer, World, seeded_world
from servers.kit.domain import domain_texts


@dataclass(frozen=True)
class ServerEntry:
    name: str
    category: str
    tools: int  # user-visible tools in the paper's table
    module: str

    def load(self) -> EnvServer:
        return build(self.name)

    def domain(self) -> dict[str, Any] | None:
        """The server's domain texts (its package's ``domain.yaml``: the reasons its users give, its nouns as they
        say them), or None."""
        return domain_texts(self.module)


CATALOGUE: tuple[ServerEntry, ...] = tuple(
    ServerEntry(n, c, t, f"servers.{n}")
    for n, c, t in [
        ("banking", "finance", 17),
        ("trading", "finance", 13),
        ("payments", "finance", 10),
        ("calendar", "productivity", 17),
        ("email", "productivity", 17),
        ("filesystem", "productivity", 40),
        ("shopping", "commerce", 23),
        ("marketplace", "commerce", 13),
        ("retail_chain", "commerce", 11),
        ("travel_booking", "travel", 20),
        ("maps", "travel", 16),
        ("social_media", "social", 15),
        ("team_chat", "social", 11),
        ("iot_devices", "IoT", 25),
        ("vehicle", "IoT", 20),
        ("crm", "knowledge / CRM", 16),
        ("issue_tracker", "knowledge / CRM", 20),
        ("budget", "knowledge / CRM", 12),
        ("food_delivery", "lifestyle", 17),
        ("video_meeting", "lifestyle", 10),
    ]
)
BY_NAME = {e.name: e for e in CATALOGUE}


def entry(name: str) -> ServerEntry:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown server {name!r}; built-in servers: {', '.join(available())}") from None


def available() -> list[str]:
    """Names of the built-in servers whose module is present, in catalogue order."""
    out = []
    for e in CATALOGUE:
        if importlib.util.find_spec(e.module) is not None:
            out.append(e.name)
    return out


@cache
def _module(name: str):
    return importlib.import_module(entry(name).module)


def build(name: str, seed: int = 0) -> EnvServer:
    """A fresh server instance (its own session store); a request naming no seed gets the world of ``seed``."""
    return _module(name).build(seed)


def world(name: str, seed: int = 0) -> World:
    """The initial world of built-in server ``name`` for ``seed``: the world every session with that seed
    starts from, to call the server's tool functions on directly."""
    return seeded_world(name, _module(name).seed_world, seed)
