"""Near-duplicate removal: Jaccard 0.70 on tool-call sequences, exactly.

A conversation's shingles are the tool names of its reference calls across all turns plus each
consecutive pair of names (order-aware); optionally the argument values too. Conversations are
visited in a stable order (by id) and one is dropped when an earlier kept one is a duplicate.

Candidates come from a prefix-filter index (:class:`NearDuplicates`): any two sets with Jaccard >= t
share a token among the first ``|s| - ceil(t*|s|) + 1`` of their tokens in one global order (rarest
first, so few pairs are compared); each candidate is confirmed with the exact Jaccard. So no
duplicate is missed and no pair under the threshold is removed: the kept set never holds a pair at
or above the threshold. MinHash LSH (datasketch) is the approximate alternative; it lives in
``bench/dedup.py``, which measures it against exact pairwise Jaccard (:func:`exact_pairs`): on these
small sets it misses about one pair in twenty at the threshold, and when it ran beside the prefix
filter it found no pair the filter had not (``bench/OPTIMISATIONS.md``).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from pipeline.core.config import DedupConfig

_STATEMENT = re.compile(
    r"\s*(?:SELECT\s.*?\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+TABLE)\s", re.S
)


def statement_signature(value: Any) -> str | None:
    """What an SQL statement does in a few words (``select orders customers filter``, ``insert orders``): its verb,
    its tables and its shape; None for a value that is no statement."""
    if not isinstance(value, str) or not _STATEMENT.match(value):
        return None
    head = value.split(None, 1)[0].lower()
    tables = re.findall(r"\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+\"?(\w+)", value)
    shape = "count" if "COUNT(" in value else "filter" if " WHERE " in value else ""
    return " ".join([head, *dict.fromkeys(tables), shape]).strip()


def call_name(name: str, args: dict[str, Any]) -> str:
    """A call's token: the tool's name, with what its statement does where an argument is SQL (a server whose one
    tool runs every statement makes chains of that tool only: its statements tell them apart)."""
    sig = next((x for x in map(statement_signature, args.values()) if x), None) if args else None
    return f"{name}:{sig}" if sig else name


def shingles(calls: list[tuple[str, dict[str, Any]]], include_args: bool = False) -> set[str]:
    names = [call_name(n, a) for n, a in calls]
    out = set(names) | {f"{a}>{b}" for a, b in zip(names, names[1:])}
    if include_args:
        out |= {f"{n}:{json.dumps(a, sort_keys=True, default=str)}" for n, a in calls}
    return out


def reference_shingles(reference: str | Iterable[Iterable[Any]], include_args: bool = False) -> set[str]:
    """The shingles of a conversation's reference calls (per user turn), the one rule the dedup stage and the
    corpus's near-duplicate gate share. ``reference`` as a record holds it (``RefCall``: ``name`` and
    ``arguments`` attributes) or as the corpus stores it (the Parquet column's JSON text, or that decoded)."""
    if isinstance(reference, str):
        reference = json.loads(reference)
    return shingles(
        [
            (c["name"], c["arguments"]) if isinstance(c, dict) else (c.name, c.arguments)
            for turn in reference
            for c in turn
        ],
        include_args,
    )


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


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


class NearDuplicates:
    """Exact near-duplicate search over a growing collection of token sets (a prefix-filter index).

    :meth:`best` returns the indexed set with the highest Jaccard >= ``threshold`` against a query
    (ties: the smallest id), :meth:`add` indexes a set. Only the first ``|s| - ceil(t*|s|) + 1`` tokens
    of each set in one fixed order are indexed and probed: two sets at the threshold always share one
    of them, so no duplicate is missed. ``order``: the sort key of a token (any one order is exact; rare
    tokens first keeps the candidates few: :func:`token_order`, where the sets are known up front)."""

    def __init__(self, threshold: float, order: Callable[[str], Any]):
        self.threshold = threshold
        self._order = order
        self._index: dict[str, list[Any]] = {}
        self._sets: dict[Any, set[str]] = {}

    def prefix(self, sh: set[str]) -> list[str]:
        """The tokens of ``sh`` that any set at the threshold with it must share: its first
        ``|s| - ceil(threshold * |s|) + 1`` tokens in the order (the prefix filter)."""
        if not sh:
            return [""]  # empty sets are duplicates of each other (jaccard 1.0)
        toks = sorted(sh, key=self._order)
        return toks[: len(toks) - math.ceil(self.threshold * len(toks) - 1e-9) + 1]

    def matches(self, sh: set[str], prefix: list[str] | None = None) -> list[tuple[Any, float]]:
        """Every indexed set at Jaccard >= threshold with ``sh``, as (key, jaccard) in key order
        (``prefix``: its :meth:`prefix`, if the caller has it)."""
        t, n = self.threshold, len(sh)
        out = []
        for cand in sorted(
            {k for tok in (prefix if prefix is not None else self.prefix(sh)) for k in self._index.get(tok, ())}
        ):
            other = self._sets[cand]
            if _sizes_allow(n, len(other), t):  # else no need to intersect
                j = jaccard(sh, other)
                if j >= t:
                    out.append((cand, j))
        return out

    def best(self, sh: set[str], prefix: list[str] | None = None) -> tuple[Any, float] | None:
        """The match of highest Jaccard (the first in key order among equals), or ``None``."""
        dup = None
        for cand, j in self.matches(sh, prefix):
            if dup is None or j > dup[1]:
                dup = (cand, j)
        return dup

    def add(self, key: Any, sh: set[str], prefix: list[str] | None = None) -> None:
        for tok in prefix if prefix is not None else self.prefix(sh):
            self._index.setdefault(tok, []).append(key)
        self._sets[key] = sh


def dedup(items: list[tuple[str, set[str]]], cfg: DedupConfig) -> tuple[list[str], dict[str, tuple[str, float]]]:
    """Returns (kept ids in stable order, dropped id -> (kept duplicate id, jaccard)); the duplicate
    named is the kept set of highest Jaccard (the first by id among equals)."""
    near = NearDuplicates(cfg.threshold, token_order(sh for _, sh in items).__getitem__)
    kept: list[str] = []
    dropped: dict[str, tuple[str, float]] = {}
    for cid, sh in sorted(items, key=lambda x: x[0]):
        prefix = near.prefix(sh)
        dup = near.best(sh, prefix)
        if dup:
            dropped[cid] = dup
            continue
        near.add(cid, sh, prefix)
        kept.append(cid)
    return kept, dropped


def similar_pairs(items: list[tuple[str, set[str]]], threshold: float) -> set[tuple[str, str]]:
    """Every pair with Jaccard >= threshold, exactly, without comparing all pairs (:class:`NearDuplicates`)."""
    near = NearDuplicates(threshold, token_order(sa for _, sa in items).__getitem__)
    out = set()
    for i, (a, sa) in enumerate(items):
        prefix = near.prefix(sa)
        for j, _ in near.matches(sa, prefix):
            b = items[j][0]
            out.add((min(a, b), max(a, b)))
        near.add(i, sa, prefix)
    return out


def exact_pairs(items: list[tuple[str, set[str]]], threshold: float) -> set[tuple[str, str]]:
    """Every pair with Jaccard >= threshold by comparing all pairs (the reference the others are checked against)."""
    out = set()
    for (a, sa), (b, sb) in itertools.combinations(items, 2):
        if jaccard(sa, sb) >= threshold:
            out.add((min(a, b), max(a, b)))
    return out
