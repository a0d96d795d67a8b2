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
    lines = [
        f"corpus {manifest['version']}  ({manifest['created_at']})",
        f"examples: {comp['examples']}  splits: {comp['by_split']}",
        "",
    ]
    lines.append("composition (share / target / ok):")
    for k, t in comp["targets"].items():
        lines.append(
            f"  {k:<15} {comp['shares'][k]:>6.1%} / {t:>4.0%} / {'ok' if comp['within_tolerance'][k] else 'OFF'}"
        )
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
    said = teacher_line(manifest)
    if said:
        lines.append(said)
        for where, u in (manifest["teacher"].get("by_stage_server") or {}).items():
            lines.append(
                f"  {where:<24} {u['requests']} requests, {u['prompt_tokens']:,} + {u['completion_tokens']:,} tokens, "
                f"{u['cache_hits']} cache hits, {u['wait_s']:.1f} s"
            )
    return "\n".join(lines)


def teacher_line(manifest: dict[str, Any]) -> str | None:
    """What the teacher cost a version (``manifest["teacher"]``), in one line; None when no teacher was used."""
    t = (manifest.get("teacher") or {}).get("total")
    if not t:
        return None
    return (
        f"teacher: {t['requests']} requests ({t['completions']} answered, {t['retries']} retries, "
        f"{t['rate_limited']} rate-limited), {t['prompt_tokens']:,} prompt + {t['completion_tokens']:,} completion "
        f"tokens, {t['cache_hits']} cache hits, {t['wait_s']:.1f} s waiting, at most {t['peak_in_flight']} in flight "
        "in one partition"
    )
