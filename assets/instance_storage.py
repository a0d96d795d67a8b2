"""The Dagster instance's storage: Dagster's own SQLite storage, whose event log keeps its SQLAlchemy engines.

``dagster.yaml`` names :class:`KeptEnginesSqliteStorage` as the instance's storage (``storage: custom``). It is
Dagster's SQLite storage (``storage: sqlite``) in every other respect: the same files under ``$DAGSTER_HOME``,
the same tables and migrations, read and written by the UI, the daemon and every run worker as before, and a
home written with ``storage: sqlite`` can switch to it (or back) with nothing to migrate.

The one change: Dagster's SQLite event log makes a new SQLAlchemy engine for every connection it opens
(``SqliteEventLogStorage._connect`` and ``has_table``), and a build opens one for every stored event, every
partition check of a step's inputs and outputs (the server partitions are dynamic) and every data-version
look-up. A new engine initialises its dialect on its first connection and starts with an empty cache of
compiled statements, so each of those compiled its SQL again. :class:`KeptEnginesEventLogStorage` keeps
one engine per database file (a run's own file and the index), the most recently used
:data:`ENGINES_KEPT` of them. The engines keep Dagster's ``NullPool``: a connection is still opened and
closed around each use, so no file is held open between uses (a wiped run's file can be deleted), a
forked process opens its own connections, and locking and durability are as before.
``bench/dagster_events.py`` has the figure; ``bench/OPTIMISATIONS.md`` the build's.

The storage and the build's relaxed SQLite commits (``assets/sqlite_commits.py``) are for SQLite only: an
instance on PostgreSQL (``storage: postgres`` in ``dagster.yaml``) uses dagster-postgres's storage as it is, and
:func:`sqlite_backed` tells the build not to relax anything.

The house's one exception to public-API-only (``ALLOWED_PRIVATE_USE`` in ``tests/test_public_sdk_only.py``):
Dagster has no public storage class to extend, so this module imports from ``dagster._core`` / ``dagster._serdes``
and reuses the event log's private state. Nothing else in the project may.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
)
from dagster._core.storage.runs.sql_run_storage import SqlRunStorage
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

ENGINES_KEPT = 8  # a build uses two files at a time (its run's and the index); the UI reads a few runs at once


def sqlite_backed(instance: Any) -> bool:
    """Whether a Dagster instance keeps its runs in SQLite: files under ``$DAGSTER_HOME`` (this module's storage or
    Dagster's ``storage: sqlite``) or, for an ephemeral instance, in memory. False for PostgreSQL (or MySQL), and
    for a storage that is not SQL at all."""
    storage = instance.run_storage
    if not isinstance(storage, SqlRunStorage):
        return False
    with storage.connect() as conn:
        return conn.dialect.name == "sqlite"


class KeptEnginesEventLogStorage(SqliteEventLogStorage):
    """Dagster's SQLite event log storage with one SQLAlchemy engine per database file, kept (see the module)."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._engines_lock = threading.Lock()
        self._engines_pid = os.getpid()
        self._tables_found: set[str] = set()  # tables of the index known to exist (:meth:`has_table`)
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> KeptEnginesEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def engine(self, shard: str) -> Engine:
        """The engine of ``shard``'s database file (a run id, or the index), made on first use."""
        with self._engines_lock:
            if self._engines_pid != os.getpid():  # a forked child: its parent's engines are not its to use
                self._engines, self._engines_pid = OrderedDict(), os.getpid()
            engine = self._engines.get(shard)
            if engine is not None:
                self._engines.move_to_end(shard)
                return engine
            engine = self._engines[shard] = create_engine(
                self.conn_string_for_shard(shard),
                poolclass=NullPool,
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
            )
            while len(self._engines) > ENGINES_KEPT:
                self._engines.popitem(last=False)[1].dispose()
            return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        # Dagster's own body (a transaction on a connection of the shard's file, the file's tables made on its
        # first use), with the shard's kept engine in place of a new one each time
        with self._db_lock:
            engine = self.engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def has_table(self, table_name: str) -> bool:
        """Whether the index has the table; a table found is not looked for again (Dagster checks the dynamic
        partitions table before every partition look-up of a step's inputs and outputs, a connection each time;
        migrations add tables, nothing of Dagster's drops one). A table not found is looked for every time."""
        if table_name in self._tables_found:
            return True
        engine = self.engine(INDEX_SHARD_NAME)
        with engine.connect() as conn:
            found = bool(engine.dialect.has_table(conn, table_name))
        if found:
            self._tables_found.add(table_name)
        return found

    def dispose(self) -> None:
        with self._engines_lock:
            engines, self._engines = list(self._engines.values()), OrderedDict()
        for engine in engines:
            engine.dispose()
        super().dispose()


class KeptEnginesSqliteStorage(DagsterSqliteStorage):
    """Dagster's SQLite storage (runs, event log, schedules under ``base_dir``) with
    :class:`KeptEnginesEventLogStorage` as its event log. In ``dagster.yaml``::

        storage:
          custom:
            module: assets.instance_storage
            class: KeptEnginesSqliteStorage
            config:
              base_dir:
                env: DAGSTER_HOME
    """

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        super().__init__(base_dir, inst_data=inst_data)
        # where Dagster's SQLite storage keeps its event log (one file per run, and the index)
        self._event_log_storage = KeptEnginesEventLogStorage(os.path.join(base_dir, "history", "runs", ""))

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: Any) -> KeptEnginesSqliteStorage:
        return cls.from_local(inst_data=inst_data, **config_value)
