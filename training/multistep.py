"""Multi-step live rollouts: generate -> parse calls -> execute on the rollout's own session -> append the
results -> generate again, over every user turn of the example's conversation.

One rollout is one growing token sequence (prompt, then the completion). The completion interleaves the
policy's tokens (``env_mask`` 1) with tokens the policy did not write (``env_mask`` 0): tool results, the
next user message from the example's own conversation, the template's generation prompt. TRL's
``rollout_func`` returns that mask as ``env_mask`` and the trainer leaves those tokens out of the loss.

Limits (paper: 10 assistant turns, 5 user turns per rollout): ``max_assistant_turns`` counts assistant
messages over the whole rollout, ``max_user_turns`` the user turns taken from the conversation, and
``max_completion_length`` all completion tokens. A turn the rollout did not reach scores as a turn without
calls. Every rollout runs on its own ``Environment(server).session(env_seed)``; nothing here raises on model
output or a broken server (malformed call, unknown tool, dead or hung server end as failed calls that the
reward scores). The reward is :func:`pipeline.reward.score.score_turns` on the live outcomes, per user turn.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from pipeline.reward.score import RewardBreakdown, RewardConfig, score_turns
from training.chat import ChatFormat, tool_message
from training.data import Task
from training.rollout import EnvPool, parse_tool_calls, run_call


class RolloutLimits(BaseModel):
    model_config = {"extra": "forbid"}

    max_user_turns: int = Field(5, ge=1, description="user turns of the conversation played per rollout (paper: 5)")
    max_assistant_turns: int = Field(10, ge=1, description="assistant messages per rollout (paper: 10)")
    max_new_tokens: int = Field(64, ge=1, description="tokens per assistant message")
    max_completion_length: int = Field(
        256, ge=1, description="all completion tokens of a rollout (policy, tools, users)"
    )


@dataclass
class Trajectory:
    task: Task
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    calls_per_turn: list[list[dict[str, Any]]] = field(default_factory=lambda: [[]])
    states: list[str | None] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # the policy's assistant messages, decoded
    n_turns: int = 1
    session: Any = None
    error: str | None = None
    env_seconds: float = 0.0
    done: bool = False
    reward: RewardBreakdown | None = None

    @property
    def turn(self) -> int:
        return len(self.calls_per_turn) - 1

    def add(self, ids: Sequence[int], mask: int) -> None:
        self.completion_ids.extend(ids)
        self.env_mask.extend([mask] * len(ids))


@dataclass
class RolloutStats:
    rollouts: int = 0
    calls: int = 0  # tool calls the policy made (executed or failed)
    env_seconds: float = 0.0
    reward_seconds: float = 0.0
    generate_seconds: float = 0.0
    total_seconds: float = 0.0


class MultiStepRunner:
    """Runs multi-step rollouts for tasks with one model; scores each with the reward.

    ``want_state`` (the reward's ``w_state`` != 0): the state hash after each user turn is compared with the
    reference replayed on a fresh session of the same seed.
    """

    def __init__(
        self, fmt: ChatFormat, pool: EnvPool, limits: RolloutLimits, reward: RewardConfig, batch_size: int = 16
    ):
        self.fmt = fmt
        self.pool = pool
        self.limits = limits
        self.reward = reward
        self.batch_size = batch_size
        self.stats = RolloutStats()
        tok = fmt.tok
        self.eos_ids = {
            i for i in [tok.eos_token_id, *(getattr(tok, "additional_eos_ids", None) or [])] if i is not None
        }
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id

    # ------------------------------------------------------------------ one rollout's steps
    def start(self, task: Task) -> Trajectory:
        n_turns = min(task.n_turns, self.limits.max_user_turns)
        tr = Trajectory(task=task, prompt_ids=self.fmt.prompt_ids(task), n_turns=n_turns)
        t0 = time.perf_counter()
        try:
            tr.session = self.pool.env(task.server).session(task.env_seed)
        except Exception as exc:  # the policy still writes; its calls fail as server errors
            tr.error = f"{type(exc).__name__}: {exc}"
        tr.env_seconds += time.perf_counter() - t0
        return tr

    def _execute(self, tr: Trajectory, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Run the calls in order on the rollout's session; the tool messages to append."""
        t0 = time.perf_counter()
        out = []
        msgs = []
        deadline = t0 + self.pool.rollout_timeout_s
        for i, c in enumerate(calls):
            cid = f"call_{sum(map(len, tr.calls_per_turn)) + i}"
            rec, content, _ = run_call(tr.session, c, deadline, tr.error)
            out.append(rec)
            msgs.append(tool_message(cid, content, self.fmt.max_tool_chars))
        tr.calls_per_turn[-1].extend(out)
        tr.env_seconds += time.perf_counter() - t0
        return msgs

    def _end_turn(self, tr: Trajectory) -> None:
        if self.reward.w_state and tr.session is not None:
            t0 = time.perf_counter()
            try:
                tr.states.append(tr.session.state_hash())
            except Exception:
                tr.states.append(None)
            tr.env_seconds += time.perf_counter() - t0

    def step(self, tr: Trajectory, generated: Sequence[int]) -> None:
        """Take one generated assistant message; execute its calls or move to the next user turn."""
        lim = self.limits
        room = lim.max_completion_length - len(tr.completion_ids)
        ids = list(generated)
        cut = next((i for i, t in enumerate(ids) if t in self.eos_ids), None)
        ids = ids[: cut + 1] if cut is not None else [t for t in ids if t != self.pad_id]
        ids = ids[:room]
        tr.add(ids, 1)
        text = self.fmt.tok.decode(ids, skip_special_tokens=True)
        tr.messages.append(text)
        calls = parse_tool_calls(text)
        out_of_room = len(tr.completion_ids) >= lim.max_completion_length
        out_of_turns = len(tr.messages) >= lim.max_assistant_turns
        if calls:
            results = self._execute(tr, calls)
            if out_of_room or out_of_turns:
                tr.done = True
                return
            seg = self.fmt.tool_results_ids(results)
        else:
            self._end_turn(tr)
            if tr.turn + 1 >= tr.n_turns or out_of_room or out_of_turns:
                tr.done = True
                return
            tr.calls_per_turn.append([])
            seg = self.fmt.user_turn_ids(tr.task.user_turns[tr.turn])
        if len(tr.completion_ids) + len(seg) >= lim.max_completion_length:
            tr.done = True
            return
        tr.add(seg, 0)

    def finish(self, tr: Trajectory) -> RewardBreakdown:
        t0 = time.perf_counter()
        if tr.session is not None:
            try:
                tr.session.close()
            except Exception:
                pass
            tr.session = None
        tr.env_seconds += time.perf_counter() - t0
        t1 = time.perf_counter()
        ref = tr.task.reference[: tr.n_turns]
        calls = tr.calls_per_turn + [[] for _ in range(tr.n_turns - len(tr.calls_per_turn))]
        state = None
        if self.reward.w_state:
            want = self.pool.reference_state_hashes(tr.task.server, tr.task.env_seed, ref)
            got = tr.states + [None] * (tr.n_turns - len(tr.states))
            state = [g is not None and g == w for g, w in zip(got, want)]
        try:
            tr.reward = score_turns(calls[: tr.n_turns], ref, tr.task.tools, self.reward, state_per_turn=state)
        except Exception:  # a malformed corpus row: a failed rollout, training goes on
            tr.reward = RewardBreakdown()
        self.stats.reward_seconds += time.perf_counter() - t1
        self.stats.env_seconds += tr.env_seconds
        self.stats.rollouts += 1
        self.stats.calls += sum(map(len, tr.calls_per_turn))
        return tr.reward

    # ------------------------------------------------------------------ batched driver
    def run(
        self,
        model: Any,
        tasks: Sequence[Task],
        temperature: float | None = None,
        on_batch: Callable[[int, int], None] | None = None,
        generate: Callable[[list[list[int]]], list[list[int]]] | None = None,
    ) -> list[Trajectory]:
        """Rollouts of ``tasks`` (one each; repeat a task for a group). ``temperature`` None: greedy.
        ``generate`` (token-id sequences -> new token ids) replaces the model's own ``generate`` (e.g. vLLM)."""
        t0 = time.perf_counter()
        trajs: list[Trajectory] = []
        for i in range(0, len(tasks), self.batch_size):
            chunk = [self.start(t) for t in tasks[i : i + self.batch_size]]
            while active := [tr for tr in chunk if not tr.done]:
                seqs = [tr.prompt_ids + tr.completion_ids for tr in active]
                gen = generate(seqs) if generate is not None else self._generate(model, seqs, temperature)
                for tr, ids in zip(active, gen):
                    self.step(tr, ids)
            for tr in chunk:
                self.finish(tr)
            trajs.extend(chunk)
            if on_batch is not None:
                on_batch(len(trajs), len(tasks))
        self.stats.total_seconds += time.perf_counter() - t0
        return trajs

    def _generate(self, model: Any, seqs: list[list[int]], temperature: float | None) -> list[list[int]]:
        import torch

        t0 = time.perf_counter()
        width = max(map(len, seqs))
        ids = torch.tensor([[self.pad_id] * (width - len(s)) + s for s in seqs], device=model.device)
        att = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs], device=model.device)
        sample = bool(temperature)
        kw: dict[str, Any] = {"do_sample": sample}
        if sample:
            kw.update(temperature=float(temperature), top_p=1.0, top_k=0)
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                out = model.generate(
                    input_ids=ids,
                    attention_mask=att,
                    max_new_tokens=self.limits.max_new_tokens,
                    pad_token_id=self.pad_id,
                    eos_token_id=sorted(self.eos_ids) or None,
                    remove_invalid_values=True,
                    **kw,
                )  # a NaN/inf logit must not abort sampling
        finally:
            model.train(was_training)
        self.stats.generate_seconds += time.perf_counter() - t0
        return [row[width:].tolist() for row in out]


def breakdown_json(b: RewardBreakdown) -> str:
    return json.dumps(
        {
            k: getattr(b, k)
            for k in ("validity", "coverage", "efficiency", "name", "args", "state", "total", "n_calls", "exact")
        }
    )
