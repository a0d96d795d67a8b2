"""What a build on Celery workers checks before its first run, and the Celery settings that bound its waits on the
broker (docs/scale-out.md, "Faults"): the storage root exists and takes a file (:func:`check_storage_root`), the
broker answers within ``deployment.broker_timeout_s``, and at least one worker answers Celery's ping; the workers'
slots (their pools' sizes, as Celery's ``inspect stats`` reports them) are what the teacher's ``max_concurrency``
is split between when the build file does not say (``deployment.workers: 0``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
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


def asked_twice(ask: Any) -> Any:
    """``ask()``, once more if the broker's connection it took had gone stale (a broker restarted since this process
    last used it: redis-py finds out on the first read, and drops the connection)."""
    try:
        return ask()
    except Exception:  # redis' ConnectionError on the stale connection; a second failure is the broker's
        return ask()


def worker_slots(cfg: BuildConfig) -> int:
    """How many steps the workers listening on the broker run at once (the sum of their pools' sizes); a
    :class:`ClusterUnavailable` naming the broker if it does not answer within ``deployment.broker_timeout_s``
    or no worker answers."""
    d = cfg.deployment
    app = celery_app(cfg)
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=d.broker_timeout_s)
        stats = asked_twice(lambda: app.control.inspect(timeout=PING_TIMEOUT_S).stats()) or {}
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


class InstanceUnavailable(RuntimeError):
    """The database of the Dagster instance did not answer (dagster-postgres gave up retrying)."""


# the errors of a lost broker, as the run's failure names their classes (redis-py's, kombu's, the socket's)
BROKER_ERRORS = ("ConnectionError", "TimeoutError", "OperationalError", "ConnectionRefusedError", "BrokenPipeError")


def failure_chain(result: Any) -> list[Any]:
    """The run's failure (its RUN_FAILURE event's error) and its causes, outermost first; empty when it succeeded."""
    chain = []
    for ev in [] if result.success else result.all_events:
        if ev.event_type_value == "PIPELINE_FAILURE" and ev.event_specific_data is not None:
            err = getattr(ev.event_specific_data, "error", None)
            while err is not None:
                chain.append(err)
                err = err.cause or err.context
    return chain


def broker_lost(cfg: BuildConfig, result: Any) -> None:
    """A :class:`ClusterUnavailable` naming the broker when ``result``'s run failed because the broker stopped
    answering (Celery gave up after ``deployment.broker_timeout_s``: :func:`celery_settings`)."""
    for err in failure_chain(result):
        if err.cls_name in BROKER_ERRORS:
            d = cfg.deployment
            raise ClusterUnavailable(
                f"the Celery broker {d.broker} stopped answering during Dagster run {result.run_id} (gave up after "
                f"{d.broker_timeout_s:g} s, deployment.broker_timeout_s): {err.cls_name}: "
                f"{err.message.strip().splitlines()[-1][:300]}. Start it and build again: the steps that finished "
                "are kept"
            )


@contextlib.contextmanager
def instance_lost(instance: Any) -> Iterator[None]:
    """An :class:`InstanceUnavailable` naming the instance's database when a write to it failed for good, or when the
    database dropped a connection during a query (a stop or a restart of PostgreSQL ends its sessions)."""
    try:
        yield
    except Exception as exc:
        chain = []
        e: BaseException | None = exc
        while e is not None:
            chain.append(e)
            e = e.__cause__ or e.__context__
        if any(type(c).__name__ == "DagsterPostgresException" for c in chain):
            raise InstanceUnavailable(
                f"the Dagster instance's database {database_url(instance)} did not answer: dagster-postgres retried "
                f"its connection 5 times over about 6 s ({type(exc).__name__}: {exc}). Start it and build again"
            ) from exc
        # SQLAlchemy marks an error as the connection's loss (its dialect's disconnect test: "server closed the
        # connection unexpectedly", "terminating connection due to administrator command"); dagster-postgres retries
        # making a connection, not a query on one the server ended
        cut = next((c for c in chain if getattr(c, "connection_invalidated", False)), None)
        if cut is None:
            raise
        said = " ".join(str(getattr(cut, "orig", None) or cut).split())[:300]
        raise InstanceUnavailable(
            f"the Dagster instance's database {database_url(instance)} did not answer: it ended the connection during "
            f"a query ({type(cut).__name__}: {said}). Start it and build again"
        ) from exc


def database_url(instance: Any) -> str:
    """The instance's PostgreSQL URL without its password."""
    url = getattr(instance.run_storage, "postgres_url", None)
    if not url:
        return "(not PostgreSQL)"
    # deferred: SQLAlchemy comes with Dagster's storage; only a build whose instance failed needs it here
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
