"""The records, one per arrow of the data flow. Each carries the ids of the records it came from."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

SENSITIVE_KEY = "x-sensitive"


def stable_hash(obj: Any, n: int = 12) -> str:
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:n]


class ToolSpec(BaseModel):
    name: str
    server: str
    description: str = ""
    input_schema: dict[str, Any] = {}
    output_schema: dict[str, Any] | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    annotated: bool = False

    @classmethod
    def from_mcp(cls, tool: Any, server: str) -> ToolSpec:
        ann = tool.annotations
        return cls(
            name=tool.name,
            server=server,
            description=tool.description or "",
            input_schema=dict(tool.input_schema or {"type": "object", "properties": {}}),
            output_schema=dict(tool.output_schema) if tool.output_schema else None,
            read_only=bool(ann and ann.read_only_hint),
            destructive=bool(ann and ann.destructive_hint),
            idempotent=bool(ann and ann.idempotent_hint),
            annotated=ann is not None and ann.read_only_hint is not None,
        )

    @property
    def properties(self) -> dict[str, Any]:
        return dict(self.input_schema.get("properties") or {})

    @property
    def required(self) -> list[str]:
        return list(self.input_schema.get("required") or [])

    @property
    def sensitive(self) -> list[str]:
        return [k for k, v in self.properties.items() if isinstance(v, dict) and v.get(SENSITIVE_KEY)]

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.input_schema}}


def schema_hash(tools: list[ToolSpec]) -> str:
    return stable_hash([t.model_dump(exclude={"server"}) for t in sorted(tools, key=lambda t: t.name)], 16)


class CallResult(BaseModel):
    ok: bool
    data: Any = None
    text: str = ""
    error_code: str | None = None
    error: str | None = None

    def as_tool_content(self) -> str:
        if self.ok:
            return json.dumps(self.data, sort_keys=True, default=str) if not isinstance(self.data, str) else self.data
        return json.dumps({"error": self.error_code, "message": self.error})


class Snapshot(BaseModel):
    """Real entities sampled through read-only tools."""

    snapshot_id: str
    server: str
    seed: int
    schema_hash: str
    tools: list[ToolSpec]
    # entity id -> the record a read-only tool returned for it (merged over tools)
    entities: dict[str, dict[str, Any]] = {}
    # field name -> observed scalar values (strings, numbers) from read-only results
    values: dict[str, list[Any]] = {}
    # entity id -> {sensitive param name: value}; what a user knows about their own entities
    secrets: dict[str, dict[str, Any]] = {}
    probe_calls: list[dict[str, Any]] = []
    skipped_tools: dict[str, str] = {}
    # entity id -> its kind ("account", "file", "table"); kind -> supported entities of that kind;
    # kind -> the "tool.param"s a value of that kind was accepted by in a live probe call
    entity_kinds: dict[str, str] = {}
    kind_support: dict[str, int] = {}
    feeds: dict[str, list[str]] = {}
    # the sampled context refreshed every k conversations: probes of the next world seeds
    refreshes: list["Snapshot"] = []

    def contexts(self) -> list["Snapshot"]:
        """Every sampled context of this probe, the first (this one) included, in order."""
        return [self, *self.refreshes]

    def context(self, snapshot_id: str) -> "Snapshot":
        """The sampled context a chain or query was written against (this one when unknown)."""
        return next((c for c in self.refreshes if c.snapshot_id == snapshot_id), self)


class Edge(BaseModel):
    src: str
    dst: str
    kind: Literal["explicit", "implicit"]
    fields: dict[str, str] = {}  # output field of src -> input param of dst
    source: Literal["schema+live", "live", "llm", "schema"] = "schema+live"
    confirmed: bool = True


class DependencyGraph(BaseModel):
    graph_id: str
    server: str
    schema_hash: str
    snapshot_id: str
    tools: list[str]
    edges: list[Edge] = []
    unchainable: dict[str, str] = {}  # tool -> why it could not be chained


class ArgSource(BaseModel):
    """Where a chain step's argument comes from: the user (a snapshot value) or an earlier step."""

    kind: Literal["user", "step"]
    value: Any = None
    step: int | None = None
    field: str | None = None


class ChainStep(BaseModel):
    name: str
    args: dict[str, ArgSource] = {}
    depends_on: list[int] = []


class Chain(BaseModel):
    chain_id: str
    server: str
    seed: int
    snapshot_id: str
    graph_id: str
    steps: list[ChainStep]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.steps]


class RefCall(BaseModel):
    name: str
    arguments: dict[str, Any] = {}
    depends_on: list[int] = []  # indices into the flattened reference of the whole conversation


class UserQuery(BaseModel):
    query_id: str
    chain_id: str
    server: str
    info_level: Literal["complete", "missing", "minimal"]
    persona: str
    turns: list[str]  # one request per user turn
    turn_steps: list[list[int]]  # chain step indices served by each turn
    withheld: dict[str, Any] = {}  # for "missing": param -> value the user gives when asked
    backend: str = "template"
    snapshot_id: str = ""
    seed: int = 0
    step_args: list[dict[str, Any]] = []  # resolved arguments of every chain step (dry run)
    step_ok: list[bool] = []  # whether each step succeeded in the dry run (the live state decides; replay re-checks)


# kinds of example with reference calls: a plain multi-turn conversation, and one where the user left out a
# required value and the assistant asked for it first (information level "missing")
TOOL_KINDS = ("multi_turn", "clarification")


class Conversation(BaseModel):
    conversation_id: str
    kind: str = "multi_turn"
    server: str
    servers: list[str]
    seed: int
    snapshot_id: str
    chain_id: str | None = None
    query_id: str | None = None
    info_level: str | None = None
    persona: str | None = None
    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    reference: list[list[RefCall]]  # per user turn
    trace: list[dict[str, Any]] = []  # every executed call: name, arguments, ok, error_code, turn
    outcomes: list[str] = []  # SUCCESS / PARTIAL / FAILURE per turn
    augmentations: list[str] = []
    parent_id: str | None = None
    final_state_hash: str | None = None
    # the server's session set-up calls ({tool, arguments}, secrets as ``${secret:NAME}``), run before the
    # conversation: context for replay and rollouts, never a turn to train on
    setup: list[dict[str, Any]] = []

    def call_names(self) -> list[str]:
        return [c.name for turn in self.reference for c in turn]


class Rejection(BaseModel):
    rejection_id: str
    stage: str
    reason: str
    detail: str
    server: str | None = None
    upstream: dict[str, str | None] = Field(default_factory=dict)
    payload: str = ""  # JSON of the rejected record (for lineage)


def rejection(stage: str, reason: str, detail: str, server: str | None, upstream: dict[str, str | None], payload: Any = None) -> Rejection:
    if isinstance(payload, BaseModel):  # serialized by pydantic directly (a whole conversation, a chain)
        body = payload.model_dump_json(fallback=str)
    else:
        body = json.dumps(payload, default=str) if payload is not None else ""
    rid = "rej-" + stable_hash([stage, reason, detail, upstream], 14)
    return Rejection(rejection_id=rid, stage=stage, reason=reason, detail=detail, server=server, upstream=upstream, payload=body)
