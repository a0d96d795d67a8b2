"""The stage store hands a stage's output to its first reader in the writing process, and only to it."""

import gc
import os
import pickle

import dagster as dg
from pydantic import BaseModel, PrivateAttr, RootModel

from assets.resources import HANDOFF, Handoff, StageStore
from pipeline.core.records import rejection
from pipeline.stages.base import StageOutput


def _output(tag: str) -> StageOutput:
    return StageOutput(
        items=[{"tag": tag}], rejections=[rejection("chains", "no_chain", tag, "banking", {})], stats={"n": 1}
    )


def _write(store: StageStore, asset: str, partition: str, obj: object) -> None:
    ctx = dg.build_output_context(asset_key=dg.AssetKey(asset), partition_key=partition)
    store.handle_output(ctx, obj)


def _read(store: StageStore, asset: str, partition: str, part: str | None = None) -> object:
    ctx = dg.build_input_context(
        asset_key=dg.AssetKey(asset),
        partition_key=partition,
        definition_metadata={"prove/part": part} if part else None,
    )
    return store.load_input(ctx)


def test_the_first_reader_takes_the_written_object_and_later_readers_get_equal_copies(tmp_path):
    store, out = StageStore(base_dir=str(tmp_path)), _output("a")
    HANDOFF.clear()
    _write(store, "tool_chains", "banking", out)
    first, second = _read(store, "tool_chains", "banking"), _read(store, "tool_chains", "banking")
    assert first is out
    assert second is not out and second == out
    first.items.append({"tag": "changed by the first reader"})
    assert _read(store, "tool_chains", "banking").items == [{"tag": "a"}]  # the file is what was written


def test_a_file_replaced_after_it_was_written_is_read_from_disk(tmp_path):
    store = StageStore(base_dir=str(tmp_path))
    HANDOFF.clear()
    _write(store, "tool_chains", "banking", _output("old"))
    path = tmp_path / "tool_chains" / "banking.pkl"
    before = path.stat()
    StageStore._dump(_output("new, written by another process"), path, "another write")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same time: only the write token tells
    assert _read(store, "tool_chains", "banking").items == [{"tag": "new, written by another process"}]


def test_reading_the_rejections_part_leaves_the_output_for_its_reader(tmp_path):
    store, out = StageStore(base_dir=str(tmp_path)), _output("a")
    HANDOFF.clear()
    _write(store, "conversations", "crm", out)
    side = _read(store, "conversations", "crm", part="rejections")
    assert side.items == [] and side.rejections == out.rejections
    assert _read(store, "conversations", "crm") is out


def test_a_sidecar_from_another_write_of_the_output_is_not_read(tmp_path):
    store = StageStore(base_dir=str(tmp_path))
    _write(store, "conversations", "crm", _output("old"))
    path = tmp_path / "conversations" / "crm.pkl"
    side_before = path.with_suffix(".rejections.pkl").stat()
    # the output rewritten, its sidecar not (a write cut short), at the very same modification time as the sidecar
    StageStore._dump(_output("new"), path, "a later write")
    os.utime(path, ns=(side_before.st_atime_ns, side_before.st_mtime_ns))
    side = _read(store, "conversations", "crm", part="rejections")
    assert [r.detail for r in side.rejections] == ["new"]


class _SeesCollector:
    """Pickles as itself, noting whether the cyclic collector was on while it was pickled."""

    seen: list[bool] = []

    def __reduce__(self) -> tuple[type, tuple[()]]:
        _SeesCollector.seen.append(gc.isenabled())
        return (_SeesCollector, ())


def test_an_output_is_pickled_with_the_collector_paused_and_the_collector_is_on_again_after(tmp_path):
    store = StageStore(base_dir=str(tmp_path))
    _SeesCollector.seen.clear()
    _write(store, "tool_chains", "banking", StageOutput(items=[_SeesCollector(), _SeesCollector()]))
    assert _SeesCollector.seen == [False, False]
    assert gc.isenabled()
    assert isinstance(store.load("tool_chains", "banking").items[0], _SeesCollector)


def test_stored_files_are_written_whole_under_their_own_name(tmp_path):
    store = StageStore(base_dir=str(tmp_path))
    _write(store, "conversations", "crm", _output("a"))
    assert sorted(p.name for p in (tmp_path / "conversations").iterdir()) == ["crm.pkl", "crm.rejections.pkl"]
    assert store.load("conversations", "crm").items == [{"tag": "a"}]


def test_what_is_held_is_bounded_by_pickled_size_oldest_first(tmp_path):
    handoff = Handoff(limit_bytes=3_000)
    paths = []
    for i in range(3):
        p = tmp_path / f"{i}.pkl"
        p.write_bytes(b"x" * 1_200)
        handoff.give(p, f"token {i}", i)
        paths.append(p)
    assert handoff.take(paths[0], "token 0") is None  # let go to stay under 3,000 bytes
    assert handoff.take(paths[1], "token 1") == 1 and handoff.take(paths[2], "token 2") == 2
    assert handoff.take(paths[2], "token 2") is None  # taken once


class _Leaf(BaseModel):
    name: str
    size: int = 0


class _Holder(BaseModel):
    leaves: list[_Leaf]
    note: str | None = None
    _seen: int = PrivateAttr(default=0)


class _Loose(BaseModel, extra="allow"):
    kind: str


class _Ints(RootModel[list[int]]):
    pass


class _OwnState(BaseModel):
    value: int

    def __getstate__(self):  # a pickling hook of its own: pickled as the class says
        return {**super().__getstate__(), "__dict__": {"value": self.value + 1}}


def test_stored_records_come_back_as_pydantic_pickles_them_shared_where_they_were_shared(tmp_path):
    shared = _Leaf(name="a")
    holder = _Holder(leaves=[shared, shared, _Leaf(name="b", size=2), _Leaf(name="c")], note="n")
    holder._seen = 3
    out = StageOutput(items=[holder, _Loose(kind="x", colour="red"), _Ints([1, 2]), _OwnState(value=1)])
    store = StageStore(base_dir=str(tmp_path))
    _write(store, "conversations", "banking", out)
    got = store.load("conversations", "banking")
    plain = pickle.loads(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))
    assert got == plain  # the same records, the same extra fields, the same private attributes
    h = got.items[0]
    assert h.leaves[0] is h.leaves[1] and h.leaves[2] is not h.leaves[0]  # shared once, as pickle shares
    assert h._seen == 3 and got.items[1].colour == "red" and got.items[3].value == 2  # its own hook ran
    for a, b in [(h, holder), (h.leaves[0], shared), (h.leaves[2], holder.leaves[2]), (got.items[1], out.items[1])]:
        assert a.model_fields_set == b.model_fields_set and type(a.model_fields_set) is set
    h.leaves[0].size = 5  # an assignment marks the field as set on that record only, never on one with the same set
    assert h.leaves[0].model_fields_set == {"name", "size"} and h.leaves[3].model_fields_set == {"name"}
    assert h.leaves[3].model_dump(exclude_unset=True) == {"name": "c"}
