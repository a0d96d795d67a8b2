"""Probing: sample real entities through read-only discovery tools only.

Only tools annotated read-only (or named in the server's ``probe_allowlist``) are ever called.
Tools with no required arguments are called first (``list_*``, ``search_*``); then read-only
tools whose required arguments can be filled from values already observed (``get_*``).
Entities are records that carry an ``*_id`` field; scalar fields are collected as values that
queries may mention. Entities without enough support (closed, or a numeric field under its
threshold) are dropped, so a query never names an entity nothing could be done with.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from pipeline.config import ProbeConfig
from pipeline.env import ADMIN_PREFIX, Session
from pipeline.records import Snapshot, ToolSpec, schema_hash, stable_hash

ID_FIELD = re.compile(r"(^id$|_id$)")


def probe_safe(tools: list[ToolSpec], allowlist: list[str] | None = None) -> list[ToolSpec]:
    allow = set(allowlist or [])
    return [t for t in tools if (t.read_only and not t.destructive) or t.name in allow]


def entity_kind(entity_id: str, id_field: str | None = None) -> str:
    if id_field and id_field != "id":
        return id_field[: -len("_id")]
    m = re.match(r"^([A-Za-z]+)[-_]", str(entity_id))
    return m.group(1).lower() if m else "entity"


def walk_records(data: Any, path: str = ""):
    """Yield (id_field, record) for every dict carrying an id field, depth first."""
    if isinstance(data, dict):
        own = [k for k in data if ID_FIELD.search(k) and isinstance(data[k], (str, int)) and not isinstance(data[k], bool)]
        if own:
            # the record's own id: the field named after the record, else the first id field
            yield own[0], data
        for v in data.values():
            yield from walk_records(v, path)
    elif isinstance(data, list):
        for item in data:
            yield from walk_records(item, path)


def scalar_fields(data: Any, out: dict[str, list[Any]], limit: int) -> None:
    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                vals = out.setdefault(k, [])
                if v not in vals and len(vals) < limit:
                    vals.append(v)
            else:
                scalar_fields(v, out, limit)
    elif isinstance(data, list):
        for item in data:
            scalar_fields(item, out, limit)


def _supported(record: dict[str, Any], kind: str, cfg: ProbeConfig, entity_id: str = "") -> bool:
    status = record.get("status")
    if isinstance(status, str) and status.lower() in cfg.exclude_status:
        return False
    if any(record.get(flag) is True for flag in cfg.exclude_flags):
        return False
    # support rules are keyed by entity kind: the id field's name ("account") or the id prefix ("acc")
    keys = {kind, entity_kind(entity_id)} if entity_id else {kind}
    rules = [cfg.support[k] for k in keys if k in cfg.support]
    for field, minimum in (f for rule in rules for f in rule.items()):
        v = record.get(field)
        if isinstance(v, (int, float)) and v < minimum:
            return False
    return True


def _fill_required(tool: ToolSpec, values: dict[str, list[Any]], pick: int) -> dict[str, Any] | None:
    args: dict[str, Any] = {}
    for p in tool.required:
        cand = values.get(p)
        if not cand:
            return None
        args[p] = cand[pick % len(cand)]
    return args


def collect_secrets(state: dict[str, Any] | None, sensitive_params: set[str]) -> dict[str, dict[str, Any]]:
    """What users know of their own entities: sensitive fields of records in the admin state dump.

    Only available for servers exposing a state (built-in servers); third-party servers give
    secrets through their configuration instead.
    """
    secrets: dict[str, dict[str, Any]] = {}
    if not state or not sensitive_params:
        return secrets
    for id_field, rec in walk_records(state):
        found = {k: rec[k] for k in sensitive_params if k in rec and isinstance(rec[k], (str, int))}
        if found:
            secrets[str(rec[id_field])] = found
    return secrets


def probe(session: Session, tools: list[ToolSpec], cfg: ProbeConfig, allowlist: list[str] | None = None,
          config_secrets: dict[str, str] | None = None) -> Snapshot:
    """Sample the live state of ``session`` through its read-only tools only."""
    safe = probe_safe(tools, allowlist)
    skipped = {t.name: "not annotated read-only" for t in tools if t not in safe}
    entities: dict[str, dict[str, Any]] = {}
    kinds: dict[str, str] = {}
    values: dict[str, list[Any]] = {}
    calls: list[dict[str, Any]] = []
    budget = cfg.max_calls

    def record(tool: ToolSpec, args: dict[str, Any]) -> None:
        nonlocal budget
        budget -= 1
        res = session.call(tool.name, args)
        calls.append({"name": tool.name, "arguments": args, "ok": res.ok, "error_code": res.error_code, "error": res.error})
        if not res.ok:
            return
        for id_field, rec in walk_records(res.data):
            eid = str(rec[id_field])
            kinds.setdefault(eid, entity_kind(eid, id_field))
            merged = entities.setdefault(eid, {})
            merged.update({k: v for k, v in rec.items() if not isinstance(v, (dict, list))})
        scalar_fields(res.data, values, cfg.max_values_per_field)

    no_args = [t for t in safe if not t.required]
    with_args = [t for t in safe if t.required]
    for t in no_args:
        if budget <= 0:
            break
        record(t, {})
    # second pass: read-only tools fed with observed values, a few distinct values each
    for pick, t in itertools.product(range(3), with_args):
        if budget <= 0:
            break
        args = _fill_required(t, values, pick)
        if args is None:
            if pick == 0:
                skipped[t.name] = f"no observed values for required {[p for p in t.required if p not in values]}"
            continue
        record(t, args)

    supported = {eid: rec for eid, rec in entities.items() if _supported(rec, kinds[eid], cfg, eid)}
    # values of id fields keep only supported entities
    dropped = set(entities) - set(supported)
    for k, vals in values.items():
        if ID_FIELD.search(k):
            values[k] = [v for v in vals if str(v) not in dropped]

    sensitive = {p for t in tools for p in t.sensitive}
    secrets = collect_secrets(session.state() if sensitive else None, sensitive)
    if config_secrets:
        secrets.setdefault("*", {}).update(config_secrets)
    sh = schema_hash(tools)
    sid = "snap-" + stable_hash([session.env.name, session.seed, sh, sorted(supported)], 12)
    return Snapshot(
        snapshot_id=sid, server=session.env.name, seed=session.seed, schema_hash=sh, tools=tools,
        entities=supported, values=values, secrets=secrets, probe_calls=calls, skipped_tools=skipped,
    )


def narrow(snapshot: Snapshot, values: list[Any]) -> dict[str, dict[str, Any]]:
    """The sampled context narrowed to the entities a chain touches: the records of the entities
    its resolved arguments name, and of the entities those records point at (an account's
    customer). Secrets never leave the snapshot this way (they are not in entity records)."""
    out: dict[str, dict[str, Any]] = {}
    frontier = [str(v) for v in values if isinstance(v, (str, int)) and str(v) in snapshot.entities]
    for _hop in range(2):
        nxt = []
        for eid in frontier:
            if eid in out:
                continue
            rec = snapshot.entities[eid]
            out[eid] = rec
            nxt.extend(str(v) for k, v in rec.items() if ID_FIELD.search(k) and str(v) in snapshot.entities)
        frontier = nxt
    return out


def is_admin(name: str) -> bool:
    return name.startswith(ADMIN_PREFIX)
