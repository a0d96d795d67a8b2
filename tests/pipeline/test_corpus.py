"""The versioned corpus: Parquet splits, rejections and a manifest; immutable versions."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter

import polars as pl
import pytest

from pipeline.assembly.augment import irrelevance_example
from pipeline.core.config import BuildConfig
from pipeline.core.records import rejection, stable_hash
from pipeline.corpus.columns import messages_of, reference_of, tools_of
from pipeline.corpus.store import (
    ToolsJson,
    assign_splits,
    content_hash,
    list_versions,
    read_examples,
    resolve_version,
    write_corpus,
)

CONTRACT = [
    "example_id",
    "kind",
    "servers",
    "env_seed",
    "messages",
    "tools",
    "reference",
    "augmentations",
    "split",
    "chain_id",
    "snapshot_id",
]


@pytest.fixture()
def cfg(tmp_path):
    return BuildConfig(examples=10, servers=["banking"], data_dir=str(tmp_path))


@pytest.fixture(scope="module")
def examples(conversations, banking_tools, snapshot):
    irr = irrelevance_example("banking", banking_tools, 7, random.Random(1), snapshot.snapshot_id)
    return [c.model_copy(deep=True) for c in conversations[:10]] + [irr]


@pytest.fixture(scope="module")
def rejections():
    return [
        rejection("replay", "error_rate", "60% of calls failed", "banking", {"conversation_id": "conv-x"}),
        rejection("dedup", "near_duplicate", "Jaccard 1.00", "banking", {"conversation_id": "conv-y"}),
    ]


def _snapshot_files(path):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir())}


def test_write_corpus_creates_a_version_with_splits_rejections_and_manifest(cfg, examples, rejections):
    path = write_corpus(cfg, examples, rejections, tools_by_server={"banking": [t.name for t in examples[0].tools]})
    assert path.parent.name == "corpus" and path.name.startswith("v")
    for f in ("train.parquet", "eval.parquet", "rejections.parquet", "manifest.json"):
        assert (path / f).is_file()
    m = json.loads((path / "manifest.json").read_text())
    assert m["version"] == path.name
    assert m["counts"]["examples"] == len(examples) == m["counts"]["train.parquet"] + m["counts"]["eval.parquet"]
    assert m["counts"]["rejections"] == 2
    assert m["composition"]["by_kind"] == dict(Counter(c.kind for c in examples))
    assert (
        set(m["composition"]["by_kind"]) <= {"multi_turn", "clarification", "irrelevance"}
        and m["composition"]["by_kind"]["irrelevance"] == 1
    )
    assert m["rejections"]["by_reason"] == {"error_rate": 1, "near_duplicate": 1}
    for f in ("train.parquet", "eval.parquet", "rejections.parquet"):
        assert m["files"][f] == hashlib.sha256((path / f).read_bytes()).hexdigest()
    assert m["config"]["servers"] == ["banking"] and m["content_hash"]
    assert m["tool_coverage"]["banking"]["covered"] >= 2


def test_corpus_rows_hold_the_contract_columns(cfg, examples, rejections):
    path = write_corpus(cfg, examples, rejections)
    df = read_examples(path)
    assert set(CONTRACT) <= set(df.columns)
    assert df.height == len(examples) and df["example_id"].n_unique() == df.height
    mt = df.filter(pl.col("kind") == "multi_turn")
    for row in mt.iter_rows(named=True):
        assert row["servers"] == ["banking"] and row["env_seed"] == 7 and row["chain_id"] and row["snapshot_id"]
        msgs, tools, ref = messages_of(row["messages"]), tools_of(row["tools"]), reference_of(row["reference"])
        assert msgs[0]["role"] == "system" and tools[0]["type"] == "function" and any(ref)
    irr = df.filter(pl.col("kind") == "irrelevance").row(0, named=True)
    assert reference_of(irr["reference"]) == [[]] and irr["augmentations"] == ["irrelevance"]
    rej = pl.read_parquet(path / "rejections.parquet")
    assert set(rej["reason"].to_list()) == {"error_rate", "near_duplicate"}
    assert json.loads(rej.filter(pl.col("reason") == "error_rate")["upstream"][0]) == {"conversation_id": "conv-x"}


def test_a_second_write_is_a_new_version_and_the_first_stays_unchanged(cfg, examples, rejections):
    first = write_corpus(cfg, examples, rejections)
    before = _snapshot_files(first)
    second = write_corpus(cfg, examples[:5], rejections[:1])
    assert second != first and second.parent == first.parent
    assert _snapshot_files(first) == before
    assert read_examples(first).height == len(examples) and read_examples(second).height == 5
    assert [v["version"] for v in list_versions(cfg.data_dir)] == sorted([first.name, second.name])
    assert resolve_version(cfg.data_dir, "latest") == max(first, second)
    assert resolve_version(cfg.data_dir, first.name) == first


def test_readers_ignore_a_half_written_staging_directory(cfg, examples, rejections):
    path = write_corpus(cfg, examples, rejections)
    (path.parent / ".staging-crashed").mkdir()
    (path.parent / ".staging-crashed" / "train.parquet").write_bytes(b"partial")
    assert [v["version"] for v in list_versions(cfg.data_dir)] == [path.name]


def test_no_version_means_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="prove build"):
        resolve_version(tmp_path, None)


def _row(i: int, first: str, ref: list, parent: str | None = None) -> dict:
    msgs = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": first},
        {"role": "assistant", "content": "ok"},
    ]
    return {
        "example_id": f"ex-{i}",
        "conversation_id": f"conv-{i}",
        "parent_id": parent,
        "messages": json.dumps(msgs),
        "reference": json.dumps(ref),
        "split": "train",
    }


def _ref_key(r: dict) -> str:
    return json.dumps(reference_of(r["reference"]))


def _shared_across_splits(rows: list[dict], key) -> set:
    sides: dict = {}
    for r in rows:
        sides.setdefault(key(r), set()).add(r["split"])
    return {k for k, v in sides.items() if len(v) > 1}


def test_split_keeps_base_conversations_first_messages_and_references_on_one_side():
    rows = []
    for i in range(400):
        ref = (
            [[{"name": "get_balance", "arguments": {"account_id": f"ACC-{i % 150}"}, "depends_on": []}]]
            if i % 5
            else [[]]
        )
        first = f"question {i % 170}"  # first messages repeat across different references
        parent = f"conv-{i - 1}" if i % 7 == 0 and i else None  # an augmented variant of the previous conversation
        rows.append(_row(i, first, ref, parent))
    assign_splits(rows, 0.1)
    first = lambda r: messages_of(r["messages"])[1]["content"]  # noqa: E731
    assert _shared_across_splits(rows, first) == set()
    assert _shared_across_splits([r for r in rows if reference_of(r["reference"]) != [[]]], _ref_key) == set()
    by_id = {r["conversation_id"]: r["split"] for r in rows}
    assert all(by_id[r["parent_id"]] == r["split"] for r in rows if r["parent_id"])
    n_eval = sum(r["split"] == "eval" for r in rows)
    assert 20 <= n_eval <= 40  # whole groups fill the eval share (40 rows), never more
    again = [dict(r) for r in rows]
    assign_splits(again, 0.1)
    assert [r["split"] for r in again] == [r["split"] for r in rows]  # deterministic


def test_written_corpus_shares_no_first_message_or_reference_across_splits(cfg, examples, rejections):
    df = read_examples(write_corpus(cfg, examples, rejections))
    rows = df.to_dicts()
    assert {r["split"] for r in rows} == {"train", "eval"}
    first = lambda r: next(m["content"] for m in messages_of(r["messages"]) if m["role"] == "user")  # noqa: E731
    assert _shared_across_splits(rows, first) == set()
    assert _shared_across_splits([r for r in rows if any(reference_of(r["reference"]))], _ref_key) == set()


def test_composition_is_measured_against_the_configured_knobs(tmp_path, examples, rejections):
    """A build configured for other shares is judged against them, not against the paper's defaults."""
    from pipeline.core.config import AugmentConfig

    own = BuildConfig(
        examples=10, servers=["banking"], data_dir=str(tmp_path), augment=AugmentConfig(distractor_rate=0.0)
    )
    m = json.loads((write_corpus(own, examples, rejections) / "manifest.json").read_text())
    assert m["composition"]["targets"]["distractors"] == 0.0
    assert m["composition"]["within_tolerance"]["distractors"] is True  # nothing got distractors, as configured
    paper = BuildConfig(examples=10, servers=["banking"], data_dir=str(tmp_path / "p"))
    m = json.loads((write_corpus(paper, examples, rejections) / "manifest.json").read_text())
    assert (
        m["composition"]["targets"]["distractors"] == 0.40
        and m["composition"]["within_tolerance"]["distractors"] is False
    )


def test_tools_column_is_the_plain_json_of_each_tool_list(banking_tools):
    lists = [
        banking_tools,
        banking_tools[:3],
        banking_tools[2:5],
        [banking_tools[4], banking_tools[0]],
        banking_tools[:3],
        [],
    ]
    tools_json = ToolsJson()
    assert [tools_json(ts) for ts in lists] == [json.dumps([t.to_openai() for t in ts]) for ts in lists]


@pytest.mark.parametrize(
    "columns",
    [
        [],
        [[], []],
        [["ex-1", "ex-2"], ['{"a": "\u00e9 \\"q\\""}', "x"], ["t", "t"]],
        [["é", "\n"], ["\ud83d\ude00 ok", ""]],
    ],
)
def test_content_hash_is_the_stable_hash_of_the_columns(columns):
    assert content_hash(columns) == stable_hash(columns, 16)
