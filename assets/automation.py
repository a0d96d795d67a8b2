"""Jobs, the weekly regeneration schedule, the schema-change sensor, and the sensor that follows both to the corpus.

What the automation runs is the build the team chose (``assets/automated_build.py``: ``$PROVE_AUTOMATION``), in
every run's config. A change reaches the corpus by itself: the schedule re-probes every server of the build (one
``server_job`` run per server) and the schema-change sensor launches the changed servers' runs, each batch of runs
tagged ``prove/batch``; when a batch has finished (and one of its runs succeeded), ``corpus_after_changes`` launches
``corpus_job`` on it, with training as the automation file says (``train``)."""

import json
import os
from typing import Any

import dagster as dg

from assets.automated_build import AutomatedBuild, automated_build
from assets.corpus import CORPUS
from assets.executors import executor_def, steps_elsewhere
from assets.resources import ProveSettings, ensure_partitions, server_partitions
from assets.synthesis import PER_SERVER
from assets.training import TrainingSettings, grpo_policy, policy_eval
from pipeline.core.config import BuildConfig
from pipeline.core.records import schema_hash, stable_hash
from pipeline.core.servers_file import usable_tools
from pipeline.env import Environment

CROSS = [*CORPUS, grpo_policy, policy_eval]


def asset_jobs(
    per_server: list[dg.AssetsDefinition],
    cross: list[dg.AssetsDefinition],
    build: AutomatedBuild | None = None,
    launchpad: bool = True,
) -> tuple[Any, Any]:
    """The two jobs over the given assets: ``server_job`` (one run per server partition: probe -> replay for that
    server) and ``corpus_job`` (dedup -> corpus -> policy). The schedule and the sensors target them by name. Their
    launchpads start from ``build`` (default: the automated build), typed, and their steps run as ``prove build``
    runs them (:func:`run_executor`); ``launchpad=False`` gives them no default config and no executor of their
    own (``prove build`` runs them with its own build's resources, which a default would override)."""
    build = build or AUTOMATED
    executor = run_executor(build.config) if launchpad else None
    config = build.run_config() if launchpad else None
    server = dg.define_asset_job(
        "server_job",
        selection=dg.AssetSelection.assets(*per_server),
        partitions_def=server_partitions,
        config=config,
        executor_def=executor,
        description="One server's partition: probe, dependency graph, chains, requests, conversations, replay.",
    )
    corpus = dg.define_asset_job(
        "corpus_job",
        selection=dg.AssetSelection.assets(*cross),
        config=config,
        executor_def=executor,
        description="Over every server's latest outputs: dedup, augmentation, rejections, a new corpus version and "
        "its quality gates, then the policy.",
    )
    return server, corpus


def run_executor(cfg: BuildConfig) -> dg.ExecutorDefinition:
    """The executor of a run the UI, the schedule or the sensors launch, as ``prove build`` runs its steps: in the
    run's own process (Dagster's ``in_process_executor``) when the build's deployment says ``in_process`` (the
    default; a step spawned as a process of its own paid seconds of start-up each), else the deployment's
    executor (each step its own process, or a Celery task), configured in the run's config
    (:meth:`AutomatedBuild.run_config`)."""
    return executor_def(cfg.deployment.executor) if steps_elsewhere(cfg) else dg.in_process_executor


AUTOMATED = automated_build()
server_job, corpus_job = asset_jobs(PER_SERVER, CROSS)

DEFAULT_CRON = "0 3 * * 1"  # Mondays 03:00


def _batch(trigger: str, stamp: str, n: int) -> dict[str, str]:
    """The tags of one batch of automated server runs, which ``corpus_after_changes`` follows to the corpus."""
    return {"prove/automation": "true", "prove/trigger": trigger, "prove/batch": f"{trigger}:{stamp}",
            "prove/batch_size": str(n)}  # fmt: skip


def _server(server: str) -> dict[str, str]:
    """The tag naming a run request's server, beside the partition tag (``dagster/partition``) Dagster adds: the tick
    preview lists each request by its job alone (``server_job``) and shows its tags in the request's preview, above
    its config; the runs list shows them too."""
    return {"prove/server": server}


def regeneration_schedule(cron: str | None = None, timezone: str | None = None) -> dg.ScheduleDefinition:
    """The corpus regeneration schedule; cron from ``PROVE_SCHEDULE_CRON`` (default weekly), off until turned on.
    Each tick re-probes every server of the automated build (a ``server_job`` run each, with that build's config);
    ``corpus_after_changes`` then makes the corpus from them."""

    @dg.schedule(
        name="weekly_regeneration",
        job_name="server_job",
        cron_schedule=cron or os.environ.get("PROVE_SCHEDULE_CRON") or DEFAULT_CRON,
        execution_timezone=timezone or os.environ.get("PROVE_SCHEDULE_TIMEZONE") or "UTC",
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description="Rebuilds the automated build: every server re-probed (a server_job run each), then the corpus "
        "(corpus_after_changes).",
    )
    def weekly_regeneration(context: dg.ScheduleEvaluationContext, settings: ProveSettings, training: TrainingSettings):
        cfg = settings.build_config()
        build = AutomatedBuild(cfg, training.train, "resources")
        if context.instance is not None:
            ensure_partitions(context.instance, list(cfg.servers))
        when = context.scheduled_execution_time
        stamp = when.strftime("%Y%m%dT%H%M") if when is not None else "now"
        tags = _batch("regeneration", stamp, len(cfg.servers))
        return [
            dg.RunRequest(
                run_key=f"{tags['prove/batch']}:{s}",
                partition_key=s,
                run_config=build.run_config(),
                tags={**tags, **_server(s)},
            )
            for s in cfg.servers
        ]

    return weekly_regeneration


