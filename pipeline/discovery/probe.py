"""Probing: sample real entities through read-only discovery tools only.

Only tools annotated read-only (or named in the server's ``probe_allowlist``) are ever called.
Tools with no required arguments are called first (``list_*``, ``search_*``); then read-only
tools whose required arguments can be filled from values already observed (``get_*``).
Entities are records that carry an ``*_id`` field; where a result has none, the records named by
a key (``name``, ``path``, ``title``, ...), the lines of a text listing and printed Python rows
(:mod:`pipeline.language.entities`). A read-only tool nothing could call yet is then tried with each
kind of those names (as listed, and under the directory the listing named): the form it accepts
becomes the values of its parameter, and ``Snapshot.feeds`` records which parameters each kind
fed. Scalar fields are collected as values that queries may mention. Entities without enough support (closed, or a
numeric field under its
threshold) are dropped, so a query never names an entity nothing could be done with.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from pipeline.core.config import ProbeConfig
from pipeline.core.records import Snapshot, ToolSpec, schema_hash, stable_hash
from pipeline.discovery.sql_schema import read_catalog, read_references, statement_param
from pipeline.env import Session
from pipeline.env.workdir import SESSION_ALIAS
from pipeline.language.entities import generic_entities, parse_result, reads_content, tool_noun
from pipeline.language.lexicon import singular
from pipeline.language.sqltext import columns_in, references_read, rows_in, sql_kind
from pipeline.language.state_values import EXAMPLE

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
        own = [
            k for k in data if ID_FIELD.search(k) and isinstance(data[k], (str, int)) and not isinstance(data[k], bool)
        ]
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


def schema_choices(tool: ToolSpec, param: str) -> list[Any]:
    """The values a parameter's schema enumerates (``enum``, ``const``, also inside ``anyOf``), else the values its
    description quotes (``'local'``, ``'remote'`` or ``'all'``), else none."""
    spec = tool.properties.get(param) or {}
    for s in [spec, *spec.get("anyOf", [])]:
        if isinstance(s, dict) and (s.get("enum") or "const" in s):
            return list(s.get("enum") or [s["const"]])
    if _schema_type(spec) in (None, "string"):
        desc = str(spec.get("description") or "")
        return list(dict.fromkeys(EXAMPLE.findall(desc))) or listed_choices(desc)
    return []


_WORD = r"[A-Za-z][\w-]{0,30}"
_LIST = rf"{_WORD}(?:, {_WORD})*,? (?:or|and) {_WORD}|{_WORD}(?:, {_WORD}){{2,}}"
_AFTER_COLON = re.compile(rf":\s*({_LIST})\s*\.?\s*$")  # which part to show: doors, engine, brakes, cruise
_WHOLE = re.compile(rf"^\s*(?:one of:?\s*)?({_LIST})\s*\.?\s*$", re.I)  # on, off or auto / START or STOP


def listed_choices(description: str) -> list[str]:
    """The values a description lists as a parameter's whole range, unquoted: after its last colon to its end
    (``which part to show: doors, engine, brakes, cruise``), or as the description itself (``on, off or auto``,
    ``START or STOP``); else none (prose that only names a few words is no closed set)."""
    m = _AFTER_COLON.search(description) or _WHOLE.match(description)
    if m is None:
        return []
    return list(dict.fromkeys(w for w in re.split(r",\s*|\s+(?:or|and)\s+", m.group(1)) if w))


def option_params(tool: ToolSpec) -> dict[str, list[Any]]:
    """A reading tool whose result is text and which takes a closed set of options (which part of a state to show):
    its required parameters with closed values (:func:`schema_choices`), else none."""
    if not (tool.read_only and tool.text_result):
        return {}
    return {p: c for p in tool.required if (c := schema_choices(tool, p))}


def _schema_type(spec: dict[str, Any]) -> Any:
    return spec.get("type") or next((x.get("type") for x in spec.get("anyOf", []) if x.get("type") != "null"), None)


def _fill_required(tool: ToolSpec, values: dict[str, list[Any]], pick: int) -> dict[str, Any] | None:
    args: dict[str, Any] = {}
    for p in tool.required:
        # a tool whose result is text: its closed parameters (``branch_type``) from their schema; a tool with an
        # output schema is probed with observed values only (its schema's edges are found from those)
        cand = values.get(p) or (schema_choices(tool, p) if tool.text_result else None)
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


class _Probe:
    """The state of one probe: what was called, the entities and values seen, what fed what."""

    def __init__(self, session: Session, cfg: ProbeConfig):
        self.session, self.cfg = session, cfg
        self.entities: dict[str, dict[str, Any]] = {}
        self.kinds: dict[str, str] = {}
        self.values: dict[str, list[Any]] = {}
        self.calls: list[dict[str, Any]] = []
        self.budget = cfg.max_calls
        # entities found by a naming key, a listing or a printed row (not an id field): kind -> (value, joined)
        # where ``joined`` is the value under the directory the listing call named (None when not a path)
        self.generic: dict[str, list[tuple[str, str | None]]] = {}
        self.feeds: dict[str, list[str]] = {}
        # results of tools with an output schema that had no id-keyed record: read for names only if no
        # result of the server had one (a server that keys by id is probed as it always was)
        self.deferred: list[tuple[ToolSpec, dict[str, Any], Any]] = []
        self.roots: list[str] = []  # directories the server reported as its roots, in the session's own directory
        self.tables: dict[
            str, dict[str, Any]
        ] = {}  # a database's tables: columns, a few rows (pipeline.language.sqltext)

    def call(self, tool: ToolSpec, args: dict[str, Any]) -> bool:
        self.budget -= 1
        res = self.session.call(tool.name, args)
        self.calls.append(
            {"name": tool.name, "arguments": args, "ok": res.ok, "error_code": res.error_code, "error": res.error}
        )
        if not res.ok:
            return False
        self._learn_feed(tool, args)
        if tool.text_result:  # no output schema, or one wrapping a text
            self._learn_columns(args, res.data)
        found = False
        for id_field, rec in walk_records(res.data):
            found = True
            eid = str(rec[id_field])
            self.kinds.setdefault(eid, entity_kind(eid, id_field))
            merged = self.entities.setdefault(eid, {})
            merged.update({k: v for k, v in rec.items() if not isinstance(v, (dict, list))})
            self._noun_id(tool, id_field, rec)
        if not (tool.output_schema is not None and tool.text_result and not reads_content(tool.name)):
            # a text wrapped in an output schema ({"content": "..."}) is a value of its field only where a reading
            # tool read it (a file's text); a listing, a JSON tree or a report is the tool's answer, never a value
            # (a file's content to write, say); its entities are read from it below
            scalar_fields(res.data, self.values, self.cfg.max_values_per_field)
        if not found:  # no id-keyed record: names, listings, printed rows
            if not tool.text_result:
                self.deferred.append((tool, args, res.data))
            else:
                self._generic(tool, args, res.data)
        return True

    def _noun_id(self, tool: ToolSpec, id_field: str, rec: dict[str, Any]) -> None:
        """A record's plain ``id`` in the text a tool about one kind of thing returned (``get_user_tweets``): also a
        value of that thing's id (``tweet_id``), the name the tools that take one give it."""
        if id_field != "id" or not tool.text_result or not tool_noun(tool.name).isidentifier():
            return
        vals = self.values.setdefault(f"{tool_noun(tool.name)}_id", [])
        if rec["id"] not in vals and len(vals) < self.cfg.max_values_per_field:
            vals.append(rec["id"])

    def made(self, tool: ToolSpec, args: dict[str, Any]) -> bool:
        """The same call was made already (a parameter with fewer values than the passes draw)."""
        return any(c["name"] == tool.name and c["arguments"] == args for c in self.calls)

    def undefer(self) -> None:
        """Read the deferred results for names, where no result carried an id-keyed record."""
        deferred, self.deferred = self.deferred, []
        if not any(ID_FIELD.search(k) for k in self.values):
            for tool, args, data in deferred:
                self._generic(tool, args, data)

    def _generic(self, tool: ToolSpec, args: dict[str, Any], data: Any) -> None:
        parsed = parse_result(data)
        if parsed is not data:  # JSON or Python rows printed as text: read as the data they are
            for id_field, rec in walk_records(parsed):
                eid = str(rec[id_field])
                self.kinds.setdefault(eid, entity_kind(eid, id_field))
                self.entities.setdefault(eid, {}).update(
                    {k: v for k, v in rec.items() if not isinstance(v, (dict, list))}
                )
                self._noun_id(tool, id_field, rec)
            scalar_fields(parsed, self.values, self.cfg.max_values_per_field)
        found = generic_entities(data, tool.name)
        workdir = self.session.workdir
        if not args and workdir:  # a root the server reports (its allowed directory) inside the session's own copy
            inside = (workdir.rstrip("/") + "/", SESSION_ALIAS + "/")  # results may name the copy by its alias
            self.roots += [f.value for f in found if f.key == "path" and f.value.startswith(inside)]
            self.roots.sort(key=len, reverse=True)
        folder = next(
            (
                self.local(v)
                for v in args.values()
                if isinstance(v, str) and (v.startswith("/") or v == "." or self.kinds.get(v) == "directory")
            ),
            None,
        )
        for f in found:
            value = self.local(f.value) if f.key in ("path", "uri") else f.value
            record = {k: self.local(v) if v == f.value else v for k, v in f.record.items()}
            joined = (
                f"{folder.rstrip('/')}/{value}"
                if folder and folder != "." and f.key == "path" and not value.startswith("/")
                else None
            )
            if joined and not folder.startswith("/"):  # under a folder named relative to the root: that is its name
                value, joined = joined, None
                record = {**record, f.key: value}
            self.kinds.setdefault(value, f.kind)
            self.entities.setdefault(value, {}).update(record)
            forms = self.generic.setdefault(f.kind, [])
            if (value, joined) not in forms:
                forms.append((value, joined))
            vals = self.values.setdefault(f.key, [])
            if value not in vals and len(vals) < self.cfg.max_values_per_field:
                vals.append(value)

    def local(self, v: str) -> str:
        """A path under a root the server reported in the session's own directory, relative to that root (``.``
        for the root itself): the session's directory differs in every session, the relative path does not."""
        if v.startswith("file://") and self.roots:
            inner = self.local(v[len("file://") :])
            return inner if inner != v[len("file://") :] else v
        for root in self.roots:
            if v == root:
                return "."
            if v.startswith(root.rstrip("/") + "/"):
                return v[len(root.rstrip("/")) + 1 :]
        return v

    def _learn_columns(self, args: dict[str, Any], data: Any) -> None:
        """A describing tool's answer for a table argument (``describe_table(table_name)``): that table's columns."""
        table = next((v for p, v in args.items() if isinstance(v, str) and "table" in p.lower()), None)
        cols = columns_in(parse_result(data)) if table else []
        if cols:
            self.tables.setdefault(table, {})["columns"] = cols

    def read_rows(self, tool: ToolSpec, param: str, table: str) -> None:
        """A few rows of a table through a tool that reads SQL (learned as the table's rows, not as entities)."""
        data = self.read(tool, {param: f"SELECT * FROM {table} LIMIT 5"})
        rows = rows_in(parse_result(data), self.tables[table].get("columns", [])) if data is not None else None
        if rows is not None:
            self.tables[table]["rows"] = rows

    def read(self, tool: ToolSpec, args: dict[str, Any]) -> Any:
        """A statement's result data through a tool taking SQL (None when it failed), recorded as a probe call."""
        self.budget -= 1
        res = self.session.call(tool.name, args)
        self.calls.append(
            {"name": tool.name, "arguments": args, "ok": res.ok, "error_code": res.error_code, "error": res.error}
        )
        return res.data if res.ok else None

    def _learn_feed(self, tool: ToolSpec, args: dict[str, Any]) -> None:
        """A call that succeeded: each argument naming a known entity is a parameter its kind feeds."""
        for p, v in args.items():
            for x in v if isinstance(v, list) else [v]:
                kind = self.kinds.get(str(x)) if isinstance(x, (str, int)) else None
                if kind and f"{tool.name}.{p}" not in self.feeds.setdefault(kind, []):
                    self.feeds[kind].append(f"{tool.name}.{p}")

    def try_kinds(self, tool: ToolSpec, param: str) -> bool:
        """Feed ``param`` of a tool nothing could call yet with the names of each kind found so far (as
        listed, then under the listed directory); the first form the tool accepts becomes the
        parameter's observed values."""
        spec = tool.properties.get(param) or {}
        is_array = (spec.get("type") == "array") or any(s.get("type") == "array" for s in spec.get("anyOf", []))
        target = singular(param) if is_array else param
        if any(not self.values.get(p) for p in tool.required if p != param):
            return False
        others = {p: self.values[p][0] for p in tool.required if p != param}
        hint = [k for k in self.generic if k in param or param.rstrip("s") in k]
        for kind in hint + sorted((k for k in self.generic if k not in hint), key=lambda k: -len(self.generic[k]))[:3]:
            forms = self.generic[kind]
            for use_joined in (False, True):
                v = forms[0][1] if use_joined else forms[0][0]
                if v is None or self.budget <= 0:
                    continue
                if self.call(tool, {**others, param: [v] if is_array else v}):
                    vals = [j if use_joined else plain for plain, j in forms if (j if use_joined else plain)]
                    for x in vals:
                        self.kinds.setdefault(x, kind)
                    self.values[target] = vals[: self.cfg.max_values_per_field] + [
                        x for x in self.values.get(target, []) if x not in vals
                    ]
                    return True
        return False


