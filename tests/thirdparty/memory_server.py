"""A knowledge-graph memory MCP server, written the way @modelcontextprotocol/server-memory is.

Entities are keyed by ``name`` (with an ``entityType`` and a list of ``observations``); relations link
two entity names with a ``relationType``. The graph lives in a JSONL file in the working directory
(``memory.jsonl``, or ``MEMORY_FILE_PATH``), one ``{"type": "entity" | "relation", ...}`` object a line.
Results are JSON text with no output schemas; plain mcp ``MCPServer``, not prove's kit. With ``--structured``
every tool declares an output schema and answers structured content, as server-memory 2026.8.31 does (a list as
``{"result": [...]}``, a deletion as ``{"success": true, "message": ...}``).
Run: python tests/thirdparty/memory_server.py [--structured] [--http PORT]
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import functools
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

srv = MCPServer("memory-server", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)
STRUCTURED = "--structured" in sys.argv


def tool(annotations: ToolAnnotations | None = None):
    """A tool answering JSON text, or with ``--structured`` the same answer as structured content under an output
    schema."""

    def register(fn):
        if not STRUCTURED:
            return srv.tool(structured_output=False, annotations=annotations)(fn)

        @functools.wraps(fn)
        def structured(**kw) -> dict[str, Any]:
            text = fn(**kw)
            try:
                out = json.loads(text)
            except json.JSONDecodeError:
                return {"success": True, "message": text}
            return out if isinstance(out, dict) else {"result": out}

        structured.__signature__ = inspect.signature(fn).replace(return_annotation=dict[str, Any])
        done = srv.tool(structured_output=True, annotations=annotations)(structured)
        registered = srv._tool_manager.get_tool(fn.__name__)
        registered.parameters = inlined(registered.parameters)  # item schemas written out, as zod writes them
        return done

    return register


def inlined(schema: dict) -> dict:
    """``schema`` with each ``$ref`` to its ``$defs`` replaced by the definition itself."""
    defs = schema.get("$defs", {})

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            if "$ref" in x:
                return walk(defs[x["$ref"].rsplit("/", 1)[1]])
            return {k: walk(v) for k, v in x.items() if k != "$defs"}
        return [walk(v) for v in x] if isinstance(x, list) else x

    return walk(schema)


class Entity(BaseModel):
    name: str = Field(description="The name of the entity")
    entityType: str = Field(description="The type of the entity")
    observations: list[str] = Field(description="An array of observation contents associated with the entity")


class Relation(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from", description="The name of the entity where the relation starts")
    to: str = Field(description="The name of the entity where the relation ends")
    relationType: str = Field(description="The type of the relation")

    def dump(self) -> dict:
        return {"from": self.from_, "to": self.to, "relationType": self.relationType}


class ObservationAdd(BaseModel):
    entityName: str = Field(description="The name of the entity to add the observations to")
    contents: list[str] = Field(description="An array of observation contents to add")


class ObservationDelete(BaseModel):
    entityName: str = Field(description="The name of the entity containing the observations")
    observations: list[str] = Field(description="An array of observations to delete")


def store() -> Path:
    return Path(os.environ.get("MEMORY_FILE_PATH") or "memory.jsonl")


def load() -> dict:
    graph: dict = {"entities": [], "relations": []}
    if not store().exists():
        return graph
    for line in store().read_text().splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        kind = item.pop("type", None)
        if kind == "entity":
            graph["entities"].append(item)
        elif kind == "relation":
            graph["relations"].append(item)
    return graph


def save(graph: dict) -> None:
    lines = [json.dumps({"type": "entity", **e}) for e in graph["entities"]]
    lines += [json.dumps({"type": "relation", **r}) for r in graph["relations"]]
    tmp = store().with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + ("\n" if lines else ""))
    tmp.replace(store())


def dumps(obj) -> str:
    return json.dumps(obj, indent=2)


def subgraph(graph: dict, names: set[str]) -> dict:
    return {
        "entities": [e for e in graph["entities"] if e["name"] in names],
        "relations": [r for r in graph["relations"] if r["from"] in names and r["to"] in names],
    }


@tool()
def create_entities(entities: list[Entity]) -> str:
    """Create multiple new entities in the knowledge graph"""
    graph = load()
    known = {e["name"] for e in graph["entities"]}
    new = [e.model_dump() for e in entities if e.name not in known]
    graph["entities"].extend(new)
    save(graph)
    return dumps(new)


@tool()
def create_relations(relations: list[Relation]) -> str:
    """Create multiple new relations between entities in the knowledge graph. Relations should be in active voice"""
    graph = load()
    new = [r.dump() for r in relations if r.dump() not in graph["relations"]]
    graph["relations"].extend(new)
    save(graph)
    return dumps(new)


@tool()
def add_observations(observations: list[ObservationAdd]) -> str:
    """Add new observations to existing entities in the knowledge graph"""
    graph = load()
    by_name = {e["name"]: e for e in graph["entities"]}
    out = []
    for o in observations:
        if o.entityName not in by_name:
            raise ToolError(f"Entity with name {o.entityName} not found")
        ent = by_name[o.entityName]
        added = [c for c in o.contents if c not in ent["observations"]]
        ent["observations"].extend(added)
        out.append({"entityName": o.entityName, "addedObservations": added})
    save(graph)
    return dumps(out)


@tool(ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_entities(entityNames: list[str]) -> str:
    """Delete multiple entities and their associated relations from the knowledge graph"""
    graph = load()
    gone = set(entityNames)
    graph["entities"] = [e for e in graph["entities"] if e["name"] not in gone]
    graph["relations"] = [r for r in graph["relations"] if r["from"] not in gone and r["to"] not in gone]
    save(graph)
    return "Entities deleted successfully"


@tool(ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_observations(deletions: list[ObservationDelete]) -> str:
    """Delete specific observations from entities in the knowledge graph"""
    graph = load()
    by_name = {e["name"]: e for e in graph["entities"]}
    for d in deletions:
        ent = by_name.get(d.entityName)
        if ent is not None:
            ent["observations"] = [o for o in ent["observations"] if o not in d.observations]
    save(graph)
    return "Observations deleted successfully"


@tool(ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_relations(relations: list[Relation]) -> str:
    """Delete multiple relations from the knowledge graph"""
    graph = load()
    gone = [r.dump() for r in relations]
    graph["relations"] = [r for r in graph["relations"] if r not in gone]
    save(graph)
    return "Relations deleted successfully"


@tool(READ)
def read_graph() -> str:
    """Read the entire knowledge graph"""
    return dumps(load())


@tool(READ)
def search_nodes(query: str) -> str:
    """Search for nodes in the knowledge graph based on a query"""
    graph = load()
    q = query.lower()
    names = {
        e["name"]
        for e in graph["entities"]
        if q in e["name"].lower() or q in e["entityType"].lower() or any(q in o.lower() for o in e["observations"])
    }
    return dumps(subgraph(graph, names))


@tool(READ)
def open_nodes(names: list[str]) -> str:
    """Open specific nodes in the knowledge graph by their names"""
    return dumps(subgraph(load(), set(names)))


if __name__ == "__main__":
    if "--http" in sys.argv:
        srv.run("streamable-http", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        srv.run("stdio")
