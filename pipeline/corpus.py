"""The versioned corpus: ``<data>/corpus/<version>/`` with Parquet files and ``manifest.json``.

A version is written into a hidden staging directory and renamed into place only when complete,
so it is either whole or absent; an existing version is never overwritten.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.augment import ref_to_json
from pipeline.config import BuildConfig
from pipeline.records import Conversation, Rejection, stable_hash
from pipeline.storage import atomic_dir

TARGETS = {"distractors": 0.40, "enum_stripped": 0.30, "irrelevance": 0.05,
           "info_complete": 0.60, "info_missing": 0.20, "info_minimal": 0.20}

EXAMPLE_SCHEMA = {
    "example_id": pl.Utf8, "kind": pl.Utf8, "server": pl.Utf8, "servers": pl.List(pl.Utf8), "env_seed": pl.Int64,
    "messages": pl.Utf8, "tools": pl.Utf8, "reference": pl.Utf8, "augmentations": pl.List(pl.Utf8), "split": pl.Utf8,
    "conversation_id": pl.Utf8, "chain_id": pl.Utf8, "snapshot_id": pl.Utf8, "query_id": pl.Utf8, "parent_id": pl.Utf8,
    "info_level": pl.Utf8, "persona": pl.Utf8, "n_calls": pl.Int64, "chain_length": pl.Int64, "outcomes": pl.List(pl.Utf8),
    "trace": pl.Utf8, "final_state_hash": pl.Utf8,
}
REJECTION_SCHEMA = {"rejection_id": pl.Utf8, "stage": pl.Utf8, "reason": pl.Utf8, "detail": pl.Utf8, "server": pl.Utf8,
                    "upstream": pl.Utf8, "payload": pl.Utf8}


def corpus_root(data_dir: str | Path) -> Path:
    return Path(data_dir) / "corpus"


def split_of(example_id: str, eval_fraction: float) -> str:
    h = int(hashlib.sha256(example_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "eval" if h < eval_fraction else "train"


def example_row(c: Conversation, eval_fraction: float) -> dict[str, Any]:
    eid = "ex-" + stable_hash([c.conversation_id, c.augmentations, [t.name for t in c.tools]], 14)
    n_calls = sum(len(t) for t in c.reference)
    return {
        "example_id": eid, "kind": c.kind, "server": c.server, "servers": list(c.servers), "env_seed": c.seed,
        "messages": json.dumps(c.messages, default=str), "tools": json.dumps([t.to_openai() for t in c.tools]),
        "reference": ref_to_json(c.reference), "augmentations": list(c.augmentations), "split": split_of(eid, eval_fraction),
        "conversation_id": c.conversation_id, "chain_id": c.chain_id, "snapshot_id": c.snapshot_id, "query_id": c.query_id,
        "parent_id": c.parent_id, "info_level": c.info_level, "persona": c.persona, "n_calls": n_calls,
        "chain_length": n_calls, "outcomes": list(c.outcomes), "trace": json.dumps(c.trace, default=str),
        "final_state_hash": c.final_state_hash,
    }


def rejection_rows(rejs: list[Rejection]) -> pl.DataFrame:
    rows = [{"rejection_id": r.rejection_id, "stage": r.stage, "reason": r.reason, "detail": r.detail, "server": r.server,
             "upstream": json.dumps(r.upstream), "payload": r.payload} for r in rejs]
    return pl.DataFrame(rows, schema=REJECTION_SCHEMA)


def composition(df: pl.DataFrame) -> dict[str, Any]:
    n = max(1, df.height)
    augs = Counter(a.split(":")[0] for lst in df["augmentations"].to_list() for a in lst)
    mt = df.filter(pl.col("kind") == "multi_turn")
    levels = Counter(mt["info_level"].to_list())
    m = max(1, mt.height)
    # enum stripping can only apply where the offered schemas have enums (third-party servers may have none)
    with_enums = sum(1 for t, a in zip(df["tools"].to_list(), df["augmentations"].to_list()) if '"enum"' in t or "enum_stripped" in a)
    targets = dict(TARGETS, enum_stripped=min(TARGETS["enum_stripped"], with_enums / n))
    actual = {"distractors": augs.get("distractors", 0) / n, "enum_stripped": augs.get("enum_stripped", 0) / n,
              "irrelevance": df.filter(pl.col("kind") == "irrelevance").height / n,
              "info_complete": levels.get("complete", 0) / m, "info_missing": levels.get("missing", 0) / m,
              "info_minimal": levels.get("minimal", 0) / m}
    return {
        "examples": df.height,
        "by_kind": dict(Counter(df["kind"].to_list())),
        "by_server": dict(Counter(s for lst in df["servers"].to_list() for s in lst[:1])),
        "by_augmentation": dict(augs),
        "by_split": dict(Counter(df["split"].to_list())),
        "info_levels": dict(levels),
        "chain_length_histogram": {str(k): v for k, v in sorted(Counter(mt["n_calls"].to_list()).items())},
        "shares": {k: round(v, 4) for k, v in actual.items()},
        "targets": targets,
        "within_tolerance": {k: abs(actual[k] - targets[k]) <= 0.02 for k in targets},
    }


def tool_coverage(df: pl.DataFrame, tools_by_server: dict[str, list[str]]) -> dict[str, Any]:
    used: dict[str, set[str]] = {}
    for server, ref in zip(df["server"].to_list(), df["reference"].to_list()):
        for turn in json.loads(ref):
            for c in turn:
                used.setdefault(server, set()).add(c["name"])
    return {s: {"tools": len(ts), "covered": len(used.get(s, set()) & set(ts)),
                "share": round(len(used.get(s, set()) & set(ts)) / max(1, len(ts)), 4)} for s, ts in tools_by_server.items()}


def _git_rev() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path(__file__).parent).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def new_version_name(content_hash: str) -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("v%Y%m%d-%H%M%S-") + content_hash[:6]


def write_corpus(cfg: BuildConfig, examples: list[Conversation], rejections: list[Rejection], extra: dict[str, Any] | None = None,
                 code_versions: dict[str, str] | None = None, tools_by_server: dict[str, list[str]] | None = None) -> Path:
    rows = [example_row(c, cfg.corpus.eval_fraction) for c in examples]
    df = pl.DataFrame(rows, schema=EXAMPLE_SCHEMA).sort("example_id")
    rej = rejection_rows(rejections).unique("rejection_id", keep="first").sort("rejection_id")
    content = stable_hash([df["example_id"].to_list(), df["messages"].to_list(), df["tools"].to_list()], 16)
    root = corpus_root(cfg.data_dir)
    version = new_version_name(content)
    while (root / version).exists():
        version += "b"
    with atomic_dir(root / version) as stage:
        files = {}
        for split in ("train", "eval"):
            part = df.filter(pl.col("split") == split)
            part.write_parquet(stage / f"{split}.parquet")
            files[f"{split}.parquet"] = part.height
        rej.write_parquet(stage / "rejections.parquet")
        files["rejections.parquet"] = rej.height
        hashes = {f: hashlib.sha256((stage / f).read_bytes()).hexdigest() for f in files}
        comp = composition(df)
        manifest = {
            "version": version, "created_at": dt.datetime.now(dt.timezone.utc).isoformat(), "content_hash": content,
            "config": cfg.model_dump(mode="json"), "counts": {**files, "examples": df.height, "rejections": rej.height},
            "composition": comp,
            "tool_coverage": tool_coverage(df, tools_by_server or {}),
            "rejections": {"by_stage": dict(Counter(rej["stage"].to_list())), "by_reason": dict(Counter(rej["reason"].to_list()))},
            "files": hashes,
            "code_versions": {"git": _git_rev(), "python": platform.python_version(), **(code_versions or {})},
            **(extra or {}),
        }
        (stage / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str))
        try:
            from pipeline.report import composition_png

            composition_png(manifest, stage / "composition.png")
        except Exception as exc:  # a picture must never cost the corpus
            manifest["report_error"] = str(exc)
    return root / version


def list_versions(data_dir: str | Path) -> list[dict[str, Any]]:
    root = corpus_root(data_dir)
    out = []
    if not root.exists():
        return out
    for d in sorted(root.iterdir()):
        if d.name.startswith(".") or not (d / "manifest.json").exists():
            continue
        m = json.loads((d / "manifest.json").read_text())
        out.append({"version": d.name, "path": str(d), "created_at": m.get("created_at"), "examples": m["counts"]["examples"],
                    "rejections": m["counts"]["rejections"], "by_kind": m["composition"]["by_kind"],
                    "servers": sorted(m["composition"]["by_server"])})
    return out


def resolve_version(data_dir: str | Path, version: str | None) -> Path:
    versions = list_versions(data_dir)
    if not versions:
        raise FileNotFoundError(f"no corpus version under {corpus_root(data_dir)}; run `prove build` first")
    if version in (None, "latest"):
        return Path(versions[-1]["path"])
    for v in versions:
        if v["version"] == version or v["version"].startswith(version):
            return Path(v["path"])
    raise FileNotFoundError(f"corpus version {version!r} not found; known: {', '.join(v['version'] for v in versions)}")


def read_examples(path: str | Path) -> pl.DataFrame:
    p = Path(path)
    return pl.concat([pl.read_parquet(p / f) for f in ("train.parquet", "eval.parquet") if (p / f).exists()])


def diff_versions(a: str | Path, b: str | Path) -> dict[str, Any]:
    da, db = read_examples(a), read_examples(b)
    ma, mb = (json.loads((Path(x) / "manifest.json").read_text())["composition"] for x in (a, b))
    ia, ib = set(da["example_id"].to_list()), set(db["example_id"].to_list())

    def delta(key: str) -> dict[str, list[int]]:
        keys = sorted(set(ma[key]) | set(mb[key]))
        return {k: [ma[key].get(k, 0), mb[key].get(k, 0)] for k in keys if ma[key].get(k, 0) != mb[key].get(k, 0)}

    return {"a": Path(a).name, "b": Path(b).name, "examples": [da.height, db.height], "added": len(ib - ia), "removed": len(ia - ib),
            "added_ids": sorted(ib - ia)[:20], "removed_ids": sorted(ia - ib)[:20],
            "by_kind": delta("by_kind"), "by_server": delta("by_server"), "by_augmentation": delta("by_augmentation")}
