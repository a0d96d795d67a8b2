"""Results as published servers shape them, on a real fixture process over stdio (tests/thirdparty/journal_server.py):
an error reported inside a normal result is a failed call for every stage, and a result naming the session's own
directory, or the time the session's files were made, is the same in every session, so it replays equal and
makes no dependency edge."""

import json
import sys
import tempfile
from pathlib import Path

from pipeline.core.config import GraphConfig, ProbeConfig, ReplayConfig, ServerConfig
from pipeline.core.records import Conversation, TraceCall
from pipeline.discovery.graph import discover
from pipeline.discovery.probe import probe
from pipeline.env import Environment
from pipeline.env.workdir import SESSION_ALIAS
from pipeline.reward.score import execute_calls
from pipeline.synthesis.replay import validate

JOURNAL = Path(__file__).resolve().parent.parent / "thirdparty" / "journal_server.py"


def journal_cfg() -> ServerConfig:
    return ServerConfig(name="journal", kind="stdio", command=sys.executable, args=[str(JOURNAL)])


def test_an_error_reported_inside_a_normal_result_is_a_failed_call_for_sessions_and_the_reward():
    with Environment(journal_cfg()) as env, env.session(0) as s:
        missing = s.call("read_entry", {"path": "/nowhere/x.txt"})  # {"success": false, "error": ...}
        assert not missing.ok and missing.error_code == "tool_error" and "no such entry" in missing.error
        bad_sql = s.call("query_entries", {"sql": "SELEC name FROM entries"})  # a "Database error: ..." text
        assert not bad_sql.ok and "syntax error" in bad_sql.error
        assert s.call("query_entries", {"sql": "SELECT name FROM entries"}).ok
        written = s.call("write_entry", {"name": "wednesday", "text": "Rain."})
        assert written.ok and written.data["success"] is True
        scored = execute_calls(
            s, [{"name": "write_entry", "arguments": {"name": "../escape", "text": "x"}}, {"name": "list_entries"}]
        )
        assert [c["ok"] for c in scored] == [False, True]


def test_a_result_naming_the_session_directory_replays_equal_in_a_new_session():
    with Environment(journal_cfg()) as env:
        trace = []
        with env.session(0) as s:
            listing = s.call("list_entries", {})
            path = listing.data[0]["path"]
            assert path == f"{SESSION_ALIAS}/journal/monday.txt"  # the session's directory, by its alias
            assert s.workdir and s.workdir not in json.dumps(listing.data)
            calls = [
                ("list_entries", {}),
                ("read_entry", {"path": path}),
                ("journal_info", {}),
                ("entry_info", {"path": path}),
            ]
            for name, args in calls:
                r = s.call(name, args)
                assert r.ok, r.error
                trace.append(TraceCall(turn=0, name=name, arguments=args, ok=True, result=r.data))
        conv = Conversation(
            conversation_id="c", server="journal", servers=["journal"], seed=0, snapshot_id="s",
            messages=[], tools=env.tools(), reference=[], trace=trace,
        )  # fmt: skip
        assert "created: 20" in trace[3].result  # the time this session's copy of the file was made
        # replayed twice, each time in a new process in a new directory (new files, new times): the same results
        assert validate(env, conv, ReplayConfig(determinism_runs=2)) is None
        assert trace[1].result == "Planted tomatoes.\n"
    assert not list(Path(tempfile.gettempdir()).glob("prove-journal-*"))


def test_the_session_directory_in_a_result_makes_no_dependency_edge():
    with Environment(journal_cfg()) as env:
        tools = [t for t in env.tools() if t.name in ("journal_info", "write_entry", "list_entries")]
        with env.session(0) as s:
            snap = probe(s, tools, ProbeConfig())
        graph = discover(env, snap, GraphConfig(), seed=0)
        edges = {(e.src, e.dst) for e in graph.edges if e.confirmed}
        # a write changes the listing, not where the journal is kept (which names a new directory every session)
        assert ("write_entry", "list_entries") in edges
        assert ("write_entry", "journal_info") not in edges
