"""No references to things that do not exist: the entities a call names must be in the session's world.

A relation, a move or a read names things: ``create_relations(relations=[{from, to, ...}])``,
``add_observations(observations=[{entityName, ...}])``, ``move_file(source, ...)``, ``read_file(path)``,
``git_checkout(branch_name)``. Each such value must be one the world holds (the snapshot's entities and values,
which hold what the probe read and what the config states) or one an earlier call of the same conversation
returned or created; a value made up for it ("draft", when no entity is called that) is a missing entity, and a
conversation built on it would teach relating, moving or reading what is not there.

Which arguments name a thing is read from their names: ``from``, ``to``, ``source``, ``entityName`` and the like
always do; ``name``, ``path``, ``branch_name`` and their plurals do unless the tool creates (``create_*``,
``write_*``, ``add_*``, ``mkdir``: the name of a thing being made is new). The query stage checks the calls of
third-party servers (``kind`` stdio or http): a built-in one refuses an unknown id itself (``not_found``), so the
call fails live and replay sees it, whereas a published server may accept anything (server-memory relates any two
names).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import Any

from pipeline.core.records import Snapshot, ToolSpec
from pipeline.env.workdir import SESSION_ALIAS

ALWAYS_NAMES_A_THING = frozenset(
    {"from", "to", "source", "entityName", "entity_name", "entityNames", "entity_names", "base_branch", "source_path"}
)
NAMES_A_THING_UNLESS_CREATED = frozenset({"name", "names", "path", "paths", "branch_name", "branch"})
CREATING_VERBS = frozenset(
    {"create", "add", "new", "make", "mkdir", "write", "insert", "put", "save", "upload", "register", "init"}
)


def creates(tool: ToolSpec) -> bool:
    """The tool makes things (its first word is a verb of making): the names it is given are new ones."""
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", tool.name).lower())
    return bool(words) and words[0] in CREATING_VERBS


def names_a_thing(key: str, made: bool) -> bool:
    """An argument (or a record's field) called ``key`` names an existing thing (``made``: the tool creates)."""
    return key in ALWAYS_NAMES_A_THING or (key in NAMES_A_THING_UNLESS_CREATED and not made)


def named_things(tool: ToolSpec, args: dict[str, Any]) -> list[tuple[str, str]]:
    """(argument path, value) of every string in ``args`` that names an existing thing, records and lists included."""
    made = creates(tool)
    out: list[tuple[str, str]] = []

    def walk(key: str, value: Any, where: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(k, v, f"{where}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(key, v, f"{where}[{i}]")
        elif isinstance(value, str) and value.strip() and names_a_thing(key, made):
            out.append((where, value))

    for k, v in args.items():
        walk(k, v, k)
    return out


def _strings(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.add(str(k))
            _strings(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _strings(v, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out.add(str(value))


def world_of(snapshot: Snapshot) -> set[str]:
    """Every string the snapshot's world holds: entity ids, their fields, the observed values."""
    out: set[str] = set()
    _strings(list(snapshot.entities), out)
    _strings(list(snapshot.entities.values()), out)
    _strings(snapshot.values, out)
    return out


def _forms(value: str) -> list[str]:
    """How a value may appear in what the world holds: as it is, and for a path its tails (``/session/files/a.md``,
    ``files/a.md``, ``a.md``) and the path without its session root or trailing slash."""
    v = value.strip()
    forms = [v]
    if "/" in v:
        trimmed = v.rstrip("/")
        if trimmed.startswith(SESSION_ALIAS + "/"):
            trimmed = trimmed[len(SESSION_ALIAS) + 1 :]
        parts = [p for p in trimmed.split("/") if p not in ("", ".")]
        forms += ["/".join(parts[i:]) for i in range(len(parts))]
    return [f for f in forms if f]


def _mentioned(form: str, texts: Iterable[str]) -> bool:
    pattern = re.compile(r"(?<![\w-])" + re.escape(form) + r"(?![\w-])")
    return any(form == t or (form in t and pattern.search(t)) for t in texts)


def held(value: str, known: set[str]) -> bool:
    """The world (or an earlier call) holds the thing ``value`` names."""
    return value.rstrip("/") == SESSION_ALIAS or any(_mentioned(f, known) for f in _forms(value))


def remember(known: set[str], args: dict[str, Any], result: Any) -> None:
    """What a call named, created or returned (a CallResult) exists for the calls after it."""
    _strings(args, known)
    if result.ok:
        _strings(result.data, known)


def ground_names(
    tool: ToolSpec, args: dict[str, Any], snapshot: Snapshot, known: set[str], rng: random.Random
) -> dict[str, Any]:
    """``args`` with each value that names a thing nothing holds (a made-up relation end, ``"draft"``) replaced by
    one the world holds: an observed value of the same field (a relation's ``from``), else an observed ``name``.
    Where the world has none the value stays, and :func:`missing_references` reports it."""
    made = creates(tool)

    def fix(key: str, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: fix(k, v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(key, v) for v in value]
        if isinstance(value, str) and value.strip() and names_a_thing(key, made) and not held(value, known):
            pool = snapshot.values.get(key) or snapshot.values.get("name") or []
            names = sorted({v for v in pool if isinstance(v, str) and v.strip()})
            if names:
                return rng.choice(names)
        return value

    return {k: fix(k, v) for k, v in args.items()}


def missing_references(snapshot: Snapshot, steps: list[dict[str, Any]], world: set[str] | None = None) -> list[str]:
    """``tool.arg = value`` for each value a call names that neither the world nor an earlier call of the same
    conversation holds. ``steps``: the resolved calls in order (``tool``, ``args``, ``result``: a CallResult)."""
    known = set(world if world is not None else world_of(snapshot))
    missing: list[str] = []
    for st in steps:
        tool: ToolSpec = st["tool"]
        missing += [
            f"{tool.name}.{where} = {value!r}"
            for where, value in named_things(tool, st["args"])
            if not held(value, known)
        ]
        remember(known, st["args"], st["result"])
    return missing
