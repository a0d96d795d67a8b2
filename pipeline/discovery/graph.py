"""Dependency-graph discovery: explicit and implicit edges, confirmed by live execution.

* **Explicit** (A -> B): a field of A's output schema has the name of a required input of B.
  Confirmed live on a fresh session: call A, feed the value of that field to B, B succeeds.
* **Value flow** (A -> B, A without an output schema, one that only wraps a text, or any tool of a server not
  built with the kit): a value seen in A's live result (a field, a named record, a listing's line;
  :mod:`pipeline.language.entities`) that B accepts in a live call.
* **Implicit** (A -> B): A writes state that B reads or needs. Confirmed live when B's result
  changes after A (B read-only), or when B fails before A and succeeds after it (B writes; and,
  for a pair without output schemas, B reads: write a file, then read it).
* **LLM** (optional): an OpenAI-compatible model classifies pairs (the paper's way); its edges
  are merged with the programmatic ones and marked ``source="llm"``.

Graphs are cached on disk keyed by the hash of the tool schemas, so a changed schema rebuilds.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx

from pipeline.core.config import GraphConfig
from pipeline.core.records import DependencyGraph, Edge, Snapshot, ToolSpec, stable_hash
from pipeline.core.storage import atomic_write_text
from pipeline.env import Environment, ServerBudgetExceeded, Session
from pipeline.env.workdir import needs_workdir, same_result
from pipeline.language import entities as discovery_module
from pipeline.language import fields as fields_module
from pipeline.language import schema_values, state_values, value_agreement, value_plans
from pipeline.language import values as values_module
from pipeline.language.entities import result_values
from pipeline.language.fields import find_field, output_fields
from pipeline.language.schema_values import synth_value
from pipeline.language.sqltext import sql_kind
from pipeline.language.state_values import SEARCH_PARAMS
from pipeline.language.values import fill_args

FREE_TEXT = {
    "title",
    "body",
    "content",
    "description",
    "memo",
    "message",
    "text",
    "subject",
    "comment",
    "query",
    "note",
    "reason",
}


OWN_NAME = {"name", "display_name", "full_name"}


@functools.lru_cache(maxsize=1)
def rules_hash() -> str:
    """A hash of the code that decides the edges (this module, the value filler that confirms them with its
    sources, the reader of result fields and the text-result reader), in the cache key: a cached graph is reused
    only by the code that found it."""
    h = hashlib.sha256()
    filler = (values_module, state_values, value_plans, schema_values, value_agreement)
    for mod in (__name__, *(m.__name__ for m in filler), fields_module.__name__, discovery_module.__name__):
        h.update(Path(sys.modules[mod].__file__ or "").read_bytes())
    return h.hexdigest()[:16]


def _feeds(param: str, field: str) -> bool:
    """An output ``field`` can feed input ``param``: same name, or a role-prefixed id
    (``from_account_id`` <- ``account_id``, ``target_user_id`` <- ``user_id``)."""
    return param == field or (field.endswith("_id") and param.endswith("_" + field))


QUANTITY = (
    "amount",
    "qty",
    "quantity",
    "count",
    "limit",
    "total",
    "price",
    "balance",
    "offset",
    "page",
    "size",
    "radius",
    "rating",
    "min",
    "max",
    "duration",
    "days",
    "hours",
    "minutes",
    "percent",
    "level",
    "position",
    "temperature",
    "speed",
)
IDENTIFYING = ("path", "symbol", "sku", "email", "channel", "code", "category", "label", "name")


def _is_quantity(param: str) -> bool:
    return any(q in param for q in QUANTITY)


def candidate_explicit(tools: list[ToolSpec]) -> list[tuple[ToolSpec, ToolSpec, str, str]]:
    """(A, B, param, field) where output ``field`` of A can feed input ``param`` of B.

    Required inputs: ids and other identifying strings (paths, symbols, codes, names of things),
    never free text, nor the name a writing tool gives (a company is not named after a deal); numbers only under the
    same name and never a quantity (``lat``, ``lon``, not
    ``amount``). A tool with no required input (a list or search tool) is fed through an optional
    filter of the same name as the field (``list_bids(listing_id)``)."""
    out = []
    for a in tools:
        fields = output_fields(a.output_schema)
        if not fields:
            continue
        for b in tools:
            if a.name == b.name:
                continue
            params = list(b.required) or sorted(
                p for p in b.properties if p in fields and (p.endswith("_id") or p in IDENTIFYING)
            )
            for p in params:
                if p in FREE_TEXT or (
                    p in OWN_NAME and not b.read_only
                ):  # a write's name is the new or renamed thing's own
                    continue
                spec = b.properties.get(p) or {}
                identifying = p.endswith("id") or p in IDENTIFYING
                numeric = spec.get("type") in ("number", "integer")
                if (
                    not identifying
                    and spec.get("type") not in (None, "string")
                    and not (numeric and not _is_quantity(p))
                ):
                    continue
                for f in sorted(fields):
                    if _feeds(p, f) and (identifying or f == p):
                        out.append((a, b, p, f))
                        break
    return out


def _confirm_explicit(
    s: Session, snap: Snapshot, a: ToolSpec, b: ToolSpec, param: str, field: str, rng: random.Random
) -> bool:
    """Each attempt runs on the session reset to the seed (one session reused for every probe)."""
    for _attempt in range(3):
        s.reset()
        ra = s.call(a.name, fill_args(a, snap, rng))
        if not ra.ok:
            continue
        value = find_field(ra.data, field)
        if value is None:
            continue
        rb = s.call(b.name, fill_args(b, snap, rng, fixed={param: value}, context=[ra.data]))
        if rb.ok:
            return True
    return False


def _shared_pick(a: ToolSpec, b: ToolSpec, snap: Snapshot, rng: random.Random, fresh: bool = False) -> dict[str, Any]:
    """One value for each parameter both tools take (observed; with ``fresh``, a new one for a parameter
    nothing was observed for, so the write and the read name the same new thing)."""
    shared = set(a.properties) & set(b.properties)
    pick = {}
    for p in sorted(shared):  # a set's order follows PYTHONHASHSEED: sorted, the graph is the same in every process
        # SQL text: a table both statements are composed on (an INSERT, then a SELECT of the same table)
        vals = snap.values.get(p) or (
            sorted(t for t in snap.tables if snap.tables[t].get("columns")) if sql_kind(a, p) else []
        )
        if fresh and p in a.required:
            pick[p] = synth_value(p, a.properties.get(p) or {}, rng)
        elif vals:
            pick[p] = rng.choice(vals)
    return pick


def schema_less(a: ToolSpec, b: ToolSpec) -> bool:
    """A pair the output schemas say nothing about: the value-flow and read-after-write rules apply to it."""
    return a.text_result or b.text_result


def _confirm_implicit(s: Session, snap: Snapshot, a: ToolSpec, b: ToolSpec, rng: random.Random) -> bool:
    """B changes after A (B reads), or B fails before A and succeeds after it. For a read of a pair no
    output schema describes, a read that fails before the write and succeeds after it counts too (write
    a file, then read it); the other pairs keep the rule that found the built-in servers' edges."""
    loose = schema_less(a, b)
    copied = needs_workdir(s.env.config)  # a session's copied files have new times: compared without them
    for attempt in range(2):
        pick = _shared_pick(a, b, snap, rng, fresh=loose and attempt == 1)
        args_a = fill_args(a, snap, rng, pick=pick)
        args_b = fill_args(b, snap, rng, pick=pick)
        before = s.call_at_seed(b.name, args_b)  # where a reset costs a process, a repeated one is answered from memory
        if b.read_only and not before.ok and not loose:
            continue
        if not b.read_only and before.ok:
            continue  # a write that succeeds on the seed needs nothing A does: A need not run
        s.reset()
        ra = s.call(a.name, args_a)
        if not ra.ok:
            continue
        after = s.call(b.name, args_b)
        if b.read_only and before.ok:
            if after.ok and not (after.data == before.data or (copied and same_result(after.data, before.data))):
                return True
        elif not before.ok and after.ok:
            return True
    return False


