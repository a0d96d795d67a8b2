"""`prove eval`'s parts: the frozen held-out suite (pinned by hash, played live, scored by the reward), policies
(a local checkpoint, an endpoint), the decision rule of greedy decoding, results, paired comparisons, the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from assets.cli import main as prove
from training.fixture import build_fixture_corpus
from training.policies import CallOrAnswer, EndpointPolicy, PolicyError, Reply, load_local_policy, offered_only
from training.suites.heldout import SuiteError, freeze, open_suite, run_heldout
from training.suites.results import compare, item_story, load_run
from training.suites.run import evaluate_policy


class ReferencePolicy:
    """Plays each item's reference: the calls of the current user turn, one message each, then words."""

    name = "reference"

    def __init__(self, tasks, silent: bool = False):
        self.by_first = {t.user_turns[0]: t for t in tasks}
        self.silent = silent

    def describe(self):
        return {"kind": "test", "name": self.name}

    def respond(self, conversations):
        out = []
        for messages, _tools in conversations:
            users = [m for m in messages if m["role"] == "user"]
            task = self.by_first[users[0]["content"]]
            turn = len(users) - 1
            since = messages[max(i for i, m in enumerate(messages) if m["role"] == "user") + 1 :]
            done = sum(1 for m in since if m["role"] == "assistant" and m.get("tool_calls"))
            ref = task.reference[turn] if turn < len(task.reference) else []
            if self.silent or done >= len(ref):
                out.append(Reply(content="Done."))
            else:
                g = ref[done]
                out.append(Reply(content="", calls=[{"name": g["name"], "arguments": g["arguments"]}]))
        return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return build_fixture_corpus(tmp_path_factory.mktemp("corpus") / "v1", n=60, seed=3)


@pytest.fixture(scope="module")
def suite(corpus, tmp_path_factory):
    return open_suite(freeze(corpus, tmp_path_factory.mktemp("suites"), "s1"))


def test_a_frozen_suite_holds_the_eval_split_pinned_by_its_hash(corpus, suite):
    rows = pq.read_table(corpus / "eval.parquet").to_pylist()
    assert sorted(t.example_id for t in suite.tasks) == sorted(r["example_id"] for r in rows)
    assert suite.meta["n_items"] == len(rows) and len(suite.meta["items_hash"]) == 16
    # freezing again under the same name with the same items gives the same suite
    assert freeze(corpus, suite.path.parent, "s1") == suite.path


def test_a_suite_whose_items_changed_is_refused_naming_both_hashes(suite, tmp_path):
    import pyarrow as pa

    copy = tmp_path / "changed"
    shutil.copytree(suite.path, copy)
    rows = pq.read_table(copy / "items.parquet").to_pylist()
    pq.write_table(pa.Table.from_pylist(rows[1:]), copy / "items.parquet")
    with pytest.raises(SuiteError) as err:
        open_suite(copy)
    assert suite.meta["items_hash"] in str(err.value) and "does not match" in str(err.value)
    with pytest.raises(SuiteError, match="not a frozen suite"):
        open_suite(tmp_path)


def test_the_reference_played_live_scores_exact_on_every_tool_item_and_abstains_where_it_should(suite):
    rows = run_heldout(ReferencePolicy(suite.tasks), suite)
    assert len(rows) == len(suite.tasks)
    tool = [r for r in rows if not r["abstain_expected"]]
    abst = [r for r in rows if r["abstain_expected"]]
    assert tool and abst
    assert all(r["valid"] and r["validity"] == 1.0 and r["coverage"] == 1.0 for r in tool), [
        (r["item_id"], r["reward"]) for r in tool if not r["valid"]
    ]
    assert all(r["abstained"] and r["reward"] == 1.0 for r in abst)
    # the policy's conversation is kept: calls and the live results it read
    msgs = json.loads(tool[0]["messages"])
    assert any(m["role"] == "tool" for m in msgs) and msgs[-1] == {"role": "assistant", "content": "Done."}


