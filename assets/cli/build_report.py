"""The summary ``prove build`` prints at the end: the version, its composition in a few lines, the
gates, the policy's evaluation before and after training, and where everything is."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any


def _corpus_lines(m: dict[str, Any], servers: list[str]) -> list[str]:
    comp = m["composition"]
    lines = [
        f"corpus {m['version']}: {comp['examples']} examples (train {comp['by_split'].get('train', 0)}, "
        f"eval {comp['by_split'].get('eval', 0)}) on {len(comp['by_server'])} servers; "
        f"content hash {m['content_hash']}",
        "by kind:   " + json.dumps(comp["by_kind"]),
        "by server: " + json.dumps(comp["by_server"]),
    ]
    left_out = [s for s in servers if not comp["by_server"].get(s)]
    if left_out:
        lines.append(f"servers with no example: {', '.join(left_out)}")
    off = [
        f"{k} {comp['shares'][k]:.1%} (target {t:.0%})"
        for k, t in comp["targets"].items()
        if not comp["within_tolerance"][k]
    ]
    lines.append(
        "composition: " + ("every share within tolerance of its target" if not off else "OFF target: " + ", ".join(off))
    )
    reasons = sorted(m["rejections"]["by_reason"].items(), key=lambda kv: -kv[1])
    top = ", ".join(f"{k} {v}" for k, v in reasons[:6]) + (", ..." if len(reasons) > 6 else "")
    lines.append(f"rejections: {m['counts']['rejections']} ({top}); see them with prove rejected / prove lineage <id>")
    return lines


PHASE_NAMES = {"before": "before", "after_sft": "after SFT", "after_grpo": "after GRPO"}


def _eval_line(report: dict[str, Any]) -> str:
    """Mean reward, exact success and abstention accuracy per evaluation phase, with 95% bootstrap intervals."""
    phases = report.get("phases") or {}

    def stat(ev: dict[str, Any], key: str) -> str:
        s = ev.get(key) or {}
        if s.get("mean") is None:
            return "n/a"
        lo, hi = s.get("ci95") or (None, None)
        return f"{s['mean']:.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None else "")

    def comps(ev: dict[str, Any]) -> str:
        c = ev.get("components") or {}
        return ", ".join(f"{k} {c[k]:.3f}" for k in ("validity", "name", "args", "coverage") if c.get(k) is not None)

    parts = [
        f"{PHASE_NAMES.get(k, k)}: reward {stat(ev, 'reward')}, exact {stat(ev, 'exact_success')}, "
        f"abstention {stat(ev, 'abstention_accuracy')}\n    tool tasks: {comps(ev)}"
        for k, ev in phases.items()
    ]
    return f"eval on {report.get('n_eval', '?')} held-out examples (95% intervals)\n  " + "\n  ".join(parts)


def _suites_run(data_dir: Any, version: str) -> Path | None:
    """The newest ``policy_eval`` run of this version's policy (``<data>/evals/<version>-<run id>``)."""
    runs = [p for p in (Path(data_dir) / "evals").glob(f"{version}-*") if (p / "summary.json").exists()]
    return max(runs, key=lambda p: p.stat().st_mtime) if runs else None


def _suites_lines(s: dict[str, Any]) -> list[str]:
    """The trained policy on the fixed suites (the same items for every version)."""
    out = []
    h, ident = s["summary"].get("heldout"), s["suites"].get("heldout")
    if h:
        c = h["components"]
        lo, hi = h["reward"]["ci95"]
        abst = h["abstention_accuracy"]["mean"]
        out.append(
            f"fixed suites: held-out suite {ident['name']} ({ident['items_hash']}, {h['n']} items): reward "
            f"{h['reward']['mean']:.3f} [{lo:.3f}, {hi:.3f}], validity {c['validity'] or 0:.3f}, "
            f"name {c['name'] or 0:.3f}, abstention " + ("n/a" if abst is None else f"{abst:.3f}")
        )
    b = s["summary"].get("bfcl-multi-turn")
    if b:
        cats = ", ".join(
            f"{k.removeprefix('multi_turn_')} {v['correct']}/{v['n']}" for k, v in b["by_category"].items()
        )
        out.append(f"  BFCL v4 multi-turn sample: overall accuracy {b['overall']:.3f} ({cats})")
    return out


def summary(cfg: Any, r: Any, runs: list[str], t0: float, train: bool, log_path: Path | None) -> list[str]:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus.report import teacher_line
    from pipeline.corpus.store import latest_good, list_versions

    lines: list[str] = []
    versions = list_versions(cfg.data_dir)
    latest = versions[-1] if versions else None
    checks = {ev.check_name: ev.passed for ev in r.get_asset_check_evaluations()}
    if latest:
        manifest = json.loads((Path(latest["path"]) / "manifest.json").read_text())
        lines += _corpus_lines(manifest, list(cfg.servers))
        said = teacher_line(manifest)
        if said:
            lines.append(said)
    if checks:
        lines.append("quality gates: " + ", ".join(f"{k}={'pass' if v else 'FAIL'}" for k, v in checks.items()))
    if latest and latest["status"] == "failed":
        good = latest_good(cfg.data_dir)
        lines.append(
            f"version {latest['version']} failed its quality gates ({', '.join(latest['failed_gates'])}): kept, marked "
            f"failed, not the default ({'the default stays ' + good['version'] if good else 'no good version yet'})"
        )
    run_dir = Path(cfg.data_dir) / "runs" / (latest["version"] if latest else "")
    report_path = run_dir / "eval_report.json"
    if train and report_path.exists():
        lines.append(_eval_line(json.loads(report_path.read_text())))
    scored = _suites_run(cfg.data_dir, latest["version"]) if train and latest else None
    if scored is not None:
        lines += _suites_lines(json.loads((scored / "summary.json").read_text()))
    lines.append("")
    if latest:
        lines.append(f"corpus:  {latest['path']}")
    if train and report_path.exists():
        lines.append(f"policy:  {run_dir / 'checkpoint'}")
        lines.append(
            f"report:  {run_dir / 'eval_report.md'}  curve: {run_dir / 'reward_curve.png'}  "
            f"metrics: {run_dir / 'metrics.jsonl'}"
        )
    if scored is not None:
        lines.append(f"scored:  {scored}  (prove eval show {scored})")
    if log_path is not None:
        lines.append(f"log:     {log_path}  (warnings, trainer and Dagster output)")
    home = os.environ["DAGSTER_HOME"]
    lines.append(
        f"dagster: {len(runs)} runs in {home}; UI: DAGSTER_HOME={home} .venv/bin/prove ui --data-dir {cfg.data_dir}"
    )
    lines.append(f"took {time.time() - t0:.1f}s")
    return lines
