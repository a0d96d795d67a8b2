"""Third-party MCP servers (written for these tests with plain mcp MCPServer, not prove's kit),
started as real subprocesses over stdio and over streamable HTTP."""

import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl
import pytest

from pipeline.core.config import BuildConfig, ChainConfig, GraphConfig, ReplayConfig, ServerConfig
from pipeline.core.servers_file import ConfigFileError, load_servers_file
from pipeline.corpus.columns import trace_of
from pipeline.corpus.store import read_examples
from pipeline.env import Environment, free_port, wait_for_port
from pipeline.synthesis.replay import replay_trace
from tests.builds import as_conversation, build_corpus

HERE = Path(__file__).resolve().parent.parent / "thirdparty"
PY = sys.executable


def notes_cfg() -> ServerConfig:
    return ServerConfig(name="notes", kind="stdio", command=PY, args=[str(HERE / "notes_server.py")])


def counters_cfg(
    *extra: str, name: str = "counters", timeout_s: float = 30.0, start_timeout_s: float | None = None
) -> ServerConfig:
    """The in-memory server, one process for the run, reset by its own tool around every session."""
    return ServerConfig(
        name=name,
        kind="stdio",
        command=PY,
        args=[str(HERE / "counter_server.py"), *extra],
        timeout_s=timeout_s,
        start_timeout_s=start_timeout_s,
        isolation="none",
        reset_tool="reset_all",
    )


def small_build(tmp_path: Path, configs: list[ServerConfig], examples: int = 10) -> Path:
    # small on purpose: with process isolation every session is a new server process
    cfg = BuildConfig(
        examples=examples,
        servers=[c.name for c in configs],
        server_configs=configs,
        data_dir=str(tmp_path / "data"),
        chains=ChainConfig(per_server=4),
        graph=GraphConfig(implicit=False),
        replay=ReplayConfig(determinism_runs=1),
    )
    # a build this small cannot meet the corpus's composition targets: its gates may fail, its runs may not
    return build_corpus(cfg, gates=False)