def _third_pass(pr: _Probe, with_args: list[ToolSpec], skipped: dict[str, str]) -> None:
    """Only where names, listings or printed rows were found: a read-only tool no call could use yet is
    tried with each kind of them, and what it accepts is learned (rounds, while one feeds the next)."""
    for _round in range(3):
        ok_tools = {c["name"] for c in pr.calls if c["ok"]}
        todo = [t for t in with_args if t.name not in ok_tools]
        if not pr.generic or not todo or pr.budget <= 0:
            return
        progress = False
        for t in todo:
            named = {v for forms in pr.generic.values() for f in forms for v in f}
            # the parameters nothing fed, else the ones fed only names (which the tool may want under their folder)
            params = [p for p in t.required if not pr.values.get(p)] or [
                p for p in t.required if set(pr.values[p]) & named
            ]
            if params and all(pr.try_kinds(t, p) for p in params):
                progress = True
                skipped.pop(t.name, None)
                for pick in range(1, 3):
                    args = _fill_required(t, pr.values, pick)
                    if args is not None and pr.budget > 0 and not pr.made(t, args):
                        pr.call(t, args)
        if not progress:
            return


def _option_pass(pr: _Probe, with_args: list[ToolSpec]) -> None:
    """A read taking a closed set of options (:func:`option_params`; its other parameters observed) is tried with
    each option, up to twelve combinations: a state may show only through one of them (a car's doors, its engine)."""
    for t in with_args:
        closed = option_params(t) if t.text_result else {}
        if not closed or any(not pr.values.get(p) for p in t.required if p not in closed):
            continue
        others = {p: pr.values[p][0] for p in t.required if p not in closed}
        for combo in itertools.islice(itertools.product(*closed.values()), 12):
            args = {**others, **dict(zip(closed, combo, strict=True))}
            if pr.budget > 0 and not pr.made(t, args) and pr.call(t, args):
                for p in closed:
                    if args[p] not in pr.values.setdefault(p, []):
                        pr.values[p].append(args[p])


