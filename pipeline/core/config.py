"""Configuration models: which servers, and the parameters of every stage.

These pydantic models are exposed as Dagster ``Config`` by ``assets/`` and recorded in every
corpus manifest, so a corpus version says exactly how it was made.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pipeline.core.domain import Domain
from servers.clock import REFERENCE_DAY  # the built-in worlds' today; imports nothing (no mcp)

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_REF = re.compile(r"\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand(value: str, where: str, known: dict[str, str] | None = None) -> str:
    """``${VAR}`` references replaced by the environment's values (``known`` placeholders first)."""

    def sub(m: re.Match[str]) -> str:
        var = m.group(1)
        if known and var in known:
            return known[var]
        if var not in os.environ:
            raise ValueError(f"{where} refers to environment variable {var}, which is not set")
        return os.environ[var]

    return _ENV_REF.sub(sub, value)


class SetupCall(BaseModel):
    """One call run at the start of every session (a login, a precondition). String arguments may
    name the server's secrets as ``${secret:NAME}``, resolved only when the call is sent."""

    model_config = {"extra": "forbid"}

    tool: str = Field(min_length=1)
    arguments: dict[str, Any] = {}


class ServerConfig(BaseModel):
    """How to reach one server and how to isolate its sessions.

    * ``builtin``: one of ``servers/`` by name, over ``inprocess``, ``stdio`` or ``http``.
    * ``stdio``: a third-party server started as ``command args`` (env, cwd).
    * ``http``: a third-party streamable HTTP server at ``url`` (headers may use ``${VAR}``).

    ``isolation``: ``meta`` (the server keeps one world per ``prove/session``; built-in servers),
    ``process`` (a fresh process and temporary working directory per session), or ``none``
    (the server is stateless or reset through ``reset_tool``).
    Secrets are written as ``${VAR}`` and resolved from the environment only when connecting;
    the unresolved form is what reaches manifests and logs.

    A stdio server with ``template_dir`` (or ``cwd``) runs in a fresh copy of that directory (per
    session under process isolation); ``${SESSION_DIR}`` in ``args`` and ``env`` names the copy, and
    the original is never written. ``setup`` calls run at the start of every session (and after
    every reset); their arguments may use ``${secret:NAME}``. ``known_values`` are values the user knows, by the
    parameter they fill (``{repo_path: repo}``, a project's name; a list for several; ``${VAR}`` read from the
    environment): the probe calls tools with them and requests state them, as values found in the server's state
    are. ``time_budget_s`` bounds the time a
    build spends on the server's stages; past it the server's partition ends with a rejection. ``domain``: the
    service's words (the reasons its users give, its nouns as they say them: :mod:`pipeline.core.domain`); a
    built-in server's own ``domain.yaml`` serves when none is given.
    """

    model_config = {"extra": "forbid"}

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    kind: Literal["builtin", "stdio", "http"] = "builtin"
    builtin: str | None = None
    transport: Literal["inprocess", "stdio", "http"] = "inprocess"
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    template_dir: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    isolation: Literal["meta", "process", "none"] | None = None
    probe_allowlist: list[str] = []
    reset_tool: str | None = None
    state_tool: str | None = None
    timeout_s: float = Field(default=30.0, gt=0)
    start_timeout_s: float | None = Field(default=None, gt=0)
    secrets: dict[str, str] = {}
    known_values: dict[str, str | int | float | list[str | int | float]] = {}
    setup: list[SetupCall] = []
    time_budget_s: float = Field(default=1800.0, gt=0)
    domain: Domain | None = None

    @property
    def start_timeout(self) -> float:
        """Seconds the server may take to start and answer the handshake (``start_timeout_s``, else ``timeout_s``)."""
        return self.start_timeout_s if self.start_timeout_s is not None else self.timeout_s

    @model_validator(mode="after")
    def _check(self) -> ServerConfig:
        if self.kind == "builtin":
            from_name = self.builtin or self.name
            self.builtin = from_name
            if self.isolation is None:
                self.isolation = "meta"
        elif self.kind == "stdio":
            if not self.command:
                raise ValueError(f"server {self.name!r}: a stdio server needs 'command'")
            if self.isolation is None:
                self.isolation = "process"
        elif self.kind == "http":
            if not self.url or not re.match(r"^https?://", self.url):
                raise ValueError(
                    f"server {self.name!r}: an http server needs 'url' starting with http:// or https://, got "
                    f"{self.url!r}"
                )
            if self.isolation is None:
                self.isolation = "none"
            if self.isolation == "process":
                raise ValueError(
                    f"server {self.name!r}: isolation 'process' needs a stdio server; use 'none' with "
                    f"reset_tool for http"
                )
        if self.kind != "stdio" and (self.template_dir or self.cwd):
            raise ValueError(f"server {self.name!r}: cwd and template_dir apply to stdio servers only")
        for call in self.setup:
            for ref in _SECRET_REF.findall(json.dumps(call.arguments)):
                if ref not in self.secrets:
                    raise ValueError(
                        f"server {self.name!r}: setup call {call.tool} uses ${{secret:{ref}}}, "
                        f"but 'secrets' has no {ref!r}"
                    )
        return self

    @property
    def builtin_name(self) -> str:
        return self.builtin or self.name

    @classmethod
    def for_builtin(cls, name: str, transport: str = "inprocess") -> ServerConfig:
        return cls(name=name, kind="builtin", transport=transport)  # type: ignore[arg-type]

    def resolved_env(self, session_dir: str | None = None) -> dict[str, str]:
        known = {"SESSION_DIR": session_dir} if session_dir else None
        return {k: _expand(v, f"server {self.name!r} env {k}", known) for k, v in self.env.items()}

    def resolved_args(self, session_dir: str | None = None) -> list[str]:
        """``args`` with ``${SESSION_DIR}`` and ``${VAR}`` (from the environment) replaced."""
        known = {"SESSION_DIR": session_dir} if session_dir else None
        return [_expand(a, f"server {self.name!r} args[{i}]", known) for i, a in enumerate(self.args)]

    def resolved_command(self) -> str:
        """``command`` with ``${VAR}`` (from the environment) replaced: a server installed under a folder you name."""
        return _expand(self.command or "", f"server {self.name!r} command")

    def resolved_headers(self) -> dict[str, str]:
        return {k: _expand(v, f"server {self.name!r} header {k}") for k, v in self.headers.items()}

    def resolved_secrets(self) -> dict[str, str]:
        return {k: _expand(v, f"server {self.name!r} secret {k}") for k, v in self.secrets.items()}

    def resolved_known_values(self) -> dict[str, list[Any]]:
        """``known_values`` as lists, ``${VAR}`` in strings read from the environment, parameters in sorted order."""
        out: dict[str, list[Any]] = {}
        for p in sorted(self.known_values):
            v = self.known_values[p]
            out[p] = [
                _expand(x, f"server {self.name!r} known value {p}") if isinstance(x, str) else x
                for x in (v if isinstance(v, list) else [v])
            ]
        return out

    def resolved_setup_arguments(self, call: SetupCall) -> dict[str, Any]:
        """A setup call's arguments with ``${secret:NAME}`` resolved (for sending only; never recorded)."""
        if not _SECRET_REF.search(json.dumps(call.arguments)):
            return call.arguments
        secrets = self.resolved_secrets()

        def walk(v: Any) -> Any:
            if isinstance(v, str):
                return _SECRET_REF.sub(lambda m: secrets[m.group(1)], v)
            if isinstance(v, dict):
                return {k: walk(x) for k, x in v.items()}
            if isinstance(v, list):
                return [walk(x) for x in v]
            return v

        return walk(call.arguments)

    def public(self) -> dict[str, Any]:
        """The config as it may be written to manifests: secrets stay as ``${VAR}`` references."""
        return self.model_dump(mode="json")


