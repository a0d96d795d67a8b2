"""``prove corpus``: list, show and diff corpus versions."""

from __future__ import annotations

import argparse
import json
from typing import Any

from assets.cli.common import print_json


def cmd_corpus_list(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus.store import list_versions

    vs = list_versions(a.data_dir)
    if a.json:
        print_json(vs)
    else:
        if not vs:
            print(f"no corpus versions under {a.data_dir}/corpus")
        good = [v["version"] for v in vs if v["status"] != "failed"]
        for v in vs:
            mark = "  (latest)" if good and v["version"] == good[-1] else ""
            if v["status"] == "failed":
                mark = f"  FAILED gates: {', '.join(v['failed_gates'])} (kept, never the default)"
            print(
                f"{v['version']}  {v['examples']:>6} examples  {v['rejections']:>5} rejections  "
                f"{', '.join(v['servers'])}{mark}"
            )
    return 0


def cmd_corpus_show(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus.report import show_text
    from pipeline.corpus.store import resolve_version

    p = resolve_version(a.data_dir, a.version)
    m = json.loads((p / "manifest.json").read_text())
    if a.json:
        print_json(m)
    else:
        print(show_text(m))
        if (p / "composition.png").exists():
            print(f"picture: {p / 'composition.png'}")
    return 0


def _count_table(title: str, counts: dict[str, list[int]], a: str, b: str) -> list[str]:
    if not counts:
        return [f"{title}: (none)"]
    w = max(len(title), *(len(k) for k in counts))
    lines = [f"{title:<{w}}  {'A':>7}  {'B':>7}  {'B-A':>7}"]
    for k, (x, y) in counts.items():
        lines.append(f"{k:<{w}}  {x:>7}  {y:>7}  {y - x:>+7}")
    return lines


def _print_diff(d: dict[str, Any]) -> None:
    print(f"A = {d['a']}\nB = {d['b']}")
    print(
        f"examples: {d['examples'][0]} -> {d['examples'][1]}  "
        f"(+{d['added']} added, -{d['removed']} removed, {d['unchanged']} in both)"
    )
    if d["content_hash"][0] == d["content_hash"][1]:
        print("content: identical (same content hash)")
    if d["config_changed"]:
        print(f"config changed: {', '.join(d['config_changed'])}")
    for key, title in (("by_kind", "kind"), ("by_server", "server"), ("by_augmentation", "augmentation")):
        print()
        print("\n".join(_count_table(title, d[key], d["a"], d["b"])))
    if d["rejections"]["by_reason"]:
        print()
        print("\n".join(_count_table("rejection reason", d["rejections"]["by_reason"], d["a"], d["b"])))
    for label, rows, total in (
        ("added", d["added_examples"], d["added"]),
        ("removed", d["removed_examples"], d["removed"]),
    ):
        if not total:
            continue
        print(f"\n{label} ({total}{', first ' + str(len(rows)) if len(rows) < total else ''}):")
        for r in rows:
            augs = f"  [{', '.join(r['augmentations'])}]" if r["augmentations"] else ""
            print(f"  {'+' if label == 'added' else '-'} {r['example_id']}  {r['kind']:<13} {r['server']}{augs}")


def cmd_corpus_diff(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus.store import diff_versions, resolve_version

    d = diff_versions(resolve_version(a.data_dir, a.a), resolve_version(a.data_dir, a.b), limit=a.limit)
    if a.json:
        print_json(d)
        return 0
    _print_diff(d)
    return 0


def cmd_corpus_lint(a: argparse.Namespace) -> int:
    """Lint a corpus version (pipeline/corpus/lint.py): counts per defect with example ids; exit 1 when any."""
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus.lint import lint_version
    from pipeline.corpus.lint_report import format_report
    from pipeline.corpus.store import resolve_version

    rep = lint_version(resolve_version(a.data_dir, a.version))
    if a.json:
        print_json(rep.as_dict())
    else:
        print(format_report(rep))
    return 0 if rep.passed else 1


def register(sub: Any) -> None:
    cp = sub.add_parser("corpus", help="corpus versions").add_subparsers(dest="sub", required=True)
    x = cp.add_parser("list")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_corpus_list)
    x = cp.add_parser("show")
    x.add_argument("version", nargs="?", default="latest")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_corpus_show)
    x = cp.add_parser("diff", help="what changed between two versions (names, unique prefixes or 'latest')")
    x.add_argument("a")
    x.add_argument("b")
    x.add_argument("--limit", type=int, default=20, help="examples added/removed to list")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_corpus_diff)
    x = cp.add_parser(
        "lint", help="language and grounding defects of a version, per defect with example ids (exit 1 if any)"
    )
    x.add_argument("version", nargs="?", default="latest")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_corpus_lint)