def _changed(b: ToolSpec, a: ToolSpec, before: Any, after: Any, copied: bool) -> bool:
    """What :func:`_confirm_implicit` counts as B depending on A, for B's call before A and after it (``copied``: the
    session runs in a copy of its files, whose new times are left out of the comparison)."""
    if b.read_only and before.ok:
        return after.ok and not (after.data == before.data or (copied and same_result(after.data, before.data)))
    return not before.ok and after.ok and (not b.read_only or schema_less(a, b))


def _implicit_reads(s: Session, snap: Snapshot, a: ToolSpec, reads: list[ToolSpec], rng: random.Random) -> set[str]:
    """The reads among ``reads`` that depend on writer A, all read after one run of A (where a reset costs a server
    process, one per attempt instead of one per pair): per attempt, one value for each parameter A shares with any
    of them (observed; on the second attempt a new one for a write without a schema), every read's result on the
    seed (answered from memory where seen before), then A, then every read again."""
    found: set[str] = set()
    for attempt in range(2):
        todo = [b for b in reads if b.name not in found]
        if not todo:
            break
        pick: dict[str, Any] = {}
        for b in todo:
            for p, v in _shared_pick(a, b, snap, rng, fresh=schema_less(a, b) and attempt == 1).items():
                pick.setdefault(p, v)
        for p in set(pick) & set(s.env.config.known_values):  # a value the user states is never made up
            pick[p] = snap.values[p][0]
        args_a = fill_args(a, snap, rng, pick=pick)
        calls = [(b, fill_args(b, snap, rng, pick={p: v for p, v in pick.items() if p in b.properties})) for b in todo]
        befores = [s.call_at_seed(b.name, args_b) for b, args_b in calls]
        s.reset()
        if not s.call(a.name, args_a).ok:
            continue
        for (b, args_b), before in zip(calls, befores, strict=True):
            if _changed(b, a, before, s.call(b.name, args_b), needs_workdir(s.env.config)):
                found.add(b.name)
    return found


