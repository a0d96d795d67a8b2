"""Corpus versions as a data product: immutable versions, crash safety, and the CLI that reads them
(`prove corpus diff`, `prove lineage`, `prove sql`), on real tiny builds of banking and crm."""

from __future__ import annotations

import hashlib
import json
import shutil

import polars as pl
import pytest

from assets.cli import main
from pipeline.core.config import BuildConfig
from pipeline.core.storage import atomic_dir
from pipeline.corpus.columns import messages_of, reference_of, trace_of
from pipeline.corpus.store import list_versions, read_examples, resolve_version, write_corpus
from tests.builds import build_corpus


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory):
    """Version A: 30 examples on banking + crm. Version B: 20 examples on banking only (same data dir)."""
    data = tmp_path_factory.mktemp("corpus") / "data"
    a = build_corpus(BuildConfig(examples=30, servers=["banking", "crm"], data_dir=str(data)))
    a_files = {p.name: p.read_bytes() for p in sorted(a.iterdir()) if p.is_file()}
    b = build_corpus(BuildConfig(examples=20, servers=["banking"], data_dir=str(data)))
    return data, a, b, a_files


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


# ----------------------------------------------------------------------------- versions
def test_two_builds_write_two_versions_and_the_first_stays_byte_identical(two_versions):
    data, a, b, a_files = two_versions
    assert a != b
    assert [v["version"] for v in list_versions(data)] == [a.name, b.name]
    assert resolve_version(data, "latest") == b
    # the first version is untouched by the second build: same files, same bytes
    assert {p.name: p.read_bytes() for p in sorted(a.iterdir()) if p.is_file()} == a_files
    # and still matches the hashes its manifest recorded when it was written
    m = json.loads((a / "manifest.json").read_text())
    assert set(m["files"]) == {"train.parquet", "eval.parquet", "rejections.parquet"}
    for f, digest in m["files"].items():
        assert hashlib.sha256((a / f).read_bytes()).hexdigest() == digest
    # and is still readable, with the counts it was written with
    assert read_examples(a).height == m["counts"]["examples"] == 30
    assert pl.read_parquet(a / "rejections.parquet").height == m["counts"]["rejections"]
    assert set(m["composition"]["by_server"]) == {"banking", "crm"}


def test_a_version_is_never_overwritten(two_versions):
    _, a, _, _ = two_versions
    with pytest.raises(FileExistsError, match="never overwritten"):
        with atomic_dir(a):
            pass


def test_an_exception_inside_atomic_dir_leaves_no_version_and_no_staging(tmp_path):
    root = tmp_path / "data" / "corpus"
    with pytest.raises(RuntimeError, match="killed"):
        with atomic_dir(root / "v-crashed") as stage:
            (stage / "train.parquet").write_bytes(b"half")
            (stage / "manifest.json").write_text("{}")
            raise RuntimeError("killed mid-write")
    assert not (root / "v-crashed").exists()
    assert list(root.iterdir()) == []
    assert list_versions(tmp_path / "data") == []


def test_a_write_killed_inside_write_corpus_leaves_the_existing_versions_alone(two_versions, tmp_path, monkeypatch):
    data, a, b, _ = two_versions
    copy = tmp_path / "data"
    shutil.copytree(data / "corpus", copy / "corpus")
    before = [v["version"] for v in list_versions(copy)]

    import pipeline.corpus.store as corpus_mod

    def boom(*args, **kwargs):
        raise KeyboardInterrupt("killed while writing the manifest")

    monkeypatch.setattr(corpus_mod, "composition", boom)
    cfg = BuildConfig(examples=5, servers=["banking"], data_dir=str(copy))
    with pytest.raises(KeyboardInterrupt):
        write_corpus(cfg, [], [])
    assert [v["version"] for v in list_versions(copy)] == before
    assert not [p for p in (copy / "corpus").iterdir() if p.name.startswith(".staging-")]


