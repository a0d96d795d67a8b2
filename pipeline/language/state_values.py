"""What the sampled state offers a parameter: the values of the field of its name, or of the field it is a role of
(:func:`observed_values`); values shaped like the example its description gives (:func:`example_shape`,
:func:`shaped_values`); the values of the field its description names (:func:`described_id_values`,
:func:`described_values`); and the secret a user knows for the entities a call names (:func:`linked_secret`)."""

from __future__ import annotations

import re
from typing import Any

from pipeline.core.records import Snapshot
from pipeline.language.schema_values import schema_of

ROLE_FIELDS = ("path", "email", "symbol", "sku", "code", "url")
SEARCH_PARAMS = ("query", "q", "keyword", "keywords", "search", "term", "name_contains", "title_contains")
NAME_FIELDS = ("name", "title", "subject", "display_name", "username", "city", "category")


def observed_values(snapshot: Snapshot, param: str, lookup: bool = False) -> list[Any]:
    """Values of the sampled state that ``param`` can take.

    The field of the same name first; else, for a role-prefixed id (``origin_place_id``,
    ``target_user_id``), the values of the entity's own id field (``place_id``). For a lookup
    (read-only) tool also a field the parameter is the tail of (``address`` <- ``formatted_address``)
    and, for a search parameter, words of the names in the state, so a lookup finds something."""
    vals = snapshot.values.get(param)
    if vals:
        return vals
    for field in sorted(snapshot.values):
        if field.endswith("_id") and param.endswith("_" + field) and snapshot.values[field]:
            return snapshot.values[field]
        # a role suffix on an identifying field: path_a / path_b <- path, source_path <- path
        if (
            field in ROLE_FIELDS
            and (param.startswith(field + "_") or param.endswith("_" + field))
            and snapshot.values[field]
        ):
            return snapshot.values[field]
    if not lookup:
        return []
    for field in sorted(snapshot.values):
        if (
            field.endswith("_" + param)
            and snapshot.values[field]
            and all(isinstance(v, str) for v in snapshot.values[field])
        ):
            return snapshot.values[field]
    if param in SEARCH_PARAMS:
        words = sorted(
            {
                w
                for f in NAME_FIELDS
                for v in snapshot.values.get(f, [])
                if isinstance(v, str)
                for w in re.findall(r"[A-Za-z]{4,}", v)
            }
        )
        return words
    return []


EXAMPLE = re.compile(r"'([^'\s]{2,60})'")
ABS_PATH = re.compile(r"^/[^\s]+$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")


def example_shape(spec: dict[str, Any]) -> re.Pattern[str] | None:
    """The shape of the example a parameter's description gives (``e.g. 'CON-0002'``, ``like
    'ana.silva@northwind.example'``): an email, or an id's letters with its digit runs generalised."""
    desc = (schema_of(spec).get("description") or "") if spec else ""
    for ex in EXAMPLE.findall(desc):
        if EMAIL.match(ex):
            return EMAIL
        if ex.startswith("/") and len(ex) > 1:
            return ABS_PATH
        if re.fullmatch(r"[A-Za-z]+[-_]\d+", ex):
            return re.compile("^" + re.sub(r"\d+", lambda m: rf"\d{{{len(m.group())}}}", re.escape(ex)) + "$")
    return None


def shaped_values(snapshot: Snapshot, shape: re.Pattern[str]) -> list[Any]:
    """Observed values, of any field, with the given shape (sorted fields: the same in every process)."""
    out: list[Any] = []
    for field in sorted(snapshot.values):
        for v in snapshot.values[field]:
            if isinstance(v, str) and shape.match(v) and v not in out:
                out.append(v)
    return out


def described_id_values(snapshot: Snapshot, spec: dict[str, Any]) -> list[Any]:
    """Values of the id field the description names: "Contact ids to invite" -> ``contact_id``,
    "Id of the signed-in user" -> ``user_id``, "(from list_users)" -> ``user_id``."""
    desc = schema_of(spec).get("description") or "" if spec else ""
    for word in re.findall(r"[A-Za-z]+", desc):
        w = word.lower()
        for cand in (w, w[:-1] if w.endswith("s") else None):
            if cand and len(cand) > 2 and snapshot.values.get(f"{cand}_id"):
                return snapshot.values[f"{cand}_id"]
    return []


def described_values(snapshot: Snapshot, spec: dict[str, Any]) -> list[Any]:
    """Values of the identifying field the description opens with ("Path of the file to copy" -> ``path``)."""
    desc = schema_of(spec).get("description") or "" if spec else ""
    for word in re.findall(r"[A-Za-z]+", desc)[:4]:
        if word.lower() in ROLE_FIELDS and snapshot.values.get(word.lower()):
            return snapshot.values[word.lower()]
    return []


def linked_secret(snapshot: Snapshot, param: str, args: dict[str, Any]) -> Any:
    """The secret a user knows for the entities named in ``args`` (the account's owner's PIN, ...)."""
    ids = [str(v) for v in args.values() if isinstance(v, (str, int))]
    seen: set[str] = set()
    frontier = list(ids)
    for _ in range(3):
        nxt = []
        for eid in frontier:
            if eid in seen:
                continue
            seen.add(eid)
            sec = snapshot.secrets.get(eid)
            if sec and param in sec:
                return sec[param]
            rec = snapshot.entities.get(eid) or {}
            nxt.extend(str(v) for k, v in rec.items() if k.endswith("_id") and isinstance(v, (str, int)))
        frontier = nxt
    star = snapshot.secrets.get("*") or {}
    return star.get(param)
