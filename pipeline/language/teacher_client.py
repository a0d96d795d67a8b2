"""The teacher's client: completions from any OpenAI-compatible endpoint (vLLM, Ollama, a hosted API), cached on
disk by prompt hash, many in flight at once, with accounting.

How a stage keeps many requests in flight without depending on the order answers arrive
(:func:`prefetched`): the stage runs once *collecting* (every prompt it would send whose answer is not cached is
recorded, and answered with :class:`AnswerPending`, which the stage treats as a failed answer), then
:meth:`TeacherClient.fetch` sends the recorded prompts, ``max_concurrency`` at a time, into the cache, then the
stage runs again and every answer is a cache hit. No teacher prompt depends on an earlier answer (each chain's
request is written from its own dry run and seeded draft; each reply from its turn's live results), so the second
run sends nothing, and its output is the same bytes whatever the concurrency or the order answers came back in.

The cache (``<data>/cache/llm/<hash>.json``, written atomically) is shared by concurrent writers and by runs: a
killed build started again re-uses every answer already received.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

from pipeline.core.config import QueryConfig
from pipeline.core.records import stable_hash
from pipeline.core.storage import atomic_write_text

T = TypeVar("T")
FetchProgress = Callable[[int, int, int, float], None]
RETRY_AFTER_CAP_S = 120.0  # a Retry-After longer than this is waited for this long, then tried again
BACKOFF_BASE_S = 0.25
BACKOFF_CAP_S = 8.0


class AnswerPending(RuntimeError):
    """The answer to a prompt is not cached yet (a collecting run): the prompt is recorded to be fetched."""


class TeacherUnavailable(RuntimeError):
    """The endpoint answered too few requests: the partition fails with this message instead of going on."""


@dataclass
class TeacherUsage:
    """What the teacher cost: requests sent (retries included), answers received, tokens as ``usage`` reports
    them, cache hits, seconds spent waiting on answers, the most requests in flight at once."""

    requests: int = 0
    completions: int = 0
    failures: int = 0
    retries: int = 0
    rate_limited: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    wait_s: float = 0.0
    peak_in_flight: int = 0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["wait_s"] = round(self.wait_s, 3)
        return d

    def add(self, other: dict[str, Any]) -> None:
        for k, v in other.items():
            if k == "peak_in_flight":
                self.peak_in_flight = max(self.peak_in_flight, int(v))
            elif hasattr(self, k):
                setattr(self, k, getattr(self, k) + v)


def retry_after_s(exc: BaseException) -> float | None:
    """The wait a 429 or 503 answer asks for (``Retry-After`` in seconds or an HTTP date), or None."""
    response = getattr(exc, "response", None)
    if response is None or getattr(response, "status_code", None) not in (429, 503):
        return None
    value = (getattr(response, "headers", None) or {}).get("retry-after")
    if value is None:
        return 1.0  # asked to slow down, with no figure
    try:
        return min(RETRY_AFTER_CAP_S, max(0.0, float(value)))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError):
            return 1.0
        return min(RETRY_AFTER_CAP_S, max(0.0, when - time.time()))


def backoff_s(attempt: int, rng: random.Random) -> float:
    """Exponential backoff with full jitter: a uniform wait up to ``base * 2**attempt`` (capped)."""
    return rng.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**attempt))


class RequestsFailed(RuntimeError):
    """Every try of one request failed; ``last`` is the last error."""

    def __init__(self, tries: int, last: BaseException | None):
        super().__init__(f"failed after {tries} tries: {type(last).__name__}: {last}")
        self.tries, self.last = tries, last


class AccountedRequests:
    """Requests to an OpenAI-compatible endpoint sent with retries and counted in ``usage``: a 429/503 waits as its
    ``Retry-After`` asks, other failures back off exponentially with jitter; requests, retries, failures, answers,
    tokens, time waited and the most requests in flight at once. The teacher's client and the endpoint policies of
    ``training.policies`` send through it."""

    def __init__(self, usage: TeacherUsage | None = None, lock: threading.Lock | None = None):
        self.usage = usage if usage is not None else TeacherUsage()
        self.lock = lock if lock is not None else threading.Lock()
        self.in_flight = 0
        self._jitter = random.Random()  # waits only: never what is written

    def send(self, request: Callable[[], T], tries: int) -> T:
        """``request()``'s answer (its ``usage`` counted), tried up to ``tries`` times; :class:`RequestsFailed`."""
        last: BaseException | None = None
        tries = max(1, tries)
        for attempt in range(tries):
            if attempt:
                with self.lock:
                    self.usage.retries += 1
            t0 = time.perf_counter()
            with self.lock:
                self.usage.requests += 1
                self.in_flight += 1
                self.usage.peak_in_flight = max(self.usage.peak_in_flight, self.in_flight)
            error: BaseException | None = None
            try:
                answer = request()
            except Exception as exc:  # timeouts, 429, 5xx, connection resets
                error = exc
            finally:
                with self.lock:
                    self.in_flight -= 1
                    self.usage.wait_s += time.perf_counter() - t0
            if error is not None:
                last, wait = error, retry_after_s(error)
                with self.lock:
                    self.usage.rate_limited += wait is not None
                if attempt + 1 < tries:
                    time.sleep(wait if wait is not None else backoff_s(attempt, self._jitter))
                continue
            counted = getattr(answer, "usage", None)
            with self.lock:
                self.usage.completions += 1
                self.usage.prompt_tokens += int(getattr(counted, "prompt_tokens", 0) or 0)
                self.usage.completion_tokens += int(getattr(counted, "completion_tokens", 0) or 0)
            return answer
        with self.lock:
            self.usage.failures += 1
        raise RequestsFailed(tries, last)