def test_a_policy_that_never_calls_scores_only_the_abstention_items(suite):
    rows = run_heldout(ReferencePolicy(suite.tasks, silent=True), suite)
    assert all(r["reward"] == (1.0 if r["abstain_expected"] else 0.0) for r in rows)


def test_two_runs_on_the_same_suite_compare_item_by_item(suite, tmp_path):
    a = evaluate_policy(ReferencePolicy(suite.tasks, silent=True), ["heldout"], tmp_path / "a", heldout=suite)
    b = evaluate_policy(ReferencePolicy(suite.tasks), ["heldout"], tmp_path / "b", heldout=suite)
    assert b["summary"]["heldout"]["reward"]["mean"] > a["summary"]["heldout"]["reward"]["mean"]
    res = compare(tmp_path / "a", tmp_path / "b")
    d = res["suites"]["heldout"]["delta"]
    assert res["suites"]["heldout"]["n_paired"] == len(suite.tasks)
    assert d["mean"] > 0 and d["ci95"][0] > 0  # apart from 0
    assert res["suites"]["heldout"]["by_category"]["multi_turn"]["delta"]["mean"] > 0
    _, rows = load_run(tmp_path / "b")
    story = item_story(rows, rows[0]["item_id"])
    assert rows[0]["item_id"] in story and "[assistant]" in story and "reward" in story


def test_runs_on_different_suites_are_not_compared(corpus, suite, tmp_path):
    other = open_suite(freeze(corpus, tmp_path / "suites", "s2", limit=3))
    evaluate_policy(ReferencePolicy(suite.tasks), ["heldout"], tmp_path / "a", heldout=suite)
    evaluate_policy(ReferencePolicy(other.tasks), ["heldout"], tmp_path / "b", heldout=other)
    with pytest.raises(ValueError, match="different held-out suites"):
        compare(tmp_path / "a", tmp_path / "b")


def test_greedy_decides_between_calling_and_words_on_their_whole_probability():
    call = 0
    # the call token is the likeliest single token (0.40), but words hold 0.60 spread over three openings
    spread = torch.log(torch.tensor([[0.40, 0.20, 0.20, 0.20]]))
    out = CallOrAnswer(call, start=5)(torch.zeros(1, 5, dtype=torch.long), spread.clone())
    assert out[0, call] == float("-inf") and out[0].argmax() != call
    likely = torch.log(torch.tensor([[0.55, 0.25, 0.10, 0.10]]))
    out = CallOrAnswer(call, start=5)(torch.zeros(1, 5, dtype=torch.long), likely.clone())
    assert out[0].argmax() == call and torch.isinf(out[0, 1:]).all()
    # later tokens of the message are plain greedy
    assert torch.equal(CallOrAnswer(call, start=5)(torch.zeros(1, 6, dtype=torch.long), spread.clone()), spread)


def test_a_reply_calling_a_tool_not_offered_is_written_again_in_words():
    tools = [{"type": "function", "function": {"name": "get_account", "parameters": {}}}]
    assert offered_only(Reply("", [{"name": "get_account", "arguments": {}}]), tools)
    assert offered_only(Reply("Sorry, I cannot do that here."), tools)
    # the tool the request needs was taken away (missing_function): calling it cannot do what was meant
    assert not offered_only(Reply("", [{"name": "get_account"}, {"name": "add_payee", "arguments": {}}]), tools)
    # a malformed call names no tool: it stays, for the reward to score
    assert offered_only(Reply("", [{"name": "", "arguments": None, "malformed": True}]), tools)
    # written again, the first token bars the call however likely it is
    likely = torch.log(torch.tensor([[0.90, 0.05, 0.03, 0.02]]))
    out = CallOrAnswer(0, start=5, words=True)(torch.zeros(1, 5, dtype=torch.long), likely.clone())
    assert out[0, 0] == float("-inf") and out[0].argmax() == 1


def test_a_checkpoint_without_its_tokenizer_is_refused_by_name(tmp_path):
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "config.json").write_text("{}")
    with pytest.raises(PolicyError, match="no tokenizer"):
        load_local_policy(str(tmp_path / "ck"))
    with pytest.raises(PolicyError, match="no config.json"):
        load_local_policy(str(tmp_path))


