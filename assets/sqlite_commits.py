"""Cheap commits for the Dagster instance's SQLite files while a build runs in this process.

Dagster's SQLite storage opens a new connection for every event it stores (``NullPool``: connect, insert,
commit, close) on databases it keeps in WAL mode. With SQLite's default ``synchronous=FULL`` every commit
waits for an fsync of the write-ahead log, and every close of the last connection to a file checkpoints
the log into the database and fsyncs again. A build stores a few thousand events (step starts, inputs,
outputs, materializations, log lines), so on this project's machine those syncs were about a fifth of a
build's time (``bench/OPTIMISATIONS.md``, eighth round).

:func:`relaxed_sync` changes two things for the connections this process opens, and nothing else:

* ``PRAGMA synchronous=NORMAL`` on every new SQLite connection (SQLAlchemy's public ``connect`` event),
  and WAL mode from a file's first connection (Dagster switches each file it creates to WAL after
  creating its tables, so each table creation was a synced rollback-journal commit):
  in WAL mode a commit then no longer waits for the disk; the log is synced at each checkpoint. SQLite's
  documentation: WAL with ``synchronous=NORMAL`` is safe from corruption; a power loss (not a crash of
  this process) can lose the last transactions, here the last run events;
* one *keeper* connection held open per database file for the duration of the block, so closing
  Dagster's per-event connection is not the file's last close and does not checkpoint every time.
  The keepers are closed when the block ends: the last close checkpoints the log into the database.

The instance's files stay ordinary Dagster SQLite databases that the UI and ``dagster dev`` read as ever.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


class _Keepers:
    def __init__(self) -> None:
        self.conns: dict[str, sqlite3.Connection] = {}
        self.held: set[str] = set()  # the files whose keeper has read them in WAL mode
        self.lock = threading.Lock()
        self.depth = 0

    def on_connect(self, dbapi_connection: Any, _record: Any) -> None:
        if not isinstance(dbapi_connection, sqlite3.Connection):
            return
        cur = dbapi_connection.cursor()
        try:
            cur.execute(
                "PRAGMA journal_mode=WAL"
            )  # Dagster puts every file it creates in WAL mode; a new one from the start
            cur.execute("PRAGMA synchronous=NORMAL")
            path = next((row[2] for row in cur.execute("PRAGMA database_list") if row[1] == "main"), "")
        finally:
            cur.close()
        if path:  # not an in-memory database
            with self.lock:
                self._keep(path)

    def _keep(self, path: str) -> None:
        """Hold ``path`` open once it is in WAL mode (a file Dagster has just created is not yet: its
        keeper reads again at the next connection, until it is)."""
        if path in self.held:
            return
        keeper = self.conns.get(path)
        if keeper is None:
            keeper = self.conns[path] = sqlite3.connect(path, check_same_thread=False, timeout=30)
        try:
            # a read first (it sees the file's current header and, in WAL mode, maps the WAL index); then the mode
            keeper.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            if keeper.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                self.held.add(path)
        except sqlite3.Error:
            pass

    def close_all(self) -> None:
        with self.lock:
            conns, self.conns, self.held = list(self.conns.values()), {}, set()
        for c in conns:
            try:
                c.close()
            except sqlite3.Error:
                pass


_KEEPERS = _Keepers()


@contextmanager
def relaxed_sync() -> Iterator[None]:
    """SQLite connections opened in this process inside the block commit without waiting for the disk
    (see the module's docstring); re-entrant: nested blocks share the outermost one's keepers."""
    with _KEEPERS.lock:
        _KEEPERS.depth += 1
        first = _KEEPERS.depth == 1
    if first:
        event.listen(Engine, "connect", _KEEPERS.on_connect)
    try:
        yield
    finally:
        with _KEEPERS.lock:
            _KEEPERS.depth -= 1
            last = _KEEPERS.depth == 0
        if last:
            event.remove(Engine, "connect", _KEEPERS.on_connect)
            _KEEPERS.close_all()