class TeacherClient:
    """Completions cached by prompt hash; :meth:`fetch` keeps up to ``concurrency`` requests in flight."""

    def __init__(self, cfg: QueryConfig, cache_dir: Path, client: Any | None = None, concurrency: int | None = None):
        if not cfg.llm_base_url or not cfg.llm_model:
            raise ValueError("the llm query backend needs query.llm_base_url and query.llm_model")
        self.cfg = cfg
        self.cache_dir = Path(cache_dir)
        self.concurrency = max(1, concurrency or cfg.max_concurrency)
        self._client = client
        self.usage = TeacherUsage()
        self._lock = threading.Lock()
        self._requests = AccountedRequests(self.usage, self._lock)
        self._collecting: list[str] | None = None
        self._hits_counted = True  # off while a prefetched run reads back what its fetch just wrote

    # ------------------------------------------------------------------------------------------- the endpoint
    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                base_url=self.cfg.llm_base_url,
                api_key=os.environ.get(self.cfg.llm_api_key_env, "not-needed"),
                timeout=self.cfg.llm_timeout_s,
                max_retries=0,
            )
        return self._client

    def key(self, prompt: str) -> str:
        return stable_hash([self.cfg.llm_model, prompt], 24)

    def cached(self, prompt: str) -> str | None:
        path = self.cache_dir / f"{self.key(prompt)}.json"
        try:
            return json.loads(path.read_text())["text"]
        except FileNotFoundError:
            return None

    def complete(self, prompt: str) -> str:
        """The teacher's answer to ``prompt``: from the cache, else asked now (or, while collecting, recorded and
        :class:`AnswerPending` raised)."""
        text = self.cached(prompt)
        if text is not None:
            if self._hits_counted:
                with self._lock:
                    self.usage.cache_hits += 1
            return text
        if self._collecting is not None:
            self._collecting.append(prompt)
            raise AnswerPending("the teacher's answer is fetched after this collecting run")
        return self._ask(prompt)

    def _ask(self, prompt: str) -> str:
        """One prompt sent until it is answered or its tries run out (:class:`AccountedRequests`); the answer is
        written to the cache."""

        def request() -> Any:
            resp = self.client.chat.completions.create(
                model=self.cfg.llm_model, messages=[{"role": "user", "content": prompt}], temperature=0.7
            )
            return SimpleNamespace(text=resp.choices[0].message.content or "", usage=getattr(resp, "usage", None))

        try:
            text = self._requests.send(request, self.cfg.llm_retries).text
        except RequestsFailed as exc:
            raise RuntimeError(
                f"LLM endpoint {self.cfg.llm_base_url} failed after {exc.tries} tries: {exc.last}"
            ) from None
        atomic_write_text(self.cache_dir / f"{self.key(prompt)}.json", json.dumps({"prompt": prompt, "text": text}))
        return text

    # ----------------------------------------------------------------------------------- many in flight at once
    @contextmanager
    def collecting(self) -> Iterator[list[str]]:
        """Record, instead of sending, every prompt whose answer is not cached (see the module's docstring)."""
        self._collecting = []
        try:
            yield self._collecting
        finally:
            self._collecting = None

    def fetch(self, prompts: Iterable[str], progress: FetchProgress | None = None) -> int:
        """Every prompt not yet cached sent, ``concurrency`` at a time, into the cache; how many were sent.

        ``progress(done, total, in_flight, per_s)`` after each answer (``per_s``: answers per second so far).
        More failed prompts than the error budget (``query.llm_error_budget``, a share of the prompts) raise
        :class:`TeacherUnavailable`, and so does an endpoint that answers none of the first ``concurrency``
        prompts: a dead endpoint fails within its timeouts instead of retrying every prompt."""
        todo = [p for p in dict.fromkeys(prompts) if self.cached(p) is None]
        if not todo:
            return 0
        budget = int(self.cfg.llm_error_budget * len(todo))
        state = {"done": 0, "failed": 0, "answered": 0, "last": ""}
        t0 = time.perf_counter()
        stop = threading.Event()

        def one(prompt: str) -> None:
            if stop.is_set():
                return
            try:
                self._ask(prompt)
                ok = True
            except RuntimeError as exc:
                ok, state["last"] = False, str(exc)
            with self._lock:
                state["done"] += 1
                state["answered" if ok else "failed"] += 1
                dead = state["answered"] == 0 and state["failed"] >= min(len(todo), self.concurrency)
                if state["failed"] > budget or dead:
                    stop.set()
                in_flight = self._requests.in_flight
            if progress is not None:
                progress(state["done"], len(todo), in_flight, state["answered"] / max(1e-9, time.perf_counter() - t0))

        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo)), thread_name_prefix="teacher") as pool:
            list(pool.map(one, todo))
        if stop.is_set():
            raise TeacherUnavailable(
                f"the teacher at {self.cfg.llm_base_url} (model {self.cfg.llm_model}) failed {state['failed']} of "
                f"{state['done']} requests ({state['answered']} answered; error budget {budget} of {len(todo)}); "
                f"last error: {state['last']}"
            )
        return len(todo)