def test_a_dead_endpoint_fails_with_an_error_naming_it():
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    policy = EndpointPolicy(url, "m", retries=2, timeout_s=2)
    with pytest.raises(PolicyError) as err:
        policy.respond([([{"role": "user", "content": "hi"}], [])])
    assert url in str(err.value) and "after 2 tries" in str(err.value)
    assert policy.usage.requests == 2 and policy.usage.failures == 1


def test_the_cli_refuses_an_unknown_suite_and_reads_runs_back(suite, tmp_path, capsys):
    assert prove(["eval", "--suites", "heldout,nope", "--policy", "x"]) == 2
    assert "unknown suite(s) 'nope'" in capsys.readouterr().err
    evaluate_policy(ReferencePolicy(suite.tasks, silent=True), ["heldout"], tmp_path / "a", heldout=suite)
    evaluate_policy(ReferencePolicy(suite.tasks), ["heldout"], tmp_path / "b", heldout=suite)
    capsys.readouterr()
    assert prove(["eval", "--compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "heldout: reward A" in out and "apart from 0" in out
    assert prove(["eval", "show", str(tmp_path / "a"), "--failed"]) == 0
    assert "FAIL" in capsys.readouterr().out
    assert prove(["eval", "show", str(tmp_path / "nothing")]) == 2
    assert prove(["eval", "--policy", str(tmp_path / "a"), "--suites", "heldout", "--heldout", str(suite.path)]) == 2
    assert "no config.json" in capsys.readouterr().err


def test_a_tiny_checkpoint_plays_bfcl_multi_turn_end_to_end_through_the_cli(corpus, tmp_path, capsys):
    from training.data import conversation_texts, load_tasks
    from training.tiny import TinyConfig, load_policy

    model, tok = load_policy("tiny", conversation_texts(load_tasks(corpus, "train")), TinyConfig(vocab_size=600))
    ck = tmp_path / "run" / "checkpoint"
    model.save_pretrained(ck)
    tok.save_pretrained(ck)
    out = tmp_path / "eval"
    args = ["eval", "--policy", str(ck), "--suites", "bfcl-multi-turn", "--categories", "base,miss_param"]
    assert prove([*args, "--limit", "1", "--max-new-tokens", "16", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    b = summary["summary"]["bfcl-multi-turn"]
    assert set(b["by_category"]) == {"multi_turn_base", "multi_turn_miss_param"}
    assert summary["policy"] == {**summary["policy"], "kind": "local", "name": "run-checkpoint"}
    _, rows = load_run(out)
    assert len(rows) == 2 and all(r["suite"] == "bfcl-multi-turn" and r["error_type"] for r in rows)
    assert all(json.loads(r["messages"])[0]["role"] == "user" for r in rows)  # BFCL's own conversation, played
    assert b["overall"] == sum(r["valid"] for r in rows) / 2


def test_a_suite_is_frozen_from_a_named_build_that_never_becomes_the_latest_version(tmp_path, capsys):
    data = tmp_path / "data"
    args = ["eval", "freeze", "--build", "--servers", "banking", "--examples", "20", "--seed", "3"]
    assert prove([*args, "--name", "bank20", "--data-dir", str(data)]) == 0
    assert "suite bank20:" in capsys.readouterr().out
    suite = open_suite(data / "suites" / "bank20")
    assert suite.meta["origin"] == {"build": {"servers": ["banking"], "examples": 20, "seed": 3}}
    assert suite.tasks and {t.server for t in suite.tasks} == {"banking"}
    assert not (data / "corpus").exists()  # the build is the suite's own, not the data dir's latest version
    # the same build again gives the same items: the suite is returned as it is
    assert prove([*args, "--name", "bank20", "--data-dir", str(data)]) == 0
    assert prove(["eval", "freeze", "--build", "--examples", "20", "--data-dir", str(data)]) == 2
    assert "needs --name" in capsys.readouterr().err
