"""Servers shaped like those users bring (issue 51), each live over stdio: a catalog whose listing of objects
(``[{"schema": "main", "name": "trips"}]``) names what other tools take; a car whose state shows only through one
read taking an option (tests/thirdparty/car_server.py); a social service behind a login whose check prints the
set-up and secrets lines that, applied as printed with the user's values, make its tools chain."""

import os
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from pipeline.core.config import BuildConfig, ChainConfig, GraphConfig, ProbeConfig, ServerConfig
from pipeline.core.records import DependencyGraph, ToolSpec
from pipeline.core.servers_file import load_servers_file, usable_tools
from pipeline.corpus.columns import trace_of
from pipeline.corpus.lint_calls import _singled_out
from pipeline.corpus.store import read_examples
from pipeline.discovery.chainability import explain
from pipeline.discovery.chains import extract_chains
from pipeline.discovery.graph import discover
from pipeline.discovery.probe import listed_choices, probe
from pipeline.discovery.value_flow import _flow_params
from pipeline.env import Environment
from tests.builds import build_corpus

FIXTURES = Path(__file__).resolve().parents[1] / "thirdparty"


def _stdio(name: str, **more) -> ServerConfig:
    return ServerConfig(
        name=name, kind="stdio", command=sys.executable, args=[str(FIXTURES / f"{name}_server.py")], **more
    )


def _discover(cfg: ServerConfig, only: list[str] | None = None, graph_cfg: GraphConfig | None = None):
    """The probe's snapshot, the graph and the check's per-tool report of ``cfg`` (over the tools ``only`` names;
    ``graph_cfg``: the edge kinds looked for; None: the probe alone, as the check's fix lines come from it)."""
    with Environment(cfg) as env:
        listed = env.tools()
        tools, excluded = usable_tools(cfg, listed)
        tools = [t for t in tools if only is None or t.name in only]
        with env.session(0) as s:
            snap = probe(s, tools, ProbeConfig(), allowlist=cfg.probe_allowlist, known=cfg.resolved_known_values())
        graph = (
            discover(env, snap, graph_cfg, 0)
            if graph_cfg
            else DependencyGraph(graph_id="g", server=cfg.name, schema_hash="h", snapshot_id="s", tools=[])
        )
    setup = [c.tool for c in cfg.setup]
    return snap, graph, explain(listed, snap, graph, excluded, cfg.probe_allowlist, cfg.secrets, setup)


@pytest.mark.parametrize(
    "description, choices",
    [
        ("which part to show: doors, engine, brakes, cruise", ["doors", "engine", "brakes", "cruise"]),
        ("on, off or auto", ["on", "off", "auto"]),
        ("START or STOP", ["START", "STOP"]),
        ("Sort by: name or date.", ["name", "date"]),
        ("The name of the entity", []),
        ("Path to the file, e.g. notes or docs", []),
        ("Lock or unlock doors", []),
    ],
)
def test_a_description_listing_a_parameters_values_is_read_as_its_closed_set(description, choices):
    assert listed_choices(description) == choices


def test_no_result_feeds_free_text_or_a_closed_choice_of_a_write():
    comment = ToolSpec(
        name="comment",
        server="x",
        input_schema={
            "properties": {"tweet_id": {"type": "integer"}, "comment_content": {"type": "string"}},
            "required": ["tweet_id", "comment_content"],
        },
    )
    lights = ToolSpec(
        name="set_headlights",
        server="x",
        input_schema={"properties": {"mode": {"type": "string", "enum": ["on", "off"]}}, "required": ["mode"]},
    )
    assert _flow_params(comment) == ["tweet_id"] and _flow_params(lights) == []


def test_a_write_on_the_one_id_a_result_showed_under_its_plain_id_is_a_named_write():
    shown = [{"id": {"1"}, "username": {"bob"}}]  # get_user_tweets: bob's one post
    assert _singled_out(shown, "tweet_id", "1") and not _singled_out(shown, "tweet_id", "2")
    assert not _singled_out([{"id": {"1"}, "tweet_id": {"7"}}], "tweet_id", "1")  # its own field says otherwise


def test_a_listing_of_objects_feeds_their_names_to_the_tools_that_take_them_with_the_schema():
    snap, graph, report = _discover(_stdio("catalog"), graph_cfg=GraphConfig())
    flows = {(e.src, e.dst): e.fields for e in graph.edges if e.confirmed}
    # list_columns answers [] for a name nothing holds: the listing's names are confirmed by the columns they get
    assert flows[("list_tables", "list_columns")] == {"name": "table"}
    assert flows[("list_tables", "preview_table")] == {"name": "table"}
    assert snap.values["schema"] == ["main"] and {"trips", "travellers"} <= set(snap.values["name"])
    assert all(report[t]["chainable"] for t in ("list_tables", "list_columns", "preview_table")), report


