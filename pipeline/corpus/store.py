"""The versioned corpus: ``<data>/corpus/<version>/`` with Parquet files (nested columns:
:mod:`pipeline.corpus.columns`), ``manifest.json`` and the dataset card ``README.md`` (:mod:`pipeline.corpus.card`).

A version is written into a hidden staging directory and renamed into place only when complete,
so it is either whole or absent; an existing version is never overwritten.

The quality gates that check a version after it is written record their results beside its files
(``<version>/gates/<gate>.json``). A version with a failed gate is kept, marked ``failed``: it is
listed with that status but is never the default ("latest") version, and ``<data>/corpus/LATEST``
names the newest version that did not fail.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import platform
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from pipeline.assembly.augment import robustness_reach
from pipeline.core.composition import Composition
from pipeline.core.config import BuildConfig
from pipeline.core.records import TOOL_KINDS, Augmentation, Conversation, Example, Rejection, messages_json, stable_hash
from pipeline.core.speedups import ToolsJson, collector_paused
from pipeline.core.storage import atomic_dir, atomic_write_json, atomic_write_text
from pipeline.corpus.card import write_card
from pipeline.corpus.columns import to_table
from pipeline.corpus.report import composition_png

GATES_DIR = "gates"
# the blocking quality gates every build checks a version with (assets.definitions.CHECKS)
CHECKED_GATES = ("corpus_nonempty_per_server", "corpus_no_near_duplicates", "corpus_composition", "corpus_lint")


def targets_of(cfg: BuildConfig) -> dict[str, float]:
    """The composition the build was configured for (the paper's by default): :meth:`Composition.targets`."""
    return Composition.of(cfg).targets()


# the rows as the corpus writer holds them: the nested columns as the JSON texts the content hash is computed
# from (the Parquet files hold them nested: pipeline.corpus.columns.EXAMPLE_ARROW_SCHEMA)
EXAMPLE_SCHEMA = {
    "example_id": pl.Utf8,
    "kind": pl.Utf8,
    "server": pl.Utf8,
    "servers": pl.List(pl.Utf8),
    "env_seed": pl.Int64,
    "messages": pl.Utf8,
    "tools": pl.Utf8,
    "reference": pl.Utf8,
    "augmentations": pl.List(pl.Utf8),
    "split": pl.Utf8,
    "conversation_id": pl.Utf8,
    "chain_id": pl.Utf8,
    "snapshot_id": pl.Utf8,
    "query_id": pl.Utf8,
    "parent_id": pl.Utf8,
    "info_level": pl.Utf8,
    "persona": pl.Utf8,
    "n_calls": pl.Int64,
    "chain_length": pl.Int64,
    "outcomes": pl.List(pl.Utf8),
    "trace": pl.Utf8,
    "final_state_hash": pl.Utf8,
    "setup": pl.Utf8,
}
REJECTION_SCHEMA = {
    "rejection_id": pl.Utf8,
    "stage": pl.Utf8,
    "reason": pl.Utf8,
    "detail": pl.Utf8,
    "server": pl.Utf8,
    "upstream": pl.Utf8,
    "payload": pl.Utf8,
    "record_type": pl.Utf8,
}


def rejections_of(version_path: str | Path) -> list[Rejection]:
    """The rejections a version holds, as the records they were written from."""
    f = Path(version_path) / "rejections.parquet"
    if not f.exists():
        return []
    rows = pl.read_parquet(f).iter_rows(named=True)
    return [
        Rejection(**{**r, "upstream": json.loads(r["upstream"] or "{}"), "record_type": r["record_type"] or "none"})
        for r in rows
    ]


def corpus_root(data_dir: str | Path) -> Path:
    return Path(data_dir) / "corpus"


def _group_keys(row: dict[str, Any], parsed: dict[str, Any] | None = None) -> list[str]:
    """What ties a row to others that must share its split: its base conversation (augmented variants name
    it as ``parent_id``), its first user message, and its reference when that holds any call. ``parsed``: the
    row's messages and reference as their texts decode, when the caller has them."""
    keys = ["conv:" + str(row["conversation_id"])]
    if row.get("parent_id"):
        keys.append("conv:" + str(row["parent_id"]))
    msgs = json.loads(row["messages"]) if parsed is None else parsed["messages"]
    first = next((m.get("content") for m in msgs if m.get("role") == "user"), None)
    if first:
        keys.append("first:" + str(first))
    if any((json.loads(row["reference"]) if parsed is None else parsed["reference"]) or []):
        keys.append("ref:" + row["reference"])
    return keys


def assign_splits(
    rows: list[dict[str, Any]], eval_fraction: float, parsed: dict[str, dict[str, Any]] | None = None
) -> None:
    """Set each row's ``split`` so that no base conversation, first user message or (non-empty) reference is
    shared between train and eval: rows linked by any of those form one group (union-find), and whole groups
    go to eval in the order of a hash of the group until ``eval_fraction`` of the rows is reached. ``parsed``: by
    example id, the rows' messages and references as their texts decode (not decoded again)."""
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        parent.setdefault(k, k)
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    parsed = parsed or {}
    row_keys = [_group_keys(r, parsed.get(r["example_id"])) for r in rows]
    for keys in row_keys:
        a = find(keys[0])
        for k in keys[1:]:
            b = find(k)
            if a != b:
                parent[max(a, b)] = min(a, b)
                a = min(a, b)
    groups: dict[str, list[int]] = {}
    for i, keys in enumerate(row_keys):
        groups.setdefault(find(keys[0]), []).append(i)
    target = max(1, round(len(rows) * eval_fraction)) if eval_fraction > 0 and len(rows) > 1 else 0
    n_eval = 0
    for root in sorted(groups, key=lambda g: hashlib.sha256(g.encode()).hexdigest()):
        members = groups[root]
        split = "eval" if n_eval + len(members) <= target else "train"
        n_eval += len(members) if split == "eval" else 0
        for i in members:
            rows[i]["split"] = split


def example_row(c: Example, eval_fraction: float, tools_json: ToolsJson | None = None) -> dict[str, Any]:
    """One corpus row. ``tools_json``: a :class:`ToolsJson` shared by the rows of a corpus (the
    conversations of a server share tool records, and each would otherwise re-serialize every schema;
    without one, a fresh one)."""
    return _example_row(c, tools_json)[0]


def _example_row(
    c: Example, tools_json: ToolsJson | None = None, trace_text: bool = True
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`example_row`, and its nested columns as the Python values their texts decode to (what
    :func:`pipeline.corpus.columns.nested_row` takes). Without ``trace_text`` the row's trace is left as
    ``None``: the corpus writes the trace from the values, and no other column reads its text."""
    messages = messages_json(c.messages)
    reference = [[call.model_dump() for call in turn] for turn in c.reference]
    trace = [t.model_dump() for t in c.trace]
    eid = "ex-" + stable_hash([c.conversation_id, c.augmentations, [t.name for t in c.tools]], 14)
    n_calls = sum(len(t) for t in c.reference)
    tools = (tools_json if tools_json is not None else ToolsJson())(c.tools)
    return {
        "example_id": eid,
        "kind": c.kind,
        "server": c.server,
        "servers": list(c.servers),
        "env_seed": c.seed,
        "messages": json.dumps(messages, default=str),
        "tools": tools,
        "reference": json.dumps(reference, default=str),  # ref_to_json's text
        "augmentations": list(c.augmentations),
        "split": "train",  # assign_splits decides
        "conversation_id": c.conversation_id,
        "chain_id": c.chain_id,
        "snapshot_id": c.snapshot_id,
        "query_id": c.query_id,
        "parent_id": c.parent_id,
        "info_level": c.info_level,
        "persona": c.persona,
        "n_calls": n_calls,
        "chain_length": n_calls,
        "outcomes": list(c.outcomes),
        "trace": json.dumps(trace, default=str) if trace_text else None,
        "final_state_hash": c.final_state_hash,
        "setup": json.dumps(c.setup) if c.setup else None,
    }, {"messages": messages, "reference": reference, "trace": trace, "setup": c.setup or None}


def content_hash(columns: list[list[str]], n: int = 16) -> str:
    """A corpus version's content hash: the stable hash of its example ids, messages and tools columns."""
    return stable_hash(columns, n)


def rejection_rows(rejs: list[Rejection]) -> pl.DataFrame:
    rows = [
        {
            "rejection_id": r.rejection_id,
            "stage": r.stage,
            "reason": r.reason,
            "detail": r.detail,
            "server": r.server,
            "upstream": json.dumps(r.upstream),
            "payload": r.payload,
            "record_type": r.record_type,
        }
        for r in rejs
    ]
    return pl.DataFrame(rows, schema=REJECTION_SCHEMA)


REACH_WHY = {
    "distractors": "{r} of {n} examples can be offered distractors: no other server has a tool left to add (one that "
    "shares no name with theirs)",
    "enum_stripped": "{r} of {n} examples offer a schema with an enum to strip",
}


def composition(
    df: pl.DataFrame, targets: dict[str, float] | None = None, reach: dict[str, int] | None = None
) -> dict[str, Any]:
    """Shares of the composition knobs against ``targets`` (default: the paper's, the config defaults). ``reach``:
    how many examples each robustness knob could apply to (:func:`pipeline.assembly.augment.robustness_reach`, as
    the augment stage chose within them); a knob's target is capped to that share, and ``capped`` says why."""
    base = targets or targets_of(BuildConfig())
    n = max(1, df.height)
    augs = Counter(Augmentation.parse(a).kind for lst in df["augmentations"].to_list() for a in lst)
    mt = df.filter(pl.col("kind").is_in(list(TOOL_KINDS)))
    levels = Counter(mt["info_level"].to_list())
    m = max(1, mt.height)
    targets, capped = dict(base), {}
    for k, r in (reach or {}).items():  # a knob can only apply where it can (a server alone has no distractors)
        if k in targets and r / n < targets[k]:
            targets[k] = r / n
            capped[k] = REACH_WHY[k].format(r=r, n=df.height)
    actual = {
        "distractors": augs.get("distractors", 0) / n,
        "enum_stripped": augs.get("enum_stripped", 0) / n,
        "irrelevance": df.filter(pl.col("kind") == "irrelevance").height / n,
        "missing_function": df.filter(pl.col("kind") == "missing_function").height / n,
        "info_complete": levels.get("complete", 0) / m,
        "info_missing": levels.get("missing", 0) / m,
        "info_minimal": levels.get("minimal", 0) / m,
    }
    comp = {
        "examples": df.height,
        "by_kind": dict(Counter(df["kind"].to_list())),
        "by_server": dict(Counter(s for lst in df["servers"].to_list() for s in lst[:1])),
        "by_augmentation": dict(augs),
        "by_split": dict(Counter(df["split"].to_list())),
        "info_levels": dict(levels),
        "chain_length_histogram": {str(k): v for k, v in sorted(Counter(mt["n_calls"].to_list()).items())},
        "shares": {k: round(v, 4) for k, v in actual.items()},
        "targets": targets,
        # a share can only move in steps of one example: a tiny corpus gets that step as its tolerance
        "granularity": {k: round(1 / (m if k.startswith("info_") else n), 4) for k in targets},
        **({"capped": capped} if capped else {}),
    }
    comp["within_tolerance"] = {k: k not in off_target(comp) for k in targets}
    return comp


def off_target(comp: dict[str, Any], tolerance: float = 0.02) -> dict[str, list[float]]:
    """Knobs whose share is further from its target than ``tolerance`` (or one example's share, if
    larger). A negative tolerance is taken as given: a gate configured to fail."""
    step = comp.get("granularity", {})
    out = {}
    for k, target in comp["targets"].items():
        tol = max(tolerance, step.get(k, 0.0)) if tolerance >= 0 else tolerance
        if abs(comp["shares"][k] - target) > tol + 1e-9:
            out[k] = [comp["shares"][k], target]
    return out


def tool_coverage(examples: list[Example], tools_by_server: dict[str, list[str]]) -> dict[str, Any]:
    """Per server, how many of its tools the examples' references call."""
    used: dict[str, set[str]] = {}
    for c in examples:
        for turn in c.reference:
            for call in turn:
                used.setdefault(c.server, set()).add(call.name)
    return {
        s: {
            "tools": len(ts),
            "covered": len(used.get(s, set()) & set(ts)),
            "share": round(len(used.get(s, set()) & set(ts)) / max(1, len(ts)), 4),
        }
        for s, ts in tools_by_server.items()
    }


def tool_annotations(examples: list[Example]) -> dict[str, dict[str, bool]]:
    """Per server, whether each offered tool is read-only (what the linter needs to tell writes apart)."""
    out: dict[str, dict[str, bool]] = {}
    for c in examples:
        for t in c.tools:
            out.setdefault(t.server, {}).setdefault(t.name, t.read_only)
    return {s: dict(sorted(v.items())) for s, v in sorted(out.items())}


def _git_rev() -> str | None:
    try:
        return (
            subprocess.run(
                ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path(__file__).parent
            ).stdout.strip()
            or None
        )
    except (OSError, subprocess.SubprocessError):
        return None


def new_version_name(content_hash: str, now: dt.datetime | None = None) -> str:
    """``v<UTC date>-<time to the millisecond>-<content hash>``: names sort in the order versions were written."""
    now = now or dt.datetime.now(dt.UTC)
    return now.strftime("v%Y%m%d-%H%M%S") + f"{now.microsecond // 1000:03d}-" + content_hash[:6]


def write_corpus(
    cfg: BuildConfig,
    examples: list[Example | Conversation],
    rejections: list[Rejection],
    extra: dict[str, Any] | None = None,
    code_versions: dict[str, str] | None = None,
    tools_by_server: dict[str, list[str]] | None = None,
    reach: dict[str, int] | None = None,
) -> Path:
    """Write a corpus version of ``examples`` (a conversation given as such is an example without augmentations).

    The cyclic collector is paused while it runs (``collector_paused``): the rows, their nested values and the
    tables are all alive until the files are written, and each collection their allocations set off walked them
    for nothing (``bench/OPTIMISATIONS.md``, row 67)."""
    with collector_paused():
        return _write_corpus(cfg, examples, rejections, extra, code_versions, tools_by_server, reach)


def _write_corpus(
    cfg: BuildConfig,
    examples: list[Example | Conversation],
    rejections: list[Rejection],
    extra: dict[str, Any] | None,
    code_versions: dict[str, str] | None,
    tools_by_server: dict[str, list[str]] | None,
    reach: dict[str, int] | None = None,
) -> Path:
    examples = [Example.of(c) for c in examples]
    if reach is None:  # examples not from the augment stage: which tools they could have borrowed is not known, so
        # only enum stripping is capped (to the examples whose own tools have an enum)
        reach = {"enum_stripped": len(robustness_reach(examples, {})["enum_stripped"])}
    tools_json = ToolsJson()
    # each row with its nested columns' values, written to Parquet without decoding the row's texts again
    made = [_example_row(c, tools_json, trace_text=False) for c in examples]
    rows = [row for row, _ in made]
    parsed = {row["example_id"]: values for row, values in made}
    assign_splits(rows, cfg.corpus.eval_fraction, parsed)
    df = pl.DataFrame(rows, schema=EXAMPLE_SCHEMA).sort("example_id")
    rej = rejection_rows(rejections).unique("rejection_id", keep="first").sort("rejection_id")
    content = content_hash([df["example_id"].to_list(), df["messages"].to_list(), df["tools"].to_list()])
    root = corpus_root(cfg.data_dir)
    version = new_version_name(content)
    while (root / version).exists():
        version += "b"
    with atomic_dir(root / version) as stage:
        files = {}
        for split in ("train", "eval"):
            part = df.filter(pl.col("split") == split)
            pq.write_table(to_table(part.to_dicts(), parsed), stage / f"{split}.parquet", compression="zstd")
            files[f"{split}.parquet"] = part.height
        rej.write_parquet(stage / "rejections.parquet")
        files["rejections.parquet"] = rej.height
        hashes = {f: hashlib.sha256((stage / f).read_bytes()).hexdigest() for f in files}
        comp = composition(df, targets_of(cfg), reach)
        manifest = {
            "version": version,
            "created_at": dt.datetime.now(dt.UTC).isoformat(),
            "content_hash": content,
            # where its steps ran is not how it was made (and a broker URL may hold a password)
            "config": cfg.model_dump(mode="json", exclude={"deployment"}),
            "counts": {**files, "examples": df.height, "rejections": rej.height},
            "composition": comp,
            "tool_coverage": tool_coverage(examples, tools_by_server or {}),
            "tool_annotations": tool_annotations(examples),
            "rejections": {
                "by_stage": dict(Counter(rej["stage"].to_list())),
                "by_reason": dict(Counter(rej["reason"].to_list())),
            },
            "files": hashes,
            "code_versions": {"git": _git_rev(), "python": platform.python_version(), **(code_versions or {})},
            **(extra or {}),
        }
        try:
            composition_png(manifest, stage / "composition.png")
        except Exception as exc:  # a picture must never cost the corpus
            manifest["report_error"] = str(exc)
        (stage / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str))
        write_card(stage, manifest, {})
        os.chmod(stage, 0o755)  # the staging directory is created private; a version is for everyone to read
    return root / version


def record_gate(version_path: str | Path, gate: str, passed: bool, detail: dict[str, Any] | None = None) -> Path:
    """Record one quality gate's result for a version (atomically, one file per gate), and rewrite the version's
    dataset card with every gate recorded so far (under a lock: gates may be recorded at the same time)."""
    p = Path(version_path)
    out = atomic_write_json(
        p / GATES_DIR / f"{gate}.json", {"gate": gate, "passed": bool(passed), "detail": detail or {}}
    )
    if (p / "manifest.json").exists():
        with open(p / GATES_DIR / ".card.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            write_card(p, json.loads((p / "manifest.json").read_text()), gate_results(p))
    return out


def gate_results(version_path: str | Path) -> dict[str, dict[str, Any]]:
    """The recorded gate results of a version: gate name -> ``{"gate", "passed", "detail"}`` (empty when none ran)."""
    d = Path(version_path) / GATES_DIR
    if not d.is_dir():
        return {}
    return {f.stem: json.loads(f.read_text()) for f in sorted(d.glob("*.json"))}


def failed_gates(version_path: str | Path) -> list[str]:
    return [g for g, r in gate_results(version_path).items() if not r.get("passed")]


def list_versions(data_dir: str | Path) -> list[dict[str, Any]]:
    """Every complete version, oldest first, with its ``status``: ``failed`` when a quality gate failed, else ``ok``."""
    root = corpus_root(data_dir)
    out = []
    if not root.exists():
        return out
    for d in sorted(root.iterdir()):
        # hidden entries are staging directories of runs in flight or killed: never a version
        if d.name.startswith(".") or not d.is_dir() or not (d / "manifest.json").exists():
            continue
        m = json.loads((d / "manifest.json").read_text())
        failed = failed_gates(d)
        out.append(
            {
                "version": d.name,
                "path": str(d),
                "created_at": m.get("created_at"),
                "content_hash": m.get("content_hash"),
                "examples": m["counts"]["examples"],
                "rejections": m["counts"]["rejections"],
                "by_kind": m["composition"]["by_kind"],
                "servers": sorted(m["composition"]["by_server"]),
                "status": "failed" if failed else "ok",
                "failed_gates": failed,
            }
        )
    # oldest first by creation time (two versions written within one second sort by their hash suffix otherwise)
    out.sort(key=lambda v: (str(v["created_at"] or ""), v["version"]))
    return out


def latest_good(data_dir: str | Path) -> dict[str, Any] | None:
    """The newest version whose quality gates did not fail (None when there is none)."""
    good = [v for v in list_versions(data_dir) if v["status"] != "failed"]
    return good[-1] if good else None


def refresh_latest(data_dir: str | Path) -> str | None:
    """Point ``<data>/corpus/LATEST`` at the newest good version (removed when there is none); returns its name."""
    v = latest_good(data_dir)
    path = corpus_root(data_dir) / "LATEST"
    if v is None:
        path.unlink(missing_ok=True)
        return None
    atomic_write_text(path, v["version"])
    return v["version"]


def resolve_version(data_dir: str | Path, version: str | None) -> Path:
    """A version by name or unique prefix; ``None`` or ``"latest"`` is the newest version that did not fail its
    gates."""
    versions = list_versions(data_dir)
    if not versions:
        raise FileNotFoundError(f"no corpus version under {corpus_root(data_dir)}; run `prove build` first")
    if version in (None, "latest"):
        good = latest_good(data_dir)
        if good is None:
            raise FileNotFoundError(
                f"every corpus version under {corpus_root(data_dir)} failed its quality gates "
                f"({', '.join(v['version'] for v in versions)}); name one explicitly to read it anyway"
            )
        return Path(good["path"])
    for v in versions:
        if v["version"] == version or v["version"].startswith(version):
            return Path(v["path"])
    raise FileNotFoundError(f"corpus version {version!r} not found; known: {', '.join(v['version'] for v in versions)}")


def read_examples(path: str | Path) -> pl.DataFrame:
    p = Path(path)
    return pl.concat([pl.read_parquet(p / f) for f in ("train.parquet", "eval.parquet") if (p / f).exists()])


def _example_brief(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "example_id": row["example_id"],
        "kind": row["kind"],
        "server": row["server"],
        "augmentations": row["augmentations"],
    }


def diff_versions(a: str | Path, b: str | Path, limit: int = 20) -> dict[str, Any]:
    """What changed from version ``a`` to version ``b``.

    Counts by kind, server and augmentation as ``{key: [count in a, count in b]}`` (every key of
    either version; ``changed`` lists the keys whose counts differ), and the examples added and
    removed (by example id, the first ``limit`` of each with kind, server and augmentations).
    """
    da, db = read_examples(a), read_examples(b)
    ma, mb = (json.loads((Path(x) / "manifest.json").read_text()) for x in (a, b))
    ca, cb = ma["composition"], mb["composition"]
    ia, ib = set(da["example_id"].to_list()), set(db["example_id"].to_list())
    added, removed = sorted(ib - ia), sorted(ia - ib)

    def counts(key: str) -> dict[str, list[int]]:
        keys = sorted(set(ca.get(key, {})) | set(cb.get(key, {})))
        return {k: [ca.get(key, {}).get(k, 0), cb.get(key, {}).get(k, 0)] for k in keys}

    def briefs(df: pl.DataFrame, ids: list[str]) -> list[dict[str, Any]]:
        keep = set(ids[:limit])
        return [
            _example_brief(r)
            for r in df.filter(pl.col("example_id").is_in(list(keep))).sort("example_id").iter_rows(named=True)
        ]

    out: dict[str, Any] = {
        "a": Path(a).name,
        "b": Path(b).name,
        "examples": [da.height, db.height],
        "content_hash": [ma.get("content_hash"), mb.get("content_hash")],
        "added": len(added),
        "removed": len(removed),
        "unchanged": len(ia & ib),
        "added_ids": added[:limit],
        "removed_ids": removed[:limit],
        "added_examples": briefs(db, added),
        "removed_examples": briefs(da, removed),
    }
    for key in ("by_kind", "by_server", "by_augmentation"):
        out[key] = counts(key)
    out["rejections"] = {
        "by_reason": {
            k: [
                ma.get("rejections", {}).get("by_reason", {}).get(k, 0),
                mb.get("rejections", {}).get("by_reason", {}).get(k, 0),
            ]
            for k in sorted(
                set(ma.get("rejections", {}).get("by_reason", {})) | set(mb.get("rejections", {}).get("by_reason", {}))
            )
        }
    }
    out["changed"] = sorted(
        f"{key}.{k}" for key in ("by_kind", "by_server", "by_augmentation") for k, (x, y) in out[key].items() if x != y
    )
    out["config_changed"] = sorted(
        k
        for k in set(ma.get("config", {})) | set(mb.get("config", {}))
        if ma.get("config", {}).get(k) != mb.get("config", {}).get(k)
    )
    return out
