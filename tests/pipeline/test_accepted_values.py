"""Arguments a live call accepted where no probe observed a value (graph discovery's value flow: ``git_add`` took
``README.md`` from ``git_status``'s lines): they are tried again when confirming writes, and a chain that starts
at such a tool is given that value rather than a made-up one."""

from pipeline.core.config import ChainConfig
from pipeline.core.records import DependencyGraph, Edge, Snapshot, ToolSpec
from pipeline.discovery.chains import extract_chains
from pipeline.discovery.value_flow import unobserved, with_accepted


def _tool(name, props, required):
    return ToolSpec(name=name, server="git", input_schema={"type": "object", "properties": props, "required": required})


ADD = _tool("git_add", {"files": {"type": "array", "items": {"type": "string"}}}, ["files"])
COMMIT = _tool("git_commit", {"message": {"type": "string"}}, ["message"])
SNAP = Snapshot(snapshot_id="s", server="git", seed=0, schema_hash="h", tools=[ADD, COMMIT], values={"name": ["main"]})
ACCEPTED = {"git_add": {"files": ["README.md"]}}


def test_an_accepted_array_argument_becomes_observed_values_of_its_items():
    snap = with_accepted(SNAP, ACCEPTED)
    assert snap.values["file"] == ["README.md"] and snap.values["name"] == ["main"]
    assert unobserved(SNAP, "files") and not unobserved(snap, "files")
    assert with_accepted(SNAP, {}) is SNAP


def test_a_chain_starting_at_a_tool_nothing_observed_values_for_carries_the_accepted_one():
    graph = DependencyGraph(
        graph_id="g",
        server="git",
        schema_hash="h",
        snapshot_id="s",
        tools=["git_add", "git_commit"],
        edges=[Edge(src="git_add", dst="git_commit", kind="implicit", source="live")],
        accepted=ACCEPTED,
    )
    chain = extract_chains(graph, SNAP, 1, ChainConfig(), seed=0)[0]
    assert chain.steps[0].args["files"].kind == "user" and chain.steps[0].args["files"].value == ["README.md"]
    assert chain.steps[1].args["message"].value is None  # a value the user words themself
