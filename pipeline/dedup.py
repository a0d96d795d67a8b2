"""Near-duplicate removal: MinHash LSH (datasketch) at Jaccard 0.70 on tool-call sequences.

A conversation's shingles are the tool names of its reference calls across all turns plus each
consecutive pair of names (order-aware); optionally the argument values too. Conversations are
visited in a stable order (by id) and one is dropped when an earlier kept one is a duplicate.
LSH only proposes candidates: every candidate pair is confirmed with the exact Jaccard, so no
pair under the threshold is ever removed, and recall is measured against exact pairwise Jaccard
on a sample. LSH alone misses some pairs at the threshold (the shingle sets are small), so
candidates also come from an exact prefix-filter index: any two sets with Jaccard >= t share a
token among the first ``|s| - ceil(t*|s|) + 1`` of their tokens in one global order (rarest first,
so few pairs are compared). The kept set therefore
never holds a pair at or above the threshold.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
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


def _sizes_allow(a: int, b: int, threshold: float) -> bool:
    """Can two sets of these sizes reach Jaccard ``threshold``? (Jaccard <= min / max of the sizes.)"""
    return min(a, b) >= threshold * max(a, b) - 1e-9


def token_order(sets: Iterable[set[str]]) -> dict[str, int]:
    """A rank for every token, rarest first (ties by the token): the order prefixes are taken in.

    Any one order over all sets keeps the prefix filter exact; rarest-first makes the tokens the
    prefixes share rare, so few pairs are compared (sorted by name, a tool every conversation calls
    would lead many prefixes and bring in most of the corpus as candidates)."""
    freq: Counter[str] = Counter()
    for sh in sets:
        freq.update(sh)
    return {tok: i for i, tok in enumerate(sorted(freq, key=lambda t: (freq[t], t)))}


class MinHasher:
    """MinHashes of token sets, each token hashed once: a set's MinHash is the element-wise minimum
    of its tokens' MinHashes (what ``MinHash.update_batch`` computes, and ``MinHash.merge`` does), so
    the tool names and pairs that recur across thousands of sequences are not hashed again for each.
    One per run: the cache grows with the tokens seen."""

    def __init__(self, num_perm: int):
        self.num_perm = num_perm
        self._tokens: dict[str, np.ndarray] = {}

    def __call__(self, sh: set[str]) -> MinHash:
        if not sh:
            return _minhash(sh, self.num_perm)
        vals = []
        for tok in sh:
            hv = self._tokens.get(tok)
            if hv is None:
                hv = self._tokens[tok] = _minhash({tok}, self.num_perm).hashvalues
            vals.append(hv)
        proto = _PERMUTATIONS[self.num_perm]
        return MinHash(num_perm=self.num_perm, seed=1, hashvalues=np.minimum.reduce(vals), permutations=proto.permutations,
                       scheme=proto.scheme)


_LSH_PARAMS: dict[tuple[float, int], tuple[int, int]] = {}


def new_lsh(threshold: float, num_perm: int) -> MinHashLSH:
    """``MinHashLSH(threshold, num_perm)``; its band layout (b, r), which datasketch finds by numerical
    integration on every construction, is computed once per (threshold, num_perm) and passed in."""
    params = _LSH_PARAMS.get((threshold, num_perm))
    if params is None:
        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        _LSH_PARAMS[(threshold, num_perm)] = (lsh.b, lsh.r)
        return lsh
    return MinHashLSH(threshold=threshold, num_perm=num_perm, params=params)


def _prefix(sh: set[str], threshold: float, order: dict[str, int]) -> list[str]:
    """Tokens any set with Jaccard >= threshold against ``sh`` must share: the first ones of ``sh`` in
    ``order`` (:func:`token_order`), ``|s| - ceil(threshold * |s|) + 1`` of them (the prefix filter)."""
    if not sh:
        return [""]  # empty sets are duplicates of each other (jaccard 1.0)
    toks = sorted(sh, key=order.__getitem__)
    return toks[: len(toks) - math.ceil(threshold * len(toks) - 1e-9) + 1]


def dedup(items: list[tuple[str, set[str]]], cfg: DedupConfig) -> tuple[list[str], dict[str, tuple[str, float]]]:
    """Returns (kept ids in stable order, dropped id -> (kept duplicate id, jaccard))."""
    lsh = new_lsh(cfg.threshold * 0.85, cfg.num_perm)
    minhash = MinHasher(cfg.num_perm)
    index: dict[str, list[str]] = {}  # prefix token -> kept ids (exact candidates LSH may miss)
    kept: list[str] = []
    sets: dict[str, set[str]] = {}
    dropped: dict[str, tuple[str, float]] = {}
    order = token_order(sh for _, sh in items)
    t = cfg.threshold
    for cid, sh in sorted(items, key=lambda x: x[0]):
        m = minhash(sh)
        prefix = _prefix(sh, t, order)
        cands = set(lsh.query(m)) | {k for tok in prefix for k in index.get(tok, ())}
        dup = None
        n = len(sh)
        for cand in sorted(cands):
            other = sets[cand]
            if not _sizes_allow(n, len(other), t):
                continue  # no need to intersect
            j = jaccard(sh, other)
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
    order = token_order(sa for _, sa in items)
    for i, (a, sa) in enumerate(items):
        prefix = _prefix(sa, threshold, order)
        cands = {j for tok in prefix for j in index.get(tok, ())}
        for j in cands:
            b, sb = items[j]
            if _sizes_allow(len(sa), len(sb), threshold) and jaccard(sa, sb) >= threshold:
                out.add((min(a, b), max(a, b)))
        for tok in prefix:
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
    lsh = new_lsh(cfg.threshold * 0.85, cfg.num_perm)
    minhash = MinHasher(cfg.num_perm)
    mh = {}
    for cid, sh in items:
        mh[cid] = minhash(sh)
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
