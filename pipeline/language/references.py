"""Follow-ups that build on what was reported: a record of a list pointed at by what tells it apart.

A person who has seen a list of hotels asks for "the rooms of the cheapest one" or "the one in Denver",
not for "the hotel you just found": :func:`distinguishing` finds, among the records of the result that holds
the value, a field in which the record stands alone (the lowest or highest price or rating, the only one in
its city, the only one of its name) and says it. Only the result's own values are said, so the request stays
grounded in what the tools returned.
"""

from __future__ import annotations

import random
from typing import Any

# numeric fields a person ranks by, with the words for the lowest and the highest
RANKED = {
    "price": ("cheapest", "most expensive"),
    "price_per_night": ("cheapest", "most expensive"),
    "fare": ("cheapest", "most expensive"),
    "cost": ("cheapest", "most expensive"),
    "delivery_fee": ("one with the lowest delivery fee", "one with the highest delivery fee"),
    "rating": ("lowest-rated", "best-rated"),
    "balance": ("one with the smallest balance", "one with the largest balance"),
    "distance_km": ("closest", "farthest"),
}
# text fields that name a record, and fields that place it
NAMES = ("name", "title", "display_name")
PLACES = ("city", "zone", "neighborhood")


def records_with(data: Any, field: str, value: Any) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The records of the first list in ``data`` holding a record whose ``field`` is ``value``, and that record."""
    stack = [data]
    while stack:
        d = stack.pop(0)
        if isinstance(d, dict):
            stack.extend(d.values())
        elif isinstance(d, list):
            recs = [r for r in d if isinstance(r, dict)]
            hit = next((r for r in recs if field in r and str(r[field]) == str(value)), None)
            if hit is not None:
                return recs, hit
            stack.extend(d)
    return None


def _alone(recs: list[dict[str, Any]], rec: dict[str, Any], key: str) -> bool:
    """Is ``rec`` the only record with its value of ``key``?"""
    return sum(1 for r in recs if r.get(key) == rec.get(key)) == 1


def options(data: Any, field: str, value: Any, noun: str) -> list[str]:
    """Every phrase that points at the record whose ``field`` is ``value`` by a field it alone has."""
    found = records_with(data, field, value)
    if found is None:
        return []
    recs, rec = found
    if len(recs) < 2:
        return []
    out: list[str] = []
    for key, (low, high) in RANKED.items():
        vals = [r.get(key) for r in recs]
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
            continue
        mine = rec[key]
        if vals.count(mine) != 1:
            continue
        if mine == min(vals):
            out.append(f"the {low}" + ("" if low.startswith("one ") else f" {noun}"))
        elif mine == max(vals):
            out.append(f"the {high}" + ("" if high.startswith("one ") else f" {noun}"))
    for key in PLACES:
        if isinstance(rec.get(key), str) and rec[key] and _alone(recs, rec, key):
            out.append(f"the {noun} in {rec[key]}")
    for key in NAMES:
        if key != field and isinstance(rec.get(key), str) and rec[key] and _alone(recs, rec, key):
            out.append(f"the {noun} called {rec[key]}" if len(rec[key].split()) < 6 else f'the "{rec[key]}" {noun}')
            break
    return out


def distinguishing(data: Any, field: str, value: Any, noun: str, rng: random.Random) -> str | None:
    """One phrase that points at the record whose ``field`` is ``value`` by what tells it apart (``the cheapest
    room``, ``the hotel in Denver``), or None where no field sets it apart."""
    said = options(data, field, value, noun)
    return rng.choice(said) if said else None
