"""The whole synthesis on a tiny config: two servers, a real corpus version, replayable examples."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipeline.core.config import BuildConfig, GraphConfig
from pipeline.core.records import Conversation
from pipeline.corpus.columns import messages_of, reference_of, tools_of, trace_of
from pipeline.corpus.store import read_examples
from pipeline.env import Environment
from pipeline.synthesis.replay import replay_trace
from tests.builds import build_run

REASONS = {
    "unresolvable_dependency",
    "nothing_to_withhold",
    "ungrounded_query",
    "query_backend_error",
    "server_failure",
    "error_rate",
    "sensitive_provenance",
    "replay_mismatch",
    "nondeterministic",
    "near_duplicate",
    "short_supply",
    "no_chains",
    "unnamed_entity",
    "undo_then_redo",
    "do_then_undo",
    "acts_on_closed",
    "missing_entity",
}
TOOL_KINDS = ["multi_turn", "clarification"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, graph, graph_cache_dir):
    # the session graph fixture already cached banking's graph under the same key (seed 7, default GraphConfig)
    data = tmp_path_factory.mktemp("build")
    cfg = BuildConfig(
        examples=40, servers=["banking", "crm"], data_dir=str(data), graph=GraphConfig(cache_dir=str(graph_cache_dir))
    )
    b = build_run(cfg)
    path = b.corpus_path
    return cfg, path, b, read_examples(path), pl.read_parquet(path / "rejections.parquet")


def test_build_writes_the_requested_number_of_examples_from_both_servers(built):
    cfg, path, b, df, _ = built
    assert df.height == cfg.examples
    mt = df.filter(pl.col("kind").is_in(TOOL_KINDS))
    assert set(mt["server"].to_list()) == {"banking", "crm"}
    assert {"irrelevance", "abstention", "clarification", "missing_function"} <= set(df["kind"].to_list())
    # the clarification kind is the multi-turn conversations at information level "missing", and only those
    assert set(df.filter(pl.col("kind") == "clarification")["info_level"].to_list()) == {"missing"}
    assert "missing" not in df.filter(pl.col("kind") == "multi_turn")["info_level"].to_list()
    m = json.loads((path / "manifest.json").read_text())
    assert m["counts"]["examples"] == cfg.examples and set(m["composition"]["by_server"]) == {"banking", "crm"}
    assert b.metadata("dependency_graphs", "banking")["cache_hit"] is True


def test_build_records_rejections_with_reason_codes_and_lineage(built):
    _, _, _, _, rej = built
    assert rej.height > 0
    assert set(rej["reason"].to_list()) <= REASONS
    assert set(rej["stage"].to_list()) <= {"query", "simulate", "replay", "dedup", "augment", "chains"}
    for row in rej.filter(pl.col("stage") != "augment").iter_rows(named=True):
        assert json.loads(row["upstream"]).get("snapshot_id") or json.loads(row["upstream"]).get("conversation_id")


def test_every_accepted_multi_turn_example_replays_from_its_seed(built):
    _, _, _, df, _ = built
    mt = df.filter(pl.col("kind").is_in(TOOL_KINDS))
    assert mt.height >= 20
    for server in ("banking", "crm"):
        with Environment(server) as env:
            for row in mt.filter(pl.col("server") == server).iter_rows(named=True):
                trace = trace_of(row["trace"])
                conv = Conversation(
                    conversation_id=row["conversation_id"],
                    server=server,
                    servers=row["servers"],
                    seed=row["env_seed"],
                    snapshot_id=row["snapshot_id"],
                    messages=[],
                    tools=[],
                    reference=[],
                    trace=trace,
                )
                results, final = replay_trace(env, conv)
                assert [(r["ok"], r["result"]) for r in results] == [(t["ok"], t["result"]) for t in trace], row[
                    "example_id"
                ]
                assert final == row["final_state_hash"]


def test_accepted_examples_keep_the_replay_rules(built):
    _, _, _, df, _ = built
    for row in df.filter(pl.col("kind").is_in(TOOL_KINDS)).iter_rows(named=True):
        trace = trace_of(row["trace"])
        assert sum(not t["ok"] for t in trace) / len(trace) <= 0.30
        offered = {t["function"]["name"] for t in tools_of(row["tools"])}
        assert {c["name"] for turn in reference_of(row["reference"]) for c in turn} <= offered


def test_no_call_examples_have_empty_references(built):
    _, _, _, df, _ = built
    for row in df.filter(~pl.col("kind").is_in(TOOL_KINDS)).iter_rows(named=True):
        assert reference_of(row["reference"]) == [[]]
        assert not any(m.get("tool_calls") for m in messages_of(row["messages"]))


def test_the_built_corpus_passes_the_linter_and_records_tool_annotations(built):
    from pipeline.corpus.lint import lint_version

    _, path, _, _, _ = built
    m = json.loads((path / "manifest.json").read_text())
    assert (
        m["tool_annotations"]["banking"]["get_balance"] is True
        and m["tool_annotations"]["banking"]["withdraw"] is False
    )
    rep = lint_version(path)
    assert rep.passed, rep.as_dict()
    assert rep.metrics["unique_openings"] >= 0.30 and rep.metrics["distinct_frames"] >= 0.5
