"""Atomic writes: an output is either complete or absent, never half-written."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

STALE_AFTER_S = 3600


def atomic_write_text(path: Path | str, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_json(path: Path | str, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str))


@contextmanager
def atomic_dir(final: Path | str) -> Iterator[Path]:
    """Yield a hidden staging directory; rename it to ``final`` only if the block completes.

    ``final`` must not exist: versions are immutable. A killed run leaves only a hidden
    ``.staging-*`` directory, which readers ignore and the next run removes.
    """
    final = Path(final)
    if final.exists():
        raise FileExistsError(f"{final} already exists; corpus versions are never overwritten")
    final.parent.mkdir(parents=True, exist_ok=True)
    for stale in final.parent.glob(".staging-*"):
        # left by a killed run; a concurrent run's fresh staging directory is left alone
        if stale.is_dir() and time.time() - stale.stat().st_mtime > STALE_AFTER_S:
            shutil.rmtree(stale, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=final.parent))
    try:
        yield staging
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


class StorageRootError(OSError):
    """The storage root (``data_dir``) of a build on a cluster is missing or cannot be written."""


def check_storage_root(root: Path | str) -> None:
    """``root`` exists and takes a file (one is written under a temporary name there and removed), else a
    :class:`StorageRootError` naming it. A build on a cluster checks its shared root this way before its first
    write, and never creates it: an unmounted shared file system leaves an empty local folder at its mount point,
    and a root made below it would put the build's output on one machine's local disk."""
    root = Path(root)
    if not root.is_dir():
        raise StorageRootError(
            f"the storage root {root} (data_dir) does not exist: mount the shared file system it is on (or create "
            "the folder once); a build whose steps run on other machines does not create its storage root"
        )
    try:
        fd, probe = tempfile.mkstemp(prefix=".prove-write-check-", dir=root)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise StorageRootError(f"the storage root {root} (data_dir) cannot be written: {exc.strerror}") from None
