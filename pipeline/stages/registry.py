"""The stage registry: the one place to add a stage.

Each :class:`Stage` names what rejections call it, the Dagster asset that runs it, what it reads and, for a
per-server stage, the function that runs it on one server. Everything else derives from :data:`STAGES`:

* the per-server Dagster assets (``assets.synthesis.per_server_assets``), their inputs and partitions;
* the ``corpus`` asset's rejection inputs (every stage with ``rejects=True``: the version writes their rejections,
  and the ``rejections`` asset shows them);
* the stage list of ``bench/build_throughput.py``;
* the stage names rejections record (:class:`~pipeline.core.stage_names.StageName`).

The cross-server stages (dedup, augment, corpus) are registered too, for their names, descriptions and
rejections; their assets, which also write the corpus version and its gates, are written out in
``assets/corpus.py``. To add a per-server stage: write its step, give it a config section in
:class:`~pipeline.core.config.BuildConfig` if it has parameters, and register a :class:`Stage` whose ``run``
returns :class:`~pipeline.stages.base.Produced` (``docs/architecture.md`` has the checklist).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from pipeline.core.stage_names import StageName
from pipeline.stages import discovery, synthesis
from pipeline.stages.base import Produced


@dataclass(frozen=True)
class Stage:
    """One stage of the build.

    ``run(cfg, server, progress, **inputs)`` runs a per-server stage on one server; ``inputs`` are the outputs
    of the same server's stages named in ``inputs``. ``progress``, when ``progress_label`` is set, is called
    as ``progress(i, n)`` as the stage goes (the asset logs it)."""

    name: str  # as rejections record it
    asset: str  # the Dagster asset that runs it
    description: str
    inputs: tuple[str, ...] = ()
    per_server: bool = True
    run: Callable[..., Produced] | None = None
    rejects: bool = True  # its output's rejections go into the corpus version
    progress_label: str | None = None
    group: str = "synthesis"


class Registry:
    """The stages in build order. A stage is registered after the stages it reads."""

    def __init__(self, stages: Iterable[Stage] = ()) -> None:
        self._stages: dict[str, Stage] = {}
        for s in stages:
            self.register(s)

    def register(self, stage: Stage) -> Stage:
        if stage.asset in self._stages:
            raise ValueError(f"a stage already makes the asset {stage.asset!r}")
        unknown = [i for i in stage.inputs if i not in self._stages]
        if unknown:
            raise ValueError(
                f"stage {stage.asset!r} reads {unknown}, which no registered stage makes: register those first"
            )
        if stage.per_server:
            if stage.run is None:
                raise ValueError(f"per-server stage {stage.asset!r} has no run function")
            wide = [i for i in stage.inputs if not self._stages[i].per_server]
            if wide:
                raise ValueError(f"per-server stage {stage.asset!r} reads cross-server outputs {wide}")
        self._stages[stage.asset] = stage
        return stage

    def copy(self) -> Registry:
        return Registry(self)

    def __iter__(self) -> Iterator[Stage]:
        return iter(self._stages.values())

    def __getitem__(self, asset: str) -> Stage:
        return self._stages[asset]

    def per_server(self) -> list[Stage]:
        return [s for s in self if s.per_server]

    def cross_server(self) -> list[Stage]:
        return [s for s in self if not s.per_server]

    def rejecting(self) -> list[Stage]:
        """The stages whose rejections a corpus version holds (per-server ones first, in build order)."""
        return [s for s in self.per_server() if s.rejects] + [s for s in self.cross_server() if s.rejects]

    def names(self) -> list[str]:
        """Each stage name once, in build order."""
        return list(dict.fromkeys(s.name for s in self))


STAGES = Registry(
    [
        Stage(
            StageName.PROBE,
            "server_snapshots",
            "Real entities sampled from the live server through its read-only tools only.",
            run=discovery.run_snapshot,
            rejects=False,
        ),
        Stage(
            StageName.GRAPH,
            "dependency_graphs",
            "Tool dependency graph: explicit and implicit edges confirmed by live execution; cached by schema hash.",
            ("server_snapshots",),
            run=discovery.run_graph,
            rejects=False,
        ),
        Stage(
            StageName.CHAINS,
            "tool_chains",
            "Tool chains of length 2-5 sampled along the dependency graph.",
            ("server_snapshots", "dependency_graphs"),
            run=discovery.run_chains,
        ),
        Stage(
            StageName.QUERY,
            "user_queries",
            "Grounded user requests per turn (information level, persona), from the template or LLM backend.",
            ("server_snapshots", "tool_chains"),
            run=synthesis.run_queries,
            progress_label="queries",
        ),
        Stage(
            StageName.SIMULATE,
            "conversations",
            "Conversations simulated live by the state machine (calls, results, recovery, replies).",
            ("server_snapshots", "tool_chains", "user_queries"),
            run=synthesis.run_conversations,
            progress_label="conversations",
        ),
        Stage(
            StageName.REPLAY,
            "validated_conversations",
            "Conversations that replay on a freshly reset session: error rate, sensitive provenance, determinism.",
            ("conversations",),
            run=synthesis.run_validate,
        ),
        Stage(
            StageName.DEDUP,
            "unique_conversations",
            "Near-duplicates removed across servers (exact Jaccard >= 0.70 on tool-call sequences, prefix-filtered).",
            ("validated_conversations",),
            per_server=False,
            group="corpus",
        ),
        Stage(
            StageName.AUGMENT,
            "augmented_examples",
            "Examples with robustness augmentation: distractors, enum stripping, irrelevance, abstention, "
            "missing function.",
            ("unique_conversations", "server_snapshots"),
            per_server=False,
            group="corpus",
        ),
        Stage(
            StageName.CORPUS,
            "corpus",
            "A new immutable corpus version: Parquet train/eval splits, rejections and manifest.json.",
            ("augmented_examples", "server_snapshots", "user_queries", "conversations"),
            per_server=False,
            rejects=False,
            group="corpus",
        ),
    ]
)
