"""Near-duplicate removal at Jaccard 0.70 on order-aware tool-call shingles."""

from __future__ import annotations

import random

from bench.dedup import recall_check
from pipeline.assembly.augment import ref_to_json
from pipeline.core.config import BuildConfig, DedupConfig
from pipeline.core.similarity import dedup, exact_pairs, jaccard, reference_shingles, shingles
from pipeline.stages.assembly import stage_dedup


def sh(*names, args=None):
    return shingles([(n, (args or {}).get(n, {})) for n in names])


def test_same_tool_sequence_is_a_duplicate_and_the_first_id_is_kept():
    seq = sh("list_accounts", "get_balance", "deposit")
    kept, dropped = dedup(
        [("conv-b", seq), ("conv-a", set(seq)), ("conv-c", sh("list_payees", "add_payee"))], DedupConfig()
    )
    assert kept == ["conv-a", "conv-c"]
    assert dropped == {"conv-b": ("conv-a", 1.0)}


def test_pairs_below_the_threshold_are_both_kept():
    a = {f"t{i}" for i in range(10)}
    b = {f"t{i}" for i in range(7)} | {"x1", "x2", "x3"}
    assert jaccard(a, b) < 0.70  # 7 / 13
    kept, dropped = dedup([("a", a), ("b", b)], DedupConfig())
    assert kept == ["a", "b"] and not dropped


def test_a_pair_at_exactly_the_threshold_is_a_duplicate():
    a = {f"t{i}" for i in range(10)}
    b = {f"t{i}" for i in range(7)}
    assert jaccard(a, b) == 0.70
    kept, dropped = dedup([("a", a), ("b", b)], DedupConfig())
    assert kept == ["a"] and dropped["b"][0] == "a"


def test_shingles_are_order_aware_and_args_optional():
    assert sh("a", "b") != sh("b", "a")
    assert sh("a", "b") == {"a", "b", "a>b"}
    with_args = shingles([("get_balance", {"account_id": "ACC-0001"})], include_args=True)
    assert 'get_balance:{"account_id": "ACC-0001"}' in with_args


def test_a_reference_has_the_same_shingles_as_a_record_and_as_stored_in_parquet(conversations):
    """The dedup stage reads records, the corpus's near-duplicate gate the Parquet column: one rule for both."""
    for c in conversations[:6]:
        for include_args in (False, True):
            held = reference_shingles(c.reference, include_args)
            assert held == shingles([(r.name, r.arguments) for turn in c.reference for r in turn], include_args)
            assert reference_shingles(ref_to_json(c.reference), include_args) == held


def _realistic(n: int, seed: int) -> list[tuple[str, set[str]]]:
    rng = random.Random(seed)
    names = [f"tool_{i}" for i in range(8)]
    return [(f"c{i:04d}", sh(*[rng.choice(names) for _ in range(rng.randint(2, 8))])) for i in range(n)]


def test_the_kept_set_has_no_pair_at_or_above_the_threshold_exact_check():
    for seed in range(3):
        items = _realistic(300, seed)
        kept, dropped = dedup(items, DedupConfig())
        sets = dict(items)
        assert exact_pairs([(k, sets[k]) for k in kept], 0.70) == set()
        # and nothing was dropped without a real duplicate that was kept
        for cid, (dup, j) in dropped.items():
            assert dup in kept and dup < cid and jaccard(sets[cid], sets[dup]) == j >= 0.70
        assert len(kept) + len(dropped) == len(items)


def test_recall_check_finds_every_known_duplicate():
    """bench/dedup.py's check of MinHash LSH against the exact pairs, on a sample (the build's dedup is exact)."""
    rng = random.Random(3)
    base = [(f"b{i:02d}", {f"u{i}_{k}" for k in range(rng.randint(3, 9))}) for i in range(12)]
    copies = [(f"d{i:02d}", set(s)) for i, (_, s) in enumerate(base[:5])]
    report = recall_check(base + copies, DedupConfig())
    assert report["sample"] == 17 and report["exact_pairs"] == 5
    assert report["lsh_pairs"] == 5 and report["recall"] == 1.0


def test_stage_dedup_rejects_duplicates_with_lineage(conversations):
    convs = [c.model_copy(deep=True) for c in conversations[:6]]
    twin = conversations[0].model_copy(deep=True, update={"conversation_id": "conv-zzzz-twin"})
    out = stage_dedup(BuildConfig(servers=["banking"]), convs + [twin])
    assert "conv-zzzz-twin" not in {c.conversation_id for c in out.items}
    rej = next(r for r in out.rejections if r.upstream["conversation_id"] == "conv-zzzz-twin")
    assert rej.reason == "near_duplicate" and rej.stage == "dedup" and rej.upstream["duplicate_of"]
    kept_sets = [(c.conversation_id, reference_shingles(c.reference)) for c in out.items]
    assert exact_pairs(kept_sets, 0.70) == set()
    # (the MinHash LSH recall figure the stage reported is measured by bench/dedup.py: recall_check above)
    assert out.stats == {"input": len(convs) + 1, "kept": len(out.items), "dropped": len(out.rejections)}


def test_the_prefix_filtered_pair_search_finds_exactly_the_pairs_of_the_all_pairs_search():
    """The corpus gate uses similar_pairs (fast); it must find every pair the all-pairs check finds, no more."""
    from pipeline.core.similarity import similar_pairs

    for seed in range(3):
        items = _realistic(400, seed)
        for t in (0.5, 0.7, 0.9):
            exact = exact_pairs(items, t)
            assert similar_pairs(items, t) == exact
        assert exact, "the sample has near-duplicates to find"
