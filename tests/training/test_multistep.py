"""Multi-step live rollouts: the policy sees each tool result before its next call, later user turns come from
the example's conversation, and the tokens the policy did not write carry no loss."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections import Counter

import pytest
import torch

from pipeline.core.config import ServerConfig
from pipeline.env import Environment
from pipeline.reward.score import RewardConfig
from training.chat import ChatFormat
from training.data import Task
from training.multistep import MultiStepRunner, RolloutLimits
from training.rollout import EnvPool
from training.tiny import render_call, train_tokenizer_on_conversations

SYSTEM = "You are a banking assistant."


class ReadingPolicy(torch.nn.Module):
    """A deterministic policy that reads its context: it lists a customer's accounts, then asks for the balance
    of the first account *in the tool result it was shown*, answers, and in the second user turn deposits into
    that same account. Real token ids in, real token ids out (``generate`` as a causal LM offers it)."""

    def __init__(self, tok, customer_id: str):
        super().__init__()
        self.tok = tok
        self.customer_id = customer_id
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    @property
    def device(self):
        return self.anchor.device

    def _next(self, context: str) -> str:
        results = re.findall(r"<\|tool\|>(.*?)<\|end\|>", context, re.S)
        users = context.count("<|user|>")
        if users == 1 and not results:
            return render_call("list_accounts", {"customer_id": self.customer_id})
        if users == 1 and len(results) == 1:
            first = json.loads(results[0])["accounts"][0]["account_id"]
            return render_call("get_balance", {"account_id": first})
        if users == 2 and len(results) == 2:
            first = json.loads(results[0])["accounts"][0]["account_id"]
            return render_call("deposit", {"account_id": first, "amount": 10.0})
        return "Done."

    def generate(self, input_ids, attention_mask, max_new_tokens, pad_token_id, **_):
        rows = []
        for ids, att in zip(input_ids.tolist(), attention_mask.tolist()):
            context = self.tok.decode([i for i, a in zip(ids, att) if a], skip_special_tokens=False)
            rows.append(
                self.tok(self._next(context) + self.tok.eos_token, add_special_tokens=False)["input_ids"][
                    :max_new_tokens
                ]
            )
        width = max(map(len, rows))
        new = torch.tensor([r + [pad_token_id] * (width - len(r)) for r in rows])
        return torch.cat([input_ids, new], dim=1)


@pytest.fixture(scope="module")
def banking():
    with Environment("banking") as env:
        tools = [t.to_openai() for t in env.tools()]
        with env.session(0) as s:
            customers = s.call("list_customers", {}).data["customers"]
            for c in customers:
                accts = s.call("list_accounts", {"customer_id": c["customer_id"]}).data["accounts"]
                if accts:
                    return tools, c["customer_id"], accts[0]["account_id"]
    raise AssertionError("no banking customer with an account")


def _task(tools, customer_id, account_id) -> Task:
    ref = [
        [
            {"name": "list_accounts", "arguments": {"customer_id": customer_id}, "depends_on": []},
            {"name": "get_balance", "arguments": {"account_id": account_id}, "depends_on": [0]},
        ],
        [{"name": "deposit", "arguments": {"account_id": account_id, "amount": 10.0}, "depends_on": [1]}],
    ]
    users = [
        f"List the accounts of customer {customer_id}, then the balance of the first one.",
        "Now deposit 10 into it.",
    ]
    msgs = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": users[0]},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": users[1]},
        {"role": "assistant", "content": "Done."},
    ]
    return Task(
        example_id="t0",
        kind="multi_turn",
        server="banking",
        env_seed=0,
        messages=msgs,
        tools=tools,
        tools_json=json.dumps(tools),
        reference=ref,
        user_turns=users,
    )


def _fmt(task: Task) -> ChatFormat:
    tok = train_tokenizer_on_conversations([{"messages": task.messages, "tools": task.tools}] * 4, vocab_size=600)
    return ChatFormat(tok, max_tool_chars=2000)


def test_second_call_takes_its_argument_from_the_first_result_and_results_carry_no_loss(banking):
    tools, customer_id, account_id = banking
    task = _task(tools, customer_id, account_id)
    fmt = _fmt(task)
    with EnvPool() as pool:
        runner = MultiStepRunner(fmt, pool, RolloutLimits(max_completion_length=4000), RewardConfig(per_turn=True))
        [tr] = runner.run(ReadingPolicy(fmt.tok, customer_id), [task])

    names = [[c["name"] for c in turn] for turn in tr.calls_per_turn]
    assert names == [["list_accounts", "get_balance"], ["deposit"]]
    assert tr.calls_per_turn[0][1]["arguments"] == {"account_id": account_id}  # read from the live list_accounts result
    assert all(c["ok"] for turn in tr.calls_per_turn for c in turn)
    assert tr.reward.exact and tr.reward.total == pytest.approx(1.3)

    tok = fmt.tok
    policy = tok.decode([t for t, m in zip(tr.completion_ids, tr.env_mask) if m == 1])
    other = tok.decode([t for t, m in zip(tr.completion_ids, tr.env_mask) if m == 0])
    assert policy == "".join(
        tr.messages[i] + tok.eos_token for i in range(len(tr.messages))
    )  # only the policy's tokens train
    assert '"accounts"' in other and '"balance"' in other and "Now deposit 10 into it." in other
    assert '"accounts"' not in policy and account_id in policy
    assert len(tr.completion_ids) == len(tr.env_mask) and 0 < sum(tr.env_mask) < len(tr.env_mask)


def test_malformed_unknown_and_dead_server_calls_are_scored_not_raised(banking):
    tools, customer_id, account_id = banking
    task = _task(tools, customer_id, account_id)
    fmt = _fmt(task)

    class Garbage(ReadingPolicy):
        def _next(self, context: str) -> str:
            if "<|tool|>" not in context:
                return '<tool_call>{"name": oops}</tool_call>' + render_call("launch_rocket", {})
            return "Sorry."

    dead = ServerConfig(
        name="dead", kind="stdio", command=sys.executable, args=["-c", "import sys; sys.exit(3)"], timeout_s=5
    )
    with EnvPool(configs={"dead": dead}) as pool:
        runner = MultiStepRunner(fmt, pool, RolloutLimits(max_completion_length=4000), RewardConfig(per_turn=True))
        (live,) = runner.run(Garbage(fmt.tok, customer_id), [task])
        task.server = "dead"
        (broken,) = runner.run(Garbage(fmt.tok, customer_id), [task])
    assert [c["error_code"] for c in live.calls_per_turn[0]] == ["malformed_call", "unknown_tool"]
    assert [c["error_code"] for c in broken.calls_per_turn[0]] == ["malformed_call", "server_error"]
    assert broken.error and live.reward.validity == 0.0 and live.reward.n_calls == 2 == broken.reward.n_calls


def test_assistant_turn_limit_ends_the_rollout_and_unreached_turns_score_empty(banking):
    tools, customer_id, account_id = banking
    task = _task(tools, customer_id, account_id)
    fmt = _fmt(task)
    with EnvPool() as pool:
        runner = MultiStepRunner(
            fmt, pool, RolloutLimits(max_assistant_turns=2, max_completion_length=4000), RewardConfig(per_turn=True)
        )
        [tr] = runner.run(ReadingPolicy(fmt.tok, customer_id), [task])
    assert len(tr.messages) == 2 and tr.calls_per_turn == tr.calls_per_turn[:1]
    assert not tr.reward.exact and tr.reward.total < 1.3


def test_sft_sequences_train_assistant_tokens_of_every_turn_only(banking):
    tools, customer_id, account_id = banking
    task = _task(tools, customer_id, account_id)
    task.messages = [
        task.messages[0],
        task.messages[1],
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "list_accounts", "arguments": json.dumps({"customer_id": customer_id})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": '{"accounts": []}'},
        {"role": "assistant", "content": "None."},
        task.messages[3],
        {"role": "assistant", "content": "Ok."},
    ]
    fmt = _fmt(task)
    ex = fmt.sft_example(task)
    tok = fmt.tok
    trained = tok.decode([t for t, m in zip(ex["input_ids"], ex["completion_mask"]) if m])
    assert trained == render_call("list_accounts", {"customer_id": customer_id}) + "<|end|>None.<|end|>Ok.<|end|>"
    assert tok.decode(ex["input_ids"]) == fmt.render(task.messages, task.tools)  # the same text the template renders


def test_a_failed_first_attempt_of_weight_zero_is_read_but_carries_no_loss(banking):
    """A recovery demonstration: the wrong call (weight 0) and its real error are in the sequence; the loss mask is
    zero on exactly the wrong call's tokens and one on the correction."""
    tools, customer_id, account_id = banking
    task = _task(tools, customer_id, account_id)
    with Environment("banking") as env, env.session(0) as s:
        error = s.call("get_balance", {"account_id": customer_id})  # an id of the wrong kind
        right = s.call("get_balance", {"account_id": account_id})
    assert not error.ok and right.ok

    def call(cid, args, weight=None):
        fn = {"name": "get_balance", "arguments": json.dumps(args)}
        m = {"role": "assistant", "content": "", "tool_calls": [{"id": cid, "type": "function", "function": fn}]}
        return {**m, "weight": weight} if weight is not None else m

    task.messages = [
        task.messages[0],
        task.messages[1],
        call("c0", {"account_id": customer_id}, weight=0),
        {"role": "tool", "tool_call_id": "c0", "content": error.as_tool_content()},
        call("c1", {"account_id": account_id}),
        {"role": "tool", "tool_call_id": "c1", "content": right.as_tool_content()},
        {"role": "assistant", "content": "Done."},
    ]
    fmt = _fmt(task)
    ex = fmt.sft_example(task)
    unweighted = dataclasses.replace(
        task, messages=[{k: v for k, v in m.items() if k != "weight"} for m in task.messages]
    )
    plain = fmt.sft_example(unweighted)
    tok = fmt.tok
    assert ex["input_ids"] == plain["input_ids"]  # the wrong call and its error stay in the sequence
    dropped = [i for i, (a, b) in enumerate(zip(ex["completion_mask"], plain["completion_mask"])) if a != b]
    assert dropped == list(range(dropped[0], dropped[-1] + 1))  # one span: the wrong call's tokens
    assert (
        tok.decode([ex["input_ids"][i] for i in dropped])
        == render_call("get_balance", {"account_id": customer_id}) + "<|end|>"
    )
    trained = tok.decode([t for t, m in zip(ex["input_ids"], ex["completion_mask"]) if m])
    assert trained == render_call("get_balance", {"account_id": account_id}) + "<|end|>Done.<|end|>"
    assert '"not_found"' in tok.decode(ex["input_ids"])  # the error the model reads before correcting itself


