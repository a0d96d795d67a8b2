"""The stage store hands a stage's output to its first reader in the writing process, and only to it."""

import os

import dagster as dg

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
    StageStore._dump(_output("new, written by another process"), path)
    os.utime(path, ns=(1, 1))  # whatever the clock's resolution, the file is not the one written
    assert _read(store, "tool_chains", "banking").items == [{"tag": "new, written by another process"}]


def test_reading_the_rejections_part_leaves_the_output_for_its_reader(tmp_path):
    store, out = StageStore(base_dir=str(tmp_path)), _output("a")
    HANDOFF.clear()
    _write(store, "conversations", "crm", out)
    side = _read(store, "conversations", "crm", part="rejections")
    assert side.items == [] and side.rejections == out.rejections
    assert _read(store, "conversations", "crm") is out


def test_what_is_held_is_bounded_by_pickled_size_oldest_first(tmp_path):
    handoff = Handoff(limit_bytes=3_000)
    paths = []
    for i in range(3):
        p = tmp_path / f"{i}.pkl"
        p.write_bytes(b"x" * 1_200)
        handoff.give(p, i)
        paths.append(p)
    assert handoff.take(paths[0], paths[0].stat()) is None  # let go to stay under 3,000 bytes
    assert handoff.take(paths[1], paths[1].stat()) == 1 and handoff.take(paths[2], paths[2].stat()) == 2
    assert handoff.take(paths[2], paths[2].stat()) is None  # taken once
