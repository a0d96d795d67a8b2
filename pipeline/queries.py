"""Query generation: user requests per turn, grounded in the sampled state.

Two backends, one interface (``QueryBackend.write``):

* ``TemplateBackend`` (default, offline, deterministic): many phrasings per tool verb and per
  chain shape, personas, openers, relative dates against a reference date; it mentions only
  values taken from the snapshot or synthesized from the schema.
* ``LLMBackend``: any OpenAI-compatible endpoint (vLLM, Ollama, OpenAI) with retries, timeouts
  and an on-disk response cache keyed by the prompt hash, so re-runs cost nothing.

Both are checked by :func:`grounding_errors`: a request naming an entity id absent from the
snapshot is rejected.
"""

from __future__ import annotations

import functools
import json
import random
import re
import time
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from pipeline.config import QueryConfig
from pipeline.records import Snapshot, ToolSpec, stable_hash
from pipeline.storage import atomic_write_text

PERSONAS = {
    "busy_parent": ["Hi! Quick one between school runs:", "Hey, in a rush here.", "Hello, hoping you can help fast."],
    "small_business_owner": ["Good morning.", "Hi, for my shop's records:", "Hello, business request:"],
    "student": ["hey", "hi there!", "Hey, could you help me out?"],
    "ops_engineer": ["Task:", "Request:", "Need this done:"],
    "retiree": ["Good afternoon, dear assistant.", "Hello there.", "Hi, I'd appreciate some help."],
    "traveller": ["Hi from the airport!", "Hello, on the road right now.", "Hey, quick request before my flight:"],
}
CLOSERS = ["", "", " Thanks!", " Thank you.", " Appreciate it.", " Cheers."]
ID_TOKEN = re.compile(r"\b[A-Z]{2,6}-\d{2,6}\b")
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def words(name: str) -> str:
    w = name.replace("_id", "").replace("_", " ").strip()
    return w


def describe_tool(tool: ToolSpec) -> str:
    """The first sentence of a tool's description as a lower-case verb phrase."""
    return _describe(tool.name, tool.description)


@functools.lru_cache(maxsize=4096)
def _describe(name: str, description: str) -> str:
    d = (description or words(name)).strip().split("\n")[0]
    d = re.split(r"(?<=[a-z0-9)])[.;:] ", d)[0].rstrip(".")
    d = re.sub(r"\s*\([^)]*\)", "", d)
    return d[:1].lower() + d[1:] if d else words(name)


def relative_date(value: str, reference: str) -> str | None:
    try:
        d, ref = date.fromisoformat(value), date.fromisoformat(reference)
    except ValueError:
        return None
    delta = (d - ref).days
    if delta == 0:
        return "today"
    if delta == 1:
        return "tomorrow"
    if 2 <= delta <= 6:
        return f"this {WEEKDAYS[d.weekday()]}" if d.weekday() > ref.weekday() else f"next {WEEKDAYS[d.weekday()]}"
    if 7 <= delta <= 13:
        return f"next {WEEKDAYS[d.weekday()]}" if delta < 7 + (6 - ref.weekday()) else f"on {WEEKDAYS[d.weekday()]} the {d.day}{_suffix(d.day)}"
    return None


def _suffix(n: int) -> str:
    return "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def render_value(param: str, value: Any, reference: str, rng: random.Random) -> str:
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) and rng.random() < 0.5:
        rel = relative_date(value, reference)
        if rel:
            return rel
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def render_args(args: dict[str, Any], sensitive: set[str], reference: str, rng: random.Random, terse: bool = False) -> str:
    parts = []
    for k, v in args.items():
        val = render_value(k, v, reference, rng)
        if k in sensitive:
            parts.append(f"my {words(k).upper() if len(k) <= 4 else words(k)} is {val}")
        elif terse:
            parts.append(val)
        else:
            parts.append(f"{words(k)} {val}")
    if terse:
        return " ".join(parts)
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


VERB_TEMPLATES = {
    "read": [
        "Could you {desc}{with_args}?",
        "I'd like to {desc}{with_args}.",
        "Please {desc}{with_args}.",
        "Can you help me {desc}{with_args}?",
        "I need you to {desc}{with_args}.",
    ],
    "write": [
        "Please {desc}{with_args}.",
        "I want to {desc}{with_args}.",
        "Go ahead and {desc}{with_args}.",
        "Can you {desc}{with_args}?",
        "I'd like you to {desc}{with_args}.",
    ],
}
FOLLOW_TEMPLATES = [
    "Then {desc}{with_args}.",
    "After that, {desc}{with_args}.",
    "Once that's done, {desc}{with_args}.",
    "Next, {desc}{with_args}.",
]
SECOND_TURN = [
    "Thanks. Now {desc}{with_args}.",
    "Great, one more thing: {desc}{with_args}.",
    "OK. Could you also {desc}{with_args}?",
    "Perfect. Next I need you to {desc}{with_args}.",
    "Got it. Now please {desc}{with_args}.",
]
FROM_PREVIOUS = [" using the {field} from that", " for the {field} you just got", " with that {field}", " (the {field} from the previous result)",
                 " for that same {field}"]


def field_words(param: str) -> str:
    """How a user names a value taken from an earlier result: 'account_id' -> 'account ID'."""
    w = param.replace("_", " ").strip()
    return w[:-3] + " ID" if w.endswith(" id") else w


