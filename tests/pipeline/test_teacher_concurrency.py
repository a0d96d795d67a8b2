"""The teacher at scale, against a scripted OpenAI-compatible endpoint on loopback: many requests in flight with
the same corpus as one at a time, Retry-After honoured, a dead endpoint failing fast and clearly, accounting in
the manifest, resumption after a killed build."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import pytest
import yaml

from assets import progress
from assets.cli import main as prove
from assets.orchestrate import build
from pipeline.core.config import AugmentConfig, BuildConfig, QueryConfig
from pipeline.corpus.report import show_text
from pipeline.language.teacher_client import TeacherClient, TeacherUnavailable, retry_after_s
from tests.builds import build_run
from tests.teacher_endpoint import ScriptedTeacher

ROOT = Path(__file__).resolve().parents[2]


def _query(url: str, **kw) -> QueryConfig:
    return QueryConfig(backend="llm", llm_base_url=url, llm_model="teacher-test", llm_timeout_s=10, **kw)


def _cfg(data: Path, url: str, **kw) -> BuildConfig:
    return BuildConfig(
        examples=40,
        servers=["banking", "crm"],
        data_dir=str(data),
        query=_query(url, **kw),
        augment=AugmentConfig(irrelevance_rate=0.05, abstention_rate=0.05, missing_function_rate=0.05),
    )


def _manifest(path: Path) -> dict:
    return json.loads((path / "manifest.json").read_text())


def test_many_requests_in_flight_write_the_corpus_one_at_a_time_writes(tmp_path):
    """Same seed, same answers: a build with 16 requests in flight and answers arriving in random order writes the
    same bytes as a build that asks one question at a time."""
    with ScriptedTeacher() as one:  # one at a time: answers come in the order asked, with no latency to wait out
        serial = build_run(_cfg(tmp_path / "serial", one.url, max_concurrency=1))
    shown: list[dict] = []  # what prove build's synthesis bar is given while the teacher answers
    with (
        ScriptedTeacher(latency=(0.0, 0.02), seed=2) as many,
        progress.listening(
            lambda phase, step, total, **m: shown.append(m) if phase == "synthesis" and "in_flight" in m else None
        ),
    ):
        concurrent = build_run(_cfg(tmp_path / "concurrent", many.url, max_concurrency=16))
    a, b = _manifest(serial.corpus_path), _manifest(concurrent.corpus_path)
    assert a["content_hash"] == b["content_hash"]
    assert (serial.corpus_path / "train.parquet").read_bytes() == (
        concurrent.corpus_path / "train.parquet"
    ).read_bytes()
    assert one.peak_in_flight == 1 and many.peak_in_flight > 4
    assert shown and max(m["in_flight"] for m in shown) > 1 and max(m["answers_per_s"] for m in shown) > 0
    assert sorted(one.prompts) == sorted(many.prompts), "the same questions, asked in another order"
    # what the teacher cost: in the manifest, per stage and server, as the endpoint counted it
    total = b["teacher"]["total"]
    assert total["requests"] == many.requests and total["completions"] == len(many.prompts)
    assert total["prompt_tokens"] == sum(len(p) // 4 for p in many.prompts) and total["completion_tokens"] > 0
    assert total["peak_in_flight"] > 4 and set(b["teacher"]["by_stage_server"]) == {
        "query/banking",
        "query/crm",
        "simulate/banking",
        "simulate/crm",
    }
    text = show_text(b)
    assert f"teacher: {many.requests} requests" in text and "simulate/crm" in text
    meta = concurrent.metadata("corpus")
    assert meta["teacher_requests"] == many.requests and meta["teacher_prompt_tokens"] == total["prompt_tokens"]
    assert concurrent.metadata("user_queries", "banking")["teacher_requests"] > 0


@pytest.mark.parametrize("status_attr", ["rate_limit_next", "unavailable_next"])
def test_429_and_503_are_asked_again_after_the_wait_retry_after_names(tmp_path, status_attr):
    with ScriptedTeacher() as teacher:
        setattr(teacher, status_attr, 1)
        teacher.retry_after = "1"
        client = TeacherClient(_query(teacher.url), tmp_path)
        assert json.loads(client.complete("Two tools of one service. A, B")) == {"direction": "none", "kind": "none"}
        assert teacher.requests == 2 and teacher.times[1] - teacher.times[0] >= 0.95
        assert client.usage.rate_limited == 1 and client.usage.retries == 1 and client.usage.completions == 1


def test_retry_after_is_read_in_seconds_or_as_a_date_and_only_on_429_or_503():
    def exc(status, value=None):
        headers = {} if value is None else {"retry-after": value}
        return SimpleNamespace(response=SimpleNamespace(status_code=status, headers=headers))

    assert retry_after_s(exc(429, "2")) == 2.0
    assert retry_after_s(exc(503, "0.5")) == 0.5
    assert retry_after_s(exc(429)) == 1.0  # asked to slow down, with no figure
    assert 0 <= retry_after_s(exc(503, "Wed, 21 Oct 2015 07:28:00 GMT")) <= 1  # a date in the past: at once
    assert retry_after_s(exc(429, "9999")) == 120.0  # capped
    assert retry_after_s(exc(500, "3")) is None and retry_after_s(ValueError("no response")) is None


def test_other_failures_back_off_and_then_succeed(tmp_path):
    with ScriptedTeacher() as teacher:
        teacher.fail_next = 2
        client = TeacherClient(_query(teacher.url, llm_retries=4), tmp_path)
        client.complete("Two tools of one service. C, D")
        assert teacher.requests == 3 and client.usage.retries == 2 and client.usage.failures == 0


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there now


def test_a_dead_endpoint_fails_the_fetch_at_once_naming_the_endpoint(tmp_path):
    url = _dead_url()
    client = TeacherClient(_query(url, llm_retries=2, max_concurrency=8), tmp_path)
    t0 = time.monotonic()
    said = rf"the teacher at {url} \(model teacher-test\) failed \d+ of \d+ requests \(0 answered"
    with pytest.raises(TeacherUnavailable, match=said):
        client.fetch([f"Two tools of one service. {i}" for i in range(200)])
    assert time.monotonic() - t0 < 15, "stops after the first round of failures, not after 200 prompts"


def test_a_dead_endpoint_fails_the_partition_with_a_clear_message(tmp_path):
    url = _dead_url()
    cfg = BuildConfig(
        examples=12, servers=["banking"], data_dir=str(tmp_path / "data"), query=_query(url, llm_retries=2)
    )
    t0 = time.monotonic()
    b = build(cfg, instance=dg.DagsterInstance.ephemeral())
    assert not b.success and time.monotonic() - t0 < 120
    assert f"the teacher at {url}" in b.unavailable["banking"]


def test_a_killed_teacher_build_asks_only_what_it_had_no_answer_for(tmp_path):
    """``prove build`` killed while the teacher answers; started again, it re-uses every answer it received."""
    data = tmp_path / "data"
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "1"}
    with ScriptedTeacher(latency=0.05) as teacher:
        config = tmp_path / "build.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "examples": 30,
                    "servers": ["banking"],
                    "query": {"backend": "llm", "llm_base_url": teacher.url, "llm_model": "m", "max_concurrency": 2},
                }
            )
        )
        cmd = [str(Path(sys.executable).with_name("prove")), "build", "--config", str(config), "--data-dir", str(data)]
        cmd += ["--no-train", "--parallel", "1"]
        first = subprocess.Popen(cmd, env=env, cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 120
        while teacher.requests < 12 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        ended = first.returncode  # set once poll() reaped it: its pid, and so its group id, may be another's now
        if ended is None:
            os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        assert teacher.requests >= 12, f"the build was killed while the teacher was answering (it ended: {ended})"
        cached = {json.loads(f.read_text())["prompt"] for f in (data / "cache" / "llm").glob("*.json")}
        assert cached
        asked_before = teacher.requests
        teacher.latency = 0.0  # the latency only kept the first build answering until the kill
        done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        again = teacher.prompts[asked_before:]
    assert again and not (set(again) & cached), "no answer received before the kill is asked for again"
    manifest = _manifest(Path(next((data / "corpus").glob("v*"))))
    assert manifest["teacher"]["total"]["cache_hits"] >= len(cached)


def test_the_estimate_counts_completions_and_tokens_and_sends_nothing(tmp_path, capsys):
    with ScriptedTeacher() as teacher:
        config = tmp_path / "build.yaml"
        query = {"backend": "llm", "llm_base_url": teacher.url, "llm_model": "m", "max_concurrency": 8}
        config.write_text(yaml.safe_dump({"examples": 120, "servers": ["banking", "crm"], "query": query}))
        code = prove(["build", "--estimate", "--config", str(config), "--data-dir", str(tmp_path / "data")])
        assert code == 0 and teacher.requests == 0
    out = capsys.readouterr().out
    assert "estimate for 120 examples over 2 servers (the teacher m at" in out
    assert "user turns" in out and "replies" in out and "completion tokens" in out and "at 8 in flight" in out