class StageConfig(BaseModel):
    """A stage's parameters. An unknown key is an error that names it (a typo is never ignored)."""

    model_config = ConfigDict(extra="forbid")


class ProbeConfig(StageConfig):
    max_calls: int = 120
    max_values_per_field: int = 40
    # per entity kind (id prefix or field name), minimum values for numeric fields, e.g. {"account": {"balance": 0.01}}
    support: dict[str, dict[str, float]] = {}
    exclude_status: list[str] = ["closed", "deleted", "archived", "cancelled", "inactive", "suspended", "disabled"]
    # boolean fields that, when true, leave an entity without support (an archived channel takes no members)
    exclude_flags: list[str] = ["is_archived", "archived", "is_deleted", "deleted"]
    # conversations per sampled context: every k conversations the context is refreshed by probing the
    # next world seed (built-in servers; a third-party server has one world). 0 keeps one context.
    refresh_every: int = Field(default=200, ge=0)


class GraphConfig(StageConfig):
    confirm_live: bool = True
    implicit: bool = True
    # tools without an output schema: a value of their live result that another tool accepts is an edge
    value_flow: bool = True
    llm: bool = False
    cache_dir: str | None = None


class ChainConfig(StageConfig):
    min_len: int = Field(default=2, ge=1)
    max_len: int = Field(default=5, ge=1)
    per_server: int = Field(default=60, ge=1)
    # chains generated per multi-turn example needed: replay, dedup and the information-level selection
    # keep about 60-75% of them on the built-in servers, so 2x leaves a margin without simulating work
    # thrown away (:func:`pipeline.core.composition.Composition.per_server_target`)
    oversample: float = Field(default=2.0, gt=0)
    # share of the chains with a closing step made a deliberate error case: the closing step is put before the last
    # write, so that write may work on what was closed (close a listing, then bid on it: the call fails and the
    # assistant says so). Elsewhere such a chain is rejected, and an undo-then-redo (the later write succeeds)
    # never is kept (pipeline/discovery/goals.py)
    closed_entity_rate: float = Field(default=0.02, ge=0, le=1)

    @model_validator(mode="after")
    def _range(self) -> ChainConfig:
        if self.max_len < self.min_len:
            raise ValueError(f"chains.max_len ({self.max_len}) is below chains.min_len ({self.min_len})")
        return self