def _flow_params(b: ToolSpec) -> list[str]:
    """B's parameters a value of another tool's result may feed: required, naming something (not free
    text, nor the name a write gives the thing it makes); SQL text, whose table a result may name; a search's
    words, which a name from a result may be."""
    return [
        p
        for p in b.required
        if (p not in FREE_TEXT or sql_kind(b, p) or (b.read_only and p in SEARCH_PARAMS))
        and not (p in OWN_NAME and not b.read_only)
        and _schema_type(b.properties.get(p)) in (None, "string", "array", "integer")
    ]


def _schema_type(spec: Any) -> Any:
    spec = spec or {}
    return spec.get("type") or next((x.get("type") for x in spec.get("anyOf", []) if x.get("type") != "null"), None)


def _ranked(offered: list[tuple[str, Any]], param: str) -> list[tuple[str, Any]]:
    """A result's (field, value) pairs, those whose field names the parameter first, strings only, a few."""
    stem = param[:-1] if param.endswith("s") else param
    strings = [(f, v) for f, v in offered if isinstance(v, str) and v.strip()]
    near = [(f, v) for f, v in strings if f in (param, stem) or f.endswith(stem) or stem.endswith(f)]
    return (near + [fv for fv in strings if fv not in near])[:4]


NO_SUCH = "prove-no-such-{}"  # a value no server holds: what a tool does with it is the control


def _strings(x: Any) -> set[str]:
    if isinstance(x, dict):
        return set().union(*(_strings(v) for v in x.values())) if x else set()
    if isinstance(x, list):
        return set().union(*(_strings(v) for v in x)) if x else set()
    return {str(x)} if isinstance(x, (str, int)) and not isinstance(x, bool) else set()


def _flow_run(
    s: Session, snap: Snapshot, a: ToolSpec, rng: random.Random
) -> tuple[dict[str, Any], Any, list[tuple[str, Any]]]:
    """A run on a session reset to the seed (up to three argument draws) until its result names something
    it brought: a value A was given that the user already had (an observed one) only passes through A."""
    known = {str(v) for vals in snap.values.values() for v in vals}
    for _try in range(3):
        args_a = fill_args(a, snap, rng)
        s.reset()
        ra = s.call(a.name, args_a)
        passed = _strings(args_a) & known
        offered = [(f, v) for f, v in result_values(ra.data, a.name) if str(v) not in passed] if ra.ok else []
        if offered:
            return args_a, ra.data, offered
    return {}, None, []


def _names(res: Any, value: Any) -> bool:
    """The result of a successful call mentions ``value``."""
    return res.ok and str(value) in (res.text or json.dumps(res.data, default=str))


