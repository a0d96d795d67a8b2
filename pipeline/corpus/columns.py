"""The corpus's Parquet columns as nested Arrow types, and the one way to read them back.

``messages`` is a list of structs in the OpenAI chat format (``role``, ``content``, ``tool_calls`` with
``function.arguments`` a JSON string, ``tool_call_id``, and a nullable per-message ``weight``: ``0`` marks a
message no loss should go on, as OpenAI fine-tuning has it). What differs from one tool or call to the next
(a tool's JSON schema, a call's arguments, a result) cannot be one struct across tools, so it is Arrow's JSON
type (``arrow.json``: JSON text, the Parquet ``JSON`` logical type): ``datasets.load_dataset("parquet")``
decodes it (its ``Json`` feature), DuckDB reads it as ``JSON``, polars as text. ``tools`` is a list of JSON
tool objects, the shape TRL's SFTTrainer and the ``datasets`` docs give for tool calling.

Rows are written from the JSON texts :func:`pipeline.corpus.store.example_row` makes (the content hash is
computed from those texts, never from Arrow values); :func:`decode_row` and the per-column readers give
plain Python values back, from this format or from the JSON strings of versions written before it. This
module needs only pyarrow (training reads the corpus without polars).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa

JSON = pa.json_()
_STR = pa.string()
_INT = pa.int64()

FUNCTION = pa.struct([("name", _STR), ("arguments", _STR)])
TOOL_CALL = pa.struct([("id", _STR), ("type", _STR), ("function", FUNCTION)])
MESSAGE = pa.struct(
    [("role", _STR), ("content", _STR), ("tool_calls", pa.list_(TOOL_CALL)), ("tool_call_id", _STR), ("weight", _INT)]
)
REF_CALL = pa.struct([("name", _STR), ("arguments", JSON), ("depends_on", pa.list_(_INT))])
TRACE_CALL = pa.struct(
    [
        ("turn", _INT),
        ("name", _STR),
        ("arguments", JSON),
        ("ok", pa.bool_()),
        ("error_code", _STR),
        ("reference", pa.bool_()),
        ("result", JSON),
        ("error", _STR),
    ]
)

EXAMPLE_ARROW_SCHEMA = pa.schema(
    [
        ("example_id", _STR),
        ("kind", _STR),
        ("server", _STR),
        ("servers", pa.list_(_STR)),
        ("env_seed", _INT),
        ("messages", pa.list_(MESSAGE)),
        ("tools", pa.list_(JSON)),
        ("reference", pa.list_(pa.list_(REF_CALL))),
        ("augmentations", pa.list_(_STR)),
        ("split", _STR),
        ("conversation_id", _STR),
        ("chain_id", _STR),
        ("snapshot_id", _STR),
        ("query_id", _STR),
        ("parent_id", _STR),
        ("info_level", _STR),
        ("persona", _STR),
        ("n_calls", _INT),
        ("chain_length", _INT),
        ("outcomes", pa.list_(_STR)),
        ("trace", pa.list_(TRACE_CALL)),
        ("final_state_hash", _STR),
        ("setup", pa.list_(JSON)),
    ]
)
# the columns held as JSON text before they were nested (what a version written then holds)
NESTED_COLUMNS = ("messages", "tools", "reference", "trace", "setup")


def _dump(v: Any) -> str | None:
    return None if v is None else json.dumps(v, default=str)


def _message_value(m: dict[str, Any]) -> dict[str, Any]:
    calls = m.get("tool_calls")
    return {
        "role": m["role"],
        "content": m.get("content"),
        "tool_calls": None
        if calls is None
        else [
            {
                "id": c.get("id"),
                "type": c.get("type", "function"),
                "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]},
            }
            for c in calls
        ],
        "tool_call_id": m.get("tool_call_id"),
        "weight": m.get("weight"),
    }


def _trace_value(t: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: t.get(k) for k in ("turn", "name", "ok", "error_code", "error")},
        "reference": t.get("reference", True),
        "arguments": _dump(t.get("arguments") or {}),
        "result": _dump(t.get("result")),
    }


_ITEM_SEP = ', {"type": "function", '  # between two items of a tools column text (``pipeline.core.speedups.ToolsJson``)


def tool_items(tools_json: str) -> list[str] | None:
    """The JSON texts of the tools in a tools column text, split without decoding it (``None``: not a list of
    function tools). A quote inside a JSON string is escaped, so the separator can only stand between two
    values; where it stands between two values nested inside a tool, the texts on either side do not decode
    alone, and the caller decodes the whole text instead."""
    if not (tools_json.startswith("[" + _ITEM_SEP[2:]) and tools_json.endswith("}]")):
        return None
    first, *rest = tools_json[1:-1].split(_ITEM_SEP)
    return [first, *(_ITEM_SEP[2:] + part for part in rest)]


class _ToolItems:
    """A tools column text as its tools' JSON texts, each distinct text split once and each distinct tool text
    decoded once to check it (a corpus's tool lists repeat: 5,703 lists over 686 tools at 13,500 examples, and
    decoding every list was most of the writing time). ``"[" + ", ".join(items) + "]"`` is the text again
    (:func:`tools_text`)."""

    def __init__(self) -> None:
        self._seen: dict[str, list[str]] = {}
        self._tool: dict[str, bool] = {}

    def _is_tool(self, item: str) -> bool:
        ok = self._tool.get(item)
        if ok is None:
            try:
                ok = isinstance(json.loads(item), dict)
            except ValueError:  # split inside a tool (see tool_items)
                ok = False
            self._tool[item] = ok
        return ok

    def __call__(self, text: str) -> list[str]:
        out = self._seen.get(text)
        if out is None:
            items = tool_items(text)
            if items is None or not all(map(self._is_tool, items)):
                items = [json.dumps(t) for t in json.loads(text)]
            out = self._seen[text] = items
        return out


def nested_row(
    row: dict[str, Any], tool_items: Callable[[str], list[str]] | None = None, parsed: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A row of JSON texts (``example_row``'s) as the values of :data:`EXAMPLE_ARROW_SCHEMA` (JSON leaves as
    text). ``parsed``: the row's ``messages``, ``reference``, ``trace`` and ``setup`` as the Python values their
    texts decode to, when the caller has them (the records' plain dumps), so the texts are not decoded again."""
    if parsed is None:
        parsed = {
            "messages": json.loads(row["messages"]),
            "reference": json.loads(row["reference"]),
            "trace": json.loads(row["trace"] or "[]"),
            "setup": json.loads(row["setup"]) if row.get("setup") else None,
        }
    setup = parsed["setup"] or None
    return {
        **row,
        "messages": [_message_value(m) for m in parsed["messages"]],
        "tools": (tool_items or _ToolItems())(row["tools"]),
        "reference": [
            [
                {"name": c["name"], "arguments": _dump(c.get("arguments") or {}), "depends_on": c.get("depends_on")}
                for c in turn
            ]
            for turn in parsed["reference"]
        ],
        "trace": [_trace_value(t) for t in parsed["trace"] or []],
        "setup": None if setup is None else [_dump(s) for s in setup],
    }


