"""Robustness augmentation (exact shares) and the no-call example kinds, plus the JSONL importer."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest

from pipeline.assembly.augment import (
    abstention_example,
    apply_robustness,
    import_abstention_file,
    irrelevance_example,
    missing_function_variant,
    robustness_reach,
    strip_enums,
)
from pipeline.core.config import AugmentConfig, BuildConfig
from pipeline.core.records import Example, ToolSpec
from pipeline.env import Environment
from pipeline.language.offtopic import irrelevant_request
from pipeline.language.replies import describe
from pipeline.stages.assembly import stage_augment

# servers sharing tool names with banking and with each other (list_customers, list_orders, ...)
POOL_SERVERS = ["crm", "payments", "food_delivery", "shopping"]


@pytest.fixture(scope="module")
def pool(banking_tools):
    out = {"banking": banking_tools}
    for name in POOL_SERVERS:
        with Environment(name) as env:
            out[name] = env.tools()
    return out


def _has_enum_key(node) -> bool:
    if isinstance(node, dict):
        return "enum" in node or any(_has_enum_key(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_enum_key(v) for v in node)
    return False


def _copies(conversations, n):
    base = [c.model_copy(deep=True) for c in conversations]
    out = []
    for i in range(n):  # distinct ids, same content: enough to check shares
        c = base[i % len(base)].model_copy(deep=True, update={"conversation_id": f"conv-{i:03d}"})
        out.append(Example.of(c))
    return out


def test_distractors_and_enum_stripping_meet_exact_shares(conversations, pool):
    convs = _copies(conversations, 25)
    before = {c.conversation_id: [t.name for t in c.tools] for c in convs}
    apply_robustness(convs, pool, AugmentConfig(), seed=7)
    tags = Counter(a.split(":")[0] for c in convs for a in c.augmentations)
    assert tags["distractors"] == round(0.40 * 25) == 10
    assert tags["enum_stripped"] == round(0.30 * 25) == 8
    for c in convs:
        if not any(a.startswith("distractors") for a in c.augmentations):
            assert [t.name for t in c.tools] == before[c.conversation_id]


def test_distractors_are_three_to_eight_distinct_tools_from_other_servers(conversations, pool):
    convs = _copies(conversations, 40)
    own_names = {t.name for t in pool["banking"]}
    apply_robustness(convs, pool, AugmentConfig(distractor_rate=1.0), seed=11)
    for c in convs:
        (tag,) = [a for a in c.augmentations if a.startswith("distractors:")]
        extra = [t for t in c.tools if t.server != "banking"]
        assert 3 <= len(extra) <= 8 and int(tag.split(":")[1]) == len(extra)
        assert all(t.server in POOL_SERVERS for t in extra)
        names = [t.name for t in c.tools]
        assert len(names) == len(set(names)), (
            f"duplicate tool names offered: {sorted(n for n in names if names.count(n) > 1)}"
        )
        assert not {t.name for t in extra} & own_names
        assert own_names <= set(names)  # nothing of the server's own tools is lost


def test_enum_stripping_removes_every_enum(conversations, pool):
    convs = _copies(conversations, 20)
    assert all(_has_enum_key([t.input_schema for t in c.tools]) for c in convs)
    apply_robustness(convs, pool, AugmentConfig(enum_strip_rate=0.5), seed=3)
    stripped = [c for c in convs if "enum_stripped" in c.augmentations]
    assert len(stripped) == 10
    for c in stripped:
        assert not _has_enum_key([t.input_schema for t in c.tools])
    for c in convs:
        if c not in stripped:
            assert _has_enum_key([t.input_schema for t in c.tools])


def test_strip_enums_counts_and_leaves_the_original_untouched(tools_by_name):
    schema = tools_by_name["freeze_account"].input_schema
    stripped, n = strip_enums(schema)
    assert n >= 1 and not _has_enum_key(stripped) and _has_enum_key(schema)
    assert stripped["properties"].keys() == schema["properties"].keys()


def test_augmentation_is_deterministic(conversations, pool):
    a, b = _copies(conversations, 12), _copies(conversations, 12)
    apply_robustness(a, pool, AugmentConfig(), seed=5)
    apply_robustness(b, pool, AugmentConfig(), seed=5)
    assert [[t.name for t in c.tools] for c in a] == [[t.name for t in c.tools] for c in b]


def _no_calls(conv):
    assert conv.reference == [[]]
    assert not any(m.tool_calls for m in conv.messages)
    assert conv.messages[-1].role == "assistant" and conv.messages[-1].content


def test_irrelevance_example_has_an_empty_reference(banking_tools, snapshot):
    conv = irrelevance_example("banking", banking_tools, 7, random.Random(0), snapshot.snapshot_id)
    _no_calls(conv)
    assert conv.kind == "irrelevance" and conv.augmentations == ["irrelevance"]


def test_irrelevance_requests_are_a_large_pool_without_repeats():
    asked: set[str] = set()
    rng = random.Random(3)
    for _ in range(500):
        irrelevant_request(rng, asked)
    assert len(asked) == 500
    assert len({q.split()[0] for q in asked}) >= 8, "many question shapes"


def test_abstention_is_a_near_miss_on_what_the_offered_tools_handle(banking_tools, pool, snapshot):
    other = next(t for t in pool["crm"] if t.name == "create_contact")
    asked: set[str] = set()
    for i in range(12):
        conv = abstention_example("banking", banking_tools, other, 7, random.Random(i), snapshot.snapshot_id, asked)
        _no_calls(conv)
        (tag,) = conv.augmentations
        assert conv.kind == "abstention" and tag.startswith("abstention:near_miss:")
        action = tag.rsplit(":", 1)[1]
        assert not any(action in t.name for t in conv.tools), "no offered tool is named after the asked action"
        assert re.search(r"account|customer|transaction|payee|balance", conv.messages[1].content)
        for seed in range(4):  # distractors never bring a tool named after the action
            c = conv.model_copy(deep=True)
            apply_robustness([c], {"banking": banking_tools, **pool}, AugmentConfig(distractor_rate=1.0), seed=seed)
            assert not any(action in t.name for t in c.tools)
    assert len(asked) == 12, "no request twice"


def test_abstention_without_a_near_miss_asks_for_another_servers_tool(banking_tools, pool, snapshot):
    other = next(t for t in pool["crm"] if t.name == "create_contact")
    conv = abstention_example("banking", [], other, 7, random.Random(0), snapshot.snapshot_id)
    _no_calls(conv)
    assert conv.kind == "abstention" and conv.augmentations == ["abstention:create_contact"]
    assert "contact" in conv.messages[1].content
    conv = abstention_example("banking", banking_tools, other, 7, random.Random(0), snapshot.snapshot_id).model_copy(
        update={"augmentations": ["abstention:create_contact"]}
    )
    # distractor injection must not bring the very tool back
    for seed in range(8):
        c = conv.model_copy(deep=True)
        apply_robustness(
            [c], {"banking": banking_tools, "crm": pool["crm"]}, AugmentConfig(distractor_rate=1.0), seed=seed
        )
        assert "create_contact" not in {t.name for t in c.tools}


def test_missing_function_variant_hides_the_first_needed_tool(conversations):
    src = conversations[0]
    first = src.reference[0][0].name
    v = missing_function_variant(src, random.Random(0))
    _no_calls(v)
    assert v.kind == "missing_function" and v.parent_id == src.conversation_id
    # what the hidden tool does, with its article: "No tool of mine lets me look up the balance", never
    # "look up balance"
    assert describe(next(t for t in src.tools if t.name == first)) in v.messages[2].content
    assert first not in {t.name for t in v.tools}
    assert len(v.tools) == len(src.tools) - 1
    assert v.messages[1] == next(m for m in src.messages if m.role == "user")
    assert v.augmentations == [f"missing_function:{first}"]


def test_distractors_never_bring_back_a_hidden_tool(conversations, banking_tools):
    v = missing_function_variant(conversations[0], random.Random(0))
    hidden = v.augmentations[0].split(":", 1)[1]
    twin = ToolSpec(
        name=hidden,
        server="elsewhere",
        description="Same name, other server.",
        input_schema={"type": "object", "properties": {}},
    )
    fillers = [
        ToolSpec(name=f"other_{i}", server="elsewhere", input_schema={"type": "object", "properties": {}})
        for i in range(3)
    ]
    for seed in range(6):
        c = v.model_copy(deep=True)
        apply_robustness(
            [c],
            {"banking": banking_tools, "elsewhere": [twin, *fillers]},
            AugmentConfig(distractor_rate=1.0),
            seed=seed,
        )
        assert hidden not in {t.name for t in c.tools}


def test_stage_augment_abstentions_never_offer_a_same_named_tool(conversations, pool, snapshot):
    snaps = {s: snapshot.model_copy(update={"server": s, "tools": ts}) for s, ts in pool.items()}
    # 40 examples need 13 multi-turn ones, which the banking fixture supplies (no short-supply scaling)
    cfg = BuildConfig(
        examples=40, servers=sorted(pool), augment=AugmentConfig(abstention_rate=0.5, irrelevance_rate=0.1)
    )
    out = stage_augment(cfg, [c.model_copy(deep=True) for c in conversations], snaps)
    abst = [c for c in out.items if c.kind == "abstention"]
    assert len(abst) == 20
    for c in abst:
        about = next(a for a in c.augmentations if a.startswith("abstention")).split(":", 1)[1]
        assert about not in {t.name for t in c.tools}
    assert sum(c.kind == "irrelevance" for c in out.items) == 4


# ---------------------------------------------------------------------------------------------- importer

W2C_TOOL = json.dumps(
    {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
)


def test_import_when2call_style_keeps_no_call_rows(tmp_path):
    rows = [
        {
            "uuid": "1",
            "question": "What's my horoscope today?",
            "correct_answer": "cannot_answer",
            "tools": [W2C_TOOL],
            "answers": {
                "direct": "Sunny.",
                "tool_call": '{"name": "get_weather", "arguments": {"city": "Paris"}}',
                "request_for_info": "Which city?",
                "cannot_answer": "I can't tell horoscopes with these tools.",
            },
        },
        {
            "uuid": "2",
            "question": "What's the weather?",
            "correct_answer": "request_for_info",
            "tools": [W2C_TOOL],
            "answers": {"request_for_info": "Which city do you mean?", "tool_call": "{}"},
        },
        {
            "uuid": "3",
            "question": "Weather in Paris?",
            "correct_answer": "tool_call",
            "tools": [W2C_TOOL],
            "answers": {"tool_call": '{"name": "get_weather", "arguments": {"city": "Paris"}}'},
        },
    ]
    f = tmp_path / "when2call.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    out = import_abstention_file(f)
    assert [c.messages[0].content for c in out] == ["What's my horoscope today?", "What's the weather?"]
    for c in out:
        _no_calls(c)
        assert c.augmentations == ["imported:when2call"] and [t.name for t in c.tools] == ["get_weather"]
    assert out[0].messages[-1].content == "I can't tell horoscopes with these tools."
    assert out[1].messages[-1].content == "Which city do you mean?"


def test_import_xlam_irrelevance_style(tmp_path):
    tools = json.dumps(
        [{"name": "convert_currency", "description": "FX", "parameters": {"type": "object", "properties": {}}}]
    )
    rows = [
        {"query": "Tell me a joke", "tools": tools, "answers": "[]"},
        {
            "query": "Convert 5 USD",
            "tools": tools,
            "answers": json.dumps([{"name": "convert_currency", "arguments": {}}]),
        },
    ]
    f = tmp_path / "xlam.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows))
    out = import_abstention_file(f)
    assert len(out) == 1
    c = out[0]
    _no_calls(c)
    assert c.kind == "abstention" and c.augmentations == ["imported:xlam_irrelevance"]
    assert [t.name for t in c.tools] == ["convert_currency"] and c.snapshot_id == "import:xlam.jsonl"


@pytest.mark.parametrize(
    "bad, why",
    [
        ("{not json", "not JSON"),
        (json.dumps({"tools": []}), "question"),
        (json.dumps({"query": "hi", "tools": "[{broken", "answers": "[]"}), "tools"),
        (json.dumps({"query": "hi", "tools": [{"description": "no name"}], "answers": "[]"}), "tools"),
    ],
)
def test_import_names_the_file_and_line_of_a_malformed_line(tmp_path, bad, why):
    f = tmp_path / "mixed.jsonl"
    good = json.dumps({"query": "Tell me a joke", "tools": "[]", "answers": "[]"})
    f.write_text("\n".join([good, good, bad, good]))
    with pytest.raises(ValueError) as exc:
        import_abstention_file(f)
    assert f"{f}:3:" in str(exc.value) and why in str(exc.value)


# ------------------------------------------------------------------------- a third-party server built alone

STATEMENT_TOOL = ToolSpec(
    name="query",
    server="duckdb",
    description="Execute a query on the DuckDB database",
    input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


def _alone(conversations, n: int) -> list[Example]:
    """``n`` examples of one server whose one tool has no enum (a SQL database built alone)."""
    return [
        c.model_copy(update={"server": "duckdb", "servers": ["duckdb"], "tools": [STATEMENT_TOOL]})
        for c in _copies(conversations, n)
    ]


def test_a_server_alone_gets_no_enum_target_though_borrowed_distractors_carry_enums(conversations, pool, tmp_path):
    """The gate counts what augment could do, with augment's own function: distractors borrowed from built-in
    servers bring enums into the offered tools, but only an example's own schemas are stripped, so the enum target
    is capped to none and says why; the distractor target, which borrowing reaches, stays."""
    from pipeline.corpus.store import off_target, write_corpus

    convs = _alone(conversations, 20)
    reach = apply_robustness(convs, {"duckdb": [STATEMENT_TOOL], **pool}, AugmentConfig(), seed=7)
    assert reach == {"distractors": 20, "enum_stripped": 0}
    assert sum(any(a.startswith("distractors") for a in c.augmentations) for c in convs) == 8
    assert any(_has_enum_key([t.input_schema for t in c.tools]) for c in convs)  # the borrowed tools' enums
    cfg = BuildConfig(examples=20, servers=["duckdb"], data_dir=str(tmp_path))
    path = write_corpus(cfg, convs, [], reach=reach)
    comp = json.loads((path / "manifest.json").read_text())["composition"]
    assert comp["targets"]["enum_stripped"] == 0.0 and comp["targets"]["distractors"] == 0.4
    assert comp["capped"] == {"enum_stripped": "0 of 20 examples offer a schema with an enum to strip"}
    assert "distractors" not in off_target(comp) and "enum_stripped" not in off_target(comp)
    assert "Targets lowered to what these servers allow" in (path / "README.md").read_text()


def test_a_server_with_nothing_to_borrow_reaches_no_distractors(conversations):
    """No other server's tools to add: augment adds none, and the reach it reports (the gate's ceiling) is none."""
    convs = _alone(conversations, 10)
    assert apply_robustness(convs, {"duckdb": [STATEMENT_TOOL]}, AugmentConfig(), seed=7)["distractors"] == 0
    assert not any(c.augmentations for c in convs)
    assert robustness_reach(convs, {"duckdb": [STATEMENT_TOOL]}) == {"distractors": set(), "enum_stripped": set()}
