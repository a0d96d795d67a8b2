"""The resources every asset shares: the build settings (typed Dagster ``Config``), the stage store (IO
manager) and the per-server partitions, with the small metadata helpers the asset modules use.

The build configuration is ``pipeline.core.config.BuildConfig``; :func:`dagster_config` turns that pydantic
model (and every stage section in it) into Dagster ``Config`` classes, so the launchpad shows each stage's
parameters typed, with their defaults, and an added field of ``BuildConfig`` appears there by itself.
The training settings are typed the same way, by :func:`dagster_overrides`, in ``assets.training`` (this
module is in every asset's import closure, so it imports nothing of ``training``).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import operator
import os
import pickle
import types
import typing
import uuid
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import dagster as dg
from dagster import MetadataValue
from pydantic import BaseModel, Field, PrivateAttr, create_model

from pipeline.core.config import BuildConfig
from pipeline.core.records import Rejection
from pipeline.core.speedups import collector_paused, dump_models
from pipeline.core.storage import check_storage_root
from pipeline.stages.base import StageOutput

# data versions on outputs are a beta parameter of dagster 1.13; we rely on them deliberately
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=".*data_version.*")

# one partition per server: built-in or registered in a servers file; `prove build` adds the ones it runs
server_partitions = dg.DynamicPartitionsDefinition(name="servers")


def ensure_partitions(instance: dg.DagsterInstance, servers: list[str]) -> None:
    have = set(instance.get_dynamic_partitions("servers"))
    missing = [s for s in servers if s not in have]
    if missing:
        instance.add_dynamic_partitions("servers", missing)


_CONFIGS: dict[type[BaseModel], type[dg.Config]] = {}


def dagster_config(model: type[BaseModel]) -> type[dg.Config]:
    """A Dagster ``Config`` class with the fields and defaults of a pydantic model (nested models become
    nested ``Config`` classes, ``Literal`` choices an enum). Validation stays with the model itself:
    :meth:`ProveSettings.build_config` validates what the launchpad or the CLI passed."""
    if model not in _CONFIGS:
        fields: dict[str, Any] = {}
        for name, f in model.model_fields.items():
            default = f.get_default(call_default_factory=True)
            if isinstance(default, BaseModel):
                default = dagster_config(type(default))(**default.model_dump(mode="json"))
            fields[name] = (_config_type(f.annotation), ... if f.is_required() else default)
        _CONFIGS[model] = create_model(
            model.__name__.removesuffix("Config") + "Params", __base__=dg.Config, __doc__=model.__doc__, **fields
        )
    return _CONFIGS[model]


def dagster_overrides(model: type[BaseModel], **more: Any) -> type[dg.Config]:
    """A Dagster ``Config`` class with every field of a pydantic model, each optional: ``None`` means "not
    set", for settings whose defaults depend on another field (the training settings' on the model).
    ``more``: further fields, as ``name=(type, default)``. The model validates what is set."""
    fields: dict[str, Any] = {
        name: (_config_type(f.annotation) | None, Field(None, description=f.description))
        for name, f in model.model_fields.items()
    }
    return create_model(
        model.__name__.removesuffix("Config") + "Overrides", __base__=dg.Config, __doc__=model.__doc__, **fields, **more
    )


def _config_type(ann: Any) -> Any:
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return dagster_config(ann)
    if origin is list:
        return list[_config_type(args[0])]
    if origin is dict:
        return dict[args[0], _config_type(args[1])]
    if origin in (typing.Union, types.UnionType):
        kinds = [a for a in args if a is not type(None)]
        if len(kinds) > 1 and not all(isinstance(a, type) and issubclass(a, BaseModel) for a in kinds):
            # Dagster config has no union of plain types (``str | list[str]``): any value; the model validates it
            return Any
        return functools.reduce(operator.or_, (_config_type(a) for a in args))
    if origin is Literal:  # Dagster config has no Literal: a string enum of the same choices
        return enum.Enum("_or_".join(map(str, args)), [(str(a), a) for a in args], type=str)
    return ann


BuildParams = dagster_config(BuildConfig)


class ProveSettings(dg.ConfigurableResource):
    """The build configuration (``pipeline.core.config.BuildConfig``: examples, servers, data dir, every stage's
    parameters), typed. (The policy's training settings are the ``training`` resource: ``assets.training``.)"""

    build: BuildParams = BuildParams()  # type: ignore[valid-type]

    _in_a_run: bool = PrivateAttr(default=False)

    def build_config(self) -> BuildConfig:
        """The build's settings, validated. In a step of a build on Celery, the storage root is checked first
        (:func:`check_storage_root`): a worker whose shared mount is gone fails the step naming the root instead of
        writing to its own disk (raised here, in the step, so that the step's failure carries the message)."""
        cfg = BuildConfig.model_validate(self.build.model_dump(mode="json"))
        if self._in_a_run and cfg.deployment.executor == "celery":
            check_storage_root(cfg.data_path)
        return cfg

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._in_a_run = context.dagster_run is not None


def settings_for(cfg: BuildConfig) -> ProveSettings:
    return ProveSettings(build=BuildParams(**cfg.model_dump(mode="json")))


class Handoff:
    """Stage outputs written in this process, held in memory until their first in-process reader takes them.

    A build materializes a stage and then, in the same process, the stage that reads it: unpickling the file
    just written gave the reader an equal copy of what is still in memory (at 13,500 examples the stage
    store's reads were about a tenth of Dagster's part of a build). The first reader of a stored output gets
    the object itself, if the file is still the one written with it (the same write token, :class:`StageStore`),
    and the store lets go of it; every later reader, and every reader in another process, unpickles the file as
    before, so no two readers share an object and nothing a reader changes reaches another. What is held
    is bounded by its pickled size (``limit_bytes``), the oldest let go first."""

    def __init__(self, limit_bytes: int = 256 << 20) -> None:
        self.limit_bytes = limit_bytes
        self._held: dict[str, tuple[int, str, Any]] = {}  # path -> (size, write token, object), oldest first
        self._bytes = 0

    def give(self, path: Path, token: str, obj: Any) -> None:
        self.take(path, None)  # an earlier output of the same path is out of date
        size = path.stat().st_size
        if size > self.limit_bytes:
            return
        self._held[str(path)] = (size, token, obj)
        self._bytes += size
        while self._bytes > self.limit_bytes:
            oldest = next(iter(self._held))
            self._bytes -= self._held.pop(oldest)[0]

    def take(self, path: Path, token: str | None) -> Any:
        """The object written to ``path`` if it is held and the file is still that write (``token``), else
        ``None``; either way the store holds it no longer."""
        held = self._held.pop(str(path), None)
        if held is None:
            return None
        self._bytes -= held[0]
        return held[2] if token is not None and held[1] == token else None

    def clear(self) -> None:
        self._held.clear()
        self._bytes = 0


HANDOFF = Handoff()


class MissingPartition(Exception):
    """A server the build lists has no stored output of a per-server asset the corpus run reads."""


class FannedIn(dict):
    """A per-server asset's stored outputs by server, as the fan-in read them (the servers whose file exists),
    with what :func:`selected` needs to name a missing one."""

    def __init__(self, outputs: dict[str, Any], asset: str, folder: Path) -> None:
        super().__init__(outputs)
        self.asset, self.folder = asset, folder


WRITE_TOKEN = "prove/write_token"  # the metadata entry of a materialization naming its stored file's write


def write_token(path: Path) -> str | None:
    """The write token of the stage output stored at ``path`` (None when there is none)."""
    try:
        with open(path, "rb") as f:
            return str(pickle.load(f))
    except (OSError, EOFError, pickle.UnpicklingError):
        return None


class StageStore(dg.ConfigurableIOManager):
    """Pickled stage outputs under ``<base_dir>/<asset>/<partition>.pkl``; fan-in loads the partitions that exist.
    An output's first reader in the process that wrote it takes it from memory (:class:`Handoff`).

    Each file holds two pickles: a write token (unique to that write) and the output. The rejections sidecar
    (``.rejections.pkl``, written after the output) holds the token of the output it was cut from, so a reader
    knows it belongs to the output now stored without comparing modification times (which a shared file system
    may keep coarser than nanoseconds). Every file is written to a temporary name and renamed into place."""

    base_dir: str = "data/stages"

    def path(self, asset_key: dg.AssetKey, partition: str | None) -> Path:
        """Where the output of ``asset_key`` (its ``partition``) is stored."""
        return Path(self.base_dir) / "/".join(asset_key.path) / f"{partition or '_all'}.pkl"

    @staticmethod
    def _dump(obj: Any, path: Path, token: str) -> None:
        tmp = path.with_name(f".{path.name}.{token}.tmp")  # one per write: writers on other machines do not clash
        try:
            # the collector paused as for a load: the pickler's memo keeps every state it takes alive until the
            # dump ends, so each collection its allocations set off would walk them (and the stage's records) for
            # nothing (``bench/OPTIMISATIONS.md``, eighteenth round)
            with open(tmp, "wb") as f, collector_paused():
                pickle.dump(token, f, protocol=pickle.HIGHEST_PROTOCOL)
                dump_models(obj, f)  # pydantic records without their __getstate__ dicts (row 66)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        partition = context.partition_key if context.has_partition_key else None
        path = self.path(context.asset_key, partition)
        path.parent.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex  # names this write only: it never reaches an output's content
        self._dump(obj, path, token)
        HANDOFF.give(path, token, obj)
        # the write's token beside the materialization: a later build knows the file is still this write
        # (assets.distributed.resumable: a build on Celery re-uses the outputs a failed build left)
        context.add_output_metadata({WRITE_TOKEN: token})
        if isinstance(obj, StageOutput):
            # the rejections alone, beside the full output (and written after it): the corpus asset
            # reads every stage's rejections without unpickling every conversation
            self._dump(
                StageOutput(rejections=obj.rejections, stats=obj.stats), path.with_suffix(".rejections.pkl"), token
            )

    def _load(self, path: Path, part: str | None) -> Any:
        side = path.with_suffix(".rejections.pkl")
        with open(path, "rb") as f, collector_paused():  # every object a stored output holds is alive
            token = pickle.load(f)
            if part == "rejections":
                # the sidecar, if it was cut from this write of the output (not an earlier one, nor one cut short)
                with contextlib.suppress(FileNotFoundError), open(side, "rb") as s:
                    if pickle.load(s) == token:
                        return pickle.load(s)
            else:
                held = HANDOFF.take(path, token)
                if held is not None:
                    return held
            return pickle.load(f)

    def load(self, asset: str, partition: str | None = None) -> Any:
        """A stored output read directly from its file (a stage's stats after a build, in tests and benchmarks)."""
        with open(self.path(dg.AssetKey(asset), partition), "rb") as f, collector_paused():
            pickle.load(f)  # the write token
            return pickle.load(f)

    def load_input(self, context: dg.InputContext) -> Any:
        key = context.asset_key
        part = (context.definition_metadata or {}).get("prove/part")
        if context.has_asset_partitions:
            keys = context.asset_partition_keys
            if context.has_partition_key:  # per-server asset reading the same server's upstream
                return self._load(self.path(key, keys[0]), part)
            out = {}
            for p in keys:  # fan-in: the partitions that were materialized (selected() fails on a missing one)
                path = self.path(key, p)
                if path.exists():
                    out[p] = self._load(path, part)
            return FannedIn(out, key.to_user_string(), self.path(key, None).parent)
        return self._load(self.path(key, None), part)


def png_markdown(label: str, path: Path) -> MetadataValue:
    """A PNG inlined as markdown, so the Dagster UI shows the picture in the asset's metadata."""
    import base64

    return MetadataValue.md(f"![{label}](data:image/png;base64,{base64.b64encode(Path(path).read_bytes()).decode()})")


def selected(settings: ProveSettings, by_server: dict[str, Any]) -> dict[str, Any]:
    """The fanned-in partitions of the servers this build selected. A selected server without a stored output is
    an error naming it (:class:`MissingPartition`): it never silently drops out of the corpus. (A server the build
    left out as unavailable is not selected: the corpus run's config lists it under ``unavailable_servers``.)"""
    servers = settings.build_config().servers
    missing = [s for s in servers if s not in by_server]
    if missing:
        asset, folder = getattr(by_server, "asset", "a per-server asset"), getattr(by_server, "folder", "the store")
        raise MissingPartition(
            f"server(s) {', '.join(missing)} of this build have no stored {asset} output (no "
            f"{', '.join(f'{s}.pkl' for s in missing)} in {folder}): run their server_job partition again, or "
            "build without them"
        )
    return {s: v for s, v in by_server.items() if s in servers}


def rejection_meta(rejs: list[Rejection]) -> dict[str, Any]:
    c = Counter(f"{r.stage}/{r.reason}" for r in rejs)
    return {"rejections": len(rejs), "rejection_reasons": MetadataValue.json(dict(c))}