class QueryConfig(StageConfig):
    backend: Literal["template", "llm"] = "template"
    reference_date: str = REFERENCE_DAY  # the day the built-in worlds call today (servers/clock.py)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str = "OPENAI_API_KEY"
    llm_timeout_s: float = 60.0
    llm_retries: int = 3
    # requests in flight to the teacher at once, for the whole build: partitions run at the same time share it
    # equally (each of N gets max_concurrency // N, at least 1)
    max_concurrency: int = Field(default=32, ge=1)
    # the share of a stage's teacher requests that may fail (after their retries) before the partition fails
    llm_error_budget: float = Field(default=0.05, ge=0, le=1)
    cache_dir: str | None = None


class SimulateConfig(StageConfig):
    # the information-level shares of the multi-turn examples (:mod:`pipeline.core.composition`)
    complete: float = 0.6
    missing: float = 0.2
    minimal: float = 0.2
    # generation weights over those shares: the missing and minimal levels lose more requests to
    # rejection (not every first step has a value to withhold), so the query stage plans more of them
    # and the final selection can still meet the shares exactly
    missing_oversample: float = Field(default=1.3, gt=0)
    minimal_oversample: float = Field(default=1.15, gt=0)
    min_turns: int = 2
    max_turns: int = 3
    # share of calls preceded by a wrong first attempt the assistant corrects (within the replay's error budget)
    recovery_rate: float = Field(default=0.15, ge=0, le=1)

    @field_validator("complete", "missing", "minimal")
    @classmethod
    def _frac(cls, v: float) -> float:
        if not 0 <= v <= 1:
            raise ValueError(f"information level share must be within [0, 1], got {v}")
        return v


class ReplayConfig(StageConfig):
    max_error_rate: float = 0.30
    check_sensitive: bool = True
    determinism_runs: int = 2


class DedupConfig(StageConfig):
    threshold: float = 0.70
    num_perm: int = 128  # MinHash permutations, for bench/dedup.py's LSH comparison (the build's dedup is exact)
    include_args: bool = False
    exact_check_sample: int = 200  # bench/dedup.py's recall_check sample (the build no longer runs it)


class AugmentConfig(StageConfig):
    distractor_rate: float = 0.40
    distractor_min: int = 3
    distractor_max: int = 8
    enum_strip_rate: float = 0.30
    irrelevance_rate: float = 0.05
    missing_function_rate: float = 0.08
    abstention_rate: float = 0.05
    import_files: list[str] = []


class CorpusConfig(StageConfig):
    eval_fraction: float = 0.1
    # the license the version's dataset card declares (a Hugging Face license id)
    license: str = "cc-by-4.0"


