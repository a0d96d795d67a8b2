"""Pictures and text views of a corpus version: composition against targets, rejections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def composition_png(manifest: dict[str, Any], path: Path | str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    comp = manifest["composition"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    ax = axes[0]
    kinds = comp["by_kind"]
    ax.bar(list(kinds), list(kinds.values()), color="#4C72B0")
    ax.set_title(f"examples by kind (n={comp['examples']})")
    ax.tick_params(axis="x", rotation=30)
    ax = axes[1]
    keys = list(comp["targets"])
    xs = range(len(keys))
    ax.bar([x - 0.2 for x in xs], [comp["shares"][k] for k in keys], width=0.4, label="actual")
    ax.bar([x + 0.2 for x in xs], [comp["targets"][k] for k in keys], width=0.4, label="target")
    ax.set_xticks(list(xs), keys, rotation=30, ha="right")
    ax.set_title("knobs: actual vs target share")
    ax.legend()
    ax = axes[2]
    reasons = manifest["rejections"]["by_reason"]
    if reasons:
        items = sorted(reasons.items(), key=lambda kv: -kv[1])[:10]
        ax.barh([k for k, _ in items][::-1], [v for _, v in items][::-1], color="#C44E52")
    ax.set_title(f"rejections by reason (n={sum(reasons.values())})")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return Path(path)


def rejections_png(by_stage_reason: dict[str, int], path: Path | str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    items = sorted(by_stage_reason.items(), key=lambda kv: -kv[1])[:12]
    ax.barh([k for k, _ in items][::-1], [v for _, v in items][::-1], color="#C44E52")
    ax.set_title("rejections by stage/reason")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return Path(path)


def show_text(manifest: dict[str, Any]) -> str:
    comp = manifest["composition"]
    lines = [f"corpus {manifest['version']}  ({manifest['created_at']})", f"examples: {comp['examples']}  splits: {comp['by_split']}", ""]
    lines.append("composition (share / target / ok):")
    for k, t in comp["targets"].items():
        lines.append(f"  {k:<15} {comp['shares'][k]:>6.1%} / {t:>4.0%} / {'ok' if comp['within_tolerance'][k] else 'OFF'}")
    lines.append("by kind:   " + json.dumps(comp["by_kind"]))
    lines.append("by server: " + json.dumps(comp["by_server"]))
    left_out = [s for s in (manifest.get("config") or {}).get("servers", []) if not comp["by_server"].get(s)]
    if left_out:
        lines.append(f"servers with no example: {', '.join(left_out)}")
    lines.append("augment:   " + json.dumps(comp["by_augmentation"]))
    lines.append("chain length histogram (multi-turn calls): " + json.dumps(comp["chain_length_histogram"]))
    lines.append("tool coverage per server:")
    for s, c in sorted(manifest.get("tool_coverage", {}).items()):
        lines.append(f"  {s:<16} {c['covered']}/{c['tools']} ({c['share']:.0%})")
    lines.append("rejections by stage:  " + json.dumps(manifest["rejections"]["by_stage"]))
    lines.append("rejections by reason: " + json.dumps(manifest["rejections"]["by_reason"]))
    return "\n".join(lines)


def _call_text(call: dict[str, Any], redactor: Any) -> str:
    red = redactor.with_values(redactor.call_values(call.get("arguments"))) if redactor is not None else None
    args = red.obj(call.get("arguments")) if red is not None else call.get("arguments")
    text = f"{call.get('name')}({json.dumps(args, sort_keys=True, default=str)[:120]}) -> {call.get('error_code')}: {(call.get('error') or '')[:160]}"
    return red.text(text) if red is not None else text


def rejection_samples(rejections: list[Any], per_reason: int = 5, redactor: Any = None) -> list[dict[str, Any]]:
    """Up to ``per_reason`` rejections of each stage/reason (in id order): id, rule, server, the first
    failing call (name, arguments, error) where the record carries calls, and the detail; sensitive
    values redacted. ``prove lineage <id>`` shows the whole path of any of them."""
    from pipeline.corpus.lineage import rejection_calls

    by: dict[str, list[Any]] = {}
    for r in sorted(rejections, key=lambda r: r.rejection_id):
        by.setdefault(f"{r.stage}/{r.reason}", []).append(r)
    rows = []
    for rule in sorted(by, key=lambda k: (-len(by[k]), k)):
        for r in by[rule][:per_reason]:
            failing = next((c for c in rejection_calls(r.payload, r.record_type) if not c.get("ok")), None)
            detail = redactor.text(r.detail) if redactor is not None else r.detail
            rows.append({"rejection_id": r.rejection_id, "rule": rule, "server": r.server or "",
                         "failing_call": _call_text(failing, redactor) if failing else "", "detail": detail[:200]})
    return rows


def samples_markdown(rows: list[dict[str, Any]], total_by_rule: dict[str, int]) -> str:
    """The samples as one markdown table per rule, with how to see the rest."""
    def cell(v: str) -> str:
        return v.replace("|", "\\|").replace("\n", " ")

    out = ["Sample rejections per rule. See any one in full (snapshot, chain, query, every call with its "
           "result or error, the rule) with `prove lineage <rejection_id>`; all of them with `prove rejected --reason REASON`."]
    for rule in dict.fromkeys(r["rule"] for r in rows):
        out += ["", f"### {rule} ({total_by_rule.get(rule, 0)} in all)", "", "| rejection_id | server | failing call | detail |", "|---|---|---|---|"]
        out += [f"| `{r['rejection_id']}` | {r['server']} | {cell(r['failing_call'])} | {cell(r['detail'])} |" for r in rows if r["rule"] == rule]
    return "\n".join(out)
