"""A build on a Dagster instance in PostgreSQL, set up as docs/dagster.md says (dagster-postgres, a
``postgresql+psycopg2://`` URL): its runs and events are stored in PostgreSQL, the corpus is the one-machine
build's, and the SQLite-only tweaks (the kept-engines storage, the relaxed commits) stay out of it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import dagster as dg
import yaml

from assets import progress, sqlite_commits
from assets.instance_storage import sqlite_backed
from assets.orchestrate import build
from pipeline.core.config import BuildConfig
from tests.builds import build_corpus
from tests.services import Postgres

DOCS = Path(__file__).resolve().parents[2] / "docs" / "dagster.md"


def docs_recipe() -> tuple[str, str]:
    """docs/dagster.md's PostgreSQL recipe: the URL it exports as DAGSTER_PG_URL and its dagster.yaml block."""
    section = DOCS.read_text().split("### PostgreSQL instead", 1)[1]
    url = re.search(r'export DAGSTER_PG_URL="([^"]+)"', section).group(1)
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    return url, block


def test_the_docs_postgres_recipe_names_the_psycopg2_driver():
    url, block = docs_recipe()
    assert urlsplit(url).scheme == "postgresql+psycopg2"
    assert yaml.safe_load(block) == {"storage": {"postgres": {"postgres_url": {"env": "DAGSTER_PG_URL"}}}}


def test_a_build_on_postgres_stores_its_runs_there_and_writes_the_one_machine_corpus(
    pg_cluster: Postgres, tmp_path, monkeypatch
):
    doc_url, block = docs_recipe()
    url = pg_cluster.database("build_on_postgres")
    assert urlsplit(url).scheme == urlsplit(doc_url).scheme  # the docs' form, on the throwaway cluster
    monkeypatch.setenv("DAGSTER_PG_URL", url)
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(block + "telemetry:\n  enabled: false\n")
    instance = dg.DagsterInstance.from_config(str(home))
    assert not sqlite_backed(instance)
    assert sqlite_backed(dg.DagsterInstance.ephemeral())

    cfg = BuildConfig(examples=12, servers=["banking"], data_dir=str(tmp_path / "data"))
    relaxed: list[int] = []  # how many relaxed_sync blocks were open at each progress report of the build
    with progress.listening(lambda *_a, **_k: relaxed.append(sqlite_commits._KEEPERS.depth)):
        b = build(cfg, instance=instance)
    assert relaxed and set(relaxed) == {0}
    failed = [e.step_key for e in b.result.all_events if e.is_step_failure]
    assert all(k.startswith("corpus_corpus_") for k in failed), b.error()  # 12 examples may miss a quality gate

    # the runs and their events are in PostgreSQL
    stored = dict(pg_cluster.query("SELECT run_id, status FROM runs", db="build_on_postgres"))
    assert set(b.runs) <= set(stored) and len(b.runs) == 2
    assert stored[b.runs[0]] == "SUCCESS"
    events = pg_cluster.query(
        f"SELECT count(*) FROM event_logs WHERE run_id IN ('{b.runs[0]}', '{b.runs[1]}')", db="build_on_postgres"
    )
    assert int(events[0][0]) > 20
    assert not list(home.glob("**/*.db"))  # nothing in SQLite files under the home

    # the corpus version is written, with the content of the same build on the default (ephemeral SQLite) instance
    manifest = json.loads((b.corpus_path / "manifest.json").read_text())
    assert (b.corpus_path / "train.parquet").exists()
    one_machine = build_corpus(cfg.model_copy(update={"data_dir": str(tmp_path / "one")}), gates=False)
    assert json.loads((one_machine / "manifest.json").read_text())["content_hash"] == manifest["content_hash"]