def test_rollout_func_gets_each_prompt_num_generations_times_and_env_mask_reaches_the_trainer(tmp_path):
    """Pins TRL's rollout_func contract: per-device batch entries, each prompt repeated num_generations times
    in a row; one completion per entry; TRL counts only env_mask=1 tokens as completion length."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from training.config import TrainConfig
    from training.data import conversation_texts, load_tasks
    from training.fixture import build_fixture_corpus
    from training.grpo import RolloutReward, make_rollout_func
    from training.tiny import load_policy
    from training.train import _metrics_callback, grpo_config

    corpus = build_fixture_corpus(tmp_path / "c", n=16, seed=0)
    tasks = load_tasks(corpus, "train")
    model, tok = load_policy("tiny", conversation_texts(tasks))
    cfg = TrainConfig(
        grpo_steps=1, batch_size=4, num_generations=2, max_new_tokens=24, max_completion_length=96, kl_beta=0.0
    )
    seen: list[list[str]] = []
    masks: list[list[int]] = []
    metrics = tmp_path / "m.jsonl"
    with EnvPool() as pool:
        runner = MultiStepRunner(ChatFormat(tok), pool, cfg.limits(), cfg.reward, cfg.batch_size)
        inner = make_rollout_func(runner, {t.example_id: t for t in tasks}, cfg.temperature)

        def recording(prompts, trainer):
            seen.append(list(prompts))
            out = inner(prompts, trainer)
            masks.extend(out["env_mask"])
            return out

        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[RolloutReward()],
            args=grpo_config(cfg, tmp_path),
            processing_class=tok,
            train_dataset=Dataset.from_list([{"prompt": t.example_id} for t in tasks]),
            rollout_func=recording,
            callbacks=[_metrics_callback(metrics, "grpo", {}, None, True)],
        )
        trainer.train()
    assert len(seen) == 1
    prompts = seen[0]
    assert len(prompts) == cfg.batch_size and set(Counter(prompts).values()) == {cfg.num_generations}
    assert all(prompts[i] == prompts[i + 1] for i in range(0, len(prompts), 2))
    assert len(masks) == len(prompts)
    logged = [json.loads(x) for x in metrics.read_text().splitlines()][0]
    assert logged["completions/mean_length"] == pytest.approx(sum(map(sum, masks)) / len(masks))
    assert "frac_reward_zero_std" in logged and "reward/validity" in logged
