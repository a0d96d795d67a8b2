"""Lineage: the full path of an example or a rejection in a corpus version (``prove lineage``).

A rejection names the type of the record it rejected (``record_type``, :data:`pipeline.core.records.RecordType`),
which says how to read its payload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.corpus.columns import messages_of, reference_of, trace_of
from pipeline.corpus.store import REJECTION_SCHEMA, list_versions, read_examples, resolve_version


def _loads(s: str | None, default: Any) -> Any:
    if not s:
        return default
    try:
        return json.loads(s)
    except (TypeError, ValueError):
        return default


def _calls(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each executed (and replay-checked) call with its result or its error."""
    out = []
    for i, t in enumerate(trace):
        c = {
            "index": i,
            "turn": t.get("turn"),
            "name": t.get("name"),
            "arguments": t.get("arguments", {}),
            "ok": bool(t.get("ok")),
            "reference": t.get("reference", True),
        }
        if t.get("ok"):
            c["result"] = t.get("result")
        else:
            c["error_code"] = t.get("error_code")
            c["error"] = t.get("error")
        out.append(c)
    return out


def _user_turns(messages: list[dict[str, Any]]) -> list[str]:
    return [m.get("content") or "" for m in messages if m.get("role") == "user"]


def _chain_tools(reference: list[list[dict[str, Any]]]) -> list[str]:
    return [c["name"] for turn in reference for c in turn]


