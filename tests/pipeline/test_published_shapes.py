"""Discovery on results shaped like the published MCP servers': git's ``Commit:`` blocks and ``* main`` branch
lines, a filesystem's sized ``[FILE]`` lines and roots, JSON arrays of plain names, text wrapped in an output
schema; and every fix ``servers check`` suggests, followed on a live server (tests/thirdparty/workspace_server.py),
until its tools chain."""

import base64
import random
import sys
import time
from pathlib import Path

import pytest

from pipeline.core.config import GraphConfig, ProbeConfig, ServerConfig, SetupCall
from pipeline.core.records import CallResult, DependencyGraph, Snapshot, ToolSpec
from pipeline.core.servers_file import usable_tools
from pipeline.discovery.chainability import explain
from pipeline.discovery.check import check_servers
from pipeline.discovery.graph import Pace, discover
from pipeline.discovery.probe import probe
from pipeline.discovery.value_flow import NO_SUCH, confirm_value_flow
from pipeline.env import Environment, ServerBudgetExceeded
from pipeline.language.entities import generic_entities
from pipeline.language.replies import step_reply

FIXTURES = Path(__file__).resolve().parents[1] / "thirdparty"
WORKSPACE = str(FIXTURES / "workspace_server.py")

GIT_LOG = (
    "Commit history:\nCommit: 9ae3724fd0321a95\nAuthor: Ada\nDate: 2026-11-29 02:00:50+00:00\nMessage: Add config\n"
    "\n\nCommit: bd3717b14a8d4d8a\nAuthor: Ada\nDate: 2026-11-28 10:00:00+00:00\nMessage: Initial commit\n\n"
)


def test_git_log_blocks_name_commits_by_their_sha():
    found = generic_entities(GIT_LOG, "git_log")
    assert [(f.value, f.kind) for f in found] == [("9ae3724fd0321a95", "commit"), ("bd3717b14a8d4d8a", "commit")]
    assert found[0].record["message"] == "Add config"


def test_branch_lines_name_every_branch_the_same_way():
    found = generic_entities("  feature/login\n* main", "git_branch")
    assert [(f.value, f.kind, f.key) for f in found] == [
        ("feature/login", "branch", "name"),
        ("main", "branch", "name"),
    ]


def test_a_json_array_of_plain_names_names_tables():
    for result in ('["patients", "appointments"]', {"tables": ["patients", "appointments"]}):
        found = generic_entities(result, "list_tables")
        assert [(f.value, f.kind) for f in found] == [("patients", "table"), ("appointments", "table")]


def test_sized_listing_lines_name_files_without_their_size_or_the_summary():
    text = "[DIR] notes                 \n[FILE] todo.txt            16 B\n\nTotal: 1 files, 1 directories\n"
    found = generic_entities({"content": text}, "list_directory_with_sizes")
    assert [(f.value, f.kind) for f in found] == [("notes", "directory"), ("todo.txt", "file")]


def test_the_text_a_reading_tool_returns_is_content_not_a_listing():
    assert generic_entities({"content": "milk\neggs\nbread\n"}, "read_text_file") == []
    assert [f.value for f in generic_entities({"content": "milk\neggs\nbread\n"}, "list_items")] == [
        "milk",
        "eggs",
        "bread",
    ]


def test_an_output_schema_that_wraps_a_text_counts_as_a_text_result():
    def spec(props):
        return ToolSpec(name="t", server="x", output_schema={"type": "object", "properties": props})

    assert spec({"content": {"type": "string"}}).text_result
    assert not spec({"path": {"type": "string"}}).text_result  # a path is a field another tool takes
    assert not spec({"content": {"type": "string"}, "size": {"type": "integer"}}).text_result


def _workspace(**fixes) -> ServerConfig:
    return ServerConfig(name="workspace", kind="stdio", command=sys.executable, args=[WORKSPACE], **fixes)


def _fixes(cfg: ServerConfig) -> dict:
    """What the check says per tool from the probe alone (the fix lines come from what the probe saw)."""
    with Environment(cfg) as env:
        tools, excluded = usable_tools(cfg, env.tools())
        with env.session(0) as s:
            snap = probe(s, tools, ProbeConfig(), allowlist=cfg.probe_allowlist, known=cfg.resolved_known_values())
        graph = DependencyGraph(graph_id="g", server=cfg.name, schema_hash="h", snapshot_id="s", tools=[])
        return explain(env.tools(), snap, graph, excluded, cfg.probe_allowlist, cfg.secrets)


