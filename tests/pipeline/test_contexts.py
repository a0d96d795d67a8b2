"""The sampled context is refreshed every k conversations: each refresh probes the next world seed."""

from __future__ import annotations

import math

import pytest

from pipeline.core.config import BuildConfig, ProbeConfig
from pipeline.stages.base import open_env
from pipeline.stages.discovery import stage_chains, stage_graph, stage_snapshot
from pipeline.stages.plan import chains_wanted
from pipeline.stages.synthesis import stage_conversations, stage_queries
from pipeline.synthesis.queries import ID_TOKEN, known_ids
from pipeline.synthesis.replay import validate


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    cfg = BuildConfig(
        examples=20,
        servers=["banking"],
        data_dir=str(tmp_path_factory.mktemp("data")),
        probe=ProbeConfig(refresh_every=20),
    )
    env = open_env(cfg, "banking")
    snap = stage_snapshot(cfg, "banking", env)
    graph, _ = stage_graph(cfg, snap, env)
    chains = stage_chains(cfg, snap, graph).items
    queries = stage_queries(cfg, snap, chains, env).items
    convs = stage_conversations(cfg, snap, chains, queries, env).items
    yield cfg, env, snap, chains, queries, convs
    env.close()


def test_one_context_per_k_conversations_each_from_its_own_world(refreshed):
    cfg, _, snap, _, _, _ = refreshed
    ctxs = snap.contexts()
    assert len(ctxs) == math.ceil(chains_wanted(cfg) / 20) >= 3
    assert len({c.seed for c in ctxs}) == len(ctxs) and len({c.snapshot_id for c in ctxs}) == len(ctxs)
    # another world: not the same sampled state (other entities or other values)
    assert ctxs[1].values != ctxs[0].values


def test_chains_are_spread_over_the_contexts_k_at_a_time(refreshed):
    _, _, snap, chains, _, _ = refreshed
    ctxs = snap.contexts()
    for i, c in enumerate(chains):
        ctx = ctxs[min(len(ctxs) - 1, i // 20)]
        assert (c.seed, c.snapshot_id) == (ctx.seed, ctx.snapshot_id)


def test_requests_and_conversations_use_their_own_context_and_replay_from_its_seed(refreshed):
    cfg, env, snap, chains, queries, convs = refreshed
    by_chain = {c.chain_id: c for c in chains}
    later = [q for q in queries if by_chain[q.chain_id].seed != snap.seed]
    assert later, "some requests were written in a refreshed context"
    for q in later:
        ctx = snap.context(q.snapshot_id)
        assert ctx.seed == by_chain[q.chain_id].seed
        ids = {v for v in q.step_args[0].values() if isinstance(v, str) and ID_TOKEN.fullmatch(v)}
        assert ids <= known_ids(ctx), "the first request names entities of its own context"
    moved = [c for c in convs if c.seed != snap.seed]
    assert moved
    assert sum(validate(env, c, cfg.replay) is None for c in moved) >= len(moved) * 0.6


def test_refresh_every_zero_keeps_one_context(tmp_path):
    cfg = BuildConfig(examples=20, servers=["banking"], data_dir=str(tmp_path), probe=ProbeConfig(refresh_every=0))
    snap = stage_snapshot(cfg, "banking")
    assert snap.contexts() == [snap]
