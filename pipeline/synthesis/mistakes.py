"""Wrong first attempts a model really makes, drawn from the world and the schema (recovery demonstrations).

A recovery demonstration shows a failed call and the corrected one. The failed call is never a constant: it is
one of the mistakes a model makes with the tools and the conversation in front of it:

* ``name_for_id``: the entity's own name or title (as the conversation showed it) where its id is needed;
* ``wrong_kind_id``: a real id of another kind the conversation showed (the customer's id for the account's);
* ``mistyped_id``: the right id with a plausible slip (a dropped or doubled digit, two digits swapped, the
  letter O for a zero, the hyphen left out);
* ``stale_id``: the id of an entity of the same kind the conversation showed and the world no longer holds;
* ``enum_synonym``: a word for an enum value the schema does not list (``canceled`` for ``cancelled``,
  ``like new`` for ``like_new``, ``current`` for ``checking``);
* ``missing_field``: a required field left out;
* ``wrong_tool``: a read-only sibling with a close name or close parameters, called with the arguments meant for
  the right tool (never a writing tool: a wrong write would change the world).

Each attempt must fail on the server (the failure is what teaches the correction): candidates are tried live in
a seeded order, and one that unexpectedly succeeds is not shown (only read-only calls may be tried that way; a
write is tried only with a mistake that cannot reach its effect: a schema violation, or an id its kind's table
does not hold). The corpus marks the failed call's assistant message with ``weight: 0`` so that training puts
no loss on it (``training/chat.py``); replay and the reward still see it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from pipeline.core.records import CallResult, Message, Snapshot, ToolSpec
from pipeline.env import Session
from pipeline.language.phrasing import ID_TOKEN
from pipeline.language.schema_values import resolve_refs

KINDS = (
    "name_for_id",
    "wrong_kind_id",
    "mistyped_id",
    "stale_id",
    "enum_synonym",
    "missing_field",
    "wrong_tool",
)
ID_KINDS = frozenset({"name_for_id", "wrong_kind_id", "mistyped_id", "stale_id"})
MAX_TRIES = 4  # live calls spent on candidates that did not fail, per attempt
# record fields that name an entity the way a person does (the record's own id aside)
NAME_FIELDS = ("name", "title", "full_name", "display_name", "username", "nickname", "subject", "label", "filename")
# words people and models say for an enum value; a schema lists only one of them
SYNONYMS: dict[str, tuple[str, ...]] = {
    "cancelled": ("canceled",),
    "canceled": ("cancelled",),
    "checking": ("current", "checkings"),
    "savings": ("saving",),
    "credit": ("credit card",),
    "open": ("opened", "active"),
    "closed": ("close", "done"),
    "active": ("enabled", "live"),
    "inactive": ("disabled",),
    "archived": ("archive",),
    "pending": ("waiting",),
    "completed": ("complete", "done"),
    "done": ("completed", "finished"),
    "in_progress": ("in progress", "ongoing"),
    "todo": ("to do", "open"),
    "high": ("urgent",),
    "low": ("minor",),
    "medium": ("normal",),
    "critical": ("blocker",),
    "new": ("brand new",),
    "good": ("used",),
    "buy": ("purchase",),
    "sell": ("sale",),
    "market": ("market order",),
    "limit": ("limit order",),
    "public": ("everyone",),
    "private": ("only me",),
    "on": ("enabled",),
    "off": ("disabled",),
    "economy": ("coach",),
    "business": ("business class",),
    "lost_card": ("lost card", "card lost"),
    "suspected_fraud": ("fraud",),
    "other": ("something else",),
    "delivery": ("deliver",),
    "pickup": ("pick up", "collection"),
    "usd": ("dollars",),
    "eur": ("euros",),
    "gbp": ("pounds",),
}


@dataclass(frozen=True)
class Mistake:
    """A wrong first attempt: ``tool`` called with ``args`` (``param``: the argument it gets wrong)."""

    kind: str
    tool: str
    args: dict[str, Any]
    param: str | None = None


@dataclass(frozen=True)
class Attempt:
    """A mistake made live, and the failure the server answered it with."""

    mistake: Mistake
    result: CallResult


class MistakeRan(RuntimeError):
    """A wrong attempt at a writing tool succeeded: the world changed outside the reference."""


def synonyms(value: str) -> list[str]:
    """Other ways of saying an enum value: the known synonyms, then the spellings of its words."""
    low = value.lower()
    out = list(SYNONYMS.get(low, ()))
    if "_" in value or "-" in value:
        out += [re.sub(r"[_-]", " ", value), value.replace("_", "-") if "_" in value else value.replace("-", "_")]
    out.append(value.capitalize() if value != value.capitalize() else value.lower())
    return [v for i, v in enumerate(out) if v != value and v not in out[:i]]


def typos(value: str) -> list[str]:
    """Slips of the keys in an id (``ACC-0012``): a digit dropped or doubled, two digits swapped, the letter O for a
    zero, the hyphen left out. Each keeps the id's look and names no other id of the same shape length."""
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    if not digits:
        return []
    last = digits[-1]
    out = [value[:last] + value[last + 1 :], value[:last] + value[last] + value[last:]]
    pairs = [i for i in digits if i + 1 in digits and value[i] != value[i + 1]]
    if pairs:
        i = pairs[-1]
        out.append(value[:i] + value[i + 1] + value[i] + value[i + 2 :])
    zero = next((i for i in digits if value[i] == "0"), None)
    if zero is not None:
        out.append(value[:zero] + "O" + value[zero + 1 :])
    if "-" in value:
        out.append(value.replace("-", "", 1))
    return [v for i, v in enumerate(out) if v != value and v not in out[:i]]


