"""What a build on Celery workers checks before its first run, and the Celery settings that bound its waits on the
broker (docs/scale-out.md, "Faults"): the storage root exists and takes a file (:func:`check_storage_root`), the
broker answers within ``deployment.broker_timeout_s``, and at least one worker answers Celery's ping; the workers'
slots (their pools' sizes, as Celery's ``inspect stats`` reports them) are what the teacher's ``max_concurrency``
is split between when the build file does not say (``deployment.workers: 0``)."""

from __future__ import annotations

from typing import Any

from pipeline.core.config import BuildConfig
from pipeline.core.storage import check_storage_root

PING_TIMEOUT_S = 2.0  # how long the build waits for the workers to answer Celery's ping (and report their pools)


class ClusterUnavailable(RuntimeError):
    """The broker or the workers of a build on Celery did not answer."""


def celery_settings(cfg: BuildConfig) -> dict[str, Any]:
    """Celery's settings for the app that sends a run's steps and waits for their results (the executor's
    ``config_source``): every connection to the broker and every read of a result gives up after
    ``deployment.broker_timeout_s`` (Celery's defaults retry a lost broker 100 times, and a result read waits
    120 s a try), so a broker that goes away fails the run instead of holding it."""
    t = cfg.deployment.broker_timeout_s
    return {
        "broker_connection_timeout": t,
        "broker_connection_retry": True,
        "broker_connection_max_retries": 3,
        "broker_transport_options": {"socket_timeout": t, "socket_connect_timeout": t},
        "task_publish_retry_policy": {"max_retries": 3, "interval_start": 0, "interval_step": t / 6, "interval_max": t},
        "redis_socket_timeout": t,
        "redis_socket_connect_timeout": t,
        "result_backend_transport_options": {"retry_policy": {"timeout": t}},
    }


def celery_app(cfg: BuildConfig) -> Any:
    """dagster-celery's app as its executor makes it for a run of ``cfg`` (its broker, backend and settings)."""
    # deferred: dagster-celery is the optional distributed extra, needed only by a build on Celery
    from dagster_celery.make_app import make_app

    d = cfg.deployment
    return make_app({"broker": d.broker, "backend": d.backend or d.broker, "config_source": celery_settings(cfg)})


def worker_slots(cfg: BuildConfig) -> int:
    """How many steps the workers listening on the broker run at once (the sum of their pools' sizes); a
    :class:`ClusterUnavailable` naming the broker if it does not answer within ``deployment.broker_timeout_s``
    or no worker answers."""
    d = cfg.deployment
    app = celery_app(cfg)
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=d.broker_timeout_s)
        stats = app.control.inspect(timeout=PING_TIMEOUT_S).stats() or {}
    except Exception as exc:  # kombu's OperationalError, redis' ConnectionError, a timeout
        raise ClusterUnavailable(
            f"the Celery broker {d.broker} did not answer within {d.broker_timeout_s:g} s "
            f"(deployment.broker_timeout_s): {type(exc).__name__}: {exc}"
        ) from None
    finally:
        app.close()
    if not stats:
        raise ClusterUnavailable(
            f"no Celery worker answered on the broker {d.broker} within {PING_TIMEOUT_S:g} s: start the workers "
            "(docs/scale-out.md) before the build"
        )
    return sum(int((s.get("pool") or {}).get("max-concurrency") or 1) for s in stats.values())


def prepared(cfg: BuildConfig) -> BuildConfig:
    """A build on Celery checked before its first run: its storage root (:func:`check_storage_root`), its broker
    and its workers (:func:`worker_slots`); ``deployment.workers`` set to the workers' slots when the build file
    left it at 0. Other deployments (on this machine) are returned as they are."""
    if cfg.deployment.executor != "celery":
        return cfg
    check_storage_root(cfg.data_path)
    slots = worker_slots(cfg)
    if cfg.deployment.workers:
        return cfg
    return cfg.model_copy(update={"deployment": cfg.deployment.model_copy(update={"workers": slots})})
