"""Build the seed state of the published MCP servers under ``.published/seeds/`` (one folder per server, the
``cwd`` of its entry in ``examples/published-servers.yaml``), from the sources in ``examples/published/seeds/``.

* ``files/files/``: a small tree of notes (copied as it is); the filesystem server is rooted at ``files``;
* ``memory/memory.jsonl``: the knowledge graph (copied; the server is given it through ``MEMORY_FILE_PATH``);
* ``sqlite/shop.db``: built from ``shop.sql`` (the script is not copied);
* ``duckdb/library.duckdb``: built from ``library.sql`` by the DuckDB server's own duckdb (the venv
  ``install-published.sh`` made beside the seeds, ``duckdb-venv``), so the file is in the format it reads;
* ``git/repo``: a git repository made with fixed authors and dates (the same commits every time): three commits on
  ``main``, a ``feature/login`` branch with one more, a ``docs`` branch, and an uncommitted change to ``README.md``.

The folders are replaced whole, so a rerun gives the same files. Run: ``python scripts/published_seeds.py [DEST]``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "examples" / "published" / "seeds"

COMMITS = [  # (branch, file, text, message)
    ("main", "README.md", "# Orion\n\nA small service.\n", "Initial commit"),
    ("main", "app.py", "def main():\n    print('hello')\n", "Add the entry point"),
    ("main", "CHANGELOG.md", "# Changelog\n\n- 0.1: first release\n", "Add a changelog"),
    ("feature/login", "login.py", "def login(user):\n    return user == 'alice'\n", "Add a login check"),
    ("docs", "docs/usage.md", "# Usage\n\nRun `python app.py`.\n", "Document usage"),
]


def _git(repo: Path, *args: str, when: int = 0) -> None:
    stamp = f"2026-01-{10 + when:02d}T09:00:00+00:00"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada Lovelace",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada Lovelace",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_SYSTEM": os.devnull,
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True)


def make_repo(repo: Path) -> None:
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for i, (branch, name, text, message) in enumerate(COMMITS):
        if branch != "main":
            _git(repo, "checkout", "-q", "-B", branch, "main")
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
        _git(repo, "add", name)
        _git(repo, "commit", "-q", "-m", message, when=i)
        if branch != "main":
            _git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("# Orion\n\nA small service.\n\nSee CHANGELOG.md.\n")  # a change to stage


def make_db(sql: Path, db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.executescript(sql.read_text())
        conn.commit()


def make_duckdb(sql: Path, db: Path) -> None:
    python = db.parents[2] / "duckdb-venv" / "bin" / "python"
    if not python.exists():
        sys.exit(f"published_seeds: {python} is missing; scripts/install-published.sh makes it (mcp-server-duckdb)")
    script = "import duckdb, sys; c = duckdb.connect(sys.argv[1]); c.execute(open(sys.argv[2]).read()); c.close()"
    subprocess.run([str(python), "-c", script, str(db), str(sql)], check=True, capture_output=True, text=True)


def build(dest: Path) -> None:
    if shutil.which("git") is None:
        sys.exit("published_seeds: git is missing; the git server's seed is a git repository: install git")
    for name in ("files", "memory", "git", "sqlite", "duckdb"):
        shutil.rmtree(dest / name, ignore_errors=True)
    shutil.copytree(SOURCES / "files", dest / "files")
    shutil.copytree(SOURCES / "memory", dest / "memory")
    make_repo(dest / "git" / "repo")
    (dest / "sqlite").mkdir(parents=True)
    make_db(SOURCES / "sqlite" / "shop.sql", dest / "sqlite" / "shop.db")
    (dest / "duckdb").mkdir(parents=True)
    make_duckdb(SOURCES / "duckdb" / "library.sql", dest / "duckdb" / "library.duckdb")


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".published" / "seeds")
