"""Near-duplicate removal: MinHash LSH (datasketch) at Jaccard 0.70 on tool-call sequences.

A conversation's shingles are the tool names of its reference calls across all turns plus each
consecutive pair of names (order-aware); optionally the argument values too. Conversations are
visited in a stable order (by id) and one is dropped when an earlier kept one is a duplicate.
LSH only proposes candidates: every candidate pair is confirmed with the exact Jaccard, so no
pair under the threshold is ever removed, and recall is measured against exact pairwise Jaccard
on a sample. LSH alone misses some pairs at the threshold (the shingle sets are small), so
candidates also come from an exact prefix-filter index: any two sets with Jaccard >= t share a
token among the first ``|s| - ceil(t*|s|) + 1`` of their sorted tokens. The kept set therefore
never holds a pair at or above the threshold.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from typing import Any

from datasketch import MinHash, MinHashLSH

from pipeline.config import DedupConfig


def shingles(calls: list[tuple[str, dict[str, Any]]], include_args: bool = False) -> set[str]:
    names = [n for n, _ in calls]
    out = set(names) | {f"{a}>{b}" for a, b in zip(names, names[1:])}
    if include_args:
        out |= {f"{n}:{json.dumps(a, sort_keys=True, default=str)}" for n, a in calls}
    return out


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


_PERMUTATIONS: dict[int, MinHash] = {}


def _minhash(sh: set[str], num_perm: int) -> MinHash:
    # drawing the permutations costs ~0.7 ms per MinHash; they depend only on (num_perm, seed),
    # so they are drawn once and shared (the hash values are identical)
    proto = _PERMUTATIONS.get(num_perm)
    if proto is None:
        proto = _PERMUTATIONS[num_perm] = MinHash(num_perm=num_perm, seed=1)
    m = MinHash(num_perm=num_perm, seed=1, permutations=proto.permutations, scheme=proto.scheme)
    m.update_batch([s.encode() for s in sh])
    return m


def _prefix(sh: set[str], threshold: float) -> list[str]:
    """Tokens any set with Jaccard >= threshold against ``sh`` must share (sorted-order prefix filter)."""
    if not sh:
        return [""]  # empty sets are duplicates of each other (jaccard 1.0)
    toks = sorted(sh)
    return toks[: len(toks) - math.ceil(threshold * len(toks) - 1e-9) + 1]


def dedup(items: list[tuple[str, set[str]]], cfg: DedupConfig) -> tuple[list[str], dict[str, tuple[str, float]]]:
    """Returns (kept ids in stable order, dropped id -> (kept duplicate id, jaccard))."""
    lsh = MinHashLSH(threshold=cfg.threshold * 0.85, num_perm=cfg.num_perm)
    index: dict[str, list[str]] = {}  # prefix token -> kept ids (exact candidates LSH may miss)
    kept: list[str] = []
    sets: dict[str, set[str]] = {}
    dropped: dict[str, tuple[str, float]] = {}
    for cid, sh in sorted(items, key=lambda x: x[0]):
        m = _minhash(sh, cfg.num_perm)
        prefix = _prefix(sh, cfg.threshold)
        cands = set(lsh.query(m)) | {k for tok in prefix for k in index.get(tok, ())}
        dup = None
        for cand in sorted(cands):
            j = jaccard(sh, sets[cand])
            if j >= cfg.threshold and (dup is None or j > dup[1]):
                dup = (cand, j)
        if dup:
            dropped[cid] = dup
            continue
        lsh.insert(cid, m)
        for tok in prefix:
            index.setdefault(tok, []).append(cid)
        sets[cid] = sh
        kept.append(cid)
    return kept, dropped


def similar_pairs(items: list[tuple[str, set[str]]], threshold: float) -> set[tuple[str, str]]:
    """Every pair with Jaccard >= threshold, exactly, without comparing all pairs: a pair at the
    threshold shares a token of each set's sorted prefix, so only pairs sharing one are compared."""
    index: dict[str, list[int]] = {}
    out = set()
    for i, (a, sa) in enumerate(items):
        cands = {j for tok in _prefix(sa, threshold) for j in index.get(tok, ())}
        for j in cands:
            b, sb = items[j]
            if jaccard(sa, sb) >= threshold:
                out.add((min(a, b), max(a, b)))
        for tok in _prefix(sa, threshold):
            index.setdefault(tok, []).append(i)
    return out


def exact_pairs(items: list[tuple[str, set[str]]], threshold: float) -> set[tuple[str, str]]:
    """Every pair with Jaccard >= threshold by comparing all pairs (the reference the others are checked against)."""
    out = set()
    for (a, sa), (b, sb) in itertools.combinations(items, 2):
        if jaccard(sa, sb) >= threshold:
            out.add((min(a, b), max(a, b)))
    return out


def lsh_pairs(items: list[tuple[str, set[str]]], cfg: DedupConfig) -> set[tuple[str, str]]:
    lsh = MinHashLSH(threshold=cfg.threshold * 0.85, num_perm=cfg.num_perm)
    mh = {}
    for cid, sh in items:
        mh[cid] = _minhash(sh, cfg.num_perm)
        lsh.insert(cid, mh[cid])
    sets = dict(items)
    out = set()
    for cid, _ in items:
        for cand in lsh.query(mh[cid]):
            if cand != cid and jaccard(sets[cid], sets[cand]) >= cfg.threshold:
                out.add((min(cid, cand), max(cid, cand)))
    return out


def recall_check(items: list[tuple[str, set[str]]], cfg: DedupConfig, seed: int = 0) -> dict[str, Any]:
    """Pairs found by LSH against the exact pairwise check on a sample."""
    rng = random.Random(seed)
    sample = rng.sample(items, min(len(items), cfg.exact_check_sample))
    exact = exact_pairs(sample, cfg.threshold)
    found = lsh_pairs(sample, cfg)
    recall = len(found & exact) / len(exact) if exact else 1.0
    return {"sample": len(sample), "exact_pairs": len(exact), "lsh_pairs": len(found & exact), "recall": recall}
