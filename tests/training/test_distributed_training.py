"""`prove train` on two processes (DDP, gloo, CPU, loopback): one real training of the tiny policy on a fixture
corpus, launched by accelerate on torchrun's launcher, that several tests read; and the launches the training
refuses (torchrun's and accelerate's), before torch or vLLM loads."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from training.config import TrainConfig
from training.distributed import launch_problems, launched_world_size
from training.fixture import build_fixture_corpus

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "sft_steps": 2,
    "sft_batch_size": 2,
    "grpo_steps": 2,
    "batch_size": 4,
    "num_generations": 2,
    "eval_limit": 2,
    "eval_batch_size": 1,  # unpadded prompts: the tiny model's cheaper first pass (tests/builds.py)
    "max_new_tokens": 12,
    "eval_max_new_tokens": 12,
    "max_completion_length": 48,
    "bootstrap_samples": 100,
    "torch_threads": 1,
    "use_cpu": True,
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build_fixture_corpus(tmp_path_factory.mktemp("corpus"), n=40, seed=0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(launcher: list[str], args: list[str]) -> subprocess.CompletedProcess:
    """``<launcher> -m assets.cli train <args>`` (the ``prove train`` command) from the repository root."""
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "MASTER_PORT", "MASTER_ADDR")}
    env.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    cmd = [sys.executable, *launcher, "-m", "assets.cli", "train", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)


def torchrun(port: int) -> list[str]:
    return ["-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1"] + [
        "--master_port",
        str(port),
    ]


def printed_results(stdout: str) -> list[dict]:
    """The JSON objects the ranks printed (each rank prints one; the trainer's logs are Python dicts, not JSON)."""
    dec, out, i = json.JSONDecoder(), [], 0
    while (i := stdout.find("{", i)) >= 0:
        try:
            obj, i = dec.raw_decode(stdout, i)
            out.append(obj)
        except json.JSONDecodeError:
            i += 1
    return out


def accelerate_multi_gpu() -> list[str]:
    """``accelerate launch --multi_gpu`` for two processes: without a GPU it starts two CPU processes, through
    ``torch.distributed.run`` (torchrun's own launcher), so the ranks see torchrun's environment."""
    launcher = ["-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1"]
    return launcher + ["--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(free_port())]


@pytest.fixture(scope="module")
def two_processes(corpus, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """One training on two processes (DDP, gloo) that the tests below read: its output folder and the launch.
    (It was two trainings, a torchrun launch and an accelerate one; accelerate's ``--multi_gpu`` launch is
    torchrun's launcher with accelerate's settings on top, so one run covers both.)"""
    run = tmp_path_factory.mktemp("two_processes") / "run"
    p = launch(accelerate_multi_gpu(), ["--corpus", str(corpus), "--out", str(run), "--config", json.dumps(TINY)])
    return run, p


def test_two_launched_processes_end_with_identical_weights_and_rank_0_alone_writes(two_processes):
    run, p = two_processes
    assert p.returncode == 0, p.stderr[-3000:]

    results = printed_results(p.stdout)
    assert len(results) == 2  # one per rank; only rank 0's carries the reports it wrote
    rank1 = next(r for r in results if "rank" in r)
    assert rank1 == {"out_dir": str(run), "rank": 1, "world_size": 2}
    main = next(r for r in results if "eval_report" in r)

    report = json.loads((run / "eval_report.json").read_text())
    dist = report["distributed"]
    assert dist["world_size"] == 2 and dist["backend"] == "gloo" and dist["writer_rank"] == 0
    h0, h1 = dist["param_sha256_by_rank"]
    assert h0 == h1 and len(h0) == 64 and dist["params_equal_across_ranks"] is True
    assert main["distributed"] == dist
    assert report["grpo_weight_delta"] > 0  # GRPO moved the weights, and moved them the same on both ranks

    steps = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    grpo = [s for s in steps if s["phase"] == "grpo" and "reward" in s]
    assert [s["step"] for s in grpo] == [1, 2]  # one line per step: one writer, not one per rank
    assert any(s["reward_std"] > 0 and s["frac_reward_zero_std"] < 1 for s in grpo)  # a step with a gradient
    assert set(report["phases"]) == {"before", "after_sft", "after_grpo"}  # evaluated once, by rank 0
    written = sorted(str(f.relative_to(run)) for f in run.rglob("*") if f.is_file())
    assert [f for f in written if "/" not in f] == ["eval_report.json", "eval_report.md", "metrics.jsonl"] + [
        "reward_curve.png"
    ]
    assert "checkpoint/model.safetensors" in written and not any(f.endswith(".tmp") for f in written)


def test_accelerate_launch_multi_gpu_without_a_gpu_runs_two_cpu_processes(two_processes):
    run, p = two_processes
    assert p.returncode == 0, p.stderr[-3000:]
    assert sorted(r.get("rank", 0) for r in printed_results(p.stdout)) == [0, 1]
    dist = json.loads((run / "eval_report.json").read_text())["distributed"]
    assert dist["world_size"] == 2 and dist["params_equal_across_ranks"] is True


def test_accelerate_launch_cpu_with_two_processes_is_refused_as_it_starts_only_one(corpus, tmp_path):
    launcher = ["-m", "accelerate.commands.launch", "--cpu", "--num_processes", "2", "--num_machines", "1"]
    launcher += ["--mixed_precision", "no", "--dynamo_backend", "no", "--num_cpu_threads_per_process", "1"]
    p = launch(launcher, ["--corpus", str(corpus), "--out", str(tmp_path / "run"), "--config", json.dumps(TINY)])
    assert p.returncode != 0
    assert "started ONE process" in p.stderr and "--multi_gpu" in p.stderr and "torchrun" in p.stderr
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_vllm_server_mode_on_two_torchrun_processes_is_refused_before_vllm_is_imported(corpus, tmp_path):
    cfg = json.dumps({**TINY, "grpo_args": {"use_vllm": True, "vllm_mode": "server"}})
    p = launch(torchrun(free_port()), ["--corpus", str(corpus), "--out", str(tmp_path / "run"), "--config", cfg])
    assert p.returncode != 0
    assert "vLLM server mode with 2 training processes" in p.stderr  # (torchrun may stop one rank before it says)
    assert "vllm_mode: colocate" in p.stderr and "No module named 'vllm'" not in p.stderr


def test_launch_checks_name_each_problem_and_accept_the_runs_that_work(tmp_path):
    server = TrainConfig(grpo_args={"use_vllm": True, "vllm_mode": "server"})
    assert launch_problems(server, {}) == []  # one process: server mode is fine
    assert launch_problems(TrainConfig(grpo_args={"use_vllm": True}), {"WORLD_SIZE": "4"}) == []  # colocate, TP 1
    assert launch_problems(TrainConfig(), {"WORLD_SIZE": "2", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "2"}) == []
    tp = TrainConfig(grpo_args={"use_vllm": True, "vllm_tensor_parallel_size": 2})
    assert "vllm_tensor_parallel_size 2 with 2 training processes" in launch_problems(tp, {"WORLD_SIZE": "2"})[0]
    zero3 = launch_problems(TrainConfig(), {"WORLD_SIZE": "8", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3"})
    assert len(zero3) == 1 and "ZeRO-3" in zero3[0] and "stage 1 or 2" in zero3[0]
    ds = TrainConfig(grpo_args={"deepspeed": {"zero_optimization": {"stage": 3}}})
    assert "ZeRO-3" in launch_problems(ds, {"WORLD_SIZE": "2"})[0]
    zero3_file = tmp_path / "zero3.json"
    zero3_file.write_text(json.dumps({"zero_optimization": {"stage": 3}}))
    env = {"WORLD_SIZE": "2", "ACCELERATE_DEEPSPEED_CONFIG_FILE": str(zero3_file)}
    assert "ZeRO-3" in launch_problems(TrainConfig(sft_args={"deepspeed": {"zero_optimization": {"stage": 2}}}), env)[0]
    simple = {"ACCELERATE_USE_CPU": "True", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    assert "started ONE process" in launch_problems(TrainConfig(), simple)[0]
    assert launch_problems(TrainConfig(), {"ACCELERATE_USE_CPU": "True"}) == []  # --cpu, one process asked for
    assert launched_world_size({}) == 1 and launched_world_size({"WORLD_SIZE": "2"}) == 2
    with pytest.raises(ValueError, match="WORLD_SIZE='two'"):
        launched_world_size({"WORLD_SIZE": "two"})
