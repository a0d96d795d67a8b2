"""No references to things that do not exist: on the memory fixture (tests/thirdparty/memory_server.py, a real
process over stdio, shaped like @modelcontextprotocol/server-memory, which relates any two names without checking
them), a relation, an observation or a read naming an entity that is neither in the world nor made by an earlier
call is caught, and the query stage never plans one."""

import random
import sys
from pathlib import Path

import pytest

from pipeline.core.config import ProbeConfig, QueryConfig, ServerConfig, SimulateConfig
from pipeline.core.records import CallResult, Chain, ChainStep
from pipeline.discovery.probe import probe
from pipeline.env import Environment
from pipeline.synthesis.queries import TemplateBackend
from pipeline.synthesis.references import ground_names, missing_references, world_of
from pipeline.synthesis.simulate import plan_query

FIXTURES = Path(__file__).resolve().parent.parent / "thirdparty"


@pytest.fixture(scope="module")
def memory():
    cfg = ServerConfig(
        name="memory",
        kind="stdio",
        command=sys.executable,
        args=[str(FIXTURES / "memory_server.py")],
        cwd=str(FIXTURES / "seeds" / "memory"),
        env={"MEMORY_FILE_PATH": "${SESSION_DIR}/memory.jsonl"},
    )
    with Environment(cfg) as env:
        with env.session(0) as s:
            snap = probe(s, env.tools(), ProbeConfig())
        yield env, snap


def _run(env, snap, calls):
    """The calls run live on a fresh session, as the query stage's dry run records them."""
    tools = {t.name: t for t in snap.tools}
    with env.session(0) as s:
        return [{"tool": tools[n], "args": a, "result": s.call(n, a)} for n, a in calls]


def _relation(src, dst):
    return ("create_relations", {"relations": [{"from": src, "to": dst, "relationType": "wrote"}]})


def test_a_relation_to_an_entity_nobody_made_is_a_missing_reference(memory):
    env, snap = memory
    steps = _run(env, snap, [_relation("Ada Lovelace", "draft")])
    assert steps[0]["result"].ok  # the server itself relates names it has never seen
    assert missing_references(snap, steps) == ["create_relations.relations[0].to = 'draft'"]
    observed = _run(env, snap, [("add_observations", {"observations": [{"entityName": "Zed", "contents": ["x"]}]})])
    assert missing_references(snap, observed) == ["add_observations.observations[0].entityName = 'Zed'"]
    assert missing_references(snap, _run(env, snap, [("open_nodes", {"names": ["Nobody Here"]})])) == [
        "open_nodes.names[0] = 'Nobody Here'"
    ]


def test_entities_of_the_world_or_made_earlier_in_the_conversation_may_be_named(memory):
    env, snap = memory
    made = ("create_entities", {"entities": [{"name": "draft", "entityType": "document", "observations": []}]})
    assert missing_references(snap, _run(env, snap, [made, _relation("Ada Lovelace", "draft")])) == []
    assert missing_references(snap, _run(env, snap, [_relation("Ada Lovelace", "Charles Babbage")])) == []
    assert missing_references(snap, _run(env, snap, [("open_nodes", {"names": ["London"]})])) == []


def test_a_made_up_relation_end_is_replaced_by_an_entity_the_world_holds(memory):
    env, snap = memory
    tools = {t.name: t for t in snap.tools}
    _, args = _relation("Ada Lovelace", "draft")
    grounded = ground_names(tools["create_relations"], args, snap, world_of(snap), random.Random(0))
    (rel,) = grounded["relations"]
    assert rel["from"] == "Ada Lovelace" and rel["relationType"] == "wrote"  # held, and no name: kept
    assert rel["to"] != "draft" and rel["to"] in snap.values["to"] + snap.values["name"]
    made = ("create_entities", {"entities": [{"name": "draft", "entityType": "document", "observations": []}]})
    assert _run(env, snap, [made])[0]["result"].ok
    known = world_of(snap) | {"draft"}  # made by an earlier call: kept
    assert ground_names(tools["create_relations"], args, snap, known, random.Random(0)) == args


def test_the_query_stage_plans_no_call_naming_a_missing_entity(memory):
    env, snap = memory
    chain = Chain(
        chain_id="c", server="memory", seed=0, snapshot_id=snap.snapshot_id, graph_id="g",
        steps=[ChainStep(name="create_relations"), ChainStep(name="add_observations")],
    )  # fmt: skip
    planned, reasons = 0, set()
    for i in range(6):
        query, rej = plan_query(
            env, snap, chain, TemplateBackend(QueryConfig()), SimulateConfig(), QueryConfig(), random.Random(i)
        )
        if query is None:
            reasons.add(rej.reason)
            continue
        planned += 1
        tools = {t.name: t for t in snap.tools}
        ok = CallResult(ok=True, data=None)
        steps = [{"tool": tools[st.name], "args": a, "result": ok} for st, a in zip(chain.steps, query.step_args)]
        assert missing_references(snap, steps) == [], query.step_args
    assert planned >= 3, reasons
    # with no observed names to give delete_entities, its names would be made up: never planned, and said why
    bare = snap.model_copy(update={"values": {k: v for k, v in snap.values.items() if k != "name"}})
    lone = chain.model_copy(update={"chain_id": "d", "steps": [ChainStep(name="delete_entities")]})
    backend = TemplateBackend(QueryConfig())
    outcomes = [
        plan_query(env, bare, lone, backend, SimulateConfig(), QueryConfig(), random.Random(i)) for i in range(2)
    ]
    assert [q for q, _ in outcomes] == [None] * 2
    assert {rej.reason for _, rej in outcomes} == {"missing_entity"}
    # given observed names, a list of names to delete takes them (``entityNames``, as a record's ``entityName``)
    query, rej = plan_query(env, snap, lone, backend, SimulateConfig(), QueryConfig(), random.Random(0))
    assert query is not None, rej
    assert set(query.step_args[0]["entityNames"]) <= set(snap.values["name"])
