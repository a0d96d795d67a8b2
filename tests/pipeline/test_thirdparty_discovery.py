"""Discovery on the fixture servers (tests/thirdparty), each a real process over stdio: entities from
text listings, repr rows and name-keyed JSON; which parameters each kind feeds; the write -> read
and create -> open edges no output schema describes; and what ``servers check`` says per tool."""

import os
import sys
from pathlib import Path

import pytest

from pipeline.core.config import GraphConfig, ProbeConfig
from pipeline.core.records import DependencyGraph, Snapshot, ToolSpec, schema_hash
from pipeline.core.servers_file import load_servers_file, usable_tools
from pipeline.discovery.chainability import explain
from pipeline.discovery.check import check_server
from pipeline.discovery.graph import discover
from pipeline.discovery.probe import probe
from pipeline.env import Environment

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "thirdparty"
PY = sys.executable


@pytest.fixture(scope="module")
def configs():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROVE_FIXTURES", str(FIXTURES))
        mp.setenv("BANK_PASSWORD", "s3cret")
        mp.setenv("PATH", f"{Path(PY).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        mp.chdir(ROOT)
        yield {c.name: c for c in load_servers_file(FIXTURES / "servers.yaml")}


def _probe(cfg):
    env = Environment(cfg)
    tools, _ = usable_tools(cfg, env.tools())
    with env.session(0) as s:
        snap = probe(s, tools, ProbeConfig(), allowlist=cfg.probe_allowlist)
    return env, snap


def _graph_of(env, snap, names):
    """The graph of a few of the server's tools (each pair costs fresh server processes)."""
    tools = [t for t in snap.tools if t.name in names]
    small = snap.model_copy(update={"tools": tools, "schema_hash": schema_hash(tools)})
    return discover(env, small, GraphConfig(), seed=0)


def _edge(g, src, dst):
    return next((e for e in g.edges if e.src == src and e.dst == dst and e.confirmed), None)


def test_files_listing_gives_files_and_directories_that_feed_read_file(configs):
    env, snap = _probe(configs["files"])
    with env:
        assert snap.kind_support.get("file", 0) >= 1 and snap.kind_support.get("directory", 0) >= 1
        assert "read_file.path" in snap.feeds["file"]
        assert "list_directory.path" in snap.feeds["directory"]
        g = _graph_of(env, snap, {"write_file", "read_file"})
        assert _edge(g, "write_file", "read_file") is not None  # write a file, then read it


def test_memory_names_feed_open_nodes_and_create_entities_leads_to_open_nodes(configs):
    env, snap = _probe(configs["memory"])
    with env:
        assert snap.kind_support["entity"] >= 3
        assert "open_nodes.names" in snap.feeds["entity"]
        g = _graph_of(env, snap, {"create_entities", "open_nodes"})
        e = _edge(g, "create_entities", "open_nodes")
        assert e is not None and e.kind == "explicit" and e.fields == {"name": "names"}


def test_sqlite_repr_rows_name_tables_that_describe_table_takes(configs):
    env, snap = _probe(configs["sqlite"])
    with env:
        assert "customers" in snap.entities
        assert "describe_table.table_name" in snap.feeds["table"]
        g = _graph_of(env, snap, {"list_tables", "describe_table"})
        e = _edge(g, "list_tables", "describe_table")
        assert e is not None and list(e.fields.values()) == ["table_name"]


def test_check_explains_each_tool_of_a_live_server(configs):
    # four of its six tools, a writer among them: each write the check tries costs fresh server processes
    sqlite = configs["sqlite"]
    tools = "list_tables,describe_table,read_query,write_query"
    report = check_server(sqlite.model_copy(update={"args": [*sqlite.args, "--tools", tools]}))
    assert report["tools"] == ["read_query", "write_query", "list_tables", "describe_table"]
    tools = report["tool_report"]
    assert set(tools) == set(report["tools"])
    assert tools["describe_table"]["chainable"] and "list_tables" in tools["describe_table"]["why"]
    assert report["feeds"]["table"] == ["describe_table.table_name"]


def _spec(name, required=(), read_only=False, annotated=False):
    return ToolSpec(
        name=name,
        server="x",
        read_only=read_only,
        annotated=annotated,
        input_schema={
            "type": "object",
            "properties": {p: {"type": "string"} for p in required},
            "required": list(required),
        },
    )


def _explain(tools, calls=(), skipped=None, allowlist=(), secrets=None):
    snap = Snapshot(
        snapshot_id="s",
        server="x",
        seed=0,
        schema_hash="h",
        tools=tools,
        probe_calls=list(calls),
        skipped_tools=skipped or {},
    )
    graph = DependencyGraph(graph_id="g", server="x", schema_hash="h", snapshot_id="s", tools=[t.name for t in tools])
    return explain(tools, snap, graph, {}, list(allowlist), secrets or {})


def test_an_unannotated_reader_gets_the_allowlist_line_and_a_writer_does_not():
    out = _explain([_spec("list_tables"), _spec("git_create_branch", ["name"])])
    assert out["list_tables"]["fix"].startswith("probe_allowlist: [list_tables]")
    assert not (out["git_create_branch"]["fix"] or "").startswith("probe_allowlist")


def test_a_refused_probe_call_gets_a_login_setup_line_with_the_secret():
    tools = [_spec("login", ["username", "password"]), _spec("list_accounts", read_only=True, annotated=True)]
    calls = [
        {
            "name": "list_accounts",
            "arguments": {},
            "ok": False,
            "error_code": "tool_error",
            "error": "not logged in: call login(username, password) first",
        }
    ]
    out = _explain(tools, calls, secrets={"password": "${BANK_PASSWORD}"})
    assert "refused" in out["list_accounts"]["why"]
    assert (
        out["list_accounts"]["fix"]
        == 'setup: [{tool: login, arguments: {username: <username>, password: "${secret:password}"}}]'
    )


def test_a_writer_nothing_observed_gets_no_line_that_would_change_nothing():
    # a state_tool gives replay a state to compare, not an edge: following it would leave the writer unchainable
    out = _explain([_spec("start_engine"), _spec("display_status", read_only=True, annotated=True)])
    assert out["start_engine"]["fix"] is None and "changed nothing" in out["start_engine"]["why"]
    assert out["display_status"]["fix"] is None and not out["display_status"]["chainable"]
