"""Keeping a process-isolated session's server process when its world cannot have changed.

Under process isolation every session and every reset used to start a new server process in a new
copy of its files (about 0.65 s of CPU for the mcp import alone), so graph discovery, which resets
before every probe, started hundreds. A process is still at its seed when

* every call it ran since it was settled (started, then set up) was a call of a tool known to only
  read: annotated ``readOnlyHint`` and not ``destructiveHint``, or named in the server's
  ``probe_allowlist`` (the same trust the probe already puts in them);
* none of those calls failed as a server failure (a crash or a timeout leaves the state unknown);
* its session directory is byte for byte what it was when it was settled (:func:`tree_print`).

Such a process is kept by a reset (nothing is restarted, the set-up is not repeated), and a closed
session hands it to the next session with the same set-up (:class:`CleanProcesses`). A process that
saw anything else is stopped, as before, but on a helper thread (:class:`Stopper`): mcp's shutdown
waits for the process to exit, and the session need not. ``PROVE_SESSION_REUSE=0`` turns both off
(every reset and session a new process, stopped before the next starts, as before;
``bench/thirdparty_sessions.py`` compares the two).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.env.connection import Connection

REUSE_ENV = "PROVE_SESSION_REUSE"


def reuse_wanted() -> bool:
    """The switch: ``PROVE_SESSION_REUSE=0`` (or ``false``/``no``/``off``) restarts a process for every
    session and every reset."""
    return os.environ.get(REUSE_ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


def tree_print(root: str | None) -> str | None:
    """A digest of everything under ``root``: every path, its kind, and every file's bytes (a link's
    target). ``None`` without a directory."""
    if not root:
        return None
    h = hashlib.blake2b(digest_size=16)
    base = Path(root)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        rel = os.path.relpath(dirpath, base)
        h.update(f"d\0{rel}\0".encode())
        for name in sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = os.path.join(dirpath, name)
            h.update(f"f\0{os.path.join(rel, name)}\0".encode())
            try:
                if os.path.islink(p):
                    h.update(b"l" + os.readlink(p).encode())
                else:
                    with open(p, "rb") as f:
                        h.update(hashlib.file_digest(f, "blake2b").digest())
            except OSError as exc:  # unreadable now: it differs from any print taken when it was readable
                h.update(f"!{exc.errno}".encode())
    return h.hexdigest()


def setup_key(setup: list[Any]) -> tuple[str, ...]:
    """What a process has been set up with (the set-up calls, unresolved), to match it to a session."""
    return tuple(c.model_dump_json() for c in setup)


@dataclass
class Clean:
    """A server process at its seed, set up with ``key`` (``()``: nothing ran that changed it)."""

    key: tuple[str, ...]
    conn: Connection


class CleanProcesses:
    """Processes handed back at their seed, for the next session (at most ``depth`` kept)."""

    def __init__(self, depth: int = 2):
        self.depth = depth
        self._kept: list[Clean] = []
        self._lock = threading.Lock()

    def take(self, key: tuple[str, ...]) -> Clean | None:
        """A kept process set up with ``key``, else one that ran nothing (the session sets it up)."""
        with self._lock:
            for want in (key, ()):
                for i, c in enumerate(self._kept):
                    if c.key == want:
                        return self._kept.pop(i)
        return None

    def keep(self, clean: Clean) -> Clean | None:
        """Keep ``clean``; returns the process that no longer fits (the oldest), for the caller to stop."""
        with self._lock:
            self._kept.append(clean)
            return self._kept.pop(0) if len(self._kept) > self.depth else None

    def drain(self) -> list[Clean]:
        with self._lock:
            kept, self._kept = self._kept, []
        return kept


class Stopper:
    """Stops processes on helper threads; :meth:`close` waits until every one is stopped."""

    def __init__(self, stop: Callable[[Connection], None], threads: int = 2):
        self._stop = stop
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="prove-env-stop")
        self._pending: list[Future[None]] = []
        self._lock = threading.Lock()

    def stop(self, conn: Connection) -> None:
        with self._lock:
            self._pending = [f for f in self._pending if not f.done()]
            self._pending.append(self._pool.submit(self._stop, conn))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        with self._lock:
            done, self._pending = self._pending, []
        for f in done:
            f.exception()  # a stop that failed has nothing left to stop (Connection.close swallows errors)


__all__ = ["REUSE_ENV", "Clean", "CleanProcesses", "Stopper", "reuse_wanted", "setup_key", "tree_print"]