def explains(wrong: Any, right: Any) -> bool:
    """Is ``wrong`` a mistake one makes for ``right`` (a slip of its keys, another spelling, a synonym)? The
    linter's test of a failed attempt's value that the conversation never showed."""
    if not isinstance(wrong, str) or not isinstance(right, (str, int, float)) or isinstance(right, bool):
        return False
    r = str(right)
    return wrong in synonyms(r) or _norm(wrong) == _norm(r) or _one_slip(wrong, r)


def _one_slip(a: str, b: str) -> bool:
    """``a`` is ``b`` with one key slipped: a character dropped, added or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1 :]


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


class LiveWorld:
    """The session's world as its state dump has it: table name -> the ids (keys) it holds."""

    def __init__(self, state: dict[str, Any] | None):
        self.tables: dict[str, dict[str, Any]] = {
            k: v
            for k, v in sorted((state or {}).items())
            if isinstance(v, dict) and v and all(isinstance(x, str) for x in v)
        }

    def tables_of(self, value: Any) -> list[str]:
        return [t for t, rows in self.tables.items() if isinstance(value, str) and value in rows]

    def record(self, value: str) -> dict[str, Any]:
        for t in self.tables_of(value):
            row = self.tables[t][value]
            if isinstance(row, dict):
                return row
        return {}

    def held_by(self, value: Any, tables: list[str]) -> bool:
        return any(isinstance(value, str) and value in self.tables[t] for t in tables)


def _spec(tool: ToolSpec, p: str) -> dict[str, Any]:
    spec = resolve_refs(tool.properties.get(p) or {}, tool.input_schema.get("$defs") or {})
    return spec if isinstance(spec, dict) else {}


def enum_of(tool: ToolSpec, p: str) -> list[Any] | None:
    """The values a parameter is limited to, where its schema lists them and accepts nothing else but null."""
    spec = _spec(tool, p)
    branches = spec.get("anyOf") or spec.get("oneOf") or [spec]
    values: list[Any] = []
    for b in branches:
        if not isinstance(b, dict):
            return None
        if "enum" in b:
            values += list(b["enum"])
        elif "const" in b:
            values.append(b["const"])
        elif b.get("type") != "null":
            return None  # another branch takes any value of its type
    return values or None


def _id_like(p: str, v: Any) -> bool:
    """An argument that names an entity by its id (``ACC-0001``; a month or a path is no id)."""
    return isinstance(v, str) and (p.endswith("_id") or bool(ID_TOKEN.fullmatch(v)))


def _seen_ids(seen: str) -> list[str]:
    return sorted(set(ID_TOKEN.findall(seen)))


def _id_mistakes(
    tool: ToolSpec, args: dict[str, Any], p: str, world: LiveWorld, snap: Snapshot, seen: str, rng: random.Random
) -> dict[str, Mistake]:
    """The id mistakes open to argument ``p``, by kind (each value checked against the world, not tried yet)."""
    v = args[p]
    own = world.tables_of(v)
    out: dict[str, Mistake] = {}

    def put(kind: str, value: Any) -> None:
        out[kind] = Mistake(kind, tool.name, {**args, p: value}, p)

    record = world.record(v) or snap.entities.get(v) or {}
    names = [
        str(record[k])
        for k in NAME_FIELDS
        if isinstance(record.get(k), str) and record[k].strip() and record[k] != v and record[k] in seen
    ]
    if names and not world.held_by(names[0], own):
        put("name_for_id", names[0])
    related = [x for k, x in sorted(record.items()) if k.endswith("_id") and isinstance(x, str) and x in seen]
    others = [x for x in _seen_ids(seen) if world.tables_of(x) and not world.held_by(x, own)]
    wrong = [x for x in related if x != v and x in others] or others
    if wrong:
        put("wrong_kind_id", wrong[0] if wrong[0] in related else rng.choice(wrong))
    slips = [t for t in typos(v) if not any(t in rows for rows in world.tables.values())]
    if slips:
        put("mistyped_id", rng.choice(slips))
    kind = snap.entity_kinds.get(v)
    gone = [
        x
        for x in _seen_ids(seen)
        if x != v and kind is not None and snap.entity_kinds.get(x) == kind and not world.held_by(x, own)
    ]
    if gone and own:
        put("stale_id", rng.choice(gone))
    return out


