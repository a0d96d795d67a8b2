"""``prove eval``: score a policy on fixed suites (a frozen held-out suite, BFCL multi-turn), compare two runs,
look at one item, freeze a held-out suite."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from assets.cli.common import positive_int, print_json


def _csv(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def _fail(msg: str) -> int:
    print(f"prove eval: {msg}", file=sys.stderr)
    return 2


def _bar(desc: str):
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def cb(suite: str, done: int, total: int) -> None:
        bar = bars.get(suite)
        if bar is None:
            bar = bars[suite] = tqdm(total=total, desc=f"{desc} {suite}", unit="item", file=sys.stderr)
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return cb


def cmd_eval(a: argparse.Namespace) -> int:
    if a.compare:
        return cmd_compare(a)
    # deferred: the pipeline, torch and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from training.suites import check_suites

    try:
        suites = check_suites(_csv(a.suites) or [])
        if "bfcl-multi-turn" in suites:
            from training.suites.bfcl import normalize_categories  # deferred: bfcl_eval loads only for BFCL

            normalize_categories(_csv(a.categories))
    except (ValueError, ImportError) as exc:
        return _fail(str(exc))
    # deferred: torch, transformers and the servers load only once the suites and categories are accepted
    from training.policies import PolicyError, open_policy
    from training.suites.heldout import SuiteError, open_suite
    from training.suites.run import default_heldout, evaluate_policy, new_run_dir

    try:
        heldout = None
        if "heldout" in suites:
            path = Path(a.heldout) if a.heldout else default_heldout(a.data_dir)
            if a.heldout and not path.exists() and (Path(a.data_dir) / "suites" / a.heldout).exists():
                path = Path(a.data_dir) / "suites" / a.heldout
            heldout = open_suite(path)
        policy = open_policy(
            a.policy,
            endpoint=a.endpoint,
            model=a.model,
            api_key_env=a.api_key_env,
            concurrency=a.concurrency,
            max_new_tokens=a.max_new_tokens,
        )
        out = Path(a.out) if a.out else new_run_dir(a.data_dir, policy.name)
        summary = evaluate_policy(
            policy,
            suites,
            out,
            heldout=heldout,
            categories=_csv(a.categories),
            limit=a.limit,
            seed=a.seed,
            progress=None if a.json else _bar("eval"),
        )
    except (PolicyError, SuiteError, ValueError, FileExistsError, ImportError) as exc:
        return _fail(str(exc))
    if a.json:
        print_json({"out": str(out), **summary})
    else:
        print(summary_text(summary))
        print(f"results: {out}  (prove eval show {out})")
    return 0


def summary_text(summary: dict[str, Any]) -> str:
    def ci(s: dict[str, Any]) -> str:
        if s.get("mean") is None:
            return "–"
        lo, hi = s["ci95"]
        return f"{s['mean']:.3f} [{lo:.3f}, {hi:.3f}] (n={s['n']})"

    lines = [f"policy: {summary['policy'].get('name')} ({summary['policy'].get('kind')})"]
    h = summary["summary"].get("heldout")
    if h:
        ident = summary["suites"]["heldout"]
        lines += [
            f"heldout suite {ident['name']} ({ident['items_hash']}, from {ident['source_version']}): {h['n']} items",
            f"  mean reward         {ci(h['reward'])}",
            f"  exact success       {ci(h['exact_success'])}",
            f"  abstention accuracy {ci(h['abstention_accuracy'])}",
            "  components (tool tasks): "
            + ", ".join(f"{k} {'–' if v is None else f'{v:.3f}'}" for k, v in h["components"].items()),
        ]
    b = summary["summary"].get("bfcl-multi-turn")
    if b:
        ident = summary["suites"]["bfcl-multi-turn"]
        lines.append(f"bfcl-multi-turn (bfcl-eval {ident['bfcl_eval']}): overall accuracy {b['overall']:.3f}")
        for cat, v in b["by_category"].items():
            lines.append(f"  {cat:<28} {v['accuracy']:.3f}  ({v['correct']}/{v['n']})")
    return "\n".join(lines)


def cmd_compare(a: argparse.Namespace) -> int:
    # deferred: the training package loads only when a command that needs it runs (prove --help stays fast)
    from training.suites.results import compare

    try:
        res = compare(a.compare[0], a.compare[1])
    except (FileNotFoundError, ValueError) as exc:
        return _fail(str(exc))
    if a.json:
        print_json(res)
        return 0
    print(f"A: {res['a']}\nB: {res['b']}")
    for suite, e in res["suites"].items():
        d = e["delta"]
        lo, hi = d["ci95"]
        metric = "reward" if suite == "heldout" else "accuracy"
        print(
            f"{suite}: {metric} A {e['a_mean']:.3f}, B {e['b_mean']:.3f}; B-A {d['mean']:+.3f} "
            f"[{lo:+.3f}, {hi:+.3f}] (95%, paired over {e['n_paired']} items)"
            + ("  apart from 0" if lo > 0 or hi < 0 else "")
        )
        for cat, c in e["by_category"].items():
            cl, ch = c["delta"]["ci95"]
            print(f"  {cat:<28} {c['delta']['mean']:+.3f} [{cl:+.3f}, {ch:+.3f}] (n={c['n']})")
    return 0


def cmd_show(a: argparse.Namespace) -> int:
    # deferred: the training package loads only when a command that needs it runs (prove --help stays fast)
    from training.suites.results import item_story, load_run

    try:
        summary, rows = load_run(a.run)
    except FileNotFoundError as exc:
        return _fail(str(exc))
    if a.item:
        try:
            print(item_story(rows, a.item))
        except KeyError as exc:
            return _fail(str(exc.args[0]))
        return 0
    shown = [r for r in rows if not r["valid"]] if a.failed else rows
    for r in shown:
        verdict = "PASS" if r["valid"] else "FAIL"
        extra = f"reward {r['reward']:.3f}" if r["suite"] == "heldout" else (r.get("error_type") or "")
        print(f"{r['suite']:<16} {r['category']:<28} {r['item_id']:<36} {verdict}  {extra}")
    print(f"({len(shown)} of {len(rows)} items; prove eval show {a.run} --item ID tells one item's story)")
    return 0


def cmd_freeze(a: argparse.Namespace) -> int:
    # deferred: the pipeline and training packages load only when a command that needs them runs
    from pipeline.corpus.store import resolve_version
    from training.suites.heldout import SuiteError, freeze
    from training.suites.run import suites_root

    try:
        if a.build:  # the build is of these servers only
            corpus, servers = _named_build(a), None
            origin = {"build": {"servers": _csv(a.servers), "examples": a.examples, "seed": a.seed}}
        else:
            corpus, servers, origin = resolve_version(a.data_dir, a.corpus), _csv(a.servers), None
        path = freeze(corpus, suites_root(a.data_dir), a.name, servers, a.limit, origin)
    except (SuiteError, FileNotFoundError, ValueError) as exc:
        return _fail(str(exc))
    meta = json.loads((path / "suite.json").read_text())
    print(f"suite {meta['name']}: {meta['n_items']} items from {meta['source_version']}, hash {meta['items_hash']}")
    print(f"  {path}")
    return 0


def _named_build(a: argparse.Namespace) -> Path:
    """A corpus built for the suite alone (``--servers``, ``--examples``, ``--seed``; offline defaults for the rest)
    under ``<data>/suites/.builds/``, so it never becomes the data dir's latest version; its version folder."""
    # deferred: Dagster and the build load only for a suite made from a named build
    import dagster as dg

    # deferred: the same (the build path and its settings)
    from assets.orchestrate import build
    from pipeline.core.config import BuildConfig
    from pipeline.corpus.store import resolve_version

    if not a.name:
        raise ValueError("a suite from a named build needs --name")
    fields: dict[str, Any] = {"examples": a.examples, "seed": a.seed}
    if a.servers:
        fields["servers"] = _csv(a.servers)
    where = Path(a.data_dir) / "suites" / ".builds" / a.name
    cfg = BuildConfig(data_dir=str(where), **{k: v for k, v in fields.items() if v is not None})
    b = build(cfg, instance=dg.DagsterInstance.ephemeral())
    if not b.result.success:
        raise ValueError(f"the build for suite {a.name} failed (its log is under {where}/logs)")
    return resolve_version(where, None)


