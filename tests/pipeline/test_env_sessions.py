"""Sessions of third-party stdio servers: seeded working directories, set-up calls, failure reports,
the per-server time budget and the server log (``tests/thirdparty/envcheck_server.py``, a real process)."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import pytest

from pipeline.core.config import ServerConfig
from pipeline.core.records import Conversation, TraceCall
from pipeline.env import Environment, EnvironmentError_, ServerBudgetExceeded
from pipeline.synthesis.replay import describe_mismatch, replay_trace

SERVER = str(Path(__file__).resolve().parent.parent / "thirdparty" / "envcheck_server.py")


def cfg(*args: str, **kw) -> ServerConfig:
    return ServerConfig(
        name=kw.pop("name", "envcheck"), kind="stdio", command=sys.executable, args=[SERVER, *args], **kw
    )


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture()
def template(tmp_path: Path) -> Path:
    t = tmp_path / "seed"
    (t / "sub").mkdir(parents=True)
    (t / "store.json").write_text(json.dumps({"greeting": "hello"}))
    (t / "sub" / "notes.txt").write_text("keep me\n")
    return t


LOGIN = [{"tool": "login", "arguments": {"user": "alice", "password": "${secret:pw}"}}]


def test_each_session_and_each_reset_starts_from_a_fresh_copy_of_the_template(template, monkeypatch, tmp_path):
    monkeypatch.setenv("ENVCHECK_PW", "hunter2")
    before = tree_hashes(template)
    c = cfg(template_dir=str(template), setup=LOGIN, secrets={"pw": "${ENVCHECK_PW}"})
    with Environment(c, log_dir=tmp_path / "logs") as env:
        with env.session(0) as a, env.session(0) as b:
            assert a.call("get", {"key": "greeting"}).text == "hello"  # the template's file, copied in
            assert a.call("put", {"key": "greeting", "value": "changed"}).ok
            assert a.call("get", {"key": "greeting"}).text == "changed"
            assert b.call("get", {"key": "greeting"}).text == "hello"  # b has its own copy
            first = a.workdir
            a.reset()
            assert a.workdir != first
            assert a.call("get", {"key": "greeting"}).text == "hello"  # the reset copied the template again
            assert a.call("whoami", {}).text == "alice"  # and the set-up ran again
    assert not Path(first).exists()  # the replaced process's directory is gone (stopped in the background)
    assert tree_hashes(template) == before


def test_cwd_without_template_dir_runs_in_a_copy_and_session_dir_names_it(template, tmp_path):
    before = tree_hashes(template)
    c = cfg(
        "--store",
        "${SESSION_DIR}/store.json",
        cwd=str(template),
        setup=[{"tool": "login", "arguments": {"user": "u", "password": "hunter2"}}],
    )
    with Environment(c, log_dir=tmp_path / "logs") as env, env.session(0) as s:
        assert s.call("put", {"key": "greeting", "value": "bye"}).ok
        assert (Path(s.workdir) / "store.json").read_text() == json.dumps({"greeting": "bye"})
        assert (Path(s.workdir) / "sub" / "notes.txt").read_text() == "keep me\n"
    assert tree_hashes(template) == before


def test_setup_runs_at_session_start_and_secrets_stay_unresolved_in_the_config(monkeypatch, tmp_path):
    monkeypatch.setenv("ENVCHECK_PW", "hunter2")
    c = cfg(setup=LOGIN, secrets={"pw": "${ENVCHECK_PW}"})
    with Environment(c, log_dir=tmp_path) as env:
        with env.session(0) as s:
            assert s.call("whoami", {}).text == "alice"
        with env.session(0, setup=[]) as s:  # a recorded example without set-up
            assert s.call("whoami", {}).error_code == "permission_denied"
    dumped = json.dumps(c.public())
    assert "${secret:pw}" in dumped and "hunter2" not in dumped


def test_a_failing_setup_call_names_the_server_the_call_and_the_servers_message(monkeypatch, tmp_path):
    monkeypatch.setenv("ENVCHECK_PW", "n0t-the-pw")
    c = cfg(setup=LOGIN, secrets={"pw": "${ENVCHECK_PW}"})
    with Environment(c, log_dir=tmp_path) as env:
        with pytest.raises(
            EnvironmentError_, match=r"setup call login of server 'envcheck' failed: permission_denied: wrong password"
        ) as err:
            env.session(0)
    assert "n0t-the-pw" not in str(err.value) and "wrong password '${secret:pw}'" in str(
        err.value
    )  # the echoed secret is masked


def test_setup_naming_an_unknown_secret_is_a_config_error():
    with pytest.raises(ValueError, match=r"setup call login uses \$\{secret:pw\}, but 'secrets' has no 'pw'"):
        cfg(setup=LOGIN)


def test_a_server_that_exits_at_start_is_reported_with_its_exit_code_and_stderr(tmp_path):
    with Environment(cfg("--exit-at-start", "3"), log_dir=tmp_path) as env:
        with pytest.raises(EnvironmentError_) as err:
            env.tools()
    msg = str(err.value)
    assert "exited with code 3" in msg and "fatal: no database configured (set ENVCHECK_DB)" in msg
    assert "TaskGroup" not in msg
    assert "fatal: no database configured" in (tmp_path / "envcheck.log").read_text()


def test_a_server_that_hangs_at_start_is_reported_as_a_timeout_when_it_runs_out(tmp_path):
    t = time.monotonic()
    with Environment(cfg("--hang-at-start", timeout_s=1.5), log_dir=tmp_path) as env:
        with pytest.raises(
            EnvironmentError_, match=r"did not start within its start timeout of 1.5s and was stopped"
        ) as err:
            env.tools()
        assert time.monotonic() - t < 1.5 + 3.0  # was about 15 s: mcp's handshake and shutdown grace periods
    assert "TaskGroup" not in str(err.value) and str(tmp_path / "envcheck.log") in str(err.value)


def test_a_server_that_dies_mid_session_fails_the_call_naming_the_exit(tmp_path):
    with Environment(cfg("--die-after", "1"), log_dir=tmp_path) as env, env.session(0) as s:
        assert s.call("login", {"user": "a", "password": "hunter2"}).ok
        r = s.call("whoami", {})
    assert not r.ok and r.error_code == "server_error"
    assert "whoami" in r.error and "exited with code 7" in r.error and "giving up after 1 calls" in r.error


def test_server_stderr_goes_to_its_log_file_not_the_terminal(tmp_path, capfd):
    with Environment(cfg("--noisy", "50"), log_dir=tmp_path) as env, env.session(0) as s:
        assert s.call("login", {"user": "a", "password": "hunter2"}).ok
    out, err = capfd.readouterr()
    assert "warming cache" not in out + err
    assert (tmp_path / "envcheck.log").read_text().count("warming cache line") >= 50


def test_the_time_budget_ends_the_servers_work_with_an_error_naming_it(tmp_path):
    with Environment(cfg(time_budget_s=60), log_dir=tmp_path) as env, env.session(0) as s:
        assert s.call("login", {"user": "a", "password": "hunter2"}).ok
        env.deadline = 0  # as if the budget were spent
        with pytest.raises(ServerBudgetExceeded, match=r"time budget of 60s \(time_budget_s"):
            s.call("whoami", {})


def test_replay_repeats_the_recorded_setup_and_names_a_result_difference(monkeypatch, template, tmp_path):
    monkeypatch.setenv("ENVCHECK_PW", "hunter2")
    c = cfg(template_dir=str(template), setup=LOGIN, secrets={"pw": "${ENVCHECK_PW}"})
    trace = [
        TraceCall(turn=0, name="put", arguments={"key": "k", "value": "v"}, ok=True, result={"result": "ok"}),
        TraceCall(turn=0, name="get", arguments={"key": "greeting"}, ok=True, result={"result": "goodbye"}),
    ]
    conv = Conversation(
        conversation_id="c",
        server="envcheck",
        servers=["envcheck"],
        seed=0,
        snapshot_id="s",
        messages=[],
        tools=[],
        reference=[],
        trace=trace,
        setup=LOGIN,
    )
    with Environment(c, log_dir=tmp_path) as env:
        results, _ = replay_trace(env, conv)
    assert results[0]["ok"]  # ``put`` needs the login: the recorded set-up ran before the trace
    why = describe_mismatch(1, trace[1], results[1])
    assert (
        why == 'call 1 get returned a different result on replay: result.result: recorded "goodbye", replayed "hello"'
    )
    failed = {"ok": False, "error_code": "not_found", "error": "no key 'k'", "result": None}
    assert (
        describe_mismatch(0, trace[0], failed)
        == "call 0 put succeeded when recorded but failed on replay: not_found: no key 'k'"
    )


def test_build_and_check_never_write_the_template_and_logs_go_under_the_data_dir(tmp_path):
    from pipeline.core.config import BuildConfig, ChainConfig, ReplayConfig
    from pipeline.corpus.columns import trace_of
    from pipeline.corpus.store import read_examples
    from pipeline.discovery.check import check_server
    from tests.builds import build_corpus

    fixtures = Path(SERVER).parent
    seeds = fixtures / "seeds"
    before = tree_hashes(seeds)
    # the files server on its seeded directory, serving three of its tools: enough for a write -> read chain
    # (write_file, then read_file), a dozen or two sessions rather than the hundreds all ten tools take
    files = ServerConfig(
        name="files",
        kind="stdio",
        command=sys.executable,
        args=[
            str(fixtures / "files_server.py"),
            "--root",
            "${SESSION_DIR}",
            "--tools",
            "write_file,read_file,list_directory",
        ],
    )
    # the check, with the seeds as its template directory: it wrote (a write confirmed by a read), none in the seeds
    report = check_server(files.model_copy(update={"template_dir": str(seeds / "files")}), log_dir=tmp_path / "logs")
    assert "write_file -> read_file (implicit)" in report["edges"], report
    assert tree_hashes(seeds) == before
    assert (tmp_path / "logs" / "files.log").exists()
    # the build, with the seeds as its working directory (run in a copy)
    build = BuildConfig(
        examples=4,
        servers=["files"],
        server_configs=[files.model_copy(update={"cwd": str(seeds / "files")})],
        data_dir=str(tmp_path / "data"),
        chains=ChainConfig(per_server=2),
        replay=ReplayConfig(determinism_runs=1),
    )
    path = build_corpus(build, gates=False)  # 4 examples cannot meet the composition targets
    # it wrote files in its sessions (an accepted example's write_file succeeded), none in the seeds
    calls = [(c["name"], c["ok"]) for t in read_examples(path)["trace"].to_list() for c in trace_of(t)]
    assert ("write_file", True) in calls, calls
    assert tree_hashes(seeds) == before
    assert (tmp_path / "data" / "logs" / "servers" / "files.log").exists()


def _banking_story() -> list:
    """A deposit, a reset and a closed session on banking, as results and state hashes."""
    out = []
    with Environment("banking") as env:
        with env.session(3) as s:
            seeded = s.state_hash()
            acc = s.call("list_accounts", {"min_balance": 1.0}).data["accounts"][0]
            dep = s.call("deposit", {"account_id": acc["account_id"], "amount": 5.0})
            out += [seeded, dep.ok, dep.data, s.state_hash() != seeded]
            s.reset()
            out += [s.state_hash() == seeded, s.call("get_balance", {"account_id": acc["account_id"]}).data]
        with env.session(3) as t:
            out.append(t.state_hash() == seeded)
    return out


def test_the_plain_sdk_path_gives_the_same_results_as_the_fast_paths(monkeypatch):
    fast = _banking_story()
    monkeypatch.setenv("PROVE_FAST_PATHS", "0")
    plain = _banking_story()
    assert plain == fast
    assert fast[1] and fast[3] and fast[4] and fast[6]


def test_warm_spares_are_stopped_and_their_directories_removed_on_close(tmp_path):
    import tempfile

    name = f"spares{tmp_path.name[-6:]}".replace("_", "")
    with Environment(cfg(name=name), log_dir=tmp_path) as env:
        assert env.isolation.spares is not None  # the fast paths are on by default
        with env.session(0) as s:
            assert s.call("login", {"user": "a", "password": "hunter2"}).ok
    assert not list(Path(tempfile.gettempdir()).glob(f"prove-{name}-*"))


def test_a_spent_time_budget_ends_the_servers_partition_with_a_rejection_naming_it(tmp_path):
    import polars as pl

    from pipeline.core.config import BuildConfig
    from tests.builds import build_corpus

    slow = ServerConfig(name="banking", time_budget_s=0.001)
    cfg = BuildConfig(
        examples=6, servers=["banking", "calendar"], server_configs=[slow], data_dir=str(tmp_path / "data")
    )
    path = build_corpus(cfg, gates=False)
    rej = pl.read_parquet(path / "rejections.parquet").filter(pl.col("server") == "banking")
    assert rej["reason"].to_list() == ["server_unavailable"]
    assert "time budget of 0.001s" in rej["detail"][0]


@pytest.mark.parametrize("fast", ["1", "0"])
def test_a_call_and_the_state_hash_after_it_cost_one_round_trip_on_the_fast_path(fast, monkeypatch):
    """``Session.call_and_hash`` gives what ``call`` then ``state_hash`` give; on a kit server with the fast paths
    on the hash comes back with the call's result, on the plain path it is the admin tool's own round trip."""
    from pipeline.env.connection import CALL_OBSERVERS

    monkeypatch.setenv("PROVE_FAST_PATHS", fast)
    trips: list[str] = []
    with Environment("banking") as env, env.session(3) as s:
        acc = s.call("list_accounts", {"min_balance": 1.0}).data["accounts"][0]["account_id"]
        CALL_OBSERVERS.append(lambda server, tool, dt: trips.append(tool))
        try:
            dep, digest = s.call_and_hash("deposit", {"account_id": acc, "amount": 5.0})
        finally:
            CALL_OBSERVERS.pop()
        assert dep.ok and digest == s.state_hash()
    assert trips == (["deposit"] if fast == "1" else ["deposit", "prove_admin_state_hash"])
