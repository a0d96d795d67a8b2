"""A server's state (:class:`World`) and the worlds of its sessions (:class:`SessionStore`)."""

import hashlib
import json
import random
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from servers.kit.fast_server import world_copier


class World(BaseModel):
    """Base class of a server's state. Subclasses add their entity tables."""

    seed: int = 0
    counters: dict[str, int] = Field(default_factory=dict)

    def new_id(self, prefix: str, width: int = 4) -> str:
        n = self.counters.get(prefix, 0) + 1
        self.counters[prefix] = n
        return f"{prefix}-{n:0{width}d}"

    def state_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def state_hash(self) -> str:
        blob = json.dumps(self.state_dict(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


W = TypeVar("W", bound=World)
Seeder = Callable[[random.Random, int], W]


def seeded_world(name: str, seeder: "Seeder[W]", seed: int = 0) -> W:
    """The initial world of server ``name`` for ``seed``: ``seeder`` fed a ``random.Random`` keyed by both.

    Every session of the server starts from (a copy of) this world; a tool function can be called on it
    directly (``transfer(seeded_world("banking", seed_world, 0), ...)``)."""
    world = seeder(random.Random(f"{name}:{seed}"), seed)
    world.seed = seed
    return world


class SessionStore(Generic[W]):
    """Worlds by session id, created lazily from the seed; each seed's world is generated once and copied."""

    def __init__(self, name: str, seeder: "Seeder[W]", max_sessions: int = 4096):
        self.name = name
        self.seeder = seeder
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, W] = OrderedDict()
        self._copies: dict[int, Callable[[], W]] = {}  # fresh copies of each seed's world (fastpath.world_copier)
        # sessions whose world is a fresh copy no writing tool has been called on since: a reset keeps it
        self._untouched: set[str] = set()

    def seeded(self, seed: int) -> W:
        """A fresh copy of the initial world for ``seed`` (generated once per seed)."""
        copier = self._copies.get(seed)
        if copier is None:
            copier = self._copies[seed] = world_copier(seeded_world(self.name, self.seeder, seed))
        return copier()

    def _fresh(self, session: str, seed: int) -> W:
        """``session`` given a fresh copy of ``seed``'s world, which no writing tool has run on yet."""
        world = self._sessions[session] = self.seeded(seed)
        self._untouched.add(session)
        return world

    def get(self, session: str, seed: int) -> W:
        world = self._sessions.get(session)
        if world is None or world.seed != seed:
            world = self._fresh(session, seed)
            while len(self._sessions) > self.max_sessions:
                self._untouched.discard(self._sessions.popitem(last=False)[0])
        else:
            self._sessions.move_to_end(session)
        return world

    def reset(self, session: str, seed: int) -> W:
        """The session's world back at its seed: kept as it is where no writing tool has run on it since it was
        copied (read-only tools leave a world as they found it: tests/servers/test_conformance.py), else a copy."""
        world = self._sessions.get(session)
        if world is not None and world.seed == seed and session in self._untouched:
            self._sessions.move_to_end(session)
            return world
        return self._fresh(session, seed)

    def touched(self, session: str) -> None:
        """A writing tool is about to run on ``session``'s world: its next reset makes a fresh copy."""
        self._untouched.discard(session)

    def close(self, session: str) -> bool:
        self._untouched.discard(session)
        return self._sessions.pop(session, None) is not None

    def __len__(self) -> int:
        return len(self._sessions)
