"""What a tool's words say about its parameters (pipeline.language.hints), and values made up for tools known by their
words only (no output schema) that respect it: stated ranges, listed names, text defaults; and the lines of
text results another tool can take (labelled lines, ids opening lines)."""

import random

from pipeline.core.records import Snapshot, ToolSpec
from pipeline.language.entities import line_pairs
from pipeline.language.hints import listed_values, range_hint
from pipeline.language.values import fill_args


def _tool(name, desc, props, required=(), output_schema=None):
    return ToolSpec(
        name=name,
        server="x",
        description=desc,
        output_schema=output_schema,
        input_schema={"type": "object", "properties": props, "required": list(required)},
    )


def _snap(*tools):
    return Snapshot(snapshot_id="s", server="x", seed=0, schema_hash="h", tools=list(tools))


PEDAL = _tool(
    "press_brake_pedal",
    "Press the brake pedal. pedal_position is between 0 (released) and 1 (fully pressed).",
    {"pedal_position": {"type": "number", "default": 1.0, "title": "Pedal Position"}},
)
CLIMATE = _tool(
    "set_climate",
    "Set the cabin climate: target temperature, unit, fan speed (0-5) and mode.",
    {"temperature": {"type": "number"}, "fan_speed": {"type": "integer", "default": 2}},
    ["temperature"],
)
DOORS = _tool(
    "lock_doors",
    "Lock or unlock doors by name: driver, passenger, rear_left, rear_right.",
    {"doors": {"type": "array", "items": {"type": "string"}}, "unlock": {"type": "boolean", "default": False}},
    ["doors"],
)


def test_ranges_are_read_from_the_sentence_that_names_the_parameter():
    assert range_hint("pedal_position", PEDAL.properties["pedal_position"], PEDAL.description) == (0, 1)
    assert range_hint("fan_speed", CLIMATE.properties["fan_speed"], CLIMATE.description) == (0, 5)
    assert range_hint("temperature", CLIMATE.properties["temperature"], CLIMATE.description) == (
        None,
        None,
    )  # fan speed's range is not its
    assert range_hint("rating", {"type": "integer", "description": "Stars, from 1 to 5"}) == (1, 5)
    assert range_hint("count", {"type": "integer", "description": "How many; must be >= 3"}) == (3, None)
    assert range_hint("n", {"type": "integer", "minimum": 2, "maximum": 4, "description": "between 0 and 100"}) == (
        2,
        4,
    )


def test_allowed_names_are_read_from_a_list_in_the_description():
    assert listed_values("doors", DOORS.properties["doors"], DOORS.description) == [
        "driver",
        "passenger",
        "rear_left",
        "rear_right",
    ]
    assert listed_values("mode", {"type": "string", "description": "one of: auto, cool or heat"}) == [
        "auto",
        "cool",
        "heat",
    ]
    assert listed_values("path", {"type": "string", "description": "Path of the file to read"}) == []


def test_made_up_values_for_a_text_only_tool_stay_in_the_stated_range_and_names():
    rng = random.Random(0)
    snap = _snap(PEDAL, CLIMATE, DOORS)
    for _ in range(50):
        assert 0 <= fill_args(PEDAL, snap, rng)["pedal_position"] <= 1
        assert 0 <= fill_args(CLIMATE, snap, rng, optional_rate=1.0)["fan_speed"] <= 5
        doors = fill_args(DOORS, snap, rng)["doors"]
        assert isinstance(doors, list) and doors and set(doors) <= {"driver", "passenger", "rear_left", "rear_right"}