weekly_regeneration = regeneration_schedule()


def server_schema_hash(cfg: BuildConfig, server: str) -> str:
    """The hash of the tools a server offers the pipeline now (what ``server_snapshots`` reports as its data
    version)."""
    sc = cfg.server_config(server)
    with Environment(sc) as env:
        tools, _ = usable_tools(sc, env.tools())
    return schema_hash(tools)


def _last_snapshot_hash(instance: dg.DagsterInstance, server: str) -> str | None:
    rec = instance.get_latest_data_version_record(dg.AssetKey("server_snapshots"), partition_key=server)
    mat = rec.asset_materialization if rec is not None else None
    return mat.tags.get("dagster/data_version") if mat is not None and mat.tags else None


@dg.sensor(
    job_name="server_job",
    minimum_interval_seconds=int(os.environ.get("PROVE_SENSOR_INTERVAL_S", "3600")),
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Connects to every configured server; when a server's tool schema hash changes, re-runs its partition.",
)
def schema_change_sensor(context: dg.SensorEvaluationContext, settings: ProveSettings, training: TrainingSettings):
    """Cursor: JSON ``{server: last seen schema hash}``. A server not in the cursor is compared with the
    data version of its latest ``server_snapshots`` materialization (requested when it has none)."""
    cfg = settings.build_config()
    try:
        seen: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    except ValueError:
        seen = {}
    current = dict(seen)
    requests: list[dg.RunRequest] = []
    unreachable: dict[str, str] = {}
    for server in cfg.servers:
        try:
            h = server_schema_hash(cfg, server)
        except Exception as exc:  # an unreachable server keeps its last hash and is tried again next tick
            unreachable[server] = f"{type(exc).__name__}: {exc}"
            continue
        last = seen.get(server) or (_last_snapshot_hash(context.instance, server) if _has_instance(context) else None)
        current[server] = h
        if h != last:
            context.log.info(f"{server}: schema hash {last} -> {h}")
            requests.append(
                dg.RunRequest(
                    run_key=f"{server}:{last}->{h}",
                    partition_key=server,
                    run_config=AutomatedBuild(cfg, training.train, "resources").run_config(),
                    tags={"prove/schema_hash": h, **_server(server)},
                )
            )
    # one batch: the corpus follows once every changed server's run has finished
    stamp = stable_hash(sorted((r.partition_key, r.tags["prove/schema_hash"]) for r in requests), 12)
    requests = [
        r.with_replaced_attrs(tags={**r.tags, **_batch("schema_change", stamp, len(requests))}) for r in requests
    ]
    have = set(context.instance.get_dynamic_partitions("servers")) if _has_instance(context) else set()
    missing = [r.partition_key for r in requests if r.partition_key not in have]
    cursor = json.dumps(current, sort_keys=True)
    if requests:
        return dg.SensorResult(
            run_requests=requests,
            cursor=cursor,
            dynamic_partitions_requests=[server_partitions.build_add_request(missing)] if missing else None,
        )
    why = "no server's tool schema changed" + (f"; unreachable: {unreachable}" if unreachable else "")
    return dg.SensorResult(skip_reason=dg.SkipReason(why), cursor=cursor)


def _has_instance(context: dg.SensorEvaluationContext) -> bool:
    try:
        return context.instance is not None
    except Exception:  # a context built without an instance raises on access
        return False


FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


@dg.sensor(
    job_name="corpus_job",
    minimum_interval_seconds=int(os.environ.get("PROVE_FOLLOW_INTERVAL_S", "30")),
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="When a batch of automated server runs (the schedule's, or the schema-change sensor's) has finished "
    "and one succeeded, makes the corpus from them (and trains the policy if the automation file says train).",
)
def corpus_after_changes(context: dg.SensorEvaluationContext, settings: ProveSettings, training: TrainingSettings):
    batches: dict[str, list[dg.DagsterRun]] = {}
    for run in context.instance.get_runs(
        filters=dg.RunsFilter(job_name="server_job", tags={"prove/automation": "true"}), limit=1000
    ):
        batches.setdefault(run.tags["prove/batch"], []).append(run)
    followed = {
        r.tags.get("prove/batch")
        for r in context.instance.get_runs(
            filters=dg.RunsFilter(job_name="corpus_job", tags={"prove/automation": "true"}), limit=1000
        )
    }
    build = AutomatedBuild(settings.build_config(), training.train, "resources")
    requests, waiting = [], []
    for batch, runs in sorted(batches.items()):
        if batch in followed:
            continue
        if len(runs) < int(runs[0].tags.get("prove/batch_size", len(runs))) or any(
            r.status not in FINISHED for r in runs
        ):
            waiting.append(batch)
            continue
        if not any(r.status == dg.DagsterRunStatus.SUCCESS for r in runs):
            continue
        # the batch's runs carry the build they ran and whether training follows (the automation file's train)
        config = dict(runs[0].run_config) or build.run_config()
        tags = {k: runs[0].tags[k] for k in ("prove/automation", "prove/trigger", "prove/batch")}
        requests.append(dg.RunRequest(run_key=f"corpus:{batch}", run_config=config, tags=tags))
    if requests:
        return requests
    return dg.SkipReason("no finished batch of automated server runs" + (f"; waiting for {waiting}" if waiting else ""))
