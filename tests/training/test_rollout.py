"""Rollouts never crash: malformed output, unknown tools and dead servers are scored, not raised."""

from __future__ import annotations

import json
import sys

import pytest

from pipeline.core.config import ServerConfig
from pipeline.env import Environment
from pipeline.reward.score import RewardConfig
from training.rollout import EnvPool, execute_rollout, parse_tool_calls, score_completion


@pytest.fixture(scope="module")
def banking_tools():
    with Environment("banking") as env:
        return json.dumps([t.to_openai() for t in env.tools()])


def test_parse_reads_calls_in_order_and_flags_malformed_blocks():
    text = (
        'ok <tool_call>{"name": "get_balance", "arguments": {"account_id": "ACC-0001"}}</tool_call>'
        '<tool_call>{"name": "deposit", "arguments": "{\\"amount\\": 3}"}</tool_call>'
        '<tool_call>{"name": oops}</tool_call><tool_call>{"name": "list_accounts"'
    )
    calls = parse_tool_calls(text)
    assert [c["name"] for c in calls] == ["get_balance", "deposit", "", ""]
    assert calls[1]["arguments"] == {"amount": 3}
    assert calls[2]["malformed"] and calls[3]["malformed"]  # unterminated, unparsable JSON
    assert parse_tool_calls("no calls here") == []


def test_malformed_and_unknown_calls_are_scored_on_the_live_server(banking_tools):
    ref = [{"name": "get_balance", "arguments": {"account_id": "ACC-0001"}, "depends_on": []}]
    text = (
        '<tool_call>{"name": "get_balance", "arguments": {"account_id": "ACC-0001"}}</tool_call>'
        '<tool_call>{"name": "launch_rocket", "arguments": {}}</tool_call>'
        "<tool_call>{not json}</tool_call>"
    )
    with EnvPool() as pool:
        b, ro = score_completion(text, banking_tools, ref, "banking", 0, pool)
    assert [c["ok"] for c in ro.calls] == [True, False, False]
    assert ro.calls[1]["error_code"] == "unknown_tool" and ro.calls[2]["error_code"] == "malformed_call"
    assert b.validity == pytest.approx(1 / 3) and b.coverage == 1.0 and b.name == pytest.approx(1 / 3)


def test_a_server_that_dies_on_start_scores_the_rollout_without_raising(banking_tools):
    dead = ServerConfig(
        name="dead", kind="stdio", command=sys.executable, args=["-c", "import sys; sys.exit(3)"], timeout_s=5
    )
    ref = [{"name": "get_balance", "arguments": {"account_id": "ACC-0001"}, "depends_on": []}]
    text = '<tool_call>{"name": "get_balance", "arguments": {"account_id": "ACC-0001"}}</tool_call>'
    with EnvPool(configs={"dead": dead}) as pool:
        b, ro = score_completion(text, banking_tools, ref, "dead", 0, pool)
        assert ro.error and ro.calls[0]["ok"] is False and ro.calls[0]["error_code"] == "server_error"
        assert b.validity == pytest.approx(2 / 3)  # well-formed, but the execution failed


HANGING_SERVER = """
import time
from mcp.server.mcpserver import MCPServer

app = MCPServer("hanging")

@app.tool()
def slow(x: int = 0) -> int:
    \"\"\"Never answers in time.\"\"\"
    time.sleep(60)
    return x

@app.tool()
def fast(x: int = 0) -> int:
    \"\"\"Answers at once.\"\"\"
    return x

app.run()
"""


def test_a_hanging_tool_times_out_and_the_rollout_goes_on(tmp_path):
    script = tmp_path / "hanging_server.py"
    script.write_text(HANGING_SERVER)
    # each call may take 1 s; the start may take longer (importing mcp alone takes 1.4 s on a slow machine)
    hang = ServerConfig(
        name="hanging", kind="stdio", command=sys.executable, args=[str(script)], timeout_s=1.0, start_timeout_s=60
    )
    calls = [
        {"name": "fast", "arguments": {}},
        {"name": "slow", "arguments": {}},
        {"name": "fast", "arguments": {"x": 2}},
    ]
    with EnvPool(configs={"hanging": hang}) as pool:
        ro = execute_rollout(calls, "hanging", 0, pool)
    assert [c["ok"] for c in ro.calls] == [True, False, True]
    assert ro.calls[1]["error_code"] == "server_error" and ro.env_seconds < 20


def test_each_rollout_gets_a_fresh_session(banking_tools):
    ref = [{"name": "deposit", "arguments": {"account_id": "ACC-0002", "amount": 10.0}, "depends_on": []}]
    text = '<tool_call>{"name": "deposit", "arguments": {"account_id": "ACC-0002", "amount": 10}}</tool_call>'
    cfg = RewardConfig(w_state=1.0)
    with EnvPool() as pool:
        first, _ = score_completion(text, banking_tools, ref, "banking", 1, pool, cfg)
        second, _ = score_completion(text, banking_tools, ref, "banking", 1, pool, cfg)
    # the second deposit starts from the seeded state again, so it reaches the reference state too
    assert first.state == 1.0 and second.state == 1.0 and second.total == pytest.approx(1.3 + 1.0)