def _evidence(res: Any, control: Any, value: Any) -> bool:
    """B's call with ``value`` shows B took it: it succeeded where the control failed, or it names the
    value where the control (answered) named nothing."""
    return res.ok and (not control.ok or _names(res, value))


def confirm_value_flow(
    s: Session,
    snap: Snapshot,
    a: ToolSpec,
    tools: list[ToolSpec],
    rng: random.Random,
    accepted: dict[str, dict[str, Any]] | None = None,
    reads_only: bool = False,
    controls: dict[tuple[str, str], Any] | None = None,
) -> list[Edge]:
    """Edges A -> B for a tool A with no output schema: a value seen in A's live result that B accepts,
    where that says something: B refuses a value nothing holds, or B answers such a value without
    naming it (an empty lookup) and names the value from A. A runs on a session reset to the seed;
    reads of B follow it on that state, and the session is reset (and A run again) after each write of B.
    ``accepted`` gets, per tool B and parameter, the argument B accepted (for a parameter no probe observed).
    ``reads_only``: only reads are tried as B (no reset between them). ``controls``: the answers of writes B to a
    value nothing holds, per (B, parameter), kept across the tools A of a discovery."""
    stated = set(s.env.config.known_values)
    args_a, data_a, offered = _flow_run(s, snap, a, rng)
    if not offered:
        return []  # A does not run here, or its result names nothing another tool could take
    edges = []

    last: dict[str, Any] = {}

    def attempt(b: ToolSpec, p: str, v: Any) -> Any:
        last.clear()
        last.update(fill_args(b, snap, rng, fixed={p: v}, context=[data_a]))
        res = s.call(b.name, dict(last))
        if not b.read_only:
            s.reset()
            s.call(a.name, args_a)
        return res

    # reads first: they leave the state as A left it
    for b in sorted(
        (t for t in tools if t.name != a.name and (t.read_only or not reads_only)), key=lambda t: not t.read_only
    ):
        for p in (p for p in _flow_params(b) if p not in stated):  # a value the user states comes from no result
            # a write's answer to a value nothing holds is its own, whatever A did: asked once (each ask costs a reset)
            key = (b.name, p)
            if controls is not None and not b.read_only and key in controls:
                control = controls[key]
            else:
                control = attempt(b, p, NO_SUCH.format(p))
                if controls is not None and not b.read_only:
                    controls[key] = control
            if _names(control, NO_SUCH.format(p)):
                continue  # B echoes anything it is given: its success would prove nothing
            found = next((f for f, v in _ranked(offered, p) if _evidence(attempt(b, p, v), control, v)), None)
            if found is not None:
                if accepted is not None and unobserved(snap, p):
                    accepted.setdefault(b.name, {}).setdefault(p, last[p])
                edges.append(Edge(src=a.name, dst=b.name, kind="explicit", fields={found: p}, source="live"))
                break
    return edges


def unobserved(snap: Snapshot, p: str) -> bool:
    """No probe saw a value for ``p`` (nor, for an array, for its items)."""
    return not (snap.values.get(p) or (p.endswith("s") and snap.values.get(p[:-1])))


def with_accepted(snap: Snapshot, accepted: dict[str, dict[str, Any]]) -> Snapshot:
    """The snapshot with the arguments tools accepted added as observed values of their parameters (an array's
    items under the singular name, where :func:`pipeline.language.values.fill_args` looks for an array's values)."""
    if not accepted:
        return snap
    values = {k: list(v) for k, v in snap.values.items()}
    for params in accepted.values():
        for p, v in sorted(params.items()):
            key, vals = (p[:-1] if p.endswith("s") else p, v) if isinstance(v, list) else (p, [v])
            values[key] = values.get(key, []) + [x for x in vals if x not in values.get(key, [])]
    return snap.model_copy(update={"values": values})


