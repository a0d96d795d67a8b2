"""The pipeline's measured fast paths, in one place. Each keeps its outputs identical to the plain
code it replaces (tests compare them) and is kept because ``bench/OPTIMISATIONS.md`` shows it pays:

* :func:`heap_settled` (row 21): stages run with the existing records frozen out of the cyclic
  collector's sight; 1.13x on a 3,000-example build. :func:`settled_run` does the same for a whole
  build's run (the imported libraries frozen once, stages adding their records).
* :class:`IdentityMemo` (rows 27, 31): a value worked out once per record object that many
  conversations share (a server's tool records); augment 4.8 s -> 1.1 s, tools column 0.95 s -> 0.11 s
  at 13,500 examples.
* :class:`ToolsJson` (row 31): the corpus's tools column assembled from each tool's JSON.
* :func:`in_a_child` (row 68): a piece of work run in a forked child on the machine's other core while this
  process does another, its result handed back as bytes (the linter's second half of the rows).
* :func:`dump_models` (row 66): the stage store's pickles of pydantic records, each record's state handed over as
  it is (no ``__getstate__`` dict) and each distinct set of fields set pickled once; dumps 1.26x faster at
  13,500 examples.

The content hash is the plain :func:`pipeline.core.records.stable_hash` (the streamed version saved
about 0.6 s of a 220 s build at 13,500 examples).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Generic, TypeVar

from pydantic import BaseModel

K = TypeVar("K")
V = TypeVar("V")


_SETTLED_RUNS = 0  # how many settled_run blocks are open (a build's whole run)
FULL_COLLECTION_SPACING = 10  # inside settled_run, a full collection needs this many times more young ones


@contextlib.contextmanager
def settled_run() -> Iterator[None]:
    """A whole build with the heap that exists at its start (the imported libraries, the definitions)
    frozen out of the cyclic collector's sight, thawed when the block ends; inside it, each stage that
    :func:`heap_settled` wraps adds its records to the frozen heap instead of thawing it again.

    Between stages (Dagster's run machinery, the stage store) a full collection walked every object of
    every imported library: about a tenth of a 1,000-example build (``bench/OPTIMISATIONS.md``, eighth
    round). Frozen objects are still freed by reference counting; only cyclic garbage made while the
    block is open waits for its end."""
    global _SETTLED_RUNS
    thresholds = gc.get_threshold()
    if _SETTLED_RUNS == 0:
        gc.freeze()
        # full collections at a tenth of the rate: each one walks every record the running stage has made so far
        # (all alive), and at 13,500 examples a build made about a thousand of them (``bench/OPTIMISATIONS.md``,
        # tenth round); young collections, which free a call's short-lived cycles, run as before
        gc.set_threshold(thresholds[0], thresholds[1], thresholds[2] * FULL_COLLECTION_SPACING)
    _SETTLED_RUNS += 1
    try:
        yield
    finally:
        _SETTLED_RUNS -= 1
        if _SETTLED_RUNS == 0:
            gc.unfreeze()
            gc.set_threshold(*thresholds)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector paused while a block builds a large structure that is all alive (unpickling a
    stage's stored output, or pickling one: the pickler's memo holds every state it takes until the dump
    ends): every object it makes survives, so each collection its allocations set off would walk the
    growing structure for nothing."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def heap_settled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a stage with every object that already exists frozen out of the cyclic collector's sight
    (``gc.freeze``), thawed again when the stage returns (inside :func:`settled_run`: when the run ends).

    A full collection walks every tracked object. With the records of the servers built so far in the
    heap (snapshots, chains, conversations), the full collections set off by a stage's own allocations
    (a world copied for every session, every result) took a seventh of a 3,000-example build. Records
    are not cyclic garbage, so keeping them out of sight while a stage runs loses nothing."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        gc.freeze()
        if _SETTLED_RUNS:
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        finally:
            gc.unfreeze()

    return run


class IdentityMemo(Generic[K, V]):
    """``fn(record)`` computed once per record object (keyed by identity: records may be unhashable
    pydantic models, and equal records are the same work). The caller keeps every record alive while
    the memo is in use (they sit in the conversations it walks), so an identity is never reused."""

    def __init__(self, fn: Callable[[K], V]) -> None:
        self.fn = fn
        self._seen: dict[int, V] = {}

    def __call__(self, record: K) -> V:
        key = id(record)
        out = self._seen.get(key)
        if out is None:
            out = self._seen[key] = self.fn(record)
        return out

    def all(self, records: Iterable[K]) -> list[V]:
        return [self(r) for r in records]


class ToolsJson:
    """The tools column, ``json.dumps([t.to_openai() for t in tools])`` byte for byte, built from each
    tool's JSON serialized once. Augmented conversations offer thousands of distinct tool lists drawn
    from a few hundred tool records (13,500 examples: 5,703 lists, 686 records); a list seen before is
    served whole (keyed by the identities of its records, which stay alive while the rows are built)."""

    def __init__(self) -> None:
        self._tool: IdentityMemo[Any, str] = IdentityMemo(lambda t: json.dumps(t.to_openai()))
        self._list: dict[tuple[int, ...], str] = {}

    def __call__(self, tools: list[Any]) -> str:
        key = tuple(map(id, tools))
        out = self._list.get(key)
        if out is None:
            out = self._list[key] = "[" + ", ".join(self._tool.all(tools)) + "]"
        return out


_MODEL_GETSTATE = BaseModel.__getstate__
_MODEL_SETSTATE = BaseModel.__setstate__
_PLAIN_REDUCE = (object.__reduce__, object.__reduce_ex__)


def model_from_state(
    cls: type[BaseModel], fields: dict[str, Any], fields_set: tuple[str, ...], extra: Any, private: Any
) -> BaseModel:
    """A record rebuilt from its state as :class:`ModelPickler` wrote it: what pydantic's own ``__setstate__``
    restores (its own fresh set of the fields set)."""
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__pydantic_fields_set__", set(fields_set))
    object.__setattr__(obj, "__pydantic_extra__", extra)
    object.__setattr__(obj, "__pydantic_private__", private)
    object.__setattr__(obj, "__dict__", fields)
    return obj


def _plain_model(cls: type) -> bool:
    """Does the class pickle the way pydantic's ``BaseModel`` does (no pickling hook of its own)?"""
    return (
        cls.__getstate__ is _MODEL_GETSTATE
        and cls.__setstate__ is _MODEL_SETSTATE
        and (cls.__reduce__, cls.__reduce_ex__) == _PLAIN_REDUCE
    )


class ModelPickler(pickle.Pickler):
    """A pickler that writes a pydantic record as its class, its field values, its fields set, extra and private
    attributes, loaded by :func:`model_from_state` into the record pydantic's own pickling gives back.

    pydantic pickles a record by its ``__getstate__`` dict: a Python call per record, a new four-key dict and a new
    set of the fields set, all pickled whole. A corpus's records share a handful of distinct fields sets, so each is
    pickled once here (a shared tuple the pickler's memo refers back to). A record of a class with a pickling hook
    of its own (``RootModel``, a custom ``__getstate__``) is pickled as its class says."""

    def __init__(self, file: IO[bytes], protocol: int = pickle.HIGHEST_PROTOCOL) -> None:
        super().__init__(file, protocol=protocol)
        self._fields_sets: dict[frozenset[str], tuple[str, ...]] = {}
        self._plain: dict[type, bool] = {}

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        plain = self._plain.get(cls)
        if plain is None:
            plain = self._plain[cls] = issubclass(cls, BaseModel) and _plain_model(cls)
        if not plain:
            return NotImplemented
        key = frozenset(obj.__pydantic_fields_set__)
        fields_set = self._fields_sets.get(key)
        if fields_set is None:
            fields_set = self._fields_sets[key] = tuple(sorted(key))
        return model_from_state, (cls, obj.__dict__, fields_set, obj.__pydantic_extra__, obj.__pydantic_private__)


def dump_models(obj: Any, file: IO[bytes]) -> None:
    """Pickle ``obj`` (which may hold pydantic records) to ``file`` with :class:`ModelPickler`; ``pickle.load``
    reads it back."""
    ModelPickler(file).dump(obj)


def in_a_child(
    child: Callable[[], bytes], parent: Callable[[], V], fallback: Callable[[], bytes] | None = None
) -> tuple[V, bytes]:
    """``(parent(), child())``, with ``child`` run in a forked process while this one runs ``parent``: a
    CPU-bound piece of a stage on the machine's other core. ``child`` returns its result as bytes (a pickle),
    read back through a pipe. The child leaves with ``os._exit`` and runs nothing else of this
    process. Where ``os.fork`` is missing or fails, or the child fails (it raised, or was killed), ``child`` (or
    ``fallback``) runs here instead, after ``parent``: the result is the same either way, only later."""
    if not hasattr(os, "fork"):
        return parent(), (fallback or child)()
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return parent(), (fallback or child)()
    if pid == 0:  # the child
        code = 1
        try:
            os.close(read_fd)
            out = child()
            with os.fdopen(write_fd, "wb") as f:
                f.write(len(out).to_bytes(8, "little"))
                f.write(out)
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        mine = parent()
    finally:
        with os.fdopen(read_fd, "rb") as f:  # read whatever the child sent (it may wait on a full pipe)
            blob = f.read()
        _, status = os.waitpid(pid, 0)
    size = int.from_bytes(blob[:8], "little") if len(blob) >= 8 else -1
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and size == len(blob) - 8:
        return mine, blob[8:]
    return mine, (fallback or child)()  # the child failed: nothing of it is used