def _sql_pass(pr: _Probe, tools: list[ToolSpec], safe: list[ToolSpec], skipped: dict[str, str]) -> None:
    """Where a tool reads SQL: a few rows of each table, which the statements composed later filter on
    (``WHERE city = 'Lyon'``) and refer to (``WHERE id = 2``). A probe-safe tool that reads SQL reads them for tables
    a describing tool listed; a tool that runs any statement (the database's one tool, :mod:`.sql_schema`) is sent
    reads only. Either reads the catalog (``information_schema``, ``sqlite_master``: the tables a listing missed, the
    columns of those no tool described), then the foreign keys (:func:`.sql_schema.read_references`), then the rows."""
    readers = [(t, p) for t in safe if (p := statement_param(t, ("read",)))]
    readers += [(t, p) for t in tools if (p := statement_param(t)) and (t, p) not in readers]
    cataloged = False
    for t, p in readers:
        if not cataloged and sql_kind(t, p) in ("any", "read") and pr.budget > 1:
            catalog = read_catalog(lambda tool, args: pr.read(tool, args), t, p)
            for table, cols in catalog.items():  # a table a describing tool missed; its columns where none did
                pr.tables.setdefault(table, {}).setdefault("columns", cols)
            cataloged = bool(catalog)
        if not pr.tables:
            continue
        if pr.budget > 1 and not references_read(pr.tables):
            read_references(lambda tool, args: pr.read(tool, args), t, p, pr.tables)
        skipped.pop(t.name, None)
        for table in sorted(pr.tables)[:6]:
            if pr.budget > 0 and "rows" not in pr.tables[table]:
                pr.read_rows(t, p, table)


