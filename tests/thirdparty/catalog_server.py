"""A database catalog served over MCP, shaped like the published SQL servers' listing tools (DuckDB's, PostgreSQL's).

``list_tables`` answers JSON objects as text (``[{"schema": "main", "name": "trips", "type": "BASE TABLE"}]``), no
output schema; ``list_columns(table, schema)`` and ``preview_table(table)`` take a table's name and answer ``[]`` for a
table nothing holds, as a query over ``information_schema`` does (no error to tell a wrong name from an empty table).
The data is an in-memory SQLite database, the same in every process. Plain mcp ``MCPServer``.
Run: python tests/thirdparty/catalog_server.py
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import json
import sqlite3

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

srv = MCPServer("catalog", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)
DB = sqlite3.connect(":memory:", check_same_thread=False)
DB.executescript(
    """
    CREATE TABLE trips (id INTEGER PRIMARY KEY, city TEXT NOT NULL, days INTEGER NOT NULL);
    CREATE TABLE travellers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, trip_id INTEGER REFERENCES trips(id));
    INSERT INTO trips VALUES (1, 'Lyon', 3), (2, 'Porto', 5);
    INSERT INTO travellers VALUES (1, 'Ada', 1), (2, 'Grace', 2), (3, 'Linus', 2);
    CREATE VIEW long_trips AS SELECT * FROM trips WHERE days > 4;
    """
)


def _tables() -> list[dict]:
    rows = DB.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name").fetchall()
    return [{"schema": "main", "name": n, "type": "VIEW" if t == "view" else "BASE TABLE"} for n, t in rows]


@srv.tool(structured_output=False, annotations=READ)
def list_tables() -> str:
    """List the tables and views of the database, with their schema."""
    return json.dumps(_tables())


@srv.tool(structured_output=False, annotations=READ)
def list_columns(table: str, schema: str) -> str:
    """List the columns of a table: name, type, nullable."""
    if schema != "main" or table not in {t["name"] for t in _tables()}:
        return "[]"
    cols = DB.execute(f'PRAGMA table_info("{table}")').fetchall()
    return json.dumps([{"column": c[1], "type": c[2], "nullable": not c[3]} for c in cols])


@srv.tool(structured_output=False, annotations=READ)
def preview_table(table: str) -> str:
    """The first rows of a table."""
    if table not in {t["name"] for t in _tables()}:
        return "[]"
    cur = DB.execute(f'SELECT * FROM "{table}" LIMIT 3')
    names = [d[0] for d in cur.description]
    return json.dumps([dict(zip(names, r, strict=True)) for r in cur.fetchall()])


if __name__ == "__main__":
    srv.run("stdio")