def _payload_path(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """snapshot / chain / query / calls as far as a rejected record carries them."""
    out: dict[str, Any] = {"record": kind}
    if kind == "chain":
        out["snapshot"] = {"snapshot_id": body.get("snapshot_id"), "seed": body.get("seed")}
        out["chain"] = {
            "chain_id": body.get("chain_id"),
            "graph_id": body.get("graph_id"),
            "tools": [s["name"] for s in body.get("steps", [])],
            "steps": [
                {
                    "name": s["name"],
                    "args": {
                        k: (f"step {v.get('step')}.{v.get('field')}" if v.get("kind") == "step" else v.get("value"))
                        for k, v in (s.get("args") or {}).items()
                    },
                    "depends_on": s.get("depends_on", []),
                }
                for s in body.get("steps", [])
            ],
        }
        if body.get("dry_run"):  # a chain rejected at the query stage: the calls of its dry run
            out["calls"] = _calls(body["dry_run"])
            out["calls_from"] = "dry_run"
            request = body.get("request") or {}
            out["query"] = {
                "written": False,  # the query stage rejects a chain in its dry run, before it writes the request
                "info_level": request.get("info_level"),
                "persona": request.get("persona"),
                "asks": _asks(body.get("steps", []), body["dry_run"]),
            }
    elif kind == "query":
        out["snapshot"] = {"snapshot_id": body.get("snapshot_id"), "seed": body.get("seed")}
        out["chain"] = {"chain_id": body.get("chain_id")}
        out["query"] = {
            "query_id": body.get("query_id"),
            "info_level": body.get("info_level"),
            "persona": body.get("persona"),
            "turns": body.get("turns", []),
            "withheld": body.get("withheld", {}),
        }
    elif kind == "conversation":
        out["snapshot"] = {"snapshot_id": body.get("snapshot_id"), "seed": body.get("seed")}
        out["chain"] = {"chain_id": body.get("chain_id"), "tools": _chain_tools(body.get("reference") or [])}
        out["query"] = {
            "query_id": body.get("query_id"),
            "info_level": body.get("info_level"),
            "persona": body.get("persona"),
            "turns": _user_turns(body.get("messages") or []),
        }
        out["conversation"] = {
            "conversation_id": body.get("conversation_id"),
            "kind": body.get("kind"),
            "outcomes": body.get("outcomes", []),
            "final_state_hash": body.get("final_state_hash"),
        }
        out["calls"] = _calls(body.get("trace") or [])
    elif kind == "probe_call":  # a probe call on which the server crashed or hung
        out["calls"] = _calls([body])
        out["calls_from"] = "probe"
    elif kind == "graph":
        out["snapshot"] = {"snapshot_id": body.get("snapshot_id")}
        out["graph"] = {
            "graph_id": body.get("graph_id"),
            "tools": len(body.get("tools", [])),
            "confirmed_edges": sum(1 for e in body.get("edges", []) if e.get("confirmed")),
            "unchainable": body.get("unchainable", {}),
        }
    return out


def _asks(steps: list[dict[str, Any]], dry_run: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a request not yet written was to ask for, step by step: each tool with the values the user gives it (the
    dry run's arguments less those an earlier step's result supplies) and the arguments that come from earlier steps.
    """
    out = []
    for i, call in enumerate(dry_run):
        spec = (steps[i].get("args") or {}) if i < len(steps) else {}
        from_steps = sorted(p for p, src in spec.items() if (src or {}).get("kind") == "step")
        values = {p: v for p, v in (call.get("arguments") or {}).items() if p not in from_steps}
        out.append({"name": call.get("name"), "values": values, "from_steps": from_steps})
    for st in steps[len(dry_run) :]:  # the steps the dry run stopped before
        from_steps = sorted(p for p, src in (st.get("args") or {}).items() if (src or {}).get("kind") == "step")
        out.append({"name": st.get("name"), "values": {}, "from_steps": from_steps, "reached": False})
    return out


def rejection_calls(payload: str, record_type: str) -> list[dict[str, Any]]:
    """The calls a rejected record carries (a conversation's trace, a chain's dry run), as ``lineage`` shows them."""
    return _payload_path(record_type, _loads(payload, None) or {}).get("calls", [])


def rejection_story(r: Any) -> dict[str, Any]:
    """The whole path of one rejection (a :class:`~pipeline.core.records.Rejection`, or a row of a version's
    rejections): its rule, the ids it came from, and the snapshot, chain, query and calls its record carries."""
    get = r.get if isinstance(r, dict) else lambda k, default=None: getattr(r, k, default)
    out = {
        "type": "rejection",
        "id": get("rejection_id"),
        "server": get("server"),
        "rule": {"stage": get("stage"), "reason": get("reason"), "detail": get("detail")},
        "upstream": get("upstream") or {},
        **_payload_path(get("record_type") or "none", _loads(get("payload"), None) or {}),
    }
    if "calls" in out:
        out["failing_calls"] = [c["index"] for c in out["calls"] if not c["ok"]]
    return out


RESULT_CHARS = 4000  # a successful call's result beyond this is cut, saying how much (whole: prove lineage ID --json)


def story_markdown(story: dict[str, Any], redactor: Any = None) -> str:
    """A rejection's story as Markdown a reader follows top to bottom: the rule, where it came from, the request,
    every call with its arguments and its result or error (failing calls whole), sensitive values redacted."""
    red = redactor if redactor is not None else _NoRedaction()
    rule = story["rule"]
    lines = [
        f"**{story['id']}** on `{story.get('server')}`: rule `{rule['stage']}/{rule['reason']}`",
        "",
        f"> {red.text(rule.get('detail') or '')}",
        "",
        "upstream: " + ", ".join(f"{k} `{v}`" for k, v in (story.get("upstream") or {}).items() if v),
    ]
    chain = story.get("chain") or {}
    if chain.get("tools"):
        lines += ["", f"chain `{chain.get('chain_id')}`: " + " → ".join(f"`{t}`" for t in chain["tools"])]
    query = story.get("query") or {}
    if query.get("turns"):
        lines += ["", f"request ({query.get('info_level')}, {query.get('persona')}):"]
        lines += [f"{i + 1}. {red.text(turn)}" for i, turn in enumerate(query["turns"])]
    elif query.get("asks"):
        said = ", ".join(str(v) for v in (query.get("info_level"), query.get("persona")) if v)
        lines += [
            "",
            f"request{f' ({said})' if said else ''}: not written (the query stage rejects a chain in its dry run, "
            "before it writes the request); what it was to ask for, step by step:",
        ]
        lines += [f"{i + 1}. {ask_markdown(a, redactor)}" for i, a in enumerate(query["asks"])]
    calls = story.get("calls") or []
    if calls:
        source = {"dry_run": "the query stage's dry run", "probe": "the probe"}.get(
            story.get("calls_from"), "the trace"
        )
        lines += ["", f"calls ({source}):"]
        lines += [f"{c['index'] + 1}. {call_markdown(c, redactor)}" for c in calls]
    lines += ["", f"The same from the command line: `prove lineage {story['id']}`."]
    return "\n".join(lines)


def ask_markdown(ask: dict[str, Any], redactor: Any = None) -> str:
    """One step of a request not written: the tool, the values the user gives it, what comes from earlier steps."""
    red, values = _redacted_args({"arguments": ask.get("values")}, redactor)
    parts = [f"`{ask.get('name')}`", f"with `{values}`" if ask.get("values") else "with no value of the user's"]
    if ask.get("from_steps"):
        parts.append("and " + ", ".join(f"`{p}`" for p in ask["from_steps"]) + " from earlier results")
    if ask.get("reached") is False:
        parts = [f"`{ask.get('name')}`: not reached (the dry run stopped before it)"]
    return red.text(" ".join(parts))


def call_markdown(call: dict[str, Any], redactor: Any = None) -> str:
    """One call: ✓ with its result (cut past ``RESULT_CHARS``) or ✗ with its error code and whole message."""
    red, args = _redacted_args(call, redactor)
    if not call.get("ok"):
        return red.text(f"✗ `{call.get('name')}` `{args}` → `{call.get('error_code')}`: {call.get('error') or ''}")
    result = json.dumps(red.obj(call.get("result")), sort_keys=True, default=str)
    if len(result) > RESULT_CHARS:
        result = result[:RESULT_CHARS] + f"… ({len(result) - RESULT_CHARS} more characters)"
    empty = " (nothing came back)" if call.get("result") in (None, [], {}, "") else ""
    return red.text(f"✓ `{call.get('name')}` `{args}` → `{result}`{empty}")


def _redacted_args(call: dict[str, Any], redactor: Any) -> tuple[Any, str]:
    """The redactor for one call (the snapshot's sensitive values and the call's own) and its arguments as JSON."""
    red = redactor.with_values(redactor.call_values(call.get("arguments"))) if redactor is not None else _NoRedaction()
    return red, json.dumps(red.obj(call.get("arguments")), sort_keys=True, default=str)


class _NoRedaction:
    def text(self, s: str) -> str:
        return s

    def obj(self, o: Any) -> Any:
        return o


def _lineage_in(path: Path, record_id: str) -> dict[str, Any] | None:
    rej_file = path / "rejections.parquet"
    rej = pl.read_parquet(rej_file) if rej_file.exists() else pl.DataFrame(schema=REJECTION_SCHEMA)
    hit = rej.filter(pl.col("rejection_id") == record_id)
    if hit.height:
        r = hit.row(0, named=True)
        # a version written before rejections named their record type: none
        return {"version": path.name, **rejection_story({**r, "upstream": _loads(r["upstream"], {})})}
    ex = read_examples(path)
    hit = ex.filter((pl.col("example_id") == record_id) | (pl.col("conversation_id") == record_id))
    if not hit.height:
        return None
    e = hit.row(0, named=True)
    reference = reference_of(e["reference"])
    out = {
        "type": "example",
        "version": path.name,
        "id": e["example_id"],
        "server": e["server"],
        "servers": e["servers"],
        "kind": e["kind"],
        "split": e["split"],
        "augmentations": e["augmentations"],
        "snapshot": {"snapshot_id": e["snapshot_id"], "seed": e["env_seed"]},
        "chain": {"chain_id": e["chain_id"], "tools": _chain_tools(reference)},
        "query": {
            "query_id": e["query_id"],
            "info_level": e["info_level"],
            "persona": e["persona"],
            "turns": _user_turns(messages_of(e["messages"])),
        },
        "conversation": {
            "conversation_id": e["conversation_id"],
            "parent_id": e["parent_id"],
            "outcomes": e["outcomes"],
            "final_state_hash": e["final_state_hash"],
        },
        "reference": reference,
        "calls": _calls(trace_of(e["trace"])),
    }
    # rejections of records on the same path (another query or conversation of the same chain, say)
    keys = {k: v for k, v in (("chain_id", e["chain_id"]), ("conversation_id", e["parent_id"])) if v}
    related = []
    for r in rej.iter_rows(named=True):
        up = _loads(r["upstream"], {})
        if any(up.get(k) == v for k, v in keys.items()):
            related.append({"rejection_id": r["rejection_id"], "stage": r["stage"], "reason": r["reason"]})
    out["related_rejections"] = related
    return out


def lineage(data_dir: str | Path, record_id: str, version: str | None = None) -> dict[str, Any] | None:
    """The full path of an example or a rejection: snapshot, chain, query, every call with its result
    or error, and (for a rejection) the rule that rejected it.

    Looks in ``version`` (default: the latest) and then in the other versions, newest first."""
    first = resolve_version(data_dir, version)
    others = [Path(v["path"]) for v in reversed(list_versions(data_dir)) if Path(v["path"]) != first]
    for path in [first, *others]:
        found = _lineage_in(path, record_id)
        if found is not None:
            return found
    return None


def _call_text(call: dict[str, Any], redactor: Any) -> str:
    """A failing call whole (its arguments as valid JSON, its error code and message), or, for a call that
    succeeded but gave the next step nothing to use, what it returned."""
    red, args = _redacted_args(call, redactor)
    head = f"{call.get('name')}({args})"
    if call.get("ok"):
        result = json.dumps(red.obj(call.get("result")), default=str)
        short = result if len(result) <= 200 else result[:200] + f"… ({len(result) - 200} more characters)"
        return red.text(f"{head} -> ok, but returned nothing the next step could use: {short}")
    return red.text(f"{head} -> {call.get('error_code')}: {call.get('error') or ''}")


def rejection_samples(rejections: list[Any], per_reason: int = 5, redactor: Any = None) -> list[dict[str, Any]]:
    """Up to ``per_reason`` rejections of each stage/reason (in id order): id, rule, server, the first
    failing call (name, arguments, error) where the record carries calls, and the detail; sensitive
    values redacted. ``prove lineage <id>`` shows the whole path of any of them."""
    by: dict[str, list[Any]] = {}
    for r in sorted(rejections, key=lambda r: r.rejection_id):
        by.setdefault(f"{r.stage}/{r.reason}", []).append(r)
    rows = []
    for rule in sorted(by, key=lambda k: (-len(by[k]), k)):
        for r in by[rule][:per_reason]:
            calls = rejection_calls(r.payload, r.record_type)
            failing = next((c for c in calls if not c.get("ok")), None)
            if failing is None and calls and r.reason == "unresolvable_dependency":
                failing = calls[-1]  # the read whose result held nothing the next step needed
            detail = redactor.text(r.detail) if redactor is not None else r.detail
            rows.append(
                {
                    "rejection_id": r.rejection_id,
                    "rule": rule,
                    "server": r.server or "",
                    "failing_call": _call_text(failing, redactor) if failing else "",
                    "detail": detail,
                }
            )
    return rows


def samples_markdown(rows: list[dict[str, Any]], total_by_rule: dict[str, int]) -> str:
    """The samples as one markdown table per rule, with how to see the rest."""

    def cell(v: str) -> str:
        return v.replace("|", "\\|").replace("\n", " ")

    out = [
        "Sample rejections per rule. The whole story of the first of each rule (where it came from, the request, "
        "every call with its result or error) is in this asset's `lineage_<stage>_<reason>` entries; any one "
        "with `prove lineage <rejection_id>`; all of them with `prove rejected --reason REASON`."
    ]
    for rule in dict.fromkeys(r["rule"] for r in rows):
        out += [
            "",
            f"### {rule} ({total_by_rule.get(rule, 0)} in all)",
            "",
            "| rejection_id | server | failing call | detail |",
            "|---|---|---|---|",
        ]
        out += [
            f"| `{r['rejection_id']}` | {r['server']} | {cell(r['failing_call'])} | {cell(r['detail'])} |"
            for r in rows
            if r["rule"] == rule
        ]
    return "\n".join(out)