class Pace:
    """Times the steps of a discovery phase and projects the rest: where the rest would run past the server's
    ``time_budget_s``, it stops the discovery at once with the reason (:class:`ServerBudgetExceeded`), instead of
    spending the whole budget to the same end."""

    def __init__(self, env: Environment):
        self.env = env
        self.phase, self.total, self.done, self.start = "", 0, 0, time.monotonic()

    def begin(self, phase: str, total: int) -> None:
        self.phase, self.total, self.done, self.start = phase, total, 0, time.monotonic()

    def step(self) -> None:
        self.done += 1
        now = time.monotonic()
        spent, left = now - self.start, self.env.deadline - now
        rest = spent / self.done * (self.total - self.done)
        if self.done >= 3 and spent >= 1.0 and rest > left:
            cfg = self.env.config
            raise ServerBudgetExceeded(
                f"graph discovery of server {cfg.name!r} would need about {rest:.0f}s more for its {self.phase} "
                f"({self.total - self.done} of {self.total} left at {spent / self.done:.1f}s each, as timed), past "
                f"the {max(left, 0):.0f}s left of its time_budget_s of {cfg.time_budget_s:g}s: raise time_budget_s, "
                "or make each step cheaper (a server that starts faster; reading tools annotated readOnlyHint or "
                "allow-listed, whose sessions keep their process)"
            )


def _implicit_pairs(tools: list[ToolSpec]) -> list[tuple[ToolSpec, ToolSpec]]:
    """(writer A, tool B) pairs the implicit rule probes: a pair without a shared parameter cannot be probed on a
    common entity, unless B lists everything (a read-only tool with no required input sees every write), or B is
    schema-less and needs no input (it can be tried in any state: press the brake, then start)."""
    props = {t.name: set(t.properties) for t in tools}
    out = []
    for a in (t for t in tools if not t.read_only):
        for b in tools:
            lists_all = b.read_only and not b.required
            bare = not b.required and schema_less(a, b)
            if a.name != b.name and (props[a.name] & props[b.name] or lists_all or bare):
                out.append((a, b))
    return out


def discover(
    env: Environment,
    snap: Snapshot,
    cfg: GraphConfig,
    seed: int = 0,
    llm_classifier: Callable[[list[ToolSpec]], list[Edge]] | None = None,
) -> DependencyGraph:
    rng = random.Random(f"graph:{snap.server}:{seed}")
    tools = snap.tools
    edges: dict[tuple[str, str, str], Edge] = {}
    accepted: dict[str, dict[str, Any]] = {}
    pace = Pace(env)
    with env.session(snap.seed) as s:  # one session for every probe, reset to the seed before each
        candidates = candidate_explicit(tools)
        pace.begin("output-schema edges", len(candidates))
        for a, b, p, f in candidates:
            key = (a.name, b.name, "explicit")
            if key in edges and edges[key].confirmed:
                edges[key].fields.setdefault(f, p)
                continue
            ok = _confirm_explicit(s, snap, a, b, p, f, rng) if cfg.confirm_live else True
            pace.step()
            if key in edges and not ok:
                continue
            edges[key] = Edge(
                src=a.name,
                dst=b.name,
                kind="explicit",
                fields={f: p},
                source="schema+live" if cfg.confirm_live else "schema",
                confirmed=ok,
            )
        if (
            cfg.confirm_live and cfg.value_flow
        ):  # tools with no output schema: values their results carry, confirmed live
            # a server not written with prove's kit names its output fields as it likes (``name`` feeds ``names``):
            # every tool's values are offered, not only those of tools whose result is text
            sources = [a for a in tools if a.text_result or env.config.kind != "builtin"]
            pace.begin("value-flow edges", len(sources))
            controls: dict[tuple[str, str], Any] = {}
            for a in sources:  # a tool with an informative schema offers its values to reads only (cheap: no reset)
                flows = confirm_value_flow(s, snap, a, tools, rng, accepted, not a.text_result, controls)
                for e in flows:
                    edges.setdefault((e.src, e.dst, "explicit"), e)
                pace.step()
        if cfg.implicit:
            isnap = with_accepted(
                snap, accepted
            )  # a write another tool's result made possible is tried with that value
            pairs = [
                (a, b)
                for a, b in _implicit_pairs(tools)
                if not ((a.name, b.name, "explicit") in edges and edges[(a.name, b.name, "explicit")].confirmed)
            ]
            # where a reset starts a server process, the reads that follow one writer share its run
            batched = env.config.isolation == "process"
            pace.begin("write -> read pairs", len(pairs))
            writers = {a.name: a for a, _ in pairs}  # in the tools' order
            for a in writers.values() if batched else ():
                reads = [b for x, b in pairs if x.name == a.name and b.read_only]
                for name in sorted(_implicit_reads(s, isnap, a, reads, rng)):
                    edges[(a.name, name, "implicit")] = Edge(src=a.name, dst=name, kind="implicit", source="live")
                for _ in reads:
                    pace.step()
            for a, b in pairs:
                if batched and b.read_only:
                    continue
                if _confirm_implicit(s, isnap, a, b, rng):
                    edges[(a.name, b.name, "implicit")] = Edge(src=a.name, dst=b.name, kind="implicit", source="live")
                pace.step()
    if llm_classifier is not None:
        for e in llm_classifier(tools):
            edges.setdefault((e.src, e.dst, e.kind), e)
    confirmed = [e for e in edges.values() if e.confirmed]
    unchainable = {}
    touched = {e.src for e in confirmed} | {e.dst for e in confirmed}
    for t in tools:
        if t.name not in touched:
            if not t.output_schema:
                unchainable[t.name] = "no output schema and no live-confirmed dependency"
            else:
                unchainable[t.name] = "no confirmed dependency with another tool"
    gid = "graph-" + stable_hash([snap.server, snap.schema_hash, [e.model_dump() for e in edges.values()]], 12)
    return DependencyGraph(
        graph_id=gid,
        server=snap.server,
        schema_hash=snap.schema_hash,
        snapshot_id=snap.snapshot_id,
        tools=[t.name for t in tools],
        edges=list(edges.values()),
        unchainable=unchainable,
        accepted=accepted,
    )


