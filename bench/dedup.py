"""Near-duplicate removal: the pipeline's dedup and MinHash LSH against exact pairwise Jaccard. Prints JSON.

Synthetic conversations are tool-call sequences drawn from the real servers' tool names (every
built-in server, listed over MCP): per conversation one server, 2-5 calls (the chain-length
weights of ``pipeline.discovery.chains``), tools drawn with a skew (some tools are popular), and a share
of deliberate near-copies of an earlier conversation (one call swapped, added or dropped), so the
set has both exact duplicate groups and pairs just above and below the 0.70 threshold.

For each size (default 5,000 and 50,000):

* ``dedup_seconds``: ``pipeline.core.similarity.dedup`` (prefix-filter candidates, each confirmed with the
  exact Jaccard) — what the pipeline runs;
* ``lsh_pairs_seconds``: :func:`lsh_pairs` (all pairs MinHash LSH finds, each confirmed with the
  exact Jaccard; defined here, the build does not run it);
* ``exact_seconds``: ``pipeline.core.similarity.exact_pairs`` (every pair's Jaccard). Measured in full where
  the pair count is at most ``--exact-max-pairs``; above that it is measured on a random sample of
  conversations and extrapolated by the pair count (``exact_extrapolated: true``);
* recall: the share of exact duplicate pairs (Jaccard >= threshold) that LSH alone finds
  (``lsh_recall``), and that the dedup resolves (``dedup_pair_recall``: at least one side dropped,
  i.e. the pair is not left in the output). Above the exact limit recall is measured on the pairs
  inside the sample.

    PYTHONPATH=. .venv/bin/python bench/dedup.py [--sizes 5000,50000] [--exact-max-pairs 13000000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from datasketch import MinHash, MinHashLSH  # noqa: E402

from pipeline.core.config import DedupConfig  # noqa: E402
from pipeline.core.similarity import dedup, exact_pairs, jaccard, shingles  # noqa: E402

TARGET_SPEEDUP = 20.0
TARGET_RECALL = 0.95


# ----------------------------------------------------------------------------- MinHash LSH
# The approximate alternative to the pipeline's exact prefix filter (pipeline.core.similarity), kept here to be
# measured against exact pairwise Jaccard: the build does not run it.

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
        return MinHash(
            num_perm=self.num_perm,
            seed=1,
            hashvalues=np.minimum.reduce(vals),
            permutations=proto.permutations,
            scheme=proto.scheme,
        )


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
    """Pairs found by LSH against the exact pairwise check, on a sample of ``cfg.exact_check_sample`` items
    (the figure the dedup stage used to report on every build)."""
    rng = random.Random(seed)
    sample = rng.sample(items, min(len(items), cfg.exact_check_sample))
    exact = exact_pairs(sample, cfg.threshold)
    found = lsh_pairs(sample, cfg)
    recall = len(found & exact) / len(exact) if exact else 1.0
    return {"sample": len(sample), "exact_pairs": len(exact), "lsh_pairs": len(found & exact), "recall": recall}


def server_tools() -> dict[str, list[str]]:
    """Tool names of every built-in server, listed over MCP (in-process)."""
    from mcp import Client

    from servers.registry import available, build

    async def names(name: str) -> list[str]:
        async with Client(build(name)) as c:
            return sorted(t.name for t in (await c.list_tools()).tools)

    return {s: asyncio.run(names(s)) for s in available()}


def synthetic(
    n: int, tools: dict[str, list[str]], seed: int = 0, copy_rate: float = 0.25
) -> list[tuple[str, set[str]]]:
    rng = random.Random(seed)
    servers = sorted(tools)
    # a fixed skew per server: a few popular tools (as chains starting at list_* tools are)
    weights = {s: [1.0 / (1 + i) ** 0.8 for i in range(len(tools[s]))] for s in servers}
    order = {s: rng.sample(tools[s], len(tools[s])) for s in servers}
    convs: list[list[str]] = []
    for _ in range(n):
        if convs and rng.random() < copy_rate:
            calls = list(rng.choice(convs[-2000:]))
            s_tools = tools[next(s for s in servers if calls[0] in tools[s])]
            edit = rng.random()
            if edit < 0.4 and len(calls) > 1:
                calls[rng.randrange(len(calls))] = rng.choice(s_tools)
            elif edit < 0.7 and len(calls) < 6:
                calls.insert(rng.randrange(len(calls) + 1), rng.choice(s_tools))
            elif len(calls) > 2:
                del calls[rng.randrange(len(calls))]
        else:
            s = rng.choice(servers)
            k = rng.choices([2, 3, 4, 5], weights=[5, 4, 2, 1])[0]
            calls = rng.choices(order[s], weights=weights[s], k=k)
        convs.append(calls)
    width = len(str(n))
    return [(f"conv-{i:0{width}d}", shingles([(c, {}) for c in calls])) for i, calls in enumerate(convs)]


def _timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def measure(n: int, tools: dict[str, list[str]], cfg: DedupConfig, exact_max_pairs: int, seed: int) -> dict[str, Any]:
    items = synthetic(n, tools, seed)
    (kept, dropped), t_dedup = _timed(dedup, items, cfg)
    found, t_lsh = _timed(lsh_pairs, items, cfg)
    pairs_total = n * (n - 1) // 2
    if pairs_total <= exact_max_pairs:
        sample, extrapolated = items, False
    else:
        m = int((1 + math.isqrt(1 + 8 * exact_max_pairs)) // 2)
        sample, extrapolated = random.Random(seed + 1).sample(items, m), True
    exact, t_exact_sample = _timed(exact_pairs, sample, cfg.threshold)
    sample_pairs = len(sample) * (len(sample) - 1) // 2
    t_exact = t_exact_sample * pairs_total / sample_pairs
    ids = {cid for cid, _ in sample}
    found_in = {p for p in found if p[0] in ids and p[1] in ids}
    drop = set(dropped)
    resolved = sum(1 for a, b in exact if a in drop or b in drop)
    return {
        "conversations": n,
        "pairs": pairs_total,
        "kept": len(kept),
        "dropped": len(dropped),
        "dedup_seconds": round(t_dedup, 3),
        "lsh_pairs_seconds": round(t_lsh, 3),
        "exact_seconds": round(t_exact, 2),
        "exact_extrapolated": extrapolated,
        "exact_sample_conversations": len(sample),
        "exact_sample_seconds": round(t_exact_sample, 3),
        "exact_duplicate_pairs_in_sample": len(exact),
        "lsh_recall": round(len(found_in & exact) / len(exact), 4) if exact else 1.0,
        "dedup_pair_recall": round(resolved / len(exact), 4) if exact else 1.0,
        "speedup_dedup_vs_exact": round(t_exact / t_dedup, 1),
        "speedup_lsh_pairs_vs_exact": round(t_exact / t_lsh, 1),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="5000,50000")
    p.add_argument(
        "--exact-max-pairs", type=int, default=13_000_000, help="above this, exact is sampled and extrapolated"
    )
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    cfg = DedupConfig()
    tools = server_tools()
    sizes = [int(x) for x in a.sizes.split(",") if x]
    runs = [measure(n, tools, cfg, a.exact_max_pairs, a.seed) for n in sizes]
    big = runs[-1]
    result = {
        "figure": "dedup",
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1m": round(os.getloadavg()[0], 2),
        },
        "threshold": cfg.threshold,
        "num_perm": cfg.num_perm,
        "servers": len(tools),
        "tools": sum(len(v) for v in tools.values()),
        "baseline": "exact pairwise Jaccard (pipeline.core.similarity.exact_pairs), same items, same run",
        "note": "exact pairwise above --exact-max-pairs is timed on a random sample of conversations and "
        "extrapolated by pair count; recall there is over the exact duplicate pairs inside that sample",
        "runs": runs,
        "target_speedup": TARGET_SPEEDUP,
        "target_recall": TARGET_RECALL,
        "within_target": big["speedup_dedup_vs_exact"] >= TARGET_SPEEDUP and big["dedup_pair_recall"] >= TARGET_RECALL,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
