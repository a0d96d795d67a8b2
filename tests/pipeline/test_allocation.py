"""A small request over many servers still gives every server an example where the count allows it,
without moving the information-level shares."""

from __future__ import annotations

from collections import Counter

from pipeline.core.composition import INFO_LEVELS
from pipeline.core.config import BuildConfig
from pipeline.core.records import Conversation
from pipeline.stages.assembly import select_multi_turn
from pipeline.stages.plan import info_level_plan


def _conv(server: str, i: int, level: str) -> Conversation:
    return Conversation(
        conversation_id=f"{server}-{level}-{i:02d}",
        server=server,
        servers=[server],
        seed=7,
        snapshot_id="s",
        info_level=level,
        messages=[],
        tools=[],
        reference=[],
    )


def _supply(servers: list[str], per_level: int = 3) -> list[Conversation]:
    return [_conv(s, i, lvl) for s in servers for lvl in INFO_LEVELS for i in range(per_level)]


SERVERS = [f"srv{i:02d}" for i in range(20)]


def test_select_multi_turn_reaches_every_server_when_the_count_allows_it():
    cfg = BuildConfig(examples=40, servers=SERVERS)
    chosen, _ = select_multi_turn(cfg, _supply(SERVERS), 33)  # 40 examples: 33 multi-turn over 20 servers
    assert len(chosen) == 33
    assert set(c.server for c in chosen) == set(SERVERS)
    assert Counter(c.info_level for c in chosen) == Counter(info_level_plan(33, cfg, "x")), (
        "the level shares are unchanged"
    )


def test_select_multi_turn_with_fewer_examples_than_servers_gives_distinct_servers():
    cfg = BuildConfig(examples=12, servers=SERVERS)
    chosen, _ = select_multi_turn(cfg, _supply(SERVERS), 10)
    assert len({c.server for c in chosen}) == 10


def test_select_multi_turn_leaves_a_selection_that_covers_every_server_unchanged():
    cfg = BuildConfig(examples=200, servers=SERVERS[:4])
    supply = _supply(SERVERS[:4], per_level=40)
    chosen, _ = select_multi_turn(cfg, supply, 100)
    counts = Counter(c.server for c in chosen)
    assert set(counts) == set(SERVERS[:4]) and max(counts.values()) - min(counts.values()) <= 1
