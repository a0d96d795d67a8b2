"""The stages as small steps over records: what each Dagster asset calls, and what tests call.

Every stage is a step built from its own config section (``SnapshotStep.of(cfg)`` picks out what
it needs) and a ``stage_*`` entry point taking the whole :class:`~pipeline.core.config.BuildConfig`:

* :mod:`pipeline.stages.discovery`: per server, probe -> graph -> chains
* :mod:`pipeline.stages.synthesis`: per server, queries (dry runs) -> conversations -> replay
* :mod:`pipeline.stages.assembly`: over all servers, dedup -> augmentation -> corpus
* :mod:`pipeline.stages.plan`: the composition plan (:mod:`pipeline.core.composition`) read from a build's config
* :mod:`pipeline.stages.base`: the stage output record, the environment a stage runs on, timing

The rules more than one stage applies live in one place each: the error budget in
:mod:`pipeline.core.rules`, the composition (60/20/20 levels, kind rates, oversampling) in
:mod:`pipeline.core.composition`; the measured fast paths in :mod:`pipeline.core.speedups`.
"""

from pipeline.core.composition import INFO_LEVELS
from pipeline.stages.assembly import (AugmentStep, DedupStep, choose_multi_turn, cover_servers, select_multi_turn,
                                      stage_augment, stage_corpus, stage_dedup, tool_pool)
from pipeline.stages.base import Progress, StageOutput, Timer, open_env, stage_rng
from pipeline.stages.discovery import (ChainsStep, GraphStep, SnapshotStep, assign_contexts, probe_rejections, stage_chains, stage_graph,
                                       stage_snapshot)
from pipeline.stages.plan import chains_wanted, info_level_plan, n_contexts, per_server_target
from pipeline.stages.synthesis import (ConversationStep, QueryStep, ReplayStep, assign_levels, stage_conversations, stage_queries,
                                       stage_validate)

__all__ = [
    "INFO_LEVELS", "AugmentStep", "ChainsStep", "ConversationStep", "DedupStep", "GraphStep", "Progress", "QueryStep", "ReplayStep",
    "SnapshotStep", "StageOutput", "Timer", "assign_contexts", "assign_levels", "chains_wanted", "choose_multi_turn",
    "cover_servers", "info_level_plan", "n_contexts", "open_env", "per_server_target",
    "probe_rejections", "select_multi_turn", "stage_augment", "stage_chains", "stage_conversations", "stage_corpus", "stage_dedup",
    "stage_graph", "stage_queries", "stage_rng", "stage_snapshot", "stage_validate", "tool_pool",
]
