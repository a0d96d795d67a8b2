"""Where each argument's value comes from, for one tool and one snapshot, worked out before anything is drawn
(:class:`ParamPlan`): the state's values that fit the parameter, else the candidates of an array, else the schema (read
with the tool's words, for a third-party tool); and the plans and tool facts kept across the calls of a stage
(:class:`ValueMemo`)."""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

from pipeline.core.records import Snapshot, ToolSpec
from pipeline.language.hints import hinted
from pipeline.language.schema_values import resolve_refs, schema_of
from pipeline.language.state_values import (
    described_id_values,
    described_values,
    example_shape,
    observed_values,
    shaped_values,
)


def _temporal(param: str, spec: dict[str, Any]) -> bool:
    s = schema_of(spec)
    pat = s.get("pattern") or ""
    return (
        s.get("format") in ("date", "date-time", "time")
        or r"\d{4}-\d{2}" in pat
        or "date" in param
        or "time" in param
        or param.endswith("_at")
        or param in ("month", "day", "start", "end", "check_in", "check_out", "departure", "arrival")
    )


def _fits_pattern(vals: list[Any], spec: dict[str, Any]) -> list[Any]:
    """Observed values the parameter's pattern accepts, as they are or as a slug ("Design Team" -> "design-team")."""
    pat = schema_of(spec).get("pattern")
    if not pat:
        return vals
    out = []
    for v in vals:
        if not isinstance(v, str):
            continue
        for cand in (v, re.sub(r"[^a-z0-9_-]+", "-", v.lower()).strip("-")):
            if re.fullmatch(pat.strip("^$"), cand) and cand not in out:
                out.append(cand)
                break
    return out


