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
import itertools
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
from pipeline.discovery import value_flow
from pipeline.discovery.probe import option_params
from pipeline.discovery.sql_schema import confirm_statement_loop, statement_param
from pipeline.discovery.value_flow import FREE_TEXT, OWN_NAME, confirm_value_flow, with_accepted
from pipeline.env import Environment, ServerBudgetExceeded, Session
from pipeline.env.workdir import needs_workdir, same_answer, same_result
from pipeline.language import entities as discovery_module
from pipeline.language import fields as fields_module
from pipeline.language import schema_values, state_values, value_agreement, value_plans
from pipeline.language import values as values_module
from pipeline.language.fields import find_field, output_fields
from pipeline.language.schema_values import schema_of, synth_value
from pipeline.language.sqltext import sql_kind
from pipeline.language.statements import check_of
from pipeline.language.values import fill_args


@functools.lru_cache(maxsize=1)
def rules_hash() -> str:
    """A hash of the code that decides the edges (this module and the value flow's, the value filler that confirms
    them with its sources, the reader of result fields and the text-result reader), in the cache key: a cached graph
    is reused only by the code that found it."""
    h = hashlib.sha256()
    filler = (values_module, state_values, value_plans, schema_values, value_agreement)
    ours = (__name__, value_flow.__name__, confirm_statement_loop.__module__, "pipeline.language.statements")
    for mod in (*ours, *(m.__name__ for m in filler), fields_module.__name__, discovery_module.__name__):
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
            same = same_answer(after.data, before.data) or (copied and same_result(after.data, before.data))
            if after.ok and not same:
                return True
        elif not before.ok and after.ok:
            return True
    return False


def _changed(b: ToolSpec, a: ToolSpec, before: Any, after: Any, copied: bool) -> bool:
    """What :func:`_confirm_implicit` counts as B depending on A, for B's call before A and after it (``copied``: the
    session runs in a copy of its files, whose new times are left out of the comparison)."""
    if b.read_only and before.ok:
        same = same_answer(after.data, before.data) or (copied and same_result(after.data, before.data))
        return after.ok and not same
    return not before.ok and after.ok and (not b.read_only or schema_less(a, b))


def _in_each_option(b: ToolSpec, args_b: dict[str, Any]) -> list[dict[str, Any]]:
    """A read's calls: the one call, or for a read taking a closed set of options (:func:`option_params`) one call
    per option (up to twelve combinations): a write's effect may show in one of them only."""
    closed = option_params(b)
    if not closed:
        return [args_b]
    combos = itertools.islice(itertools.product(*closed.values()), 12)
    return [{**args_b, **dict(zip(closed, combo, strict=True))} for combo in combos]


def _closed_variants(a: ToolSpec) -> list[dict[str, Any]]:
    """A write's required parameters with closed values (an enum, a boolean), one combination per attempt (up to
    four): locking and unlocking, engaging and releasing, each tried, rather than whichever two draws came up."""
    closed = {}
    for p in a.required:
        spec = schema_of(a.properties.get(p) or {})
        closed_values = spec.get("enum") or ([False, True] if spec.get("type") == "boolean" else None)
        if closed_values:
            closed[p] = closed_values
    combos = itertools.islice(itertools.product(*closed.values()), 4) if closed else ()
    return [dict(zip(closed, combo, strict=True)) for combo in combos]


def _showing(
    b: ToolSpec, a: ToolSpec, args_a: dict[str, Any], args_b: dict[str, Any], snap: Snapshot
) -> dict[str, Any]:
    """``args_b`` with, where B reads SQL and A writes it, the read that shows what A's statement did
    (:func:`pipeline.language.statements.check_of`: the new row by a value it was given, the changed row, the count)."""
    pa, pb = statement_param(a, ("write", "any")), statement_param(b, ("read", "any"))
    check = check_of(args_a[pa], snap.tables) if pa and pb and isinstance(args_a.get(pa), str) else None
    return {**args_b, pb: check} if check and pb else args_b


