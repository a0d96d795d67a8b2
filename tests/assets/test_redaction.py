"""Sensitive values (PINs, passwords, tokens) stay out of Dagster's run history: previews, metadata,
log lines. Materialized for real, then the event log is scanned for the PINs the user turns state."""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from pipeline.core.config import BuildConfig
from pipeline.core.redact import REDACTED, Redactor
from pipeline.corpus.columns import messages_of
from tests.builds import build_run


def _where(value: str, text: str) -> list[str]:
    """What surrounds each place ``value`` stands alone in ``text``: not part of a word or of a longer number
    (the digits of an event's timestamp 1795791388.2062 or a size 0.2062 are not a PIN)."""
    alone = rf"(?<![A-Za-z0-9])(?<!\d\.){re.escape(value)}(?![A-Za-z0-9])(?!\.\d)"
    return [text[max(0, m.start() - 60) : m.end() + 60] for m in re.finditer(alone, text)]


def _stated_secrets(snapshot, queries) -> set[str]:
    """Sensitive values the generated user turns state (e.g. "... and my PIN is 8665.")."""
    values = {
        str(v)
        for ctx in snapshot.contexts()
        for found in ctx.secrets.values()
        for v in found.values()
        if len(str(v)) >= 3
    }
    text = "\n".join(t for q in queries.items for t in q.turns)
    return {v for v in values if _where(v, text)}


@pytest.fixture(scope="module")
def banking_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("redact")
    cfg = BuildConfig(examples=30, servers=["banking"], data_dir=str(tmp / "data"))
    b = build_run(cfg)
    snap, queries = b.output("server_snapshots", "banking"), b.output("user_queries", "banking")
    log = "\n".join(str(e) for run_id in b.runs for e in b.instance.all_logs(run_id))
    return cfg, b.instance, snap, queries, log, b.result


def test_the_run_history_holds_no_pin_that_the_user_turns_state(banking_run):
    cfg, instance, snap, queries, log, _ = banking_run
    pins = _stated_secrets(snap, queries)
    assert pins, "the banking requests state PINs (the test needs some to look for)"
    leaked = {p: where for p in sorted(pins) if (where := _where(p, log))}
    assert not leaked, f"sensitive values in the Dagster event log (with what surrounds them): {leaked}"
    assert REDACTED in log, "the user_queries preview shows where a value was redacted"


def test_the_corpus_keeps_the_stated_pin_in_the_user_turn(banking_run):
    cfg, _, snap, queries, _, _ = banking_run
    version = next(p for p in (Path(cfg.data_dir) / "corpus").iterdir() if p.is_dir() and not p.name.startswith("."))
    examples = pl.concat([pl.read_parquet(version / f) for f in ("train.parquet", "eval.parquet")])
    users = "\n".join(
        m["content"] or "" for ms in examples["messages"].to_list() for m in messages_of(ms) if m["role"] == "user"
    )
    assert any(p in users for p in _stated_secrets(snap, queries))


def test_the_rejections_asset_shows_sample_ids_rules_and_failing_calls_per_reason(banking_run):
    cfg, instance, _, _, _, _ = banking_run
    ev = instance.get_latest_materialization_event(dg.AssetKey("rejections"))
    meta = ev.asset_materialization.metadata
    rows = meta["samples_table"].value.records
    rej = pl.read_parquet(
        next(p for p in (Path(cfg.data_dir) / "corpus").iterdir() if p.is_dir() and not p.name.startswith("."))
        / "rejections.parquet"
    )
    rules = {f"{s}/{r}" for s, r in zip(rej["stage"], rej["reason"])}
    assert {r.data["rule"] for r in rows} == rules, "every reason has samples"
    ids = set(rej["rejection_id"])
    assert all(r.data["rejection_id"] in ids for r in rows)
    assert any(r.data["failing_call"] and "->" in r.data["failing_call"] for r in rows), (
        "failing calls are shown with their error"
    )
    md = meta["samples"].value
    assert "prove lineage <rejection_id>" in md and all(f"### {rule}" in md for rule in rules)


def test_a_redactor_replaces_whole_values_and_sensitive_keys():
    red = Redactor(["8665", "hunter22"], keys=["pin"])
    assert red.text("my PIN is 8665. not 86651 or a8665") == f"my PIN is {REDACTED}. not 86651 or a8665"
    assert red.obj({"pin": "0000", "note": "password hunter22", "n": 8665, "ok": 1}) == {
        "pin": REDACTED,
        "note": f"password {REDACTED}",
        "n": REDACTED,
        "ok": 1,
    }
