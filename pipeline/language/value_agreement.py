"""A call's drawn arguments made to agree with each other, as a person would give them: a value the entities already
named determine (:func:`linked_value`, from the sampled records and the earlier results a :class:`RecordIndex`
holds), text values from one record (:func:`from_one_record`), no two ids naming the same entity
(:func:`distinct_ids`), an end after its start (:func:`pair_times`)."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from typing import Any

from pipeline.core.records import Snapshot
from pipeline.language.schema_values import schema_of
from pipeline.language.state_values import ROLE_FIELDS
from pipeline.language.value_plans import ParamPlan, ValueMemo

PAIRS = (
    ("start", "end"),
    ("check_in", "check_out"),
    ("start_date", "end_date"),
    ("departure_date", "return_date"),
    ("from_date", "to_date"),
    ("starts_at", "ends_at"),
    ("start_time", "end_time"),
)


class RecordIndex:
    """The records carrying each id in earlier results (the dicts with an ``*_id`` field of that value),
    in the order a depth-first walk of the results meets them.

    A dry run adds each step's result as it comes (:meth:`add`); each is walked once, when an id is
    first looked up after it was added, instead of every parameter that looks for linked values
    walking every earlier result again."""

    def __init__(self, results: list[Any] | None = None):
        self._by_id: dict[str, list[dict[str, Any]]] = {}
        self._pending: list[Any] = list(results or [])  # walked when an id is first looked up

    def add(self, data: Any) -> None:
        self._pending.append(data)

    def _walk(self, data: Any) -> None:
        by_id = self._by_id

        def walk(d: Any) -> None:
            if isinstance(d, dict):
                for key in {str(v) for k, v in d.items() if k.endswith("_id") and isinstance(v, (str, int))}:
                    by_id.setdefault(key, []).append(d)
                for v in d.values():
                    walk(v)
            elif isinstance(d, list):
                for x in d:
                    walk(x)

        walk(data)

    def carrying(self, eid: str) -> list[dict[str, Any]]:
        if self._pending:
            pending, self._pending = self._pending, []
            for data in pending:
                self._walk(data)
        return self._by_id.get(eid, [])


def _records_of(eid: str, snapshot: Snapshot, index: RecordIndex) -> list[dict[str, Any]]:
    """What is known of entity ``eid``: its sampled record, and records carrying it in earlier results."""
    return ([snapshot.entities[eid]] if eid in snapshot.entities else []) + index.carrying(eid)


def linked_value(
    param: str,
    named: tuple[str, ...],
    numeric: bool,
    args: dict[str, Any],
    order: list[str],
    snapshot: Snapshot,
    context: RecordIndex,
) -> Any:
    """A value the entities already named in ``args`` determine: the listing's own ``seller_id``,
    or, for a number (``numeric``), a field the description points at (``named``: an amount "at least
    the listing's min_next_bid")."""
    for p in order:
        v = args.get(p)
        if p == param or not isinstance(v, str) or not p.endswith("_id"):
            continue
        for rec in _records_of(v, snapshot, context):
            val = rec.get(param)
            # the record's own id is not a link (a user record's user_id is that user, not "the" user_id)
            if (
                isinstance(val, (str, int, float))
                and not isinstance(val, bool)
                and param.endswith("_id")
                and str(val) != v
            ):
                return val
            if numeric:
                for w in named:
                    if isinstance(rec.get(w), (int, float)) and not isinstance(rec.get(w), bool):
                        return rec[w]
    return None


# fields that tell one entity from another: a new payee or contact takes none of an existing one's together (a copy is
# refused)
IDENTIFYING = re.compile("|".join((*ROLE_FIELDS, "number", "phone", "username", "handle", "iban")))


def from_one_record(
    args: dict[str, Any],
    chosen: list[tuple[str, ParamPlan]],
    snapshot: Snapshot,
    rng: random.Random,
    memo: ValueMemo,
    fixed: dict[str, Any] | None = None,
) -> None:
    """Text values drawn from the state come from one record where a record holds two or more of them: a new
    listing's title, description, category and condition are one listing's, never a golf set's title with a
    watch's description, nor a description "in fair condition" with the condition (an enum) set to good; where an
    earlier result gave one of them (``fixed``: a description carried over), the others are that record's too (in
    place)."""
    free = tuple(
        p
        for p, plan in chosen
        if plan.use_vals
        and not p.endswith(("_id", "_ids"))
        and isinstance(args.get(p), str)
        and not IDENTIFYING.search(p)
    )
    # a text value an earlier result gave (a description carried over) anchors the record the others come from
    anchors = {
        p: v
        for p, v in (fixed or {}).items()
        if isinstance(v, str) and not p.endswith(("_id", "_ids")) and not IDENTIFYING.search(p)
    }
    if len(free) + len(anchors) < 2 or not free:
        return
    recs = memo.records_with(snapshot, free + tuple(anchors))
    recs = [r for r in recs if all(r.get(p) == v for p, v in anchors.items())] if anchors else recs
    if not recs:
        return
    rec = rng.choice(recs)
    vals = dict(chosen)
    for p in free:
        if isinstance(rec.get(p), str) and rec[p] in vals[p].vals:
            args[p] = rec[p]
    for p, plan in chosen:  # and its choices too: never "... in fair condition" with the condition set to good
        enum = schema_of(plan.spec).get("enum") or []
        if p in args and p not in free and isinstance(rec.get(p), str) and rec[p] in enum:
            args[p] = rec[p]


def distinct_ids(args: dict[str, Any], chosen: list[tuple[str, ParamPlan]], rng: random.Random) -> None:
    """An id drawn from the state that equals another id argument of the call (a route from a place to
    itself, a user following themselves) is drawn again from the other values, and a list drawn from the
    state shares no value with another list of the call (a message's cc never repeats its to) (in place)."""
    for p, plan in reversed(chosen):
        if plan.array_vals and isinstance(args.get(p), list):
            others = {str(x) for q, v in args.items() if q != p and isinstance(v, list) for x in v}
            rest = [v for v in plan.array_vals if str(v) not in others]
            if others & {str(x) for x in args[p]} and rest:
                args[p] = rng.sample(rest, k=min(len(rest), len(args[p])))
            continue
        if not p.endswith("_id") or not plan.use_vals:
            continue
        others = {str(v) for q, v in args.items() if q != p and q.endswith("_id")}
        if str(args.get(p)) in others:
            rest = [v for v in plan.vals if str(v) not in others]
            if rest:
                args[p] = rng.choice(rest)


def pair_times(args: dict[str, Any], rng: random.Random) -> None:
    """An end after its start (and a check-out after the check-in), as a person would give them."""
    for a, b in PAIRS:
        va, vb = args.get(a), args.get(b)
        if not (isinstance(va, str) and isinstance(vb, str)):
            continue
        try:
            if "T" in va:
                from datetime import datetime

                fmt = "%Y-%m-%dT%H:%M:%S" if va.count(":") == 2 else "%Y-%m-%dT%H:%M"
                start = datetime.strptime(va, fmt)
                args[b] = (start + timedelta(minutes=rng.choice([30, 45, 60, 90]))).strftime(fmt)
            else:
                start_d = date.fromisoformat(va)
                args[b] = (start_d + timedelta(days=rng.randint(1, 4))).isoformat()
        except ValueError:
            continue