def _storage(t: pa.DataType) -> pa.DataType:
    """``t`` with every extension type replaced by its storage type (pyarrow builds those from Python values)."""
    if isinstance(t, pa.BaseExtensionType):
        return t.storage_type
    if pa.types.is_list(t):
        return pa.list_(_storage(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _storage(f.type)) for f in t])
    return t


def to_table(rows: list[dict[str, Any]], parsed: dict[str, dict[str, Any]] | None = None) -> pa.Table:
    """Corpus rows of JSON texts as one Arrow table of :data:`EXAMPLE_ARROW_SCHEMA`, in the order given
    (``parsed``: by example id, what :func:`nested_row` may take instead of decoding a row's texts)."""
    items = _ToolItems()
    parsed = parsed or {}
    nested = [nested_row(r, items, parsed.get(r["example_id"])) for r in rows]
    storage = pa.schema([pa.field(f.name, _storage(f.type)) for f in EXAMPLE_ARROW_SCHEMA])
    return pa.Table.from_pylist(nested, schema=storage).cast(EXAMPLE_ARROW_SCHEMA)


# ---- reading ----


def json_value(v: Any) -> Any:
    """A JSON value of a column as Python: a text decoded (a JSON leaf, or a whole column of a version written before
    the nested columns), anything else as it is."""
    return json.loads(v) if isinstance(v, str) else v