class QueryBackend(Protocol):
    name: str

    def write(self, server: str, turns: list[list[dict[str, Any]]], info_level: str, persona: str,
              withheld: list[str], snapshot: Snapshot, rng: random.Random) -> list[str]: ...


class TemplateBackend:
    """Offline, deterministic, varied requests from templates."""

    name = "template"

    def __init__(self, cfg: QueryConfig):
        self.cfg = cfg

    def step_text(self, step: dict[str, Any], rng: random.Random, first: bool, turn_idx: int, terse: bool, withheld: list[str]) -> str:
        tool: ToolSpec = step["tool"]
        user_args = {k: v for k, v in step["user_args"].items() if k not in withheld}
        sens = set(tool.sensitive)
        desc = describe_tool(tool)
        if terse:
            body = f"{words(tool.name)} {render_args(user_args, sens, self.cfg.reference_date, rng, terse=True)}".strip()
            return body
        with_args = ""
        if user_args:
            with_args = rng.choice([": ", " with ", " — "]) + render_args(user_args, sens, self.cfg.reference_date, rng)
        if step["from_steps"]:
            with_args += rng.choice(FROM_PREVIOUS).format(field=field_words(step["from_steps"][0]))
        if first and turn_idx == 0:
            tpl = rng.choice(VERB_TEMPLATES["read" if tool.read_only else "write"])
        elif first:
            tpl = rng.choice(SECOND_TURN)
        else:
            tpl = rng.choice(FOLLOW_TEMPLATES)
        return tpl.format(desc=desc, with_args=with_args)

    def write(self, server, turns, info_level, persona, withheld, snapshot, rng):
        out = []
        terse = info_level == "minimal"
        for ti, steps in enumerate(turns):
            parts = [self.step_text(s, rng, i == 0, ti, terse, withheld if ti == 0 else []) for i, s in enumerate(steps)]
            if terse:
                text = "; ".join(parts)
            else:
                text = " ".join(parts)
                if ti == 0:
                    text = f"{rng.choice(PERSONAS[persona])} {text}"
                text += rng.choice(CLOSERS)
            out.append(text)
        return out


class LLMBackend:
    """Requests written by a model behind any OpenAI-compatible endpoint, cached by prompt hash."""

    name = "llm"

    def __init__(self, cfg: QueryConfig, cache_dir: Path, client: Any | None = None):
        import os

        from openai import OpenAI

        if not cfg.llm_base_url or not cfg.llm_model:
            raise ValueError("the llm query backend needs query.llm_base_url and query.llm_model")
        self.cfg = cfg
        self.cache_dir = Path(cache_dir)
        self.client = client or OpenAI(base_url=cfg.llm_base_url, api_key=os.environ.get(cfg.llm_api_key_env, "not-needed"),
                                       timeout=cfg.llm_timeout_s, max_retries=0)
        self.calls = 0
        self.cache_hits = 0

    def complete(self, prompt: str) -> str:
        key = stable_hash([self.cfg.llm_model, prompt], 24)
        path = self.cache_dir / f"{key}.json"
        if path.exists():
            self.cache_hits += 1
            return json.loads(path.read_text())["text"]
        last: Exception | None = None
        for attempt in range(self.cfg.llm_retries):
            try:
                self.calls += 1
                resp = self.client.chat.completions.create(
                    model=self.cfg.llm_model, messages=[{"role": "user", "content": prompt}], temperature=0.7)
                text = resp.choices[0].message.content or ""
                atomic_write_text(path, json.dumps({"prompt": prompt, "text": text}))
                return text
            except Exception as exc:  # timeouts, 5xx, connection resets: retry with backoff
                last = exc
                time.sleep(min(2.0, 0.2 * 2 ** attempt))
        raise RuntimeError(f"LLM endpoint {self.cfg.llm_base_url} failed after {self.cfg.llm_retries} tries: {last}")

    def write(self, server, turns, info_level, persona, withheld, snapshot, rng):
        spec = []
        for ti, steps in enumerate(turns):
            spec.append([{"action": describe_tool(s["tool"]), "values": {k: v for k, v in s["user_args"].items() if not (ti == 0 and k in withheld)}}
                         for s in steps])
        from pipeline.probe import narrow

        touched = narrow(snapshot, [v for steps in turns for s in steps for v in s["user_args"].values()])
        prompt = (
            f"You write the user's messages in a conversation with an assistant that operates a {server} service.\n"
            f"What the user's account holds (the only entities you may refer to): {json.dumps(touched, default=str, sort_keys=True)}\n"
            f"Persona: {persona.replace('_', ' ')}. Information level: {info_level} "
            "(complete: give every value listed; minimal: be terse).\n"
            f"Today is {self.cfg.reference_date}. Mention ONLY the values listed; never invent ids or names.\n"
            f"Turns (one user message per turn, in order): {json.dumps(spec, default=str)}\n"
            'Answer with JSON: {"turns": ["message for turn 1", ...]}'
        )
        text = self.complete(prompt)
        try:
            data = json.loads(text[text.index("{"): text.rindex("}") + 1])
            msgs = [str(m) for m in data["turns"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"LLM answer is not the JSON asked for: {text[:200]!r}") from exc
        if len(msgs) != len(turns):
            raise ValueError(f"LLM wrote {len(msgs)} user turns, expected {len(turns)}")
        return msgs


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


def make_backend(cfg: QueryConfig, cache_dir: Path) -> QueryBackend:
    if cfg.backend == "llm":
        return LLMBackend(cfg, cache_dir)
    return TemplateBackend(cfg)
