"""Argument values for tool calls: from the sampled state first, synthesized from the schema last (:func:`fill_args`).

The sources, each in its own module: what the state offers a parameter (:mod:`pipeline.language.state_values`), where
each parameter's value comes from before anything is drawn (:mod:`pipeline.language.value_plans`), values made up
from the schema (:mod:`pipeline.language.schema_values`), and the drawn arguments made to agree with each other
(:mod:`pipeline.language.value_agreement`)."""

from __future__ import annotations

import random
from typing import Any

from pipeline.core.config import QueryConfig
from pipeline.core.records import Snapshot, ToolSpec
from pipeline.language.hints import known_fields, new_paths
from pipeline.language.schema_values import schema_of, synth_value
from pipeline.language.sqltext import fill_sql
from pipeline.language.state_values import linked_secret
from pipeline.language.value_agreement import RecordIndex, distinct_ids, from_one_record, linked_value, pair_times
from pipeline.language.value_plans import ParamPlan, ValueMemo


def fill_args(
    tool: ToolSpec,
    snapshot: Snapshot,
    rng: random.Random,
    fixed: dict[str, Any] | None = None,
    optional_rate: float = 0.0,
    reference_date: str = QueryConfig.model_fields["reference_date"].default,
    pick: dict[str, Any] | None = None,
    context: list[Any] | RecordIndex | None = None,
    memo: ValueMemo | None = None,
) -> dict[str, Any]:
    """Arguments for ``tool``: fixed values, then sampled state values, then schema synthesis.

    State values are looked up by name, by role (``origin_place_id`` <- ``place_id``) and by the
    shape of the description's example (``e.g. 'CON-0002'``); a value the named entities
    determine (the listing's seller) wins over a random one; a writer with only optional fields
    to change gets at least one (an update that changes nothing is refused); an end follows its
    start. ``context`` holds earlier results in the conversation (entities the snapshot lacks), as a list
    or as a :class:`RecordIndex` the caller adds each result to. ``memo``: a :class:`ValueMemo` shared by the
    calls of a stage (the same arguments, less work; without one, a fresh one)."""
    args: dict[str, Any] = {}
    fixed = dict(fixed or {})
    memo = memo if memo is not None else ValueMemo()
    props, required, optional, sens = memo.facts(tool)
    wanted = list(required) + [p for p in optional if p in fixed or rng.random() < optional_rate]
    # a writer with only optional fields gets one (an update changing nothing is refused); not a third-party one with
    # required ones
    if (
        not tool.read_only
        and optional
        and not any(p in wanted for p in optional)
        and not (required and tool.output_schema is None)
    ):
        wanted.append(rng.choice(optional))
    ctx = context if isinstance(context, RecordIndex) else RecordIndex(list(context or []))
    chosen: list[tuple[str, ParamPlan]] = []
    for p in wanted:
        if p in fixed:
            # one value from an earlier result, for a parameter that takes a list of them (``names``)
            is_list = not isinstance(fixed[p], list) and schema_of(props.get(p) or {}).get("type") == "array"
            args[p] = [fixed[p]] if is_list else fixed[p]
            continue
        if p in sens:
            continue
        if pick is not None and p in pick:
            args[p] = pick[p]
            continue
        plan = memo.plan(tool, p, props, snapshot)
        chosen.append((p, plan))
        if plan.use_vals:
            args[p] = rng.choice(plan.vals)
        elif plan.array_vals:
            args[p] = rng.sample(plan.array_vals, k=min(len(plan.array_vals), rng.choice([1, 1, 2])))
        else:
            args[p] = synth_value(p, plan.spec, rng, reference_date)
    order = [p for p in wanted if p in fixed] + [p for p in wanted if p not in fixed]
    for p, plan in chosen:
        v = linked_value(p, plan.named, plan.numeric, args, order, snapshot, ctx)
        if v is not None:
            args[p] = v
    from_one_record(args, chosen, snapshot, rng, memo, fixed)
    distinct_ids(args, chosen, rng)
    pair_times(args, rng)
    if (
        tool.output_schema is None
    ):  # a third-party tool: SQL composed from the schema, record fields from observed values
        fill_sql(tool, args, snapshot.tables, rng, set(fixed))
        known_fields(args, snapshot.values, rng, set(fixed), tool.read_only)
        new_paths(tool, args, snapshot.values, rng, set(fixed))
    else:
        if tool.text_result:  # a text wrapped in an output schema (``-> str`` with FastMCP): SQL all the same
            fill_sql(tool, args, snapshot.tables, rng, set(fixed))
        # a record field or a list naming things (``entityName``, ``entityNames``) takes observed names all the same
        if any(isinstance(v, (dict, list)) for v in args.values()):
            known_fields(args, snapshot.values, rng, set(fixed), tool.read_only, names_only=True)
    for p in sens:
        if p in wanted and p not in args:
            v = linked_secret(snapshot, p, args)
            if v is None:
                v = synth_value(p, props.get(p) or {}, rng, reference_date)
            args[p] = v
    return args