def test_every_fix_the_check_suggests_works_when_followed(tmp_path):
    # nothing lists the workspace: the check asks for it as a known value
    first = _fixes(_workspace())
    assert first["list_items"]["fix"].startswith("known_values: {workspace: <your workspace>}")
    # followed: the probe calls list_items with it, which refuses before a login: the check asks for a setup call
    second = _fixes(_workspace(known_values={"workspace": "desk"}))
    assert "refused" in second["list_items"]["why"]
    assert second["list_items"]["fix"] == "setup: [{tool: login, arguments: {user: <user>}}]"
    # followed: items are listed; the reading tool without an annotation is never probed: the allow-list line
    setup = [SetupCall(tool="login", arguments={"user": "ada"})]
    third = _fixes(_workspace(known_values={"workspace": "desk"}, setup=setup))
    assert third["get_history"]["fix"].startswith("probe_allowlist: [get_history]")
    # all three followed: the check (written as a JSON report with its duration) finds each tool chainable
    cfg = _workspace(known_values={"workspace": "desk"}, setup=setup, probe_allowlist=["get_history"])
    seen = []
    [report] = check_servers([cfg], out_dir=tmp_path, on_report=seen.append)
    assert seen == [report] and (tmp_path / "workspace.json").exists() and report["duration_s"] >= 0
    tools = report["tool_report"]
    assert tools["list_items"]["chainable"] and "show_item" in tools["list_items"]["why"], tools["list_items"]
    assert tools["show_item"]["chainable"], tools["show_item"]
    assert tools["get_history"]["chainable"] and "add_item" in tools["get_history"]["why"], tools["get_history"]


def test_discovery_that_cannot_finish_in_its_budget_stops_early_saying_why():
    with Environment(ServerConfig.for_builtin("banking")) as env:
        pace = Pace(env)
        pace.begin("write -> read pairs", 100)
        pace.start = time.monotonic() - 30  # three steps took 30 s: the 97 left would take about 970 s
        env.deadline = time.monotonic() + 60
        pace.step()
        pace.step()
        with pytest.raises(ServerBudgetExceeded, match=r"would need about \d+s more for its write -> read pairs"):
            pace.step()


WRAPPED = str(Path(__file__).resolve().parents[1] / "thirdparty" / "wrapped_files_server.py")
FILES_SEED = str(Path(__file__).resolve().parents[1] / "thirdparty" / "seeds" / "files")


def _wrapped() -> ServerConfig:
    return ServerConfig(
        name="wrapped_files",
        kind="stdio",
        command=sys.executable,
        args=[WRAPPED, "--root", "${SESSION_DIR}"],
        template_dir=FILES_SEED,
    )


def test_a_wrapped_listing_tree_or_root_is_no_content_a_writer_is_given():
    """Every result of server-filesystem wraps its text in {"content": ...}; only what a reading tool read is the
    content of something (a file's text, which a writer may be given); a listing, a JSON tree or the allowed
    directory is the tool's answer, never a value to write into a file."""
    with Environment(_wrapped()) as env:
        tools, _ = usable_tools(_wrapped(), env.tools())
        with env.session(0) as s:
            snap = probe(s, tools, ProbeConfig())
    texts = {p.read_text() for p in Path(FILES_SEED).rglob("*") if p.is_file()}
    assert snap.values["content"] and set(snap.values["content"]) <= texts, snap.values["content"]
    assert {"README.md", "todo.txt"} <= set(snap.values["path"])  # the listings still name the files