def test_list_versions_ignores_a_leftover_staging_dir_even_with_a_manifest(two_versions, tmp_path, capsys):
    data, a, b, _ = two_versions
    copy = tmp_path / "data"
    shutil.copytree(data / "corpus", copy / "corpus")
    # a run killed after writing everything but before the rename: a complete-looking hidden directory
    shutil.copytree(a, copy / "corpus" / ".staging-killed")
    assert [v["version"] for v in list_versions(copy)] == [a.name, b.name]
    assert resolve_version(copy, "latest").name == b.name
    rc, out, _ = _cli(capsys, "corpus", "list", "--json", "--data-dir", str(copy))
    assert rc == 0 and [v["version"] for v in json.loads(out)] == [a.name, b.name]
    # nor does SQL see it
    rc, out, _ = _cli(
        capsys, "sql", "select distinct version from examples order by 1", "--json", "--data-dir", str(copy)
    )
    assert rc == 0 and [r["version"] for r in json.loads(out)] == [a.name, b.name]


# ----------------------------------------------------------------------------- diff
def test_corpus_diff_shows_counts_by_kind_server_augmentation_and_added_removed(two_versions, capsys):
    data, a, b, _ = two_versions
    ea, eb = set(read_examples(a)["example_id"].to_list()), set(read_examples(b)["example_id"].to_list())
    ma, mb = (json.loads((p / "manifest.json").read_text())["composition"] for p in (a, b))

    rc, out, err = _cli(capsys, "corpus", "diff", a.name, "latest", "--data-dir", str(data))
    assert rc == 0, err
    assert f"A = {a.name}" in out and f"B = {b.name}" in out
    assert f"(+{len(eb - ea)} added, -{len(ea - eb)} removed, {len(ea & eb)} in both)" in out
    lines = out.splitlines()
    # crm is gone in B: its row counts all of A's crm examples away
    crm = ma["by_server"]["crm"]
    assert any(line.split() == ["crm", str(crm), "0", f"-{crm}"] for line in lines), out
    for kind, n in ma["by_kind"].items():
        m = mb["by_kind"].get(kind, 0)
        assert any(line.split() == [kind, str(n), str(m), f"{m - n:+d}"] for line in lines), (kind, out)
    assert "augmentation" in out and "distractors" in out
    # the removed examples are listed with their kind and server
    removed_crm = read_examples(a).filter(pl.col("server") == "crm").sort("example_id")["example_id"][0]
    assert f"- {removed_crm}" in out
    assert "config changed: examples, servers" in out

    rc, out, _ = _cli(capsys, "corpus", "diff", a.name, b.name, "--json", "--data-dir", str(data))
    d = json.loads(out)
    assert d["added"] == len(eb - ea) and d["removed"] == len(ea - eb)
    assert d["by_server"]["crm"] == [crm, 0]
    assert "by_server.crm" in d["changed"]
    assert {x["example_id"] for x in d["removed_examples"]} <= ea - eb


def test_diffing_a_version_with_itself_shows_nothing_changed(two_versions, capsys):
    data, a, _, _ = two_versions
    rc, out, _ = _cli(capsys, "corpus", "diff", a.name, a.name, "--json", "--data-dir", str(data))
    d = json.loads(out)
    assert (
        rc == 0
        and d["added"] == d["removed"] == 0
        and d["changed"] == []
        and d["content_hash"][0] == d["content_hash"][1]
    )