PARTITIONS_ENV = "PROVE_PARTITIONS_AT_ONCE"  # set by the build in each worker of a parallel build


def concurrency_share(total: int, steps_at_once: int = 1) -> int:
    """This step's share of the build's ``max_concurrency``: the steps that may ask the teacher at once split it
    equally, each at least 1. They are the partitions that run at once in a parallel build (``prove build
    --parallel N`` sets ``PROVE_PARTITIONS_AT_ONCE`` in its workers), or ``steps_at_once``, the Celery workers'
    slots of a build on a cluster (``deployment.workers``), whichever is more."""
    try:
        at_once = max(1, int(os.environ.get(PARTITIONS_ENV, "1")))
    except ValueError:
        at_once = 1
    return max(1, total // max(at_once, steps_at_once))


def prefetched(teacher: TeacherClient | None, run: Callable[[bool], T], progress: FetchProgress | None = None) -> T:
    """``run(final)`` with its teacher prompts sent many at a time: ``run(False)`` collecting, every prompt fetched,
    then ``run(True)``, every answer a cache hit (the module's docstring says why the result cannot differ)."""
    if teacher is None:
        return run(True)
    with teacher.collecting() as prompts:
        run(False)  # counts the answers cached before this build as cache hits
    teacher.fetch(prompts, progress)
    teacher._hits_counted = False
    try:
        return run(True)
    finally:
        teacher._hits_counted = True


USAGE_NUMBERS = (
    "requests",
    "completions",
    "prompt_tokens",
    "completion_tokens",
    "cache_hits",
    "wait_s",
    "peak_in_flight",
)


def usage_numbers(usage: dict[str, Any]) -> dict[str, float | int]:
    """A usage account's figures as ``teacher_<figure>`` numbers (what Dagster plots across materializations)."""
    return {f"teacher_{k}": usage[k] for k in USAGE_NUMBERS}


def usage_summary(usages: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Teacher usage per stage and server (``{"query/<server>": {...}}``) with their total."""
    total = TeacherUsage()
    for u in usages.values():
        total.add(u)
    return {"total": total.as_dict(), "by_stage_server": dict(sorted(usages.items()))}