def test_a_directory_trees_json_text_never_feeds_a_path(tmp_path):
    """server-filesystem's ``directory_tree`` answers a JSON tree as one text (``{"content": "[\\n  {..."}``), and its
    ``move_file`` takes any text as a destination (a file named by the tree). Here every name in the tree is taken at
    the root, so each is refused as a destination, and the control move failed (its drawn source was gone): the whole
    text was then the value fed, as in an 80-example build of the published servers ("move the file, source set to
    notes and destination "[{...}]"). A path takes a name, never a document: no edge, no accepted value."""
    for path in ("ideas.md", "todo.txt", "notes/ideas.md", "archive/notes/ideas.md", "archive/todo.txt"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    # the source is the user's (a known value: no result feeds it), the destination is what a result may feed
    cfg = _wrapped().model_copy(update={"template_dir": str(tmp_path), "known_values": {"source": "notes/ideas.md"}})
    with Environment(cfg) as env:
        tools = {t.name: t for t in env.tools()}
        snap = Snapshot(
            snapshot_id="s",
            server=cfg.name,
            seed=0,
            schema_hash="h",
            tools=list(tools.values()),
            values={"path": ["archive"], "source": ["notes/ideas.md"]},
        )
        with env.session(0) as s:
            # the control: a move of a source that is gone (as a build's first draw may be) fails
            control = s.call("move_file", {"source": "gone.md", "destination": NO_SUCH.format("destination")})
            assert not control.ok
            accepted: dict = {}
            edges = confirm_value_flow(
                s,
                snap,
                tools["directory_tree"],
                [tools["move_file"]],
                random.Random(0),
                accepted,
                controls={("move_file", "destination"): control},
            )
            tree = s.call("directory_tree", {"path": "archive"}).data["content"]
            moved = s.call("move_file", {"source": "notes/ideas.md", "destination": tree})
    assert moved.ok  # the server takes the text as a file's name: only the rule keeps it out
    assert edges == [] and accepted == {}, (edges, accepted)


def test_a_file_naming_the_session_directory_reads_back_alike_as_base64_in_every_session():
    """A file written with the session's directory in it (said as /session, written as the real directory) read
    back as a base64 blob: the blob names the directory by its alias too, so two sessions (a run and its replay)
    read the same bytes."""
    content = "Allowed directories:\n/session"
    blobs = []
    with Environment(_wrapped()) as env:
        for seed in (0, 1):
            with env.session(seed) as s:
                assert s.call("write_file", {"path": "where.txt", "content": content}).ok
                media = s.call("read_media_file", {"path": "where.txt"})
                assert media.ok and s.call("read_text_file", {"path": "where.txt"}).data == {"content": content}
                blobs.append(media.data["content"][0]["resource"]["blob"])
    assert blobs[0] == blobs[1] and base64.b64decode(blobs[0]).decode() == content


def test_a_wrapped_text_result_is_said_as_its_text_never_as_a_record_of_one_content():
    wrap = {"type": "object", "properties": {"content": {"type": "string"}}}
    listing = ToolSpec(name="list_directory", server="x", read_only=True, output_schema=wrap)
    write = ToolSpec(name="write_file", server="x", output_schema=wrap)
    rng = random.Random(0)
    said = step_reply(listing, {"path": "projects"}, CallResult(ok=True, data={"content": "[DIR] orion"}), rng)
    assert "[DIR] orion" in said and "content" not in said, said
    done = CallResult(ok=True, data={"content": "Successfully wrote to todo.txt"})
    said = step_reply(write, {"path": "todo.txt", "content": "milk"}, done, rng)
    assert "wrote the file" in said and "Successfully" not in said and "content" not in said, said


def test_writers_whose_records_name_an_entity_change_the_graph_read_under_an_output_schema():
    """server-memory 2026.8.31 declares output schemas (the fixture with ``--structured``): ``add_observations``
    names the entity inside a record (``observations: [{entityName, contents}]``) and ``delete_entities`` lists
    names; given observed names, each changes what ``read_graph`` returns, so both chain."""
    cfg = ServerConfig(
        name="memory",
        kind="stdio",
        command=sys.executable,
        args=[str(FIXTURES / "memory_server.py"), "--structured"],
        cwd=str(FIXTURES / "seeds" / "memory"),
        env={"MEMORY_FILE_PATH": "${SESSION_DIR}/memory.jsonl"},
    )
    with Environment(cfg) as env:
        assert all(t.output_schema for t in env.tools())
        with env.session(0) as s:
            snap = probe(s, env.tools(), ProbeConfig())
        writers = ("add_observations", "delete_entities")
        tools = [t for t in snap.tools if t.name in (*writers, "read_graph")]
        graph = discover(env, snap.model_copy(update={"tools": tools}), GraphConfig(value_flow=False))
    assert sorted((e.src, e.dst) for e in graph.edges if e.confirmed) == [(w, "read_graph") for w in writers]
    assert graph.unchainable == {}