class LintConfig(StageConfig):
    """Thresholds of the corpus linter (``pipeline/corpus/lint.py``)."""

    # a user turn sharing a run of this many words with an offered tool's description repeats its documentation
    description_ngram: int = Field(default=6, ge=2)
    # share of distinct request frames (first user turns, values masked) among examples with tool calls
    min_distinct_frames: float = Field(default=0.5, ge=0, le=1)
    # share of user turns in those examples whose first four words occur nowhere else in the corpus
    min_unique_openings: float = Field(default=0.30, ge=0, le=1)
    # openings are compared among the first this many examples by id (a hash, so a fair sample): the chance that
    # two turns open alike grows with the corpus, so a share over all 13,500 would not mean what it means at 200
    openings_sample: int = Field(default=3000, ge=1)
    # a value no example explains, in the wrong first attempts of this many examples, is a generator's constant
    filler_repeats: int = Field(default=3, ge=2)


def default_servers() -> list[str]:
    """Every built-in server present in ``servers/``."""
    from servers.registry import available  # deferred: it imports mcp's server side, which reading a config never needs

    return available()


class DeploymentConfig(StageConfig):
    """Where a build's steps run (docs/scale-out.md); nothing here changes what a build writes. The storage root,
    where everything that outlives a step is kept, is the build's ``data_dir``: on several machines, a folder each of
    them mounts at the same path (a JuiceFS mount, say)."""

    # in_process: each run in the calling process (the default, and the fastest on one machine); multiprocess:
    # each step of a run in its own process on this machine; celery: each step a Celery task, run by any worker
    executor: Literal["in_process", "multiprocess", "celery"] = "in_process"
    # multiprocess: how many steps of one run at once (0: one per core)
    max_concurrent: int = Field(default=0, ge=0)
    # celery: the broker the workers listen to and the results backend (default: the broker), e.g. redis://host:6379/0
    broker: str | None = None
    backend: str | None = None
    # celery: how many steps the workers run at once, all of them together (the sum of their --concurrency): the
    # teacher's query.max_concurrency is split between them, so the build keeps at most max_concurrency requests in
    # flight however many workers run it. 0: counted at the build's start (the workers that answer Celery's ping)
    workers: int = Field(default=0, ge=0)
    # celery: seconds the broker may take to answer (at the build's start, and each connection or publish after it)
    broker_timeout_s: float = Field(default=10.0, gt=0)
    # celery: a run that fails without a failed step (its step's worker was killed or lost) is re-executed from
    # its failure this many times (Dagster's re-execution from failure); a step that fails itself is not retried
    run_retries: int = Field(default=1, ge=0)

    @property
    def steps_at_once(self) -> int:
        """How many steps of the build may ask the teacher at the same time: the Celery workers' slots, else 1."""
        return max(1, self.workers) if self.executor == "celery" else 1

    @model_validator(mode="after")
    def _celery_needs_a_broker(self) -> DeploymentConfig:
        if self.executor == "celery" and not self.broker:
            raise ValueError("executor 'celery' needs a broker (deployment.broker, e.g. redis://host:6379/0)")
        return self


class BuildConfig(StageConfig):
    """Everything one corpus build depends on."""

    examples: int = Field(default=200, ge=1)
    servers: list[str] = Field(default_factory=lambda: default_servers())
    seed: int = 7
    data_dir: str = "data"
    probe: ProbeConfig = ProbeConfig()
    graph: GraphConfig = GraphConfig()
    chains: ChainConfig = ChainConfig()
    query: QueryConfig = QueryConfig()
    simulate: SimulateConfig = SimulateConfig()
    replay: ReplayConfig = ReplayConfig()
    dedup: DedupConfig = DedupConfig()
    augment: AugmentConfig = AugmentConfig()
    corpus: CorpusConfig = CorpusConfig()
    lint: LintConfig = LintConfig()
    server_configs: list[ServerConfig] = []
    deployment: DeploymentConfig = DeploymentConfig()
    # servers whose per-server stages failed (crashed, hung, unreachable): name -> why; they are
    # left out of the corpus and recorded as rejections, and the build goes on with the others
    unavailable_servers: dict[str, str] = {}

    @field_validator("data_dir")
    @classmethod
    def _a_folder(cls, v: str) -> str:
        if "://" in v:
            raise ValueError(
                f"data_dir must be a folder, not a URL ({v!r}): to keep the data on object storage, mount the bucket "
                "as a folder (a JuiceFS mount; docs/scale-out.md) and name that folder"
            )
        return v

    def server_config(self, name: str) -> ServerConfig:
        for c in self.server_configs:
            if c.name == name:
                return c
        return ServerConfig.for_builtin(name)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)