# ----------------------------------------------------------------------------- lineage
def test_lineage_of_an_error_rate_rejection_prints_the_rule_and_the_failing_calls_with_their_errors(
    two_versions, capsys
):
    """error_rate rejects at the query stage (every value set tried fails too often in the dry run)
    or at replay; either way lineage shows the calls that failed and their errors."""
    data, a, b, _ = two_versions
    rej = pl.read_parquet(a / "rejections.parquet").filter(pl.col("reason") == "error_rate")
    assert rej.height, "the tiny build rejects some conversations for their error rate"
    # prefer one only version A holds (a crm conversation): lineage must find it in a version that is not the latest
    only_a = rej.filter(
        ~pl.col("rejection_id").is_in(pl.read_parquet(b / "rejections.parquet")["rejection_id"].to_list())
    )
    r = (only_a if only_a.height else rej).sort("rejection_id").row(0, named=True)
    body = json.loads(r["payload"])
    calls = body["trace"] if r["stage"] == "replay" else body["dry_run"]
    failing = [t for t in calls if not t["ok"]]
    assert failing

    # A is not the latest version: lineage looks there too
    where = [] if only_a.height else ["--version", a.name]
    rc, out, err = _cli(capsys, "lineage", r["rejection_id"], *where, "--data-dir", str(data))
    assert rc == 0, err
    assert f"rule      {r['stage']}/error_rate" in out
    assert r["detail"][:60] in out
    assert f"snapshot  {body['snapshot_id']}" in out
    assert f"chain     {body['chain_id']}" in out
    if r["stage"] == "replay":
        assert f"query     {body['query_id']}" in out
    else:
        assert "the dry run that resolved the chain's values" in out
    for t in failing:
        assert f"{t['name']}({json.dumps(t['arguments'], sort_keys=True)[:60]}" in out
        assert f"-> ERROR {t['error_code']}: {t['error'][:60]}" in out
    # every call is shown, the successful ones with their result
    assert out.count("-> ok: ") == sum(t["ok"] for t in calls)
    assert "failing calls:" in out

    rc, out, _ = _cli(capsys, "lineage", r["rejection_id"], *where, "--json", "--data-dir", str(data))
    d = json.loads(out)
    assert d["type"] == "rejection" and d["version"] == a.name
    assert d["rule"] == {"stage": r["stage"], "reason": "error_rate", "detail": r["detail"]}
    assert [d["calls"][i]["error_code"] for i in d["failing_calls"]] == [t["error_code"] for t in failing]


def test_lineage_of_a_chain_rejection_prints_the_chain_it_could_not_use(two_versions, capsys):
    data, a, _, _ = two_versions
    rej = pl.read_parquet(a / "rejections.parquet").filter(pl.col("reason") == "unresolvable_dependency")
    assert rej.height
    r = rej.row(0, named=True)
    chain = json.loads(r["payload"])
    rc, out, _ = _cli(capsys, "lineage", r["rejection_id"], "--version", a.name, "--data-dir", str(data))
    assert rc == 0
    assert "rule      query/unresolvable_dependency" in out
    assert f"chain     {chain['chain_id']}  " + " -> ".join(s["name"] for s in chain["steps"]) in out
    assert f"snapshot  {chain['snapshot_id']}" in out


def test_lineage_of_an_accepted_example_prints_snapshot_chain_query_and_each_replayed_call(two_versions, capsys):
    data, a, b, _ = two_versions
    df = read_examples(b).filter((pl.col("kind") == "multi_turn") & (pl.col("n_calls") >= 2)).sort("example_id")
    e = df.row(0, named=True)
    trace = trace_of(e["trace"])
    users = [m["content"] for m in messages_of(e["messages"]) if m["role"] == "user"]
    rc, out, err = _cli(capsys, "lineage", e["example_id"], "--data-dir", str(data), "--width", "400")
    assert rc == 0, err
    assert out.startswith(f"example {e['example_id']}")
    assert f"snapshot  {e['snapshot_id']}  (server banking, seed {e['env_seed']})" in out
    ref_names = [c["name"] for turn in reference_of(e["reference"]) for c in turn]
    assert f"chain     {e['chain_id']}  " + " -> ".join(ref_names) in out
    assert f"query     {e['query_id']}  (information level {e['info_level']}, persona {e['persona']})" in out
    for i, u in enumerate(users):
        assert f"user turn {i}: {u[:80]}" in out
    assert f"calls ({len(trace)}, " in out
    for i, t in enumerate(trace):
        assert f"{i + 1}. [turn {t['turn']}] {t['name']}(" in out
        if t["ok"]:
            assert json.dumps(t["result"], sort_keys=True, default=str)[:80] in out
        else:
            assert f"-> ERROR {t['error_code']}" in out
    assert "accepted: replayed on a fresh session" in out
    # found by its conversation id too
    rc, out2, _ = _cli(capsys, "lineage", e["conversation_id"], "--json", "--data-dir", str(data))
    d = json.loads(out2)
    assert d["type"] == "example" and d["id"] == e["example_id"] and len(d["calls"]) == len(trace)


def test_lineage_of_an_unknown_id_fails_clearly(two_versions, capsys):
    data, *_ = two_versions
    rc, out, err = _cli(capsys, "lineage", "ex-does-not-exist", "--data-dir", str(data))
    assert rc == 1 and "no example or rejection with id 'ex-does-not-exist'" in err