def test_a_write_whose_state_shows_only_through_one_option_of_a_read_chains_through_that_option():
    only = ["lock_doors", "set_headlights", "display_car_status"]
    snap, graph, report = _discover(_stdio("car"), only, GraphConfig(value_flow=False))  # write -> read edges only
    shown = [c["arguments"]["option"] for c in snap.probe_calls if c["name"] == "display_car_status" and c["ok"]]
    assert shown == ["doors", "engine", "brakes", "cruise", "headlights", "fuel"]  # each option the description lists
    when = {(e.src, e.dst): e.when for e in graph.edges if e.confirmed and e.kind == "implicit"}
    assert when[("lock_doors", "display_car_status")] == {"option": "doors"}
    assert when[("set_headlights", "display_car_status")] == {"option": "headlights"}
    assert report["lock_doors"]["chainable"] and report["set_headlights"]["chainable"], report
    after = {"lock_doors": "doors", "set_headlights": "headlights"}
    chains = extract_chains(graph, snap, 6, ChainConfig())
    pairs = [(c.steps[i - 1].name, step) for c in chains for i, step in enumerate(c.steps) if i]
    read = [(prev, step.args["option"].value) for prev, step in pairs if step.name == "display_car_status"]
    assert read and all(option == after[prev] for prev, option in read if prev in after), read


def test_the_login_fix_the_check_prints_applied_with_the_users_values_makes_the_tools_chain(monkeypatch):
    only = ["authenticate", "follow_user", "list_all_following", "get_user_tweets"]
    _, _, report = _discover(_stdio("social"), only)
    fix = report["list_all_following"]["fix"]  # one servers-file fragment (as prove servers init reads it) ...
    assert fix == 'setup: [{tool: authenticate, arguments: {username: <username>, password: "${secret:password}"}}]'
    assert report["list_all_following"]["also"] == 'secrets: {password: "${SOCIAL_PASSWORD}"}'  # ... and its secret
    assert report["follow_user"]["fix"] == fix  # a write whose effect the refused reads would have shown
    assert not any(report[t]["chainable"] for t in only)
    # applied as printed: the user's name for <username>, the password in the environment variable it names
    monkeypatch.setenv("SOCIAL_PASSWORD", "bluebird-42")
    applied = yaml.safe_load(f"{fix}\n{report['list_all_following']['also']}".replace("<username>", "alice"))
    only = ["unfollow_user", "list_all_following"]  # (authenticate runs as each session's set-up)
    _, graph, report = _discover(_stdio("social", **applied), only, GraphConfig())
    assert report["unfollow_user"]["chainable"] and report["list_all_following"]["chainable"], report
    edges = {(e.src, e.dst) for e in graph.edges if e.confirmed}
    assert {("list_all_following", "unfollow_user"), ("unfollow_user", "list_all_following")} <= edges
    assert "set-up" in report["authenticate"]["why"] and report["authenticate"]["fix"] is None


STATE_CHANGING = {
    "car": {
        "lock_doors",
        "press_brake_pedal",
        "start_engine",
        "activate_parking_brake",
        "set_cruise_control",
        "set_headlights",
        "fill_fuel_tank",
    },
    "social": {"post_tweet", "retweet", "comment", "follow_user", "unfollow_user"},  # authenticate: the set-up
}


@pytest.mark.slow
def test_each_tool_that_changes_state_appears_in_an_80_example_build_of_the_option_and_login_fixtures(
    tmp_path, monkeypatch
):
    """Issue 51's acceptance: the car (state shown only through an option read) and the social service (behind a
    login, with the set-up the check printed) each have every state-changing tool in some example (minutes)."""
    monkeypatch.setenv("PROVE_FIXTURES", str(FIXTURES))
    monkeypatch.setenv("SOCIAL_PASSWORD", "bluebird-42")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    configs = [c for c in load_servers_file(FIXTURES / "shapes.yaml") if c.name in STATE_CHANGING]
    cfg = BuildConfig(examples=80, servers=[c.name for c in configs], server_configs=configs, data_dir=str(tmp_path))
    df = read_examples(build_corpus(cfg, gates=False))  # too few servers and examples for the composition targets
    for server, writes in STATE_CHANGING.items():
        rows = df.filter(pl.col("server") == server).iter_rows(named=True)
        used = {call["name"] for row in rows for call in trace_of(row["trace"]) if call["ok"]}
        assert writes <= used, (server, writes - used)