READ_VERBS = frozenset({"get", "list", "search", "find", "show", "read", "view", "check", "lookup", "describe"})


def _name_words(name: str) -> set[str]:
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in re.split(r"[_\-]+", name.lower()) if w}


def _siblings(tool: ToolSpec, args: dict[str, Any], tools: dict[str, ToolSpec]) -> list[str]:
    """Read-only tools a model confuses with ``tool`` (a shared word in the name, or a shared parameter) that the
    arguments meant for ``tool`` cannot satisfy (a required parameter of theirs is not among them), closest
    first."""
    words = _name_words(tool.name)
    scored = []
    for name in sorted(tools):
        other = tools[name]
        if name == tool.name or not other.read_only or set(other.required) <= set(args):
            continue
        shared = words & _name_words(name)
        params = len(set(args) & set(other.properties))
        if not shared - READ_VERBS and not (shared and params):
            continue  # neither the same thing nor the same verb on the same arguments: no one confuses the two
        score = 2 * len(shared - READ_VERBS) + len(shared & READ_VERBS) + params
        if score:
            scored.append((-score, name))
    return [n for _, n in sorted(scored)]


def candidates(
    tool: ToolSpec,
    args: dict[str, Any],
    snap: Snapshot,
    tools: dict[str, ToolSpec],
    world: LiveWorld,
    seen: str,
    rng: random.Random,
) -> list[Mistake]:
    """Every mistake open to this call, one per kind, in a seeded order of kinds. ``seen``: the conversation's text
    so far (user turns and tool results): a model misuses what it was shown."""
    sensitive = set(tool.sensitive)
    by_kind: dict[str, list[Mistake]] = {}
    ids = [p for p in sorted(args) if p not in sensitive and _id_like(p, args[p])]
    id_params = [p for p in ids if world.tables_of(args[p])]
    if not id_params and tool.read_only:  # no state dump: ids the snapshot knows, tried on a read only
        id_params = [p for p in ids if args[p] in snap.entity_kinds]
    for p in rng.sample(id_params, len(id_params)):
        for kind, m in _id_mistakes(tool, args, p, world, snap, seen, rng).items():
            by_kind.setdefault(kind, []).append(m)
    for p in sorted(args):
        allowed = enum_of(tool, p)
        if allowed and isinstance(args[p], str) and p not in sensitive:
            words = [w for w in synonyms(args[p]) if w not in allowed]
            if words:
                by_kind.setdefault("enum_synonym", []).append(
                    Mistake("enum_synonym", tool.name, {**args, p: words[0]}, p)
                )
    req = [p for p in tool.required if p in args]
    if req:
        p = rng.choice(req)
        by_kind["missing_field"] = [Mistake("missing_field", tool.name, {q: v for q, v in args.items() if q != p}, p)]
    sibs = _siblings(tool, args, tools)
    if sibs:
        by_kind["wrong_tool"] = [Mistake("wrong_tool", sibs[0], dict(args))]
    order = rng.sample(sorted(by_kind), len(by_kind))
    return [by_kind[k][0] for k in order]


def _shown(messages: list[Message]) -> str:
    return "\n".join(m.content or "" for m in messages if m.role in ("user", "tool"))


def first_attempt(
    session: Session,
    snap: Snapshot,
    tool: ToolSpec,
    args: dict[str, Any],
    rng: random.Random,
    tools: dict[str, ToolSpec],
    messages: list[Message],
) -> Attempt | None:
    """Make a wrong first attempt at calling ``tool`` with ``args`` live, and return it with the server's failure;
    None when no mistake open to the call fails (nothing is shown then). Raises :class:`MistakeRan` when a wrong
    write unexpectedly succeeded (the conversation cannot be used)."""
    world = LiveWorld(session.state())
    tries = 0
    for m in candidates(tool, args, snap, tools, world, _shown(messages), rng):
        target = tools[m.tool]
        if not target.read_only and m.kind in ID_KINDS and not world.tables_of(args[m.param]):
            continue  # a write is tried only with an id its kind's table is known not to hold
        if tries >= MAX_TRIES:
            break
        tries += 1
        res = session.call(m.tool, m.args)
        if not res.ok:
            return Attempt(m, res)
        if not target.read_only:
            raise MistakeRan(f"the wrong attempt {m.kind} {m.tool}({m.args}) succeeded")
    return None