def test_a_text_only_writer_with_required_fields_is_not_given_an_option_and_an_option_takes_its_text_default():
    branch = _tool(
        "git_create_branch",
        "Creates a new branch from an optional base branch",
        {
            "branch_name": {"type": "string"},
            "repo_path": {"type": "string", "default": "."},
            "base_branch": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        ["branch_name"],
    )
    rng = random.Random(0)
    snap = _snap(branch)
    assert all(set(fill_args(branch, snap, rng)) == {"branch_name"} for _ in range(20))
    assert {fill_args(branch, snap, rng, optional_rate=1.0)["repo_path"] for _ in range(10)} == {"."}


def test_a_tool_with_an_output_schema_keeps_its_values_as_they_were():
    described = _tool(
        "set_level",
        "Set the level. level is between 0 and 1.",
        {"level": {"type": "integer"}},
        ["level"],
        output_schema={"type": "object", "properties": {}},
    )
    rng = random.Random(0)
    assert (
        max(fill_args(described, _snap(described), rng)["level"] for _ in range(50)) > 1
    )  # the schema's default range (0-10)


def test_labelled_lines_offer_each_value_and_label_and_log_lines_their_ids():
    assert line_pairs("On branch main\nmodified: README.md\nuntracked: app.py") == [
        ("modified", "README.md"),
        ("key", "modified"),
        ("untracked", "app.py"),
        ("key", "untracked"),
    ]
    assert ("key", "Home") in line_pairs("Home: 12 Elm Street\nOffice: 400 Market Street")
    assert line_pairs("3f2a1b9 Fix typo in README\n9c1d2e3 Add config loader") == [("id", "3f2a1b9"), ("id", "9c1d2e3")]
    assert line_pairs("Successfully wrote to README.md") == []


def test_record_fields_of_a_text_only_tool_take_observed_values_and_a_new_things_name_stays_new():
    relation = {
        "type": "object",
        "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "relationType": {"type": "string"}},
        "required": ["from", "to", "relationType"],
    }
    entity = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "entityType": {"type": "string"}},
        "required": ["name", "entityType"],
    }
    obs = {
        "type": "object",
        "properties": {"entityName": {"type": "string"}, "contents": {"type": "array", "items": {"type": "string"}}},
        "required": ["entityName", "contents"],
    }
    tools = [
        _tool(n, "", {k: {"type": "array", "items": item}}, [k])
        for n, k, item in (
            ("create_relations", "relations", relation),
            ("create_entities", "entities", entity),
            ("add_observations", "observations", obs),
        )
    ]
    names = ["Ada Lovelace", "Charles Babbage"]
    snap = _snap(*tools).model_copy(
        update={
            "values": {
                "name": names,
                "from": names,
                "to": ["London"],
                "relationType": ["designed"],
                "entityType": ["person"],
            }
        }
    )
    rng = random.Random(0)
    rel = fill_args(tools[0], snap, rng)["relations"][0]
    assert rel["from"] in names and rel["to"] == "London" and rel["relationType"] == "designed"
    ent = fill_args(tools[1], snap, rng)["entities"][0]
    assert ent["entityType"] == "person" and ent["name"] not in names
    assert fill_args(tools[2], snap, rng)["observations"][0]["entityName"] in names


def test_a_namespaced_verb_takes_its_first_value_as_its_object():
    from pipeline.core.records import CallResult
    from pipeline.language.requests.step import StepWriter

    add = _tool(
        "git_add",
        "Adds file contents to the staging area",
        {"files": {"type": "array", "items": {"type": "string"}}},
        ["files"],
    )
    step = {
        "tool": add,
        "args": {"files": ["README.md"]},
        "sources": {},
        "source_fields": {},
        "result": CallResult(ok=True, data="ok"),
        "index": 0,
    }
    assert (
        StepWriter([step], {}, "2026-03-02", random.Random(0))
        .phrase(step, [], terse=False)
        .endswith(" the files README.md")
    )


def test_a_tool_with_an_output_schema_names_observed_things_in_its_records_and_keeps_its_other_fields():
    """server-memory 2026.8.31 declares output schemas: its ``entityName`` and ``entityNames`` still take observed
    names (else ``add_observations`` names a made-up entity and fails, and never chains); a record's other fields
    stay as the schema draws them (a built-in scene action's ``device_id`` is not swapped for an observed one)."""
    out = {"type": "object", "properties": {"success": {"type": "boolean"}}}
    obs = {
        "type": "object",
        "properties": {"entityName": {"type": "string"}, "contents": {"type": "array", "items": {"type": "string"}}},
        "required": ["entityName", "contents"],
    }
    action = {
        "type": "object",
        "properties": {"device_id": {"type": "string"}, "from": {"type": "string"}},
        "required": ["device_id", "from"],
    }
    add = _tool("add_observations", "", {"observations": {"type": "array", "items": obs}}, ["observations"], out)
    delete = _tool(
        "delete_entities", "", {"entityNames": {"type": "array", "items": {"type": "string"}}}, ["entityNames"], out
    )
    scene = _tool("create_scene", "", {"actions": {"type": "array", "items": action}}, ["actions"], out)
    names = ["Ada Lovelace", "Charles Babbage"]
    values = {"name": names, "from": names, "device_id": ["lamp-kitchen-7"]}
    snap = _snap(add, delete, scene).model_copy(update={"values": values})
    rng = random.Random(0)
    for _ in range(5):
        assert fill_args(add, snap, rng)["observations"][0]["entityName"] in names
        assert set(fill_args(delete, snap, rng)["entityNames"]) <= set(names)
        (act,) = fill_args(scene, snap, rng)["actions"]
        assert act["device_id"] != "lamp-kitchen-7" and act["from"] not in names
