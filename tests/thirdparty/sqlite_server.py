"""A SQLite MCP server shaped like mcp-server-sqlite: rows come back as the Python repr of a list of dicts.

The database is ``shop.db`` in the working directory (or ``--db-path``). When it does not exist it is created,
and ``shop.sql`` beside it, if present, is run to seed it (the seed script itself is only read).
Results are text with no output schemas; no annotations on any tool, as the published server has none.
Plain mcp ``MCPServer``, not prove's kit.
Run: python tests/thirdparty/sqlite_server.py [--db-path shop.db] [--http PORT] [--tools NAME,NAME...]
(``--tools``: serve only the tools named, a smaller server for tests that need only those.)
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import argparse
import sqlite3
from contextlib import closing
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

p = argparse.ArgumentParser()
p.add_argument("--db-path", default="shop.db")
p.add_argument("--http", type=int)
p.add_argument("--tools", help="serve only these tools (comma-separated); default: all")
ARGS = p.parse_args()
srv = MCPServer("sqlite", log_level="ERROR")
INSIGHTS: list[str] = []
ONLY = set(ARGS.tools.split(",")) if ARGS.tools else None


def tool(**kw):
    """``srv.tool``, for the tools this run serves (all of them, or those ``--tools`` names)."""
    return lambda fn: srv.tool(**kw)(fn) if ONLY is None or fn.__name__ in ONLY else fn


DB = Path(ARGS.db_path)


def seed() -> None:
    """Create the database from ``shop.sql`` beside it the first time; never write the script."""
    script = DB.with_suffix(".sql")
    if not DB.exists() and script.exists():
        with closing(sqlite3.connect(DB)) as conn:
            conn.executescript(script.read_text())
            conn.commit()


def run(query: str, params: tuple = ()) -> list[dict]:
    """One connection per query, as the published server does (tools may run on worker threads)."""
    try:
        with closing(sqlite3.connect(DB)) as conn:
            conn.row_factory = sqlite3.Row
            cur = conn.execute(query, params)
            if query.strip().upper().startswith(("INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER")):
                conn.commit()
                return [{"affected_rows": cur.rowcount}]
            return [dict(r) for r in cur.fetchall()]
    except sqlite3.Error as exc:
        raise ToolError(f"Database error: {exc}") from None


@tool(structured_output=False)
def read_query(query: str) -> str:
    """Execute a SELECT query on the SQLite database"""
    if not query.strip().upper().startswith("SELECT"):
        raise ToolError("Only SELECT queries are allowed for read_query")
    return str(run(query))


@tool(structured_output=False)
def write_query(query: str) -> str:
    """Execute an INSERT, UPDATE, or DELETE query on the SQLite database"""
    if query.strip().upper().startswith("SELECT"):
        raise ToolError("SELECT queries are not allowed for write_query")
    return str(run(query))


@tool(structured_output=False)
def create_table(query: str) -> str:
    """Create a new table in the SQLite database"""
    if not query.strip().upper().startswith("CREATE TABLE"):
        raise ToolError("Only CREATE TABLE statements are allowed")
    run(query)
    return "Table created successfully"


@tool(structured_output=False)
def list_tables() -> str:
    """List all tables in the SQLite database"""
    return str(run("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"))


@tool(structured_output=False)
def describe_table(table_name: str) -> str:
    """Get the schema information for a specific table"""
    if not run("SELECT name FROM sqlite_master WHERE type='table' AND name=?", (table_name,)):
        raise ToolError(f"Table '{table_name}' does not exist")
    return str(run(f'PRAGMA table_info("{table_name}")'))


@tool(structured_output=False)
def append_insight(insight: str) -> str:
    """Add a business insight to the memo"""
    INSIGHTS.append(insight)
    return "Insight added to memo"


if __name__ == "__main__":
    seed()
    if ARGS.http:
        srv.run("streamable-http", port=ARGS.http)
    else:
        srv.run("stdio")
