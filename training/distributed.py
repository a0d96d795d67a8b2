"""Training on several processes (``torchrun`` / ``accelerate launch``; DDP, gloo on CPU): the checks that refuse a
launch this training cannot run correctly, made before torch or vLLM is imported, and the parameter digest that
shows every rank holds the same weights after training.

What rank 0 does and the commands: docs/training-distributed.md.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

EVAL_WAIT_S = 3 * 3600  # how long the other ranks wait while rank 0 evaluates (torch's default: 10 or 30 min)
MULTI_CPU_HINT = (
    "launch several CPU processes with `torchrun --nproc_per_node N -m assets.cli train ...` or "
    "`accelerate launch --multi_gpu --num_processes N -m assets.cli train ...` on a machine with no visible GPU "
    "(CUDA_VISIBLE_DEVICES= hides them); see docs/training-distributed.md"
)


def launched_world_size(env: Mapping[str, str] | None = None) -> int:
    """The number of training processes the launcher started (``WORLD_SIZE``, set by torchrun and by
    ``accelerate launch``; 1 for a plain ``python``/``prove`` run)."""
    env = os.environ if env is None else env
    raw = env.get("WORLD_SIZE", "1")
    try:
        return max(1, int(raw))
    except ValueError:
        raise ValueError(f"WORLD_SIZE={raw!r} is not a whole number of processes") from None


def _zero_stage(config: Any, env: Mapping[str, str]) -> int | None:
    """The DeepSpeed ZeRO stage of this launch, if any: ``accelerate launch`` with a DeepSpeed config (its
    environment), or ``deepspeed: <file or dict>`` in ``grpo_args`` or ``sft_args`` (the highest stage named)."""
    if env.get("ACCELERATE_DEEPSPEED_ZERO_STAGE"):
        return int(env["ACCELERATE_DEEPSPEED_ZERO_STAGE"])
    stages = []
    named = (
        env.get("ACCELERATE_DEEPSPEED_CONFIG_FILE"),
        config.grpo_args.get("deepspeed"),
        config.sft_args.get("deepspeed"),
    )
    for ds in named:
        if isinstance(ds, str) and ds not in ("", "none") and Path(ds).is_file():
            ds = json.loads(Path(ds).read_text())
        if isinstance(ds, dict) and isinstance(ds.get("zero_optimization"), dict):
            stages.append(int(ds["zero_optimization"].get("stage", 0)))
    return max(stages) if stages else None


def launch_problems(config: Any, env: Mapping[str, str] | None = None) -> list[str]:
    """What makes this launch wrong for ``config`` (empty when it can run). Reads only the environment and the
    configuration, so it runs before torch, TRL or vLLM is imported."""
    env = os.environ if env is None else env
    world = launched_world_size(env)
    problems = []
    if world == 1 and env.get("ACCELERATE_USE_CPU", "").lower() == "true" and "MASTER_PORT" in env:
        # accelerate's simple launcher sets MASTER_ADDR/MASTER_PORT only for --num_processes > 1, then starts one
        # process: `accelerate launch --cpu` spreads CPU processes only through mpirun (--mpirun_hostfile)
        problems.append(
            "`accelerate launch --cpu --num_processes N` started ONE process (accelerate runs several CPU "
            f"processes only through mpirun): {MULTI_CPU_HINT}"
        )
    args = config.grpo_args
    if args.get("use_vllm") and world > 1:
        mode = args.get("vllm_mode", "colocate")
        if mode == "server":
            problems.append(
                f"vLLM server mode with {world} training processes: rollouts end at different turns, so the ranks "
                "call generate a different number of times while TRL gathers every rank's prompts for each call "
                "(a hang, or completions sliced to the wrong rank). Train on one process with vllm_mode: server, "
                "or use vllm_mode: colocate (each rank generates its own rollouts) with vllm_tensor_parallel_size: 1"
            )
        elif int(args.get("vllm_tensor_parallel_size", 1)) > 1:
            problems.append(
                f"vllm_tensor_parallel_size {args['vllm_tensor_parallel_size']} with {world} training processes: "
                "the ranks of a tensor-parallel group gather their prompts for each generate call, but rollouts end "
                "at different turns (a hang). Use vllm_tensor_parallel_size: 1 (one vLLM per rank)"
            )
    if world > 1 and _zero_stage(config, env) == 3:
        problems.append(
            "DeepSpeed ZeRO-3 shards the parameters across ranks, but rank 0 alone evaluates and saves the "
            "checkpoint (it would wait for the other ranks' shards forever). Use ZeRO stage 1 or 2 "
            "(docs/training-distributed.md)"
        )
    return problems


def check_launch(config: Any, env: Mapping[str, str] | None = None) -> None:
    """Raise ``ValueError`` naming every problem :func:`launch_problems` finds."""
    problems = launch_problems(config, env)
    if problems:
        raise ValueError("cannot train in this launch:\n" + "\n".join(f"  - {p}" for p in problems))


def process_state(config: Any) -> Any:
    """:func:`check_launch`, then accelerate's ``PartialState``: under torchrun / accelerate launch it joins the
    process group (gloo on CPU, NCCL on GPUs). The other ranks wait at a barrier while rank 0 evaluates, so the
    group's timeout is ``grpo_args.ddp_timeout`` seconds (3 hours when unset). One process: no group."""
    check_launch(config)
    from accelerate import PartialState

    wait = timedelta(seconds=float(config.grpo_args.get("ddp_timeout", EVAL_WAIT_S)))
    return PartialState(cpu=config.cpu(), timeout=wait)


def param_digest(model: Any) -> str:
    """SHA-256 of every parameter's name, shape, dtype and bytes, in the model's parameter order: equal digests
    mean bit-identical weights."""
    import torch

    h = hashlib.sha256()
    for name, p in model.named_parameters():
        t = p.detach().cpu().contiguous()
        h.update(f"{name}|{tuple(t.shape)}|{t.dtype}\n".encode())
        h.update(t.view(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def gather_digests(model: Any) -> list[str]:
    """Every rank's :func:`param_digest`, in rank order (a collective: every rank calls it)."""
    from accelerate.utils import gather_object

    return list(gather_object([param_digest(model)]))


def ranks_record(model: Any, state: Any) -> dict[str, Any] | None:
    """What the report says of the ranks (``distributed``): world size, backend, the writer (rank 0), every rank's
    parameter digest and whether they are equal; ``None`` for one process. A collective: every rank calls it."""
    if state.num_processes == 1:
        return None
    digests = gather_digests(model)
    return {
        "world_size": state.num_processes,
        "backend": state.backend,
        "writer_rank": 0,
        "param_sha256_by_rank": digests,
        "params_equal_across_ranks": len(set(digests)) == 1,
    }
