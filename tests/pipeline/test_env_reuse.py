"""Which server processes a process-isolated session keeps (pipeline/env/reuse.py), and what a shared
server without a reset tool is sent; on
``tests/thirdparty/envcheck_server.py``, a real process over stdio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.env import Environment
from tests.pipeline.test_env_sessions import LOGIN, cfg, tree_hashes


@pytest.fixture()
def template(tmp_path: Path) -> Path:
    t = tmp_path / "seed"
    t.mkdir()
    (t / "store.json").write_text(json.dumps({"greeting": "hello"}))
    return t


def test_a_reset_keeps_a_process_that_only_read_and_replaces_one_that_wrote(template, tmp_path):
    before = tree_hashes(template)
    with Environment(cfg(template_dir=str(template)), log_dir=tmp_path) as env, env.session(0) as s:
        first = s.workdir
        assert s.call("get", {"key": "greeting"}).text == "hello"  # annotated read-only
        s.reset()
        assert s.workdir == first  # nothing could have changed: the same process goes on
        assert s.call("login", {"user": "bob", "password": "hunter2"}).ok  # a write, of memory only
        s.reset()
        assert s.workdir != first
        assert s.call("whoami", {}).error_code == "permission_denied"  # the login is gone with its process
    assert tree_hashes(template) == before


def test_a_process_whose_directory_changed_is_never_reused(template, tmp_path):
    with Environment(cfg(template_dir=str(template)), log_dir=tmp_path) as env, env.session(0) as s:
        first = s.workdir
        assert s.call("get", {"key": "greeting"}).ok
        (Path(first) / "store.json").write_text(json.dumps({"greeting": "changed behind its back"}))
        s.reset()
        assert s.workdir != first
        assert s.call("get", {"key": "greeting"}).text == "hello"


def test_a_closed_session_that_only_read_hands_its_process_to_the_next_with_the_same_setup(
    monkeypatch, template, tmp_path
):
    monkeypatch.setenv("ENVCHECK_PW", "hunter2")
    c = cfg(template_dir=str(template), setup=LOGIN, secrets={"pw": "${ENVCHECK_PW}"})
    with Environment(c, log_dir=tmp_path) as env:
        with env.session(0) as a:
            kept = a.workdir
            assert a.call("whoami", {}).text == "alice"
        with env.session(0) as b:
            assert b.workdir == kept and b.call("whoami", {}).text == "alice"  # set up already
        with env.session(0, setup=[]) as bare:  # a recorded example without the set-up: not that process
            assert bare.workdir != kept and bare.call("whoami", {}).error_code == "permission_denied"
            assert bare.call("login", {"user": "eve", "password": "hunter2"}).ok
        with env.session(0, setup=[]) as after:  # the session that wrote gave nothing back
            assert after.call("whoami", {}).error_code == "permission_denied"


def test_with_reuse_switched_off_every_reset_starts_a_new_process(monkeypatch, template, tmp_path):
    monkeypatch.setenv("PROVE_SESSION_REUSE", "0")
    with Environment(cfg(template_dir=str(template)), log_dir=tmp_path) as env, env.session(0) as s:
        first = s.workdir
        assert s.call("get", {"key": "greeting"}).ok
        s.reset()
        assert s.workdir != first


def test_a_shared_server_without_a_reset_tool_is_not_isolated_and_never_sent_a_write(template, tmp_path):
    c = cfg("--store", str(template / "store.json"), isolation="none")
    before = tree_hashes(template)
    with Environment(c, log_dir=tmp_path) as env, env.session(0) as s:
        assert not s.isolated
        r = s.call("login", {"user": "mallory", "password": "hunter2"})
        assert r.error_code == "not_isolated" and "shared with no reset_tool" in r.error
        assert s.call("whoami", {}).error_code == "permission_denied"  # the login never reached the server
        assert s.call("get", {"key": "greeting"}).text == "hello"
    assert tree_hashes(template) == before


def test_a_call_repeated_on_the_seed_state_is_answered_from_memory_without_a_new_process(template, tmp_path):
    login = {"user": "bob", "password": "hunter2"}
    with Environment(cfg(template_dir=str(template)), log_dir=tmp_path) as env, env.session(0) as s:
        first = s.call_at_seed("login", login)
        kept = s.workdir
        assert s.call_at_seed("login", login) is first and s.workdir == kept  # nothing ran, nothing restarted
        assert s.call_at_seed("login", {"user": "bob", "password": "wrong"}).error_code == "permission_denied"
        assert s.workdir != kept  # new arguments: run on a fresh process
        s.reset()
        assert s.call("whoami", {}).error_code == "permission_denied"
    with Environment("banking") as env, env.session(0) as s:
        assert env.isolation.seed_results is None  # built-in servers: a reset costs nothing, every call runs
