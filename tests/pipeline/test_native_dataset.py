"""The corpus as a native dataset: nested Parquet columns that ``datasets`` loads as lists of dicts and TRL's
SFTTrainer trains on as they are; the content hash still computed from the JSON text; a dataset card per
version; ``prove export`` as a Hub folder or OpenAI fine-tuning JSONL."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from pipeline.assembly.augment import irrelevance_example
from pipeline.core.config import BuildConfig, CorpusConfig
from pipeline.core.records import Example, messages_json
from pipeline.corpus.columns import messages_of, nested_row, to_table, tools_of, tools_text
from pipeline.corpus.export import ExportError, export_version, openai_line
from pipeline.corpus.sql import query
from pipeline.corpus.store import content_hash, example_row, read_examples, record_gate, write_corpus


@pytest.fixture(scope="module")
def version(conversations, banking_tools, snapshot, tmp_path_factory):
    data = tmp_path_factory.mktemp("native")
    cfg = BuildConfig(
        examples=12, servers=["banking"], data_dir=str(data), corpus=CorpusConfig(eval_fraction=0.25, license="mit")
    )
    irr = irrelevance_example("banking", banking_tools, 7, random.Random(1), snapshot.snapshot_id)
    examples = [c.model_copy(deep=True) for c in conversations[:11]] + [irr]
    return write_corpus(cfg, examples, []), examples


def _load(path, tmp_path, **files):
    # deferred in the test: datasets is heavy and only these tests need it
    import datasets

    return datasets.load_dataset("parquet", data_files=files or None, cache_dir=str(tmp_path / "hf"))


def _split_files(path):
    return {"train": str(path / "train.parquet"), "eval": str(path / "eval.parquet")}


def test_datasets_loads_messages_tools_and_references_as_lists_of_dicts(version, tmp_path):
    path, _ = version
    ds = _load(path, tmp_path, **_split_files(path))
    assert ds["train"].num_rows + ds["eval"].num_rows == 12
    calls = 0
    for row in ds["train"]:
        assert row["messages"][0]["role"] == "system" and isinstance(row["messages"][0], dict)
        assert all(isinstance(t, dict) and isinstance(t["function"]["parameters"], dict) for t in row["tools"])
        for m in row["messages"]:
            assert m["weight"] is None  # no message is marked yet; the field is there for those that will be
            for c in m["tool_calls"] or []:
                calls += 1
                assert isinstance(json.loads(c["function"]["arguments"]), dict)  # OpenAI: arguments as JSON text
        assert all(isinstance(c["arguments"], dict) for turn in row["reference"] for c in turn)
        assert all(isinstance(t["arguments"], dict) for t in row["trace"])
    assert calls > 0


def test_the_nested_columns_give_back_the_text_the_content_hash_was_computed_from(version):
    path, examples = version
    df = read_examples(path).sort("example_id")
    m = json.loads((path / "manifest.json").read_text())
    msgs = [json.dumps(messages_of(v)) for v in df["messages"].to_list()]
    tools = [tools_text(v) for v in df["tools"].to_list()]
    assert content_hash([df["example_id"].to_list(), msgs, tools]) == m["content_hash"]
    # and those texts are what the records serialize to
    by_id = {example_row(e, 0.0)["example_id"]: e for e in map(Example.of, examples)}
    for eid, text in zip(df["example_id"].to_list(), msgs):
        assert text == json.dumps(messages_json(by_id[eid].messages), default=str)


def test_a_message_weight_is_carried_through_parquet_and_the_openai_export():
    msgs = [
        {"role": "user", "content": "pay it"},
        {"role": "assistant", "content": None, "weight": 0, "tool_calls": [_call("c1", "pay", {"id": 12})]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"error": "not found"}'},
        {"role": "assistant", "content": None, "tool_calls": [_call("c2", "pay", {"id": "INV-1"})]},
        {"role": "tool", "tool_call_id": "c2", "content": '{"ok": true}'},
        {"role": "assistant", "content": "Paid."},
    ]
    tools = [{"type": "function", "function": {"name": "pay", "description": "", "parameters": {"type": "object"}}}]
    flat = {"messages": json.dumps(msgs), "tools": json.dumps(tools), "reference": "[]", "trace": "[]", "setup": None}
    stored = to_table([{**_blank_row(), **flat}]).to_pylist()[0]
    assert [m["weight"] for m in stored["messages"]] == [None, 0, None, None, None, None]
    line = openai_line(stored)
    assert [m.get("weight") for m in line["messages"]] == [None, 0, None, 1, None, 1]
    assert line["tools"] == tools and nested_row({**_blank_row(), **flat})["tools"] == [json.dumps(tools[0])]


def _call(cid: str, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _blank_row() -> dict:
    cols = ("example_id", "kind", "server", "split", "conversation_id", "chain_id", "snapshot_id", "query_id")
    return {**{c: "x" for c in cols}, "servers": ["x"], "env_seed": 0, "augmentations": [], "outcomes": []}


def test_sft_trainer_trains_a_step_on_the_loaded_dataset_as_it_is(version, tmp_path):
    from trl import SFTConfig, SFTTrainer

    from training.tiny import TinyConfig, build_tiny_model, train_tokenizer_on_conversations

    path, _ = version
    train = _load(path, tmp_path, **_split_files(path))["train"]
    tok = train_tokenizer_on_conversations(
        [{"messages": r["messages"], "tools": r["tools"]} for r in train], vocab_size=600
    )
    model = build_tiny_model(tok, TinyConfig(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    args = SFTConfig(
        output_dir=str(tmp_path / "sft"),
        max_steps=1,
        per_device_train_batch_size=2,
        use_cpu=True,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        max_length=512,
        assistant_only_loss=True,
        dataloader_pin_memory=False,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=train, processing_class=tok)
    out = trainer.train()
    assert out.global_step == 1 and out.training_loss > 0
    assert any(not p.detach().equal(before[n]) for n, p in model.named_parameters())


def _openai_problems(rec: dict) -> list[str]:
    """What makes one JSONL record not an OpenAI chat fine-tuning example with tools."""
    bad = [] if set(rec) <= {"messages", "tools", "parallel_tool_calls"} else [f"keys {sorted(rec)}"]
    tool_names = {t["function"]["name"] for t in rec["tools"] if t.get("type") == "function"}
    if any(not isinstance(t["function"].get("parameters"), dict) for t in rec["tools"]):
        bad.append("a tool without a parameters object")
    open_calls: set[str] = set()
    for m in rec["messages"]:
        if m["role"] not in ("system", "user", "assistant", "tool"):
            bad.append(f"role {m['role']}")
        if ("weight" in m) != (m["role"] == "assistant") or m.get("weight", 0) not in (0, 1):
            bad.append(f"weight on {m['role']}: {m.get('weight')}")
        for c in m.get("tool_calls") or []:
            if c["type"] != "function" or c["function"]["name"] not in tool_names:
                bad.append(f"call of {c['function']['name']}")
            if not isinstance(json.loads(c["function"]["arguments"]), dict):
                bad.append("arguments not a JSON object")
            open_calls.add(c["id"])
        if m["role"] == "tool" and (m["tool_call_id"] not in open_calls or not isinstance(m["content"], str)):
            bad.append(f"tool result for {m['tool_call_id']}")
        if m["role"] != "tool" and not (isinstance(m.get("content"), str) or m.get("tool_calls")):
            bad.append(f"{m['role']} message with neither content nor calls")
    return bad


def test_openai_export_is_fine_tuning_jsonl_with_tools_and_weights(version, tmp_path):
    path, _ = version
    done = export_version(path, "openai", tmp_path / "oa")
    m = json.loads((path / "manifest.json").read_text())
    lines = {s: (tmp_path / "oa" / f"{s}.jsonl").read_text().splitlines() for s in ("train", "eval")}
    assert {f"{s}.jsonl": len(v) for s, v in lines.items()} == done["files"]
    assert sum(map(len, lines.values())) == m["counts"]["examples"]
    recs = [json.loads(x) for v in lines.values() for x in v]
    assert [p for r in recs for p in _openai_problems(r)] == []
    assert any(m.get("tool_calls") for r in recs for m in r["messages"])


def test_hf_export_loads_with_datasets_and_its_card_says_what_the_version_is(version, tmp_path):
    import datasets

    path, _ = version
    export_version(path, "hf", tmp_path / "hub")
    text = (tmp_path / "hub" / "README.md").read_text()
    meta = yaml.safe_load(text.split("---\n")[1])
    m = json.loads((path / "manifest.json").read_text())
    assert meta["license"] == "mit" and meta["size_categories"] == ["n<1K"]
    assert [f["path"] for f in meta["configs"][0]["data_files"]] == ["train.parquet", "eval.parquet"]
    assert {f["name"] for f in meta["dataset_info"]["features"]} == set(read_examples(path).columns)
    assert m["content_hash"] in text and "banking" in text
    ds = datasets.load_dataset(str(tmp_path / "hub"), cache_dir=str(tmp_path / "hf"))
    assert {s: ds[s].num_rows for s in ds} == {
        "train": m["counts"]["train.parquet"],
        "eval": m["counts"]["eval.parquet"],
    }
    assert isinstance(ds["train"][0]["tools"][0], dict)


def test_the_card_follows_the_gates_as_they_are_recorded(version):
    path, _ = version
    record_gate(path, "corpus_lint", True)
    assert "| corpus_lint | passed |" in (path / "README.md").read_text()
    record_gate(path, "corpus_composition", False, {"off": 1})
    card = (path / "README.md").read_text()
    assert "| corpus_composition | **failed** |" in card and "| corpus_lint | passed |" in card


def test_export_refuses_an_unknown_format_and_a_folder_with_files(version, tmp_path):
    path, _ = version
    with pytest.raises(ExportError, match="unknown export format 'csv'; known: hf, openai"):
        export_version(path, "csv", tmp_path / "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(ExportError, match="not an empty folder"):
        export_version(path, "openai", tmp_path / "full")
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["keep.txt"]
    (tmp_path / "empty").mkdir()
    assert export_version(path, "openai", tmp_path / "empty")["files"]


def test_duckdb_reads_the_nested_columns(version):
    path, _ = version
    cols, rows = query(
        path.parent.parent,
        "SELECT count(*), count(*) FILTER (WHERE len(messages) > 2), max(tools[1]->>'$.type') FROM examples",
        include_failed=True,  # another test of this module records a failed gate on the version
    )
    assert rows == [(12, 12, "function")]


def test_tools_text_and_tools_of_read_this_format_and_the_old_one():
    tools = [{"type": "function", "function": {"name": "a", "parameters": {}}}]
    text = "[" + ", ".join(json.dumps(t) for t in tools) + "]"  # the column as versions before this one held it
    assert tools_text(text) == text and tools_of(text) == tools
    assert tools_text([json.dumps(tools[0])]) == text and tools_of([json.dumps(tools[0])]) == tools


def test_training_reads_tasks_from_the_nested_columns(version):
    from training.data import load_tasks

    path, examples = version
    tasks = load_tasks(path, "train")
    rows = {r["example_id"]: r for r in map(lambda e: example_row(Example.of(e), 0.0), examples)}
    assert tasks and all(t.tools_json == rows[t.example_id]["tools"] for t in tasks)
    assert all(t.messages == json.loads(rows[t.example_id]["messages"]) for t in tasks)
    assert any(t.reference and any(t.reference) for t in tasks)
