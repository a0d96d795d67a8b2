"""A DuckDB MCP server shaped like mcp-server-duckdb: one tool, ``query(query)``, runs every statement (reads and
writes), and answers with the ``str()`` of the cursor's rows (``[(1, 'Dune', 1965)]``: tuples, no column names) or
a ``Database error: ...`` text. No listing or describing tool, no annotations, no output schemas.

The database is ``library.duckdb`` in the working directory (or ``--db-path``); when it does not exist it is created,
and ``library.sql`` beside it, if present, is run to seed it (the script itself is only read).
Plain mcp ``MCPServer``, not prove's kit. Run: python tests/thirdparty/statement_server.py [--db-path library.duckdb]
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import argparse
from pathlib import Path

import duckdb
from mcp.server.mcpserver import MCPServer

p = argparse.ArgumentParser()
p.add_argument("--db-path", default="library.duckdb")
ARGS = p.parse_args()
DB = Path(ARGS.db_path)
srv = MCPServer("statements", log_level="ERROR")

if not DB.exists():
    conn = duckdb.connect(str(DB))
    script = DB.with_suffix(".sql")
    if script.exists():
        conn.execute(script.read_text())
    conn.close()


@srv.tool(structured_output=False)
def query(query: str) -> str:
    """Execute a query on the DuckDB database"""
    conn = duckdb.connect(str(DB))  # one connection per query, as the published server does
    try:
        return str(conn.execute(query).fetchall())
    except duckdb.Error as exc:
        return f"Database error: {exc}"
    finally:
        conn.close()


if __name__ == "__main__":
    srv.run()
