"""Session-scoped fixtures over the real banking server, in-process (no mocks).

Expensive things (probe, live-confirmed graph, simulated conversations) are computed once per
test session; tests that mutate records take deep copies.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pipeline.core.config import ChainConfig, GraphConfig, ProbeConfig, QueryConfig, SimulateConfig
from pipeline.core.records import Chain, Conversation, DependencyGraph, Snapshot, UserQuery
from pipeline.discovery.chains import extract_chains
from pipeline.discovery.graph import cached_discover
from pipeline.discovery.probe import probe
from pipeline.env import Environment
from pipeline.synthesis.queries import TemplateBackend
from pipeline.synthesis.simulate import INFO_LEVELS, plan_query, run_conversation

SEED = 7  # the BuildConfig default seed, so the build test can reuse the cached banking graph


@pytest.fixture(scope="session")
def banking_env():
    env = Environment("banking")
    yield env
    env.close()


@pytest.fixture(scope="session")
def banking_tools(banking_env):
    return banking_env.tools()


@pytest.fixture(scope="session")
def tools_by_name(banking_tools):
    return {t.name: t for t in banking_tools}


@pytest.fixture(scope="session")
def snapshot(banking_env, banking_tools) -> Snapshot:
    with banking_env.session(SEED) as s:
        return probe(s, banking_tools, ProbeConfig())


@pytest.fixture(scope="session")
def seeded_state(banking_env):
    """The full seeded state of banking (admin dump), for checking against what the pipeline saw."""
    with banking_env.session(SEED) as s:
        return s.state()


@pytest.fixture(scope="session")
def graph_cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("graph-cache")


@pytest.fixture(scope="session")
def graph(banking_env, snapshot, graph_cache_dir) -> DependencyGraph:
    g, _ = cached_discover(banking_env, snapshot, GraphConfig(), graph_cache_dir, seed=SEED)
    return g


@pytest.fixture(scope="session")
def chains(graph, snapshot) -> list[Chain]:
    return extract_chains(graph, snapshot, 40, ChainConfig(), seed=SEED)


@pytest.fixture(scope="session")
def simulated(banking_env, snapshot, chains) -> list[tuple[Chain, UserQuery, Conversation]]:
    """Template queries (all three information levels) played live; no recovery detours."""
    backend = TemplateBackend(QueryConfig())
    out = []
    for i, chain in enumerate(chains):
        rng = random.Random(f"t:{i}")
        q, _ = plan_query(
            banking_env, snapshot, chain, backend, SimulateConfig(), QueryConfig(), rng, info_level=INFO_LEVELS[i % 3]
        )
        if q is None:
            continue
        conv = run_conversation(banking_env, snapshot, chain, q, random.Random(f"c:{i}"), recovery_rate=0.0)
        out.append((chain, q, conv))
    assert len(out) >= 15, "the banking fixture should yield enough live conversations"
    return out


@pytest.fixture(scope="session")
def conversations(simulated) -> list[Conversation]:
    return [c for _, _, c in simulated]