def message_dict(m: dict[str, Any]) -> dict[str, Any]:
    """One message with exactly the keys its role carries, in the corpus's order (``Message``'s): a tool
    result ``role, tool_call_id, content``; any other ``role, content`` and ``tool_calls`` when it calls;
    ``weight`` when set."""
    if m.get("role") == "tool":
        out = {"role": "tool", "tool_call_id": m.get("tool_call_id"), "content": m.get("content")}
    else:
        out = {"role": m.get("role"), "content": m.get("content")}
        if m.get("tool_calls") is not None:
            out["tool_calls"] = [
                {"id": c.get("id"), "type": c.get("type") or "function", "function": dict(c["function"])}
                for c in m["tool_calls"]
            ]
    if m.get("weight") is not None:
        out["weight"] = m["weight"]
    return out


def messages_of(v: Any) -> list[dict[str, Any]]:
    """The ``messages`` column value as plain messages (:func:`message_dict`)."""
    return [message_dict(m) for m in (json_value(v) or [])]


def tools_of(v: Any) -> list[dict[str, Any]]:
    """The ``tools`` column value as tool objects."""
    v = json_value(v)
    return [json_value(t) for t in (v or [])]


def tools_text(v: Any) -> str:
    """The ``tools`` column value as the JSON text the content hash was computed from."""
    if isinstance(v, str):
        return v
    return "[" + ", ".join(t if isinstance(t, str) else json.dumps(t) for t in (v or [])) + "]"


def reference_of(v: Any, arguments: bool = True) -> list[list[dict[str, Any]]]:
    """The ``reference`` column value: per user turn, the calls (``name``, ``arguments``, ``depends_on``); a flat
    list of calls is one turn's. Without ``arguments`` they are left undecoded (empty): what a reader of the calls'
    names alone needs (decoding every call's arguments was half of the near-duplicate gate)."""
    v = json_value(v) or []
    if v and isinstance(v[0], dict):
        v = [v]
    return [
        [
            {
                "name": c["name"],
                "arguments": (json_value(c.get("arguments")) or {}) if arguments else {},
                "depends_on": c.get("depends_on") or [],
            }
            for c in turn
        ]
        for turn in v
    ]


def trace_of(v: Any) -> list[dict[str, Any]]:
    """The ``trace`` column value: every executed call with its result or error."""
    return [
        {**t, "arguments": json_value(t.get("arguments")) or {}, "result": json_value(t.get("result"))}
        for t in (json_value(v) or [])
    ]


def setup_of(v: Any) -> list[dict[str, Any]]:
    return [json_value(s) for s in (json_value(v) or [])]


_READERS: dict[str, Callable[[Any], Any]] = {
    "messages": messages_of,
    "tools": tools_of,
    "reference": reference_of,
    "trace": trace_of,
    "setup": setup_of,
}


def decode_row(row: dict[str, Any]) -> dict[str, Any]:
    """A corpus row (from pyarrow's or polars' reader, this format or the JSON strings of an older version)
    with its nested columns as plain Python values."""
    return {k: (_READERS[k](v) if k in _READERS else v) for k, v in row.items()}


# ---- describing ----


def _yaml_inner(t: pa.DataType) -> Any:
    if pa.types.is_list(t):
        return {"list": _yaml_inner(t.value_type)}
    if pa.types.is_struct(t):
        return [_yaml_field(f.name, f.type) for f in t]
    return _dtype(t)


def _dtype(t: pa.DataType) -> str:
    if isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.json":
        return "json"
    return {pa.string(): "string", pa.int64(): "int64", pa.bool_(): "bool"}[t]


def _yaml_field(name: str, t: pa.DataType) -> dict[str, Any]:
    if pa.types.is_list(t):
        return {"name": name, "list": _yaml_inner(t.value_type)}
    if pa.types.is_struct(t):
        return {"name": name, "struct": _yaml_inner(t)}
    return {"name": name, "dtype": _dtype(t)}


def hf_features(schema: pa.Schema = EXAMPLE_ARROW_SCHEMA) -> list[dict[str, Any]]:
    """The schema as the ``dataset_info.features`` list of a Hugging Face dataset card."""
    return [_yaml_field(f.name, f.type) for f in schema]
