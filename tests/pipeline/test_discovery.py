"""Entity discovery on recorded results of servers nobody here wrote: text listings, Python-repr rows,
JSON keyed by name; and the value plumbing that lets a chain carry them (text results, list parameters,
objects built from an input schema's definitions)."""

import random

from pipeline.core.records import Snapshot, ToolSpec
from pipeline.language.entities import generic_entities, parse_result, result_values, tool_noun
from pipeline.language.fields import find_field
from pipeline.language.values import fill_args

MEMORY_GRAPH = {
    "entities": [
        {"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first program"]},
        {"name": "Analytical Engine", "entityType": "machine", "observations": []},
    ],
    "relations": [{"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "programmed"}],
}


def test_tagged_text_listing_gives_files_and_directories_keyed_by_path():
    found = generic_entities("[FILE] todo.txt\n[DIR] notes\n[FILE] README.md", "list_directory")
    assert [(f.value, f.kind, f.key) for f in found] == [
        ("todo.txt", "file", "path"),
        ("notes", "directory", "path"),
        ("README.md", "file", "path"),
    ]


def test_listing_under_a_heading_line_is_read_and_prose_is_not():
    found = generic_entities("Allowed directories:\n/srv/data\n/srv/more", "list_allowed_directories")
    assert [(f.value, f.kind) for f in found] == [("/srv/data", "directory"), ("/srv/more", "directory")]
    assert generic_entities("Successfully wrote to notes.txt", "write_file") == []
    assert generic_entities("milk, eggs and bread", "read_file") == []


def test_bulleted_branch_listing_names_its_kind_after_the_tool():
    found = generic_entities("* main\n  feature-login\n  release-1.2", "git_branch")
    assert [f.value for f in found] == ["main", "feature-login", "release-1.2"]
    assert {f.kind for f in found} == {"branch"}


def test_table_output_rows_are_records_named_by_their_name_column():
    text = "| name | rows |\n|------|------|\n| customers | 12 |\n| orders | 40 |"
    found = generic_entities(text, "list_tables")
    assert [(f.value, f.record.get("rows")) for f in found] == [("customers", "12"), ("orders", "40")]
    assert {f.kind for f in found} == {"table"}


def test_python_repr_rows_are_parsed_with_literal_eval():
    dict_rows = "[{'id': 1, 'name': 'Ada', 'city': 'London'}, {'id': 2, 'name': 'Bo', 'city': None}]"
    assert parse_result(dict_rows)[1]["name"] == "Bo"
    assert [f.value for f in generic_entities(dict_rows, "list_customers")] == ["Ada", "Bo"]
    tuple_rows = "[(1, 'customers'), (2, 'orders')]"
    found = generic_entities(tuple_rows, "list_tables")
    assert [(f.value, f.kind, f.record["col0"]) for f in found] == [("customers", "table", 1), ("orders", "table", 2)]


def test_name_keyed_json_records_take_the_kind_of_the_list_they_sit_in():
    found = generic_entities(MEMORY_GRAPH, "read_graph")
    assert [(f.value, f.kind, f.key) for f in found] == [
        ("Ada Lovelace", "entity", "name"),
        ("Analytical Engine", "entity", "name"),
    ]
    assert found[0].record == {"name": "Ada Lovelace", "entityType": "person"}


def test_result_values_offer_named_entities_before_other_fields():
    offered = result_values(MEMORY_GRAPH, "read_graph")
    assert offered[:2] == [("name", "Ada Lovelace"), ("name", "Analytical Engine")]
    assert ("relationType", "programmed") in offered


def test_tool_noun_drops_verbs_and_plurals():
    assert [tool_noun(n) for n in ("list_tables", "read_graph", "getUserProfile", "search_files")] == [
        "table",
        "graph",
        "profile",
        "file",
    ]


def test_find_field_reads_a_text_listing():
    assert find_field("[FILE] todo.txt\n[DIR] notes", "path") == "todo.txt"
    assert find_field("Successfully wrote to notes.txt", "path") is None


def test_a_text_inside_results_is_read_once_per_field_and_gives_the_same_values(monkeypatch):
    from pipeline.language import entities as discovery
    from pipeline.language import fields

    read: list[tuple[str, str]] = []

    def counted(data, field, tool_name=""):
        read.append((data, field))
        return discovery.value_in(data, field, tool_name)

    monkeypatch.setattr(fields, "value_in", counted)
    fields._text_value.cache_clear()
    rows = {"files": [{"path": "a.txt", "listing": "[FILE] todo.txt\n[DIR] notes", "owner": "ada"}] * 50}
    first = list(fields.field_values(rows, "path"))
    assert first == ["a.txt", "a.txt", "todo.txt"] * 50  # the field, then what each text of the record names
    assert list(fields.field_values(rows, "path")) == first  # again, from what was kept
    assert sorted(set(read)) == [("[FILE] todo.txt\n[DIR] notes", "path"), ("a.txt", "path"), ("ada", "path")]
    assert len(read) == 3
    long_text = "\n".join(
        f"[FILE] f{i}.txt" for i in range(300)
    )  # a long text (a file's contents): read each time, not kept
    assert len(long_text) > fields._KEPT_TEXT
    assert find_field(long_text, "path") == find_field(long_text, "path") == "f0.txt"
    assert read.count((long_text, "path")) == 2


def _snap(*tools: ToolSpec) -> Snapshot:
    return Snapshot(snapshot_id="s", server="x", seed=0, schema_hash="h", tools=list(tools))


def test_a_value_from_an_earlier_step_fills_a_list_parameter_as_a_one_item_list():
    open_nodes = ToolSpec(
        name="open_nodes",
        server="x",
        read_only=True,
        input_schema={
            "type": "object",
            "properties": {"names": {"type": "array", "items": {"type": "string"}}},
            "required": ["names"],
        },
    )
    args = fill_args(open_nodes, _snap(open_nodes), random.Random(0), fixed={"names": "Ada Lovelace"})
    assert args == {"names": ["Ada Lovelace"]}


def test_objects_of_a_schema_less_tool_are_built_from_their_definitions():
    schema = {
        "type": "object",
        "required": ["entities"],
        "properties": {"entities": {"type": "array", "items": {"$ref": "#/$defs/Entity"}}},
        "$defs": {
            "Entity": {
                "type": "object",
                "required": ["name", "entityType", "observations"],
                "properties": {
                    "name": {"type": "string"},
                    "entityType": {"type": "string"},
                    "observations": {"type": "array", "items": {"type": "string"}},
                },
            }
        },
    }
    create = ToolSpec(name="create_entities", server="x", input_schema=schema)
    args = fill_args(create, _snap(create), random.Random(0))
    (entity,) = args["entities"]
    assert set(entity) == {"name", "entityType", "observations"}
    assert isinstance(entity["name"], str) and isinstance(entity["observations"], list)