@functools.lru_cache(maxsize=4096)
def _named_fields(desc: str) -> tuple[str, ...]:
    """snake_case words of a description (the fields it may point at)."""
    return tuple(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", desc))


def _array_candidates(param: str, spec: dict[str, Any], snapshot: Snapshot) -> list[Any] | None:
    """The observed values an array of ids or addresses (``attendee_ids``, ``to``) draws from, if it is one."""
    s = schema_of(spec)
    if s.get("type") != "array":
        return None
    items = s.get("items") or {}
    if items.get("type") not in (None, "string") or "enum" in items:
        return None
    singular = param[:-1] if param.endswith("s") else param
    vals = observed_values(snapshot, singular) or described_id_values(snapshot, spec)
    if not vals:
        shape = example_shape(spec)
        vals = shaped_values(snapshot, shape) if shape else []
    return vals or None


OWN_NAMES = ("name", "display_name", "full_name")


def _names_of_kind(tool: ToolSpec, p: str, snapshot: Snapshot) -> list[Any]:
    """The ``p`` values of the sampled entities of the kind a writing tool names (``create_company``: the
    companies' names), so a new company is named like a company, not like a deal; [] when none is known."""
    kinds = [w for w in tool.name.split("_") if len(w) > 2]
    out = []
    for eid, rec in snapshot.entities.items():
        if any(rec.get(f"{k}_id") == eid or rec.get(f"{k.rstrip('s')}_id") == eid for k in kinds):
            v = rec.get(p)
            if isinstance(v, str) and v and v not in out:
                out.append(v)
    return sorted(out)


class ParamPlan(NamedTuple):
    """Where a parameter's value comes from, for one tool and one snapshot (nothing here is drawn)."""

    spec: dict[str, Any]
    vals: list[Any]  # observed values to choose from (used when ``use_vals``)
    use_vals: bool
    array_vals: list[Any] | None  # else: observed values for an array parameter; else the value is synthesized
    named: tuple[str, ...]  # fields the description points at (:func:`linked_value`)
    numeric: bool


def _param_plan(tool: ToolSpec, p: str, props: dict[str, Any], snapshot: Snapshot) -> ParamPlan:
    spec = props.get(p) or {}
    if tool.output_schema is None and tool.input_schema.get("$defs"):
        # a tool described by its input schema only (a third-party server's): the objects its arguments
        # hold are built from their definitions (tools with an output schema keep their synthesis as it was)
        spec = resolve_refs(spec, tool.input_schema["$defs"])
    # a writer's dates and times are new ones (after the reference date), not copies of the state's past ones
    fresh_time = not tool.read_only and _temporal(p, spec)
    vals = [] if fresh_time else _fits_pattern(observed_values(snapshot, p, tool.read_only), spec)
    if not vals and not fresh_time and schema_of(spec).get("type") in (None, "string"):
        shape = example_shape(spec)
        vals = (
            shaped_values(snapshot, shape)
            if shape
            else described_id_values(snapshot, spec)
            if p.endswith("_id")
            else described_values(snapshot, spec)
        )
    if vals and not tool.read_only and p in OWN_NAMES:
        vals = _names_of_kind(tool, p, snapshot) or vals
    use_vals = bool(vals) and "enum" not in schema_of(spec)
    desc = schema_of(spec).get("description") or ""
    array_vals = None if use_vals else _array_candidates(p, spec, snapshot)
    if tool.output_schema is None and not use_vals and not array_vals and "enum" not in schema_of(spec):
        spec, vals, array_vals = hinted(tool, p, schema_of(spec))
        use_vals = bool(vals)
    return ParamPlan(
        spec,
        vals,
        use_vals,
        array_vals,
        tuple(w for w in _named_fields(desc) if w != p),
        schema_of(spec).get("type") in ("number", "integer"),
    )


class _ToolFacts(NamedTuple):
    props: dict[str, Any]
    required: list[str]
    optional: list[str]
    sensitive: frozenset[str]


def _tool_facts(tool: ToolSpec) -> _ToolFacts:
    props, required = tool.properties, tool.required
    return _ToolFacts(props, required, [p for p in props if p not in required], frozenset(tool.sensitive))


class ValueMemo:
    """What :func:`fill_args` works out per snapshot, tool and parameter before drawing anything (the
    candidate values, the schema facts), kept across the calls of a stage: the query stage fills the
    same tools against the same snapshot tens of thousands of times. Holds the snapshots and tools it
    has seen, so their ids stay theirs; the draws are the ones made without a memo."""

    def __init__(self) -> None:
        self._facts: dict[int, tuple[ToolSpec, _ToolFacts]] = {}
        self._plans: dict[tuple[int, int, str], tuple[Snapshot, ToolSpec, ParamPlan]] = {}
        self._records: dict[tuple[int, tuple[str, ...]], tuple[Snapshot, list[dict[str, Any]]]] = {}

    def facts(self, tool: ToolSpec) -> _ToolFacts:
        hit = self._facts.get(id(tool))
        if hit is None or hit[0] is not tool:
            hit = self._facts[id(tool)] = (tool, _tool_facts(tool))
        return hit[1]

    def records_with(self, snapshot: Snapshot, fields: tuple[str, ...]) -> list[dict[str, Any]]:
        """The snapshot's records holding text for at least two of ``fields``."""
        key = (id(snapshot), fields)
        hit = self._records.get(key)
        if hit is None or hit[0] is not snapshot:
            recs = [
                r
                for r in snapshot.entities.values()
                if sum(1 for f in fields if isinstance(r.get(f), str) and r[f]) >= 2
            ]
            hit = self._records[key] = (snapshot, recs)
        return hit[1]

    def plan(self, tool: ToolSpec, p: str, props: dict[str, Any], snapshot: Snapshot) -> ParamPlan:
        key = (id(snapshot), id(tool), p)
        hit = self._plans.get(key)
        if hit is None or hit[0] is not snapshot or hit[1] is not tool:
            hit = self._plans[key] = (snapshot, tool, _param_plan(tool, p, props, snapshot))
        return hit[2]
