"""Chains: 2-5 steps along confirmed edges, every later step depending on an earlier one."""

from __future__ import annotations

from collections import Counter

from pipeline.core.config import ChainConfig
from pipeline.discovery.chains import coverage, extract_chains
from pipeline.discovery.goals import closes
from pipeline.discovery.graph import to_networkx
from pipeline.language.fields import output_fields

SEED = 7


def test_chain_lengths_stay_within_two_and_five(chains):
    assert len(chains) == 40
    lengths = Counter(len(c.steps) for c in chains)
    assert set(lengths) <= {2, 3, 4, 5}
    assert len(lengths) >= 2  # not all one length


def test_configured_length_bounds_are_honoured(graph, snapshot):
    cs = extract_chains(graph, snapshot, 15, ChainConfig(min_len=3, max_len=3), seed=SEED)
    assert cs and all(len(c.steps) == 3 for c in cs)


def test_every_later_step_depends_on_an_earlier_step_through_a_confirmed_edge(chains, graph):
    G = to_networkx(graph)
    for c in chains:
        assert c.steps[0].depends_on == []
        for k, step in enumerate(c.steps[1:], 1):
            assert step.depends_on, f"{c.chain_id} step {k} ({step.name}) depends on nothing"
            for d in step.depends_on:
                assert 0 <= d < k
                assert G.has_edge(c.steps[d].name, step.name)


def test_a_chain_never_repeats_a_tool(chains):
    for c in chains:
        assert len(set(c.names)) == len(c.names)


def test_step_sourced_arguments_name_an_earlier_steps_output_field(chains, tools_by_name):
    n_step_args = 0
    for c in chains:
        for k, step in enumerate(c.steps):
            tool = tools_by_name[step.name]
            assert set(tool.required) <= set(step.args), "every required input has a source"
            for _name, src in step.args.items():
                if src.kind == "step":
                    n_step_args += 1
                    assert src.step is not None and 0 <= src.step < k
                    assert src.step in step.depends_on
                    assert src.field in output_fields(tools_by_name[c.steps[src.step].name].output_schema)
    assert n_step_args > 0


def test_chains_carry_lineage(chains, graph, snapshot):
    for c in chains:
        assert c.graph_id == graph.graph_id and c.snapshot_id == snapshot.snapshot_id and c.seed == snapshot.seed
    assert len({c.chain_id for c in chains}) == len(chains)


def test_extraction_is_deterministic_for_a_seed(graph, snapshot, chains):
    again = extract_chains(graph, snapshot, 40, ChainConfig(), seed=SEED)
    assert [c.chain_id for c in again] == [c.chain_id for c in chains]


def test_coverage_reports_the_share_of_tools_used(chains, snapshot):
    names = [t.name for t in snapshot.tools]
    used = {s.name for c in chains for s in c.steps}
    assert coverage(chains, names) == len(used & set(names)) / len(names)
    assert coverage(chains, names) >= 0.6  # least-used preference spreads chains over the tools
    assert coverage([], names) == 0.0
    assert coverage(chains[:1], names) < coverage(chains, names)


def test_a_graph_without_confirmed_edges_gives_no_chains(graph, snapshot):
    unconfirmed = graph.model_copy(update={"edges": [e.model_copy(update={"confirmed": False}) for e in graph.edges]})
    assert extract_chains(unconfirmed, snapshot, 5, ChainConfig(), seed=SEED) == []


def test_chains_longer_than_the_default_range_can_be_asked_for(graph, snapshot):
    chains = extract_chains(graph, snapshot, 30, ChainConfig(min_len=2, max_len=7), seed=SEED)
    assert chains and max(len(c.steps) for c in chains) <= 7 and min(len(c.steps) for c in chains) >= 2


def test_weighted_pick_draws_what_random_choices_draws():
    import random
    from collections import Counter

    from pipeline.discovery.chains import _Usage, _weighted

    items = [f"tool_{i}" for i in range(17)]
    usage = _Usage()
    for i, t in enumerate(items):
        for _ in range(i % 5):
            usage.count(t)
    a, b = random.Random(5), random.Random(5)
    ours = [_weighted(a, items, usage.weight) for _ in range(5000)]
    ref = [b.choices(items, weights=[1.0 / (1 + usage.uses[t]) ** 2 for t in items], k=1)[0] for _ in range(5000)]
    assert ours == ref
    assert Counter(ours)["tool_0"] > Counter(ours)["tool_4"]  # the unused tool is picked more than the most used


def test_no_two_extracted_chains_are_near_duplicates(graph, snapshot):
    from itertools import combinations

    from pipeline.core.config import DedupConfig
    from pipeline.core.similarity import jaccard, shingles

    threshold = DedupConfig().threshold
    filtered = extract_chains(graph, snapshot, 60, ChainConfig(), seed=SEED)
    sets = [shingles([(s.name, {}) for s in c.steps]) for c in filtered]
    assert len(filtered) >= 10
    assert all(jaccard(a, b) < threshold for a, b in combinations(sets, 2))  # the pre-filter is exact
    unfiltered = extract_chains(graph, snapshot, 60, ChainConfig(), seed=SEED, dedup_cfg=None)
    assert any(
        jaccard(a, b) >= threshold
        for a, b in combinations([shingles([(s.name, {}) for s in c.steps]) for c in unfiltered], 2)
    )


def test_what_closes_comes_after_what_finds_and_acts_and_nothing_builds_on_it(chains):
    # a goal finds, decides and acts, then closes: never close an account and then deposit into it
    with_close = [c for c in chains if any(closes(s.name) for s in c.steps) and not c.error_case]
    assert with_close, "banking's chains should include closing or freezing an account"
    for c in with_close:
        flags = [closes(s.name) for s in c.steps]
        assert flags == sorted(flags), [s.name for s in c.steps]
        assert not flags[0]
        closing = {k for k, f in enumerate(flags) if f}
        assert not any(d in closing for s in c.steps for d in s.depends_on), [s.name for s in c.steps]


def test_a_deliberate_error_case_closes_before_its_last_write_at_the_configured_share(graph, snapshot):
    none = extract_chains(graph, snapshot, 40, ChainConfig(closed_entity_rate=0), seed=SEED)
    assert not any(c.error_case for c in none)
    every = extract_chains(graph, snapshot, 40, ChainConfig(closed_entity_rate=1), seed=SEED)
    cases = [c for c in every if c.error_case]
    assert cases
    read_only = {t.name: t.read_only for t in snapshot.tools}
    for c in cases:
        first_close = next(k for k, s in enumerate(c.steps) if closes(s.name))
        assert any(not read_only[s.name] and not closes(s.name) for s in c.steps[first_close + 1 :]), c.names
        assert c.steps[first_close].depends_on and max(c.steps[first_close].depends_on) < first_close
