"""The stages as small steps over records: what each Dagster asset calls, and what tests call.

Every stage is a step built from its own config section (``SnapshotStep.of(cfg)`` picks out what
it needs) and a ``stage_*`` entry point taking the whole :class:`~pipeline.core.config.BuildConfig`:

* :mod:`pipeline.stages.discovery`: per server, probe -> graph -> chains
* :mod:`pipeline.stages.synthesis`: per server, queries (dry runs) -> conversations -> replay
* :mod:`pipeline.stages.assembly`: over all servers, dedup -> augmentation -> corpus
* :mod:`pipeline.stages.plan`: the composition plan (:mod:`pipeline.core.composition`) read from a build's config
* :mod:`pipeline.stages.base`: the stage output record, the environment a stage runs on, timing
* :mod:`pipeline.stages.registry`: the registry of stages, the one place to add one

This package imports none of them itself: a per-server asset's import closure (its code version) holds the
discovery and synthesis stages only, never the corpus writer, its charts or its linter.
"""