def cached_discover(
    env: Environment,
    snap: Snapshot,
    cfg: GraphConfig,
    cache_dir: Path,
    seed: int = 0,
    llm_classifier: Callable[[list[ToolSpec]], list[Edge]] | None = None,
) -> tuple[DependencyGraph, bool]:
    """Discover, or load the graph cached for this server's schema hash and the edge-finding code
    (:func:`rules_hash`). Returns (graph, cache_hit)."""
    key = stable_hash([snap.server, snap.schema_hash, cfg.model_dump(exclude={"cache_dir"}), seed, rules_hash()], 16)
    path = cache_dir / f"{snap.server}-{key}.json"
    if path.exists():
        try:
            g = DependencyGraph.model_validate_json(path.read_text())
            g.snapshot_id = snap.snapshot_id
            return g, True
        except ValueError:
            pass  # a corrupt cache entry is rebuilt
    g = discover(env, snap, cfg, seed, llm_classifier)
    atomic_write_text(path, g.model_dump_json(indent=1))
    return g, False


def to_networkx(g: DependencyGraph) -> nx.MultiDiGraph:
    G = nx.MultiDiGraph()
    G.add_nodes_from(g.tools)
    for e in g.edges:
        if e.confirmed:
            G.add_edge(e.src, e.dst, kind=e.kind, fields=e.fields, source=e.source)
    return G


def _pair_prompt(a: ToolSpec, b: ToolSpec) -> str:
    return (
        'Two tools of one service. Answer JSON {"direction": "a_to_b"|"b_to_a"|"none", '
        '"kind": "explicit"|"implicit"|"none"}.\n'
        f"A: {a.name}: {a.description}\ninputs {json.dumps(a.properties)}\n"
        f"B: {b.name}: {b.description}\ninputs {json.dumps(b.properties)}"
    )


def llm_pair_classifier(client: Any, model: str) -> Callable[[list[ToolSpec]], list[Edge]]:
    """The paper's classifier: ask an OpenAI-compatible model about tool pairs (optional)."""

    def classify(tools: list[ToolSpec]) -> list[Edge]:
        pairs = [(a, b, _pair_prompt(a, b)) for a in tools for b in tools if a.name < b.name]
        teacher = getattr(client, "teacher", None)
        if teacher is not None:  # every pair's prompt is known up front: all of them in flight at once
            teacher.fetch([prompt for _, _, prompt in pairs])
        edges = []
        for a, b, prompt in pairs:
            text = client.complete(prompt)
            try:
                ans = json.loads(text[text.index("{") : text.rindex("}") + 1])
            except ValueError:
                continue
            if ans.get("kind") in ("explicit", "implicit") and ans.get("direction") in ("a_to_b", "b_to_a"):
                s, d = (a, b) if ans["direction"] == "a_to_b" else (b, a)
                edges.append(Edge(src=s.name, dst=d.name, kind=ans["kind"], source="llm", confirmed=True))
        return edges

    return classify
