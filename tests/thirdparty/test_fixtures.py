"""Smoke tests for the third-party fixture servers: each runs as its own process over stdio (memory also over
streamable HTTP) under the real mcp Client, on a COPY of its seed directory. They publish no output schemas,
leave some tools unannotated, answer reads and writes, and never touch the shipped seed files."""

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from pipeline.env import free_port, wait_for_port

HERE = Path(__file__).resolve().parent
SEEDS = HERE / "seeds"
PY = sys.executable


def seed_hashes() -> dict[str, str]:
    return {
        p.relative_to(SEEDS).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(SEEDS.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(autouse=True)
def seeds_untouched():
    before = seed_hashes()
    yield
    assert seed_hashes() == before, "a fixture server changed, added or removed a file in tests/thirdparty/seeds"


def workdir(tmp_path: Path, seed: str | None) -> Path:
    wd = tmp_path / "session"
    if seed:
        shutil.copytree(SEEDS / seed, wd)
    else:
        wd.mkdir()
    return wd


def text(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def session(target, steps):
    """Run (tool, args) steps on one connection; returns (tools, [(is_error, text)])."""
    async with Client(target, read_timeout_seconds=20) as c:
        tools = (await c.list_tools()).tools
        out = []
        for name, args in steps:
            r = await c.call_tool(name, args)
            out.append((bool(r.is_error), text(r)))
        return tools, out


def run_stdio(script: str, cwd: Path, steps, env: dict | None = None):
    params = StdioServerParameters(
        command=PY, args=[str(HERE / script)], cwd=str(cwd), env={**os.environ, **(env or {})}
    )
    return asyncio.run(session(params, steps))


def failed(outcome: tuple[bool, str], message: str) -> bool:
    """The call failed with a tool error whose text carries the message."""
    return outcome[0] and outcome[1].endswith(message)


def assert_published_shape(tools, *, unannotated_expected: bool = True):
    assert tools, "the server lists no tools"
    with_schema = [t.name for t in tools if t.output_schema]
    assert with_schema == [], f"tools publishing an output schema: {with_schema}"
    assert all(t.description for t in tools)
    if unannotated_expected:
        assert any(t.annotations is None for t in tools), "expected some tools without annotations"


def test_memory_server_keys_entities_by_name_and_writes_only_its_working_copy(tmp_path):
    wd = workdir(tmp_path, "memory")
    tools, out = run_stdio(
        "memory_server.py",
        wd,
        [
            ("open_nodes", {"names": ["Ada Lovelace"]}),
            (
                "create_entities",
                {"entities": [{"name": "Grace Hopper", "entityType": "person", "observations": ["wrote a compiler"]}]},
            ),
            ("create_relations", {"relations": [{"from": "Grace Hopper", "to": "London", "relationType": "visited"}]}),
            ("search_nodes", {"query": "compiler"}),
            ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
        ],
    )
    assert_published_shape(tools)
    assert {t.name for t in tools} >= {
        "create_entities",
        "create_relations",
        "add_observations",
        "delete_entities",
        "delete_observations",
        "read_graph",
        "search_nodes",
        "open_nodes",
    }
    opened = json.loads(out[0][1])
    assert [e["name"] for e in opened["entities"]] == ["Ada Lovelace"]
    assert json.loads(out[3][1])["entities"][0]["name"] == "Grace Hopper"
    assert failed(out[4], "Entity with name Nobody not found")
    lines = [json.loads(line) for line in (wd / "memory.jsonl").read_text().splitlines()]
    assert {"type": "relation", "from": "Grace Hopper", "to": "London", "relationType": "visited"} in lines


def test_memory_server_over_streamable_http(tmp_path):
    wd = workdir(tmp_path, "memory")
    port = free_port()
    proc = subprocess.Popen(
        [PY, str(HERE / "memory_server.py"), "--http", str(port)],
        cwd=wd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc=proc)
        tools, out = asyncio.run(
            session(
                f"http://127.0.0.1:{port}/mcp", [("delete_entities", {"entityNames": ["London"]}), ("read_graph", {})]
            )
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert_published_shape(tools)
    graph = json.loads(out[1][1])
    assert "London" not in [e["name"] for e in graph["entities"]]
    assert all("London" not in (r["from"], r["to"]) for r in graph["relations"])


def test_files_server_lists_as_text_and_refuses_paths_outside_its_root(tmp_path):
    wd = workdir(tmp_path, "files")
    tools, out = run_stdio(
        "files_server.py",
        wd,
        [
            ("list_directory", {"path": "."}),
            ("write_file", {"path": "notes/plan.md", "content": "ship it\n"}),
            ("read_file", {"path": "notes/plan.md"}),
            ("get_file_info", {"path": "notes/plan.md"}),
            ("read_file", {"path": "../outside.txt"}),
            ("move_file", {"source": "todo.txt", "destination": "archive/todo.txt"}),
            ("search_files", {"path": ".", "pattern": "todo"}),
        ],
    )
    assert_published_shape(tools)
    assert out[0] == (False, "[FILE] README.md\n[DIR] archive\n[DIR] notes\n[DIR] projects\n[FILE] todo.txt")
    assert out[2] == (False, "ship it\n")
    assert out[3] == (False, "size: 8\nmodified: 2025-01-01T00:00:01Z\nisDirectory: false\nisFile: true")
    assert out[4][0] and "outside allowed directories" in out[4][1]
    assert out[6] == (False, "archive/todo.txt")
    assert (wd / "notes" / "plan.md").read_text() == "ship it\n"


def test_sqlite_server_answers_repr_rows_from_a_database_built_from_the_seed_script(tmp_path):
    wd = workdir(tmp_path, "sqlite")
    tools, out = run_stdio(
        "sqlite_server.py",
        wd,
        [
            ("list_tables", {}),
            ("write_query", {"query": "UPDATE products SET stock = stock - 1 WHERE id = 1"}),
            ("read_query", {"query": "SELECT name, stock FROM products WHERE id = 1"}),
            ("read_query", {"query": "DELETE FROM products"}),
            ("describe_table", {"table_name": "nope"}),
        ],
    )
    assert_published_shape(tools)
    assert out[0] == (False, "[{'name': 'customers'}, {'name': 'orders'}, {'name': 'products'}]")
    assert out[1] == (False, "[{'affected_rows': 1}]")
    assert out[2] == (False, "[{'name': 'Espresso machine', 'stock': 11}]")
    assert failed(out[3], "Only SELECT queries are allowed for read_query")
    assert failed(out[4], "Table 'nope' does not exist")
    assert (wd / "shop.db").exists()


def test_bank_api_refuses_everything_until_login(tmp_path):
    wd = workdir(tmp_path, None)
    tools, out = run_stdio(
        "bank_api_server.py",
        wd,
        [
            ("list_accounts", {}),
            ("login", {"username": "alice", "password": "wrong"}),
            ("login", {"username": "alice", "password": "s3cret"}),
            ("transfer", {"from_account": "ACC-1001", "to_account": "ACC-1002", "amount": 20}),
            ("get_transaction", {"transaction_id": "T1004"}),
            ("get_account", {"account_number": "ACC-1001"}),
        ],
        env={"BANK_PASSWORD": "s3cret"},
    )
    assert_published_shape(tools)
    assert failed(out[0], "not logged in: call login(username, password) first")
    assert failed(out[1], "login failed: invalid username or password")
    assert json.loads(out[3][1]) == {"status": "completed", "transaction_id": "T1004", "new_balance": 1500.75}
    assert json.loads(out[4][1])["amount"] == -20
    assert json.loads(out[5][1])["balance"] == 1500.75


def test_vehicle_engine_needs_brake_and_locked_doors(tmp_path):
    wd = workdir(tmp_path, None)
    all_doors = ["driver", "passenger", "rear_left", "rear_right"]
    tools, out = run_stdio(
        "vehicle_server.py",
        wd,
        [
            ("start_engine", {}),
            ("press_brake_pedal", {"pedal_position": 1.0}),
            ("start_engine", {}),
            ("lock_doors", {"doors": all_doors}),
            ("start_engine", {}),
            ("set_navigation", {"destination": "Tire shop"}),
            ("display_status", {}),
        ],
    )
    assert_published_shape(tools)
    assert failed(out[0], "cannot start the engine: press the brake pedal fully first")
    assert failed(out[2], "cannot start the engine: doors unlocked: driver, passenger, rear_left, rear_right")
    assert out[4] == (False, "Engine started")
    assert "engine: running" in out[6][1] and "destination: Tire shop" in out[6][1]


def test_shipped_servers_file_names_the_fixture_scripts_and_seed_dirs():
    from pipeline.core.servers_file import load_servers_file

    servers = load_servers_file(HERE / "servers.yaml")
    assert [s.name for s in servers] == ["memory", "files", "sqlite", "bank", "vehicle", "git"]
    root = HERE.parent.parent
    for s in servers:
        assert s.kind == "stdio" and s.isolation == "process"
        script = s.args[0].replace("${PROVE_FIXTURES}", str(HERE))
        assert Path(script).is_file(), script
        for seed_dir in (s.cwd, s.template_dir):
            if seed_dir:
                assert (root / seed_dir).is_dir() and (root / seed_dir).parent == SEEDS, seed_dir


def test_git_server_lists_branches_and_commits_as_text_lines(tmp_path):
    tools, out = run_stdio(
        "git_server.py",
        workdir(tmp_path, None),
        [
            ("git_branch", {"repo_path": "."}),
            ("git_add", {"repo_path": ".", "files": ["app.py"]}),
            ("git_commit", {"repo_path": ".", "message": "Add app"}),
            ("git_log", {"repo_path": ".", "max_count": 2}),
            ("git_checkout", {"repo_path": ".", "branch_name": "nope"}),
            ("git_status", {"repo_path": "/elsewhere"}),
        ],
    )
    assert_published_shape(tools)
    assert out[0] == (False, "  feature/login\n* main")
    new_id = out[2][1].rsplit(" ", 1)[1]
    assert out[3][1].splitlines()[0] == f"{new_id} Add app"
    assert failed(out[4], "pathspec 'nope' did not match any branch known to git")
    assert failed(out[5], "Not a git repository: /elsewhere")


def test_files_server_reports_file_system_errors_as_tool_errors(tmp_path):
    tools, out = run_stdio(
        "files_server.py",
        workdir(tmp_path, "files"),
        [
            ("write_file", {"path": "notes", "content": "x"}),
            ("create_directory", {"path": "todo.txt/sub"}),
            ("list_directory", {"path": "."}),
        ],
    )
    assert failed(out[0], "EISDIR: Is a directory, 'notes'")
    assert failed(out[1], "ENOTDIR: Not a directory, 'todo.txt/sub'")
    assert not out[2][0]
