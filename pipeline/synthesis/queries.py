"""Query generation: user requests per turn, grounded in the sampled state.

Two backends, one interface (``QueryBackend.write``):

* ``TemplateBackend`` (default, offline, deterministic): many phrasings per tool verb and per
  chain shape, personas, openers, relative dates against a reference date; it mentions only
  values taken from the snapshot or synthesized from the schema.
* ``LLMBackend``: any OpenAI-compatible endpoint (vLLM, Ollama, OpenAI) through
  :class:`~pipeline.language.teacher_client.TeacherClient`: retries (Retry-After honoured), timeouts, many
  requests in flight, accounting, and an on-disk response cache keyed by the prompt hash, so re-runs cost nothing.

Both are checked by :func:`grounding_errors`: a request naming an entity id absent from the
snapshot is rejected.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Protocol

from pipeline.core.config import QueryConfig
from pipeline.core.records import Snapshot
from pipeline.discovery.probe import narrow
from pipeline.language.phrasing import ID_TOKEN
from pipeline.language.requests.conversation import write_turns
from pipeline.language.teacher import (
    parse_json_answer,
    reply_problems,
    reply_prompt,
    turn_spec,
    user_turn_problems,
    user_turns_prompt,
)
from pipeline.language.teacher_client import TeacherClient, concurrency_share

PERSONAS = ("busy_parent", "small_business_owner", "student", "ops_engineer", "retiree", "traveller")


class QueryBackend(Protocol):
    name: str

    def write(
        self,
        server: str,
        turns: list[list[dict[str, Any]]],
        info_level: str,
        persona: str,
        withheld: list[str],
        snapshot: Snapshot,
        rng: random.Random,
    ) -> list[str]: ...


class TemplateBackend:
    """Offline, deterministic requests composed by :mod:`pipeline.language.requests`."""

    name = "template"

    def __init__(self, cfg: QueryConfig):
        self.cfg = cfg

    def write(self, server, turns, info_level, persona, withheld, snapshot, rng):
        steps = sorted((s for t in turns for s in t), key=lambda s: s["index"])
        return write_turns(
            turns,
            steps,
            info_level,
            persona,
            withheld,
            snapshot.entities,
            self.cfg.reference_date,
            rng,
            known=lambda v: is_known_id(v, snapshot),
            domain=snapshot.domain,
        )


class LLMBackend:
    """Requests written by a model behind any OpenAI-compatible endpoint (:class:`TeacherClient`: cached by prompt
    hash, many in flight when a stage prefetches)."""

    name = "llm"

    def __init__(
        self,
        cfg: QueryConfig,
        cache_dir: Path,
        client: Any | None = None,
        concurrency: int | None = None,
        steps_at_once: int = 1,
    ):
        self.cfg = cfg
        share = concurrency or concurrency_share(cfg.max_concurrency, steps_at_once)
        self.teacher = TeacherClient(cfg, cache_dir, client, share)
        self.reply_fallbacks = 0

    @property
    def calls(self) -> int:
        """Requests sent to the endpoint (retries included)."""
        return self.teacher.usage.requests

    @property
    def cache_hits(self) -> int:
        return self.teacher.usage.cache_hits

    def complete(self, prompt: str) -> str:
        return self.teacher.complete(prompt)

    def write(self, server, turns, info_level, persona, withheld, snapshot, rng):
        """The user's turns, written by the teacher from the offline drafts and checked
        (:mod:`pipeline.language.teacher`)."""

        drafts = TemplateBackend(self.cfg).write(server, turns, info_level, persona, withheld, snapshot, rng)
        spec = turn_spec(turns, drafts, withheld, self.cfg.reference_date)
        touched = narrow(snapshot, [v for steps in turns for s in steps for v in s["user_args"].values()])
        text = self.complete(user_turns_prompt(server, persona, info_level, self.cfg.reference_date, touched, spec))
        msgs = parse_json_answer(text, "turns")
        if not isinstance(msgs, list):
            raise ValueError(f"LLM answer is not the JSON asked for: {text[:200]!r}")
        msgs = [str(m) for m in msgs]
        if len(msgs) != len(turns):
            raise ValueError(f"LLM wrote {len(msgs)} user turns, expected {len(turns)}")
        first = turns[0][0]
        problems = user_turn_problems(
            msgs,
            turns,
            {p: first["user_args"][p] for p in withheld if p in first["user_args"]},
            snapshot.tools,
            self.cfg.reference_date,
        )
        if problems:
            raise ValueError("LLM user turns fail the checks: " + "; ".join(problems[:5]))
        return msgs

    def reply(self, server: str, request: str, calls: list[dict[str, Any]], draft: str) -> str:
        """The assistant's final reply of a turn, written by the teacher; the offline ``draft`` when the teacher's
        reply names an id or number no result holds, repeats itself or holds a placeholder."""

        try:
            reply = str(parse_json_answer(self.complete(reply_prompt(server, request, calls, draft)), "reply")).strip()
        except (ValueError, RuntimeError):
            reply = ""
        if not reply or reply_problems(reply, request, calls, draft):
            self.reply_fallbacks += 1
            return draft
        return reply


def known_ids(snapshot: Snapshot) -> set[str]:
    """Every id the snapshot knows (:func:`is_known_id` of each)."""
    return set(snapshot.entities) | {v for vals in snapshot.values.values() for v in vals if isinstance(v, str)}


def is_known_id(token: str, snapshot: Snapshot) -> bool:
    """Is ``token`` an entity of the snapshot or a value its read-only results showed? (One lookup, where
    :func:`known_ids` gathers every value.)"""
    return token in snapshot.entities or any(token in vals for vals in snapshot.values.values())


def grounding_errors(texts: list[str], snapshot: Snapshot, extra_ok: set[str] | None = None) -> list[str]:
    """Entity ids named in the requests that the sampled state does not contain."""
    extra = extra_ok or set()
    bad = []
    for t in texts:
        for tok in ID_TOKEN.findall(t):
            # the few tokens a request names are looked up, rather than every value of the state gathered per request
            if tok not in extra and not is_known_id(tok, snapshot):
                bad.append(tok)
    return bad


def make_backend(cfg: QueryConfig, cache_dir: Path, steps_at_once: int = 1) -> QueryBackend:
    """The query backend; ``steps_at_once``: the build's steps that may ask the teacher at the same time (they
    share ``max_concurrency``: :func:`concurrency_share`)."""
    if cfg.backend == "llm":
        return LLMBackend(cfg, cache_dir, steps_at_once=steps_at_once)
    return TemplateBackend(cfg)