@pytest.fixture(scope="module")
def http_counters():
    port = free_port()
    proc = subprocess.Popen(
        [PY, str(HERE / "counter_server.py"), "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, proc=proc)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_process_isolation_gives_each_session_its_own_file_backed_world(tmp_path):
    with Environment(notes_cfg()) as env:
        a, b = env.session(0), env.session(0)
        created = a.call("create_note", {"title": "Secret plan", "body": "x"})
        assert created.ok
        assert len(a.call("list_notes", {}).data["notes"]) == 4
        assert len(b.call("list_notes", {}).data["notes"]) == 3  # b never sees a's file
        workdir = a.workdir
        a.close()
        b.close()
    assert workdir and not Path(workdir).exists()  # the session's temporary directory is gone
    assert not (HERE / "notes.json").exists()  # nothing written next to the server


@pytest.fixture(scope="module")
def mixed_build(tmp_path_factory):
    """One build over two working stdio servers (the file-backed notes, the in-memory counters) and three broken
    ones (one crashes on a call, one hangs on it, one answers garbage): the two tests below read it."""
    garbage = ServerConfig(
        name="garbage",
        kind="stdio",
        command=PY,
        args=["-c", "print('hello, not json-rpc'); import time; time.sleep(30)"],
        timeout_s=3,
    )
    crashing = counters_cfg("--crash-on", "list_counters", name="crashing")
    # its calls time out after 1 s; its start may take longer (importing mcp alone takes 1.4 s on a slow machine)
    hanging = counters_cfg("--hang-on", "list_counters", name="hanging", timeout_s=1.0, start_timeout_s=60)
    # three of the notes server's five tools (a create, a read, a listing): each write discovery tries is a process
    notes = notes_cfg().model_copy(
        update={"name": "notes_leakcheck", "args": [*notes_cfg().args, "--tools", "list_notes,get_note,create_note"]}
    )
    path = small_build(
        tmp_path_factory.mktemp("mixed"), [notes, counters_cfg(), crashing, hanging, garbage], examples=4
    )
    return path, {"notes_leakcheck": notes, "counters": counters_cfg()}


def test_stdio_third_party_servers_yield_replay_verified_examples_without_leaks(mixed_build):
    path, configs = mixed_build
    df = read_examples(path)
    mt = df.filter(pl.col("kind") == "multi_turn")
    assert set(mt["server"].to_list()) == {"notes_leakcheck", "counters"}
    # every accepted multi-turn example replays on a fresh session to its recorded results
    envs = {name: Environment(c) for name, c in configs.items()}
    with envs["notes_leakcheck"], envs["counters"]:
        for row in mt.head(6).iter_rows(named=True):
            trace = trace_of(row["trace"])
            replayed, _ = replay_trace(envs[row["server"]], as_conversation(row))
            assert [r["ok"] for r in replayed] == [t["ok"] for t in trace]
            assert [r["result"] for r in replayed if r["ok"]] == [t["result"] for t in trace if t["ok"]]
    # no session state survives the run: no temporary worlds left, nothing written beside the server
    assert not list(Path(tempfile.gettempdir()).glob("prove-notes_leakcheck-*"))
    assert not (HERE / "notes.json").exists()


def test_http_third_party_server_is_reset_between_sessions_and_after_the_run(tmp_path, http_counters):
    cfg = ServerConfig(
        name="counters_http", kind="http", url=f"http://127.0.0.1:{http_counters}/mcp", reset_tool="reset_all"
    )
    with Environment(cfg) as env:
        s = env.session(0)
        assert s.call("increment", {"counter_id": "c1", "by": 5}).data["value"] == 5
        s.close()
        t = env.session(0)  # a new session starts from the reset state
        assert t.call("get_counter", {"counter_id": "c1"}).data["value"] == 0
        t.close()
    path = small_build(tmp_path, [cfg])
    assert read_examples(path).filter(pl.col("kind") == "multi_turn").height > 0
    with Environment(ServerConfig(name="peek", kind="http", url=cfg.url)) as env:
        assert env.session(0).call("list_counters", {}).data["counters"][0]["value"] == 0  # the run left nothing behind


def test_crashing_hanging_and_garbage_servers_are_rejected_and_the_build_goes_on(mixed_build):
    path, _ = mixed_build
    df = read_examples(path)
    assert df.filter(pl.col("kind") == "multi_turn")["server"].unique().to_list() != []
    assert "counters" in df["server"].to_list()
    rej = pl.read_parquet(path / "rejections.parquet")
    reasons = {(r["server"], r["reason"]) for r in rej.iter_rows(named=True)}
    assert ("garbage", "server_unavailable") in reasons
    probe = rej.filter((pl.col("stage") == "probe") & (pl.col("reason") == "server_error"))
    assert set(probe["server"].to_list()) == {"crashing", "hanging"}
    assert all("list_counters" in d and "failed during" in d for d in probe["detail"].to_list())
    # each names the record it carries, and lineage shows the call the server failed
    assert set(probe["record_type"].to_list()) == {"probe_call"}
    from pipeline.corpus.lineage import lineage

    shown = lineage(path.parent.parent, probe["rejection_id"][0], version=path.name)
    assert shown["record"] == "probe_call" and shown["calls_from"] == "probe"
    assert [(c["name"], c["ok"]) for c in shown["calls"]] == [("list_counters", False)]


def test_servers_file_errors_name_the_entry_and_field(tmp_path):
    bad = tmp_path / "servers.yaml"
    bad.write_text("servers:\n  - name: ok\n  - name: web\n    kind: http\n    url: ftp://nope\n")
    with pytest.raises(ConfigFileError, match=r"servers\[1\].*url"):
        load_servers_file(bad)
    good = tmp_path / "servers.toml"
    good.write_text(
        '[[servers]]\nname = "banking"\n\n'
        '[[servers]]\nname = "notes"\nkind = "stdio"\ncommand = "python"\nargs = ["n.py"]\n'
    )
    cfgs = load_servers_file(good)
    assert [c.isolation for c in cfgs] == ["meta", "process"]