def _implicit_reads(
    s: Session, snap: Snapshot, a: ToolSpec, reads: list[ToolSpec], rng: random.Random
) -> dict[str, dict[str, Any]]:
    """The reads among ``reads`` that depend on writer A, all read after one run of A (where a reset costs a server
    process, one per attempt instead of one per pair): per attempt, one value for each parameter A shares with any
    of them (observed; on the second attempt a new one for a write without a schema), every read's result on the
    seed (answered from memory where seen before), then A, then every read again; a read taking options is read in
    each (:func:`_in_each_option`). Per read found: the options under which A's effect showed (else none)."""
    found: dict[str, dict[str, Any]] = {}
    variants = _closed_variants(a)
    for attempt in range(max(2, len(variants))):
        todo = [b for b in reads if b.name not in found]
        if not todo:
            break
        pick: dict[str, Any] = dict(variants[attempt % len(variants)]) if variants else {}
        for b in todo:
            for p, v in _shared_pick(a, b, snap, rng, fresh=schema_less(a, b) and attempt % 2 == 1).items():
                pick.setdefault(p, v)
        for p in set(pick) & set(s.env.config.known_values):  # a value the user states is never made up
            pick[p] = snap.values[p][0]
        args_a = fill_args(a, snap, rng, pick=pick)
        calls = [
            (b, each)
            for b in todo
            for each in _in_each_option(
                b,
                _showing(
                    b,
                    a,
                    args_a,
                    fill_args(b, snap, rng, pick={p: v for p, v in pick.items() if p in b.properties}),
                    snap,
                ),
            )
        ]
        befores = [s.call_at_seed(b.name, args_b) for b, args_b in calls]
        s.reset()
        if not s.call(a.name, args_a).ok:
            continue
        for (b, args_b), before in zip(calls, befores, strict=True):
            if b.name not in found and _changed(b, a, before, s.call(b.name, args_b), needs_workdir(s.env.config)):
                found[b.name] = {p: args_b[p] for p in option_params(b)}
    return found


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
            lists_all = b.read_only and (not b.required or set(b.required) <= set(option_params(b)))
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

            # (and a read taking options is read in each, after one run of the writer, whatever the isolation)
            def read_after(b: ToolSpec) -> bool:
                return b.read_only and (batched or bool(option_params(b)))

            for a in writers.values():
                reads = [b for x, b in pairs if x.name == a.name and read_after(b)]
                for name, when in sorted(_implicit_reads(s, isnap, a, reads, rng).items()) if reads else ():
                    edge = Edge(src=a.name, dst=name, kind="implicit", source="live", when=when)
                    edges[(a.name, name, "implicit")] = edge
                for _ in reads:
                    pace.step()
            for a, b in pairs:
                if read_after(b):
                    continue
                if _confirm_implicit(s, isnap, a, b, rng):
                    edges[(a.name, b.name, "implicit")] = Edge(src=a.name, dst=b.name, kind="implicit", source="live")
                pace.step()
        for t in tools if cfg.confirm_live else ():  # a tool that runs any statement: a change, then the read
            if statement_param(t) and confirm_statement_loop(s, snap, t, rng):
                edges[(t.name, t.name, "implicit")] = Edge(src=t.name, dst=t.name, kind="implicit", source="live")
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
    classifier_id: str = "",
) -> tuple[DependencyGraph, bool]:
    """Discover, or load the graph cached for the same server: its schema hash, its settings (the servers file's
    entry: known values, setup, allow-lists), the state its probe saw, the discovery settings and seed, and the
    edge-finding code (:func:`rules_hash`), and the model that classified tool pairs (``classifier_id``, with
    ``graph.llm``). Returns (graph, cache_hit).

    A change to any of them is a new key: a servers file given ``known_values`` or a server seeded with other data
    is discovered again, in the same data folder too; builds in different folders sharing one cache folder
    (``graph.cache_dir``, or ``PROVE_GRAPH_CACHE_DIR``) share only graphs found on the same server."""
    key = stable_hash(
        [
            snap.server,
            snap.schema_hash,
            env.config.model_dump(mode="json"),
            snap.model_dump(mode="json", include={"entities", "values", "feeds", "tables", "secrets"}),
            cfg.model_dump(exclude={"cache_dir"}),
            seed,
            rules_hash(),
            *([classifier_id] if classifier_id else []),
        ],
        16,
    )
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
            G.add_edge(e.src, e.dst, kind=e.kind, fields=e.fields, source=e.source, when=e.when)
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
