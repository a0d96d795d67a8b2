"""The names of the built-in stages, as rejections record them (``Rejection.stage``).

Defined here, below every layer that rejects a record, so each rejection names its stage from one list;
the stage registry (:mod:`pipeline.stages.registry`) gives each registered stage its name from it."""

from enum import StrEnum


class StageName(StrEnum):
    PROBE = "probe"
    GRAPH = "graph"
    CHAINS = "chains"
    QUERY = "query"
    SIMULATE = "simulate"
    REPLAY = "replay"
    DEDUP = "dedup"
    AUGMENT = "augment"
    CORPUS = "corpus"