def register(sub: Any) -> None:
    x = sub.add_parser(
        "eval",
        help="score a policy on fixed suites (held-out, bfcl-multi-turn); --compare A B; show; freeze",
        description="Score a policy (a checkpoint folder, a Hugging Face id, or an OpenAI-compatible endpoint "
        "and model) on fixed suites. Without a subcommand: run the suites. docs/evaluation.md.",
    )
    x.add_argument("--policy", help="a checkpoint folder (with its tokenizer) or a Hugging Face model id")
    x.add_argument("--endpoint", help="an OpenAI-compatible base URL (vLLM, Ollama, a hosted API)")
    x.add_argument("--model", help="the model name the endpoint serves")
    x.add_argument("--api-key-env", default="OPENAI_API_KEY", help="the variable holding the endpoint's key")
    x.add_argument("--concurrency", type=positive_int, default=8, help="endpoint requests in flight")
    x.add_argument("--suites", default="heldout,bfcl-multi-turn", help="comma-separated: heldout, bfcl-multi-turn")
    x.add_argument("--categories", help="BFCL multi-turn categories: base, miss_func, miss_param, long_context")
    x.add_argument("--limit", type=positive_int, help="items per suite (BFCL: per category; a fixed-seed sample)")
    x.add_argument("--seed", type=int, default=0)
    x.add_argument("--heldout", help="a frozen suite's folder or name (default: <data>/suites/default)")
    x.add_argument("--max-new-tokens", type=positive_int, default=64, help="a local policy's tokens per message")
    x.add_argument("--out", help="the run's folder (default: <data>/evals/<time>-<policy>)")
    x.add_argument("--compare", nargs=2, metavar=("A", "B"), help="paired difference B - A of two runs")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_eval)
    s = x.add_subparsers(dest="eval_cmd")
    show = s.add_parser("show", help="a run's items and verdicts; --item ID tells one item's story")
    show.add_argument("run")
    show.add_argument("--item")
    show.add_argument("--failed", action="store_true", help="only the items that failed")
    show.set_defaults(fn=cmd_show)
    fr = s.add_parser("freeze", help="freeze a corpus version's eval split as a held-out suite")
    fr.add_argument("--corpus", help="a corpus version (default: the latest good one)")
    fr.add_argument(
        "--build", action="store_true", help="freeze a named build's eval split: --servers, --examples, --seed"
    )
    fr.add_argument("--examples", type=positive_int, help="--build: how many examples to build")
    fr.add_argument("--seed", type=int, help="--build: the build's seed")
    fr.add_argument("--name", help="the suite's name (default: heldout-<version>-<hash>)")
    fr.add_argument("--servers", help="comma-separated servers to keep (--build: to build)")
    fr.add_argument("--limit", type=positive_int)
    fr.add_argument("--data-dir", default="data")
    fr.set_defaults(fn=cmd_freeze)
