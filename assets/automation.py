"""Jobs, the weekly regeneration schedule and the schema-change sensor."""

import json
import os
from typing import Any

import dagster as dg

from assets.corpus import CORPUS
from assets.resources import ProveSettings, server_partitions
from assets.synthesis import PER_SERVER
from assets.training import grpo_policy
from pipeline.core.config import BuildConfig
from pipeline.core.records import schema_hash
from pipeline.core.servers_file import usable_tools
from pipeline.env import Environment

CROSS = [*CORPUS, grpo_policy]

# Steps run in processes forked from one that has already imported the definitions (the multiprocess
# executor's forkserver start method with preloaded modules) instead of spawned processes that each
# import them again (about 1 s less for a server's run of six steps; bench/parallel.py configures its job the same way).
FORKED_STEPS = {
    "execution": {
        "config": {"multiprocess": {"start_method": {"forkserver": {"preload_modules": ["assets.definitions"]}}}}
    }
}


def asset_jobs(per_server: list[dg.AssetsDefinition], cross: list[dg.AssetsDefinition]) -> tuple[Any, Any]:
    """The two jobs over the given assets: ``server_job`` (one run per server partition: probe -> replay for that
    server) and ``corpus_job`` (dedup -> corpus -> policy). The schedule and the sensor target them by name."""
    server = dg.define_asset_job(
        "server_job",
        selection=dg.AssetSelection.assets(*per_server),
        partitions_def=server_partitions,
        config=FORKED_STEPS,
        description="One server's partition: probe, dependency graph, chains, requests, conversations, replay.",
    )
    corpus = dg.define_asset_job(
        "corpus_job",
        selection=dg.AssetSelection.assets(*cross),
        config=FORKED_STEPS,
        description="Over every server's latest outputs: dedup, augmentation, rejections, a new corpus version and "
        "its quality gates, then the policy.",
    )
    return server, corpus


server_job, corpus_job = asset_jobs(PER_SERVER, CROSS)

DEFAULT_CRON = "0 3 * * 1"  # Mondays 03:00


def regeneration_schedule(cron: str | None = None, timezone: str | None = None) -> dg.ScheduleDefinition:
    """The corpus regeneration schedule; cron from ``PROVE_SCHEDULE_CRON`` (default weekly), off until turned on."""
    return dg.ScheduleDefinition(
        name="weekly_regeneration",
        job_name="corpus_job",
        cron_schedule=cron or os.environ.get("PROVE_SCHEDULE_CRON") or DEFAULT_CRON,
        execution_timezone=timezone or os.environ.get("PROVE_SCHEDULE_TIMEZONE") or "UTC",
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description="Regenerates the corpus from the latest per-server outputs.",
    )


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
def schema_change_sensor(context: dg.SensorEvaluationContext, settings: ProveSettings):
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
                    tags={"prove/trigger": "schema_change", "prove/schema_hash": h},
                )
            )
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