# ----------------------------------------------------------------------------- sql
def test_prove_sql_without_a_query_lists_the_views(two_versions, capsys):
    data, a, b, _ = two_versions
    rc, out, _ = _cli(capsys, "sql", "--data-dir", str(data))
    assert rc == 0
    assert (data / "corpus" / "prove.duckdb").is_file()
    assert str(data / "corpus" / "prove.duckdb") in out
    total = read_examples(a).height + read_examples(b).height
    assert any(line.split()[:2] == ["examples", str(total)] for line in out.splitlines()), out
    assert any(line.split()[:1] == ["rejections"] for line in out.splitlines())
    assert any(line.split()[:2] == ["versions", "2"] for line in out.splitlines())


def test_prove_sql_runs_a_query_over_all_versions_with_a_version_column(two_versions, capsys):
    data, a, b, _ = two_versions
    rc, out, _ = _cli(
        capsys,
        "sql",
        "select version, server, count(*) as n from examples group by all order by all",
        "--data-dir",
        str(data),
    )
    assert rc == 0
    got = {
        (ln.split("|")[1].strip(), ln.split("|")[2].strip()): int(ln.split("|")[3])
        for ln in out.splitlines()
        if ln.startswith("| v2")
    }
    want = {}
    for p in (a, b):
        for s, n in json.loads((p / "manifest.json").read_text())["composition"]["by_server"].items():
            want[(p.name, s)] = n
    assert got == want
    # rejections, by version, match each version's own file
    rc, out, _ = _cli(
        capsys,
        "sql",
        "select version, count(*) as n from rejections group by 1 order by 1",
        "--json",
        "--data-dir",
        str(data),
    )
    assert {r["version"]: r["n"] for r in json.loads(out)} == {
        p.name: pl.read_parquet(p / "rejections.parquet").height for p in (a, b)
    }


def test_prove_sql_reports_a_bad_query_without_a_traceback(two_versions, capsys):
    data, *_ = two_versions
    rc, _, err = _cli(capsys, "sql", "select * from no_such_view", "--data-dir", str(data))
    assert rc == 2 and "prove sql:" in err and "no_such_view" in err


def test_prove_sql_on_an_empty_data_dir_has_empty_views(tmp_path, capsys):
    rc, out, _ = _cli(
        capsys, "sql", "select count(*) as n from examples", "--json", "--data-dir", str(tmp_path / "data")
    )
    assert rc == 0 and json.loads(out) == [{"n": 0}]


# ----------------------------------------------------------------------------- export
def test_prove_export_writes_both_formats_and_refuses_bad_input_in_one_line(two_versions, tmp_path, capsys):
    data, a, _, _ = two_versions
    rc, out, _ = _cli(
        capsys, "export", a.name, "--format", "openai", "--out", str(tmp_path / "ft"), "--data-dir", str(data)
    )
    m = json.loads((a / "manifest.json").read_text())
    assert rc == 0 and a.name in out and f"train.jsonl ({m['counts']['train.parquet']} examples)" in out
    assert len((tmp_path / "ft" / "train.jsonl").read_text().splitlines()) == m["counts"]["train.parquet"]
    rc, out, _ = _cli(capsys, "export", "--format", "hf", "--out", str(tmp_path / "hub"), "--data-dir", str(data))
    assert rc == 0 and "huggingface-cli upload" in out  # the latest version by default
    assert (tmp_path / "hub" / "README.md").read_text().startswith("---\n")
    assert {p.name for p in (tmp_path / "hub").glob("*.parquet")} == {
        "train.parquet",
        "eval.parquet",
        "rejections.parquet",
    }
    for argv, says in (
        (["export", "--format", "hf", "--out", str(tmp_path / "hub")], "not an empty folder"),
        (["export", "--format", "csv", "--out", str(tmp_path / "x")], "unknown export format 'csv'"),
        (["export", "nosuch", "--format", "hf", "--out", str(tmp_path / "x")], "corpus version 'nosuch' not found"),
    ):
        rc, _, err = _cli(capsys, *argv, "--data-dir", str(data))
        assert rc == 2 and says in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()
