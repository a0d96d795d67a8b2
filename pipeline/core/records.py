"""The records, one per arrow of the data flow. Each carries the ids of the records it came from."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, model_serializer

from pipeline.core.domain import Domain

SENSITIVE_KEY = "x-sensitive"


def stable_hash(obj: Any, n: int = 12) -> str:
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:n]


TEXT_BODIES = ("content", "text", "result", "output", "response", "body")  # a field that holds a tool's text


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
    def text_result(self) -> bool:
        """Its result is a text, as far as its output schema says: no schema, or one that only wraps a text (a
        single string field named as a text's body, ``{"content": "..."}``), which names no field another tool
        could take (a single ``path`` field does)."""
        props = (self.output_schema or {}).get("properties") or {}
        return self.output_schema is None or (
            len(props) == 1
            and next(iter(props)) in TEXT_BODIES
            and (next(iter(props.values())) or {}).get("type") == "string"
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
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.input_schema},
        }


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
    # table -> {"columns": [{name, type, pk}], "rows": [...]}: a database's schema, for tools taking SQL
    # (pipeline.language.sqltext)
    tables: dict[str, dict[str, Any]] = {}
    # the service's words (the reasons its users give, its nouns as they say them), for the request writer
    domain: Domain | None = None
    # the sampled context refreshed every k conversations: probes of the next world seeds
    refreshes: list[Snapshot] = []

    def contexts(self) -> list[Snapshot]:
        """Every sampled context of this probe, the first (this one) included, in order."""
        return [self, *self.refreshes]

    def context(self, snapshot_id: str) -> Snapshot:
        """The sampled context a chain or query was written against (this one when unknown)."""
        return next((c for c in self.refreshes if c.snapshot_id == snapshot_id), self)


class Edge(BaseModel):
    src: str
    dst: str
    kind: Literal["explicit", "implicit"]
    fields: dict[str, str] = {}  # output field of src -> input param of dst
    source: Literal["schema+live", "live", "llm", "schema"] = "schema+live"
    confirmed: bool = True
    # the arguments of dst under which the dependency showed (a read's option: the part of the state it shows);
    # left out of the record where there are none, so an edge without them is the record it always was
    when: dict[str, Any] = {}

    @model_serializer(mode="wrap")
    def _without_empty_when(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        if not out.get("when"):
            out.pop("when", None)
        return out


class DependencyGraph(BaseModel):
    graph_id: str
    server: str
    schema_hash: str
    snapshot_id: str
    tools: list[str]
    edges: list[Edge] = []
    unchainable: dict[str, str] = {}  # tool -> why it could not be chained
    # tool -> param -> an argument a live call of that tool accepted where no probe observed one (value flow)
    accepted: dict[str, dict[str, Any]] = {}


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
    # a deliberate error case: something is closed before a later write works on it (pipeline/discovery/goals.py)
    error_case: bool = False

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


AugmentationKind = Literal["distractors", "enum_stripped", "irrelevance", "abstention", "missing_function", "imported"]


class Augmentation(str):
    """One augmentation of an example: its tag as the corpus stores it (``kind[:detail]``), with the
    parts read by name instead of ``split(":")``. Built with the constructors below; a plain tag
    read back (a corpus row, a test) is checked by :meth:`parse`.

    >>> a = Augmentation.abstention_near_miss("export")
    >>> a, a.kind, a.action, a.tool
    ('abstention:near_miss:export', 'abstention', 'export', None)
    >>> Augmentation.distractors(3).count, Augmentation.missing_function("get_order").tool
    (3, 'get_order')
    """

    KINDS: tuple[str, ...] = (
        "distractors",
        "enum_stripped",
        "irrelevance",
        "abstention",
        "missing_function",
        "imported",
    )

    @classmethod
    def parse(cls, tag: str) -> Augmentation:
        if isinstance(tag, Augmentation):
            return tag
        if not isinstance(tag, str) or tag.split(":", 1)[0] not in cls.KINDS:
            raise ValueError(f"not an augmentation tag: {tag!r} (kinds: {', '.join(cls.KINDS)})")
        return cls(tag)

    @classmethod
    def distractors(cls, count: int) -> Augmentation:
        return cls(f"distractors:{count}")

    @classmethod
    def enum_stripped(cls) -> Augmentation:
        return cls("enum_stripped")

    @classmethod
    def irrelevance(cls) -> Augmentation:
        return cls("irrelevance")

    @classmethod
    def abstention(cls, tool: str) -> Augmentation:
        """A request another server's ``tool`` could serve, offered this server's tools."""
        return cls(f"abstention:{tool}")

    @classmethod
    def abstention_near_miss(cls, action: str) -> Augmentation:
        """A request for an ``action`` none of the offered tools performs on what they handle."""
        return cls(f"abstention:near_miss:{action}")

    @classmethod
    def missing_function(cls, tool: str) -> Augmentation:
        return cls(f"missing_function:{tool}")

    @classmethod
    def imported(cls, source: str) -> Augmentation:
        return cls(f"imported:{source}")

    @property
    def kind(self) -> AugmentationKind:
        return self.split(":", 1)[0]  # type: ignore[return-value]

    @property
    def _detail(self) -> str | None:
        parts = self.split(":", 1)
        return parts[1] if len(parts) > 1 else None

    @property
    def near_miss(self) -> bool:
        return self.kind == "abstention" and self.startswith("abstention:near_miss:")

    @property
    def tool(self) -> str | None:
        """The hidden tool of a missing-function example, the other server's tool of an abstention."""
        return self._detail if self.kind in ("missing_function", "abstention") and not self.near_miss else None

    @property
    def action(self) -> str | None:
        """The action a near-miss abstention asks for."""
        return self.split(":", 2)[2] if self.near_miss else None

    @property
    def count(self) -> int | None:
        """How many distractor tools were added."""
        return int(self._detail) if self.kind == "distractors" and self._detail else None

    @property
    def source(self) -> str | None:
        """Where an imported example came from (``when2call``, ``xlam_irrelevance``)."""
        return self._detail if self.kind == "imported" else None


AugmentationTag = Annotated[str, AfterValidator(Augmentation.parse)]


# kinds of example with reference calls: a plain multi-turn conversation, and one where the user left out a
# required value and the assistant asked for it first (information level "missing")
TOOL_KINDS = ("multi_turn", "clarification")
ConversationKind = Literal["multi_turn", "clarification"]
# every kind of corpus example: the conversations, and the no-call kinds augmentation adds
ExampleKind = Literal["multi_turn", "clarification", "irrelevance", "abstention", "missing_function"]


class FunctionCall(BaseModel):
    name: str
    arguments: str  # the arguments as a JSON object, as the chat format carries them


class ToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(BaseModel):
    """One chat message in the OpenAI format the corpus stores: system, user, assistant (a reply, or
    tool calls with ``content`` None) or tool (a result answering ``tool_call_id``). Serializes to
    exactly the keys its role carries, in the corpus's order. ``weight``: 0 on an assistant message that training
    must not learn from (a recovery demonstration's wrong attempt), as the OpenAI fine-tuning format has it; written
    only when set."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    weight: Literal[0, 1] | None = None

    @classmethod
    def calling(cls, call_id: str, name: str, arguments: dict[str, Any]) -> Message:
        """An assistant message making one tool call."""
        return cls(
            role="assistant",
            content=None,
            tool_calls=[ToolCall(id=call_id, function=FunctionCall(name=name, arguments=json.dumps(arguments)))],
        )

    @model_serializer
    def _wire(self) -> dict[str, Any]:
        if self.role == "tool":
            return {"role": "tool", "tool_call_id": self.tool_call_id, "content": self.content}
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls is not None:
            out["tool_calls"] = [tc.model_dump() for tc in self.tool_calls]
        if self.weight is not None:
            out["weight"] = self.weight
        return out


def messages_json(messages: list[Message]) -> list[dict[str, Any]]:
    """The messages as the corpus stores them (plain JSON objects)."""
    return [m.model_dump() for m in messages]


class TraceCall(BaseModel):
    """One executed call of a simulated conversation: a reference call, or a wrong first attempt the
    assistant then corrects (``reference`` False); its result, or its error."""

    turn: int
    name: str
    arguments: dict[str, Any] = {}
    ok: bool
    error_code: str | None = None
    reference: bool = True
    result: Any = None
    error: str | None = None


class Conversation(BaseModel):
    """A simulated conversation: what simulation writes, replay validates and dedup filters."""

    conversation_id: str
    kind: ConversationKind = "multi_turn"
    server: str
    servers: list[str]
    seed: int
    snapshot_id: str
    chain_id: str | None = None
    query_id: str | None = None
    info_level: str | None = None
    persona: str | None = None
    messages: list[Message]
    tools: list[ToolSpec]
    reference: list[list[RefCall]]  # per user turn
    trace: list[TraceCall] = []  # every executed call, in order
    outcomes: list[str] = []  # SUCCESS / PARTIAL / FAILURE per turn
    final_state_hash: str | None = None
    # the server's session set-up calls ({tool, arguments}, secrets as ``${secret:NAME}``), run before the
    # conversation: context for replay and rollouts, never a turn to train on
    setup: list[dict[str, Any]] = []

    def call_names(self) -> list[str]:
        return [c.name for turn in self.reference for c in turn]


class Example(Conversation):
    """A corpus example: a selected conversation with its augmentations, or a no-call kind
    (irrelevance, abstention, missing function) made by augmentation; what the corpus writer takes."""

    kind: ExampleKind = "multi_turn"  # type: ignore[assignment]
    augmentations: list[AugmentationTag] = []
    parent_id: str | None = None  # the conversation a variant was made from

    @classmethod
    def of(cls, conv: Conversation) -> Example:
        """A conversation as an example (no augmentation yet); its records are shared, not copied."""
        if isinstance(conv, Example):
            return conv
        return cls(**{k: getattr(conv, k) for k in Conversation.model_fields})


# what a rejection's payload holds: a record of one arrow of the data flow, a probe call, or nothing
RecordType = Literal["snapshot", "graph", "chain", "query", "conversation", "probe_call", "none"]


class Rejection(BaseModel):
    rejection_id: str
    stage: str
    reason: str
    detail: str
    server: str | None = None
    upstream: dict[str, str | None] = Field(default_factory=dict)
    payload: str = ""  # JSON of the rejected record (for lineage)
    record_type: RecordType = "none"  # what ``payload`` holds


def record_type_of(payload: Any) -> RecordType:
    """The record type of a payload that is a record (a model of this module); "none" for no payload."""
    if payload is None:
        return "none"
    types: dict[type, RecordType] = {
        Snapshot: "snapshot",
        DependencyGraph: "graph",
        Chain: "chain",
        UserQuery: "query",
        Conversation: "conversation",
    }  # an Example is a Conversation
    for cls, name in types.items():
        if isinstance(payload, cls):
            return name
    raise ValueError(f"a rejected {type(payload).__name__} needs its record_type named")


def rejection(
    stage: str,
    reason: str,
    detail: str,
    server: str | None,
    upstream: dict[str, str | None],
    payload: Any = None,
    record_type: RecordType | None = None,
) -> Rejection:
    """A rejection of ``payload`` (a record, or plain JSON with its ``record_type`` named) by the stage named
    ``stage`` (a :class:`~pipeline.core.stage_names.StageName`, kept as its plain string)."""
    stage = str(stage)
    kind = record_type or record_type_of(payload)
    if isinstance(payload, BaseModel):  # serialized by pydantic directly (a whole conversation, a chain)
        body = payload.model_dump_json(fallback=str)
    else:
        body = json.dumps(payload, default=str) if payload is not None else ""
    rid = "rej-" + stable_hash([stage, reason, detail, upstream], 14)
    return Rejection(
        rejection_id=rid,
        stage=stage,
        reason=reason,
        detail=detail,
        server=server,
        upstream=upstream,
        payload=body,
        record_type=kind,
    )
