"""Stopping ``prove build`` cleanly on SIGTERM or Ctrl-C.

The build runs server partitions in worker processes, and those start servers of their own (a
third-party stdio server is a child of the worker that uses it). On SIGTERM or SIGINT the build:

* takes the list of every process it started, at any depth, before stopping any (a worker that
  dies first would leave its servers to init, out of reach);
* sends them SIGTERM, waits a few seconds, and SIGKILLs what is left; a process that ignores SIGTERM
  (multiprocessing's resource tracker does) is SIGKILLed at once, as waiting for it would be time lost;
* marks a corpus version that this build wrote but did not finish checking as failed (gate
  ``build_interrupted``): never the default. A version still being written is a hidden staging
  directory, removed as the write unwinds.

Workers also guard themselves, so a ``prove`` killed with SIGKILL does not leave them running: each watches
the build's process (a Linux pidfd, read by a thread of its own) and, when it is gone, stops its own children and
exits. The build's process is not the worker's parent (a worker is forked from Python's forkserver, which lives
as long as its workers do); the kernel's SIGUSR1 on the parent's death (``PR_SET_PDEATHSIG``) is asked for as well,
so a worker whose forkserver is gone stops too. (SIGUSR1, because Dagster's run execution takes SIGTERM over in the
worker: it maps SIGTERM to its SIGINT handler.)
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import threading
from types import FrameType
from typing import Any

import psutil

GRACE_S = 5.0
PR_SET_PDEATHSIG = 1


class Interrupts:
    """While active (in the main thread), SIGTERM and SIGINT set ``signum`` and raise KeyboardInterrupt once."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._old: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
            raise KeyboardInterrupt(signal.Signals(signum).name)

    def __enter__(self) -> Interrupts:
        for s in (signal.SIGTERM, signal.SIGINT):
            self._old[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)


def ignores_sigterm(pid: int) -> bool:
    """The process has SIGTERM ignored or blocked (Linux: the ``SigIgn`` and ``SigBlk`` masks in
    ``/proc/<pid>/status``; elsewhere ``False``)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            masks = [int(line.split(":", 1)[1], 16) for line in f if line.startswith(("SigIgn:", "SigBlk:"))]
    except (OSError, ValueError):
        return False
    return any(m >> (signal.SIGTERM - 1) & 1 for m in masks)


def stop_descendants(grace_s: float = GRACE_S) -> int:
    """SIGTERM every process below this one (listed before any is stopped; one that ignores SIGTERM is SIGKILLed),
    then SIGKILL what is left after ``grace_s``; how many there were."""
    procs = psutil.Process().children(recursive=True)
    for p in procs:
        try:
            p.kill() if ignores_sigterm(p.pid) else p.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=grace_s)
    return len(procs)


def _orphaned(signum: int, frame: FrameType | None) -> None:
    stop_descendants(grace_s=2.0)
    os._exit(128 + signum)


def _watch(build_pid: int) -> None:
    """Stop this worker's children and exit once ``build_pid`` has exited (from a thread of its own)."""
    try:
        pidfd = os.pidfd_open(build_pid)
    except (OSError, AttributeError):  # gone already, or no pidfds on this system
        if not psutil.pid_exists(build_pid):
            _orphaned(signal.SIGUSR1, None)
        return

    def wait() -> None:
        select.select([pidfd], [], [])
        _orphaned(signal.SIGUSR1, None)

    threading.Thread(target=wait, name="prove-build-watch", daemon=True).start()


def worker_init(build_pid: int | None = None) -> None:
    """The initializer of a build worker: when the build's process (``build_pid``) or the worker's parent dies,
    stop its servers and exit; Ctrl-C is the build's to handle (it stops the workers)."""
    signal.signal(signal.SIGUSR1, _orphaned)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGUSR1)
        except (OSError, AttributeError):
            pass
        if os.getppid() == 1:  # the parent died before the request took effect
            _orphaned(signal.SIGUSR1, None)
    if build_pid is not None:
        _watch(build_pid)