def probe(
    session: Session,
    tools: list[ToolSpec],
    cfg: ProbeConfig,
    allowlist: list[str] | None = None,
    config_secrets: dict[str, str] | None = None,
    known: dict[str, list[Any]] | None = None,
) -> Snapshot:
    """Sample the live state of ``session`` through its read-only tools only. ``known``: values the user stated
    per parameter (the server's ``known_values``), observed values from the start."""
    safe = probe_safe(tools, allowlist)
    skipped = {t.name: "not annotated read-only" for t in tools if t not in safe}
    pr = _Probe(session, cfg)
    for p, vals in (known or {}).items():
        pr.values[p] = list(vals)
    no_args = [t for t in safe if not t.required]
    with_args = [t for t in safe if t.required]
    for t in no_args:
        if pr.budget <= 0:
            break
        pr.call(t, {})
    # second pass: read-only tools fed with observed values, a few distinct values each
    for pick, t in itertools.product(range(3), with_args):
        if pr.budget <= 0:
            break
        args = _fill_required(t, pr.values, pick)
        if args is None:
            if pick == 0:
                missing = [p for p in t.required if p not in pr.values and not (t.text_result and schema_choices(t, p))]
                skipped[t.name] = f"no observed values for required {missing}"
            continue
        if not pr.made(t, args) and pr.call(t, args):
            for p in t.required:  # a closed value the tool took (its schema's or description's) is an observed one
                if args[p] not in pr.values.setdefault(p, []):
                    pr.values[p].append(args[p])
    pr.undefer()
    _option_pass(pr, [t for t in with_args if t.text_result])
    _third_pass(pr, with_args, skipped)
    _sql_pass(pr, tools, safe, skipped)
    entities, kinds, values = pr.entities, pr.kinds, pr.values
    supported = {eid: rec for eid, rec in entities.items() if _supported(rec, kinds[eid], cfg, eid)}
    # values of id fields keep only supported entities
    dropped = set(entities) - set(supported)
    for k, vals in values.items():
        if ID_FIELD.search(k):
            values[k] = [v for v in vals if str(v) not in dropped]
    support: dict[str, int] = {}
    for eid in supported:
        support[kinds[eid]] = support.get(kinds[eid], 0) + 1

    sensitive = {p for t in tools for p in t.sensitive}
    secrets = collect_secrets(session.state() if sensitive else None, sensitive)
    if config_secrets:
        secrets.setdefault("*", {}).update(config_secrets)
    sh = schema_hash(tools)
    sid = "snap-" + stable_hash([session.env.name, session.seed, sh, sorted(supported)], 12)
    return Snapshot(
        snapshot_id=sid,
        server=session.env.name,
        seed=session.seed,
        schema_hash=sh,
        tools=tools,
        entities=supported,
        values=values,
        secrets=secrets,
        probe_calls=pr.calls,
        skipped_tools=skipped,
        entity_kinds={eid: kinds[eid] for eid in supported},
        kind_support=support,
        feeds=pr.feeds,
        tables=pr.tables,
        domain=session.env.domain,
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
