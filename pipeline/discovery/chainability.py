"""Why each tool of a server is, or is not, chainable, and the config line that would fix it.

``prove servers check`` shows this per tool. The reasons come from what the probe and the graph
saw live: the confirmed edges a tool is on, the probe calls it answered (and the errors it gave),
the parameters nothing fed, the tools the configuration excludes. A fix is a line of the servers
file: ``probe_allowlist`` for a reading tool without annotations, ``known_values`` for a parameter only the
user can fill (a repository's path), ``setup`` for a server whose
tools ask for a login or a precondition first, ``reset_tool``/``isolation`` for writes a shared server cannot undo.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.core.records import DependencyGraph, Snapshot, ToolSpec

READ_VERB = re.compile(
    r"(^|_)(list|get|read|search|find|show|describe|query|fetch|view|lookup|check|display|open|count|stat|status|log|branch)(_|$|[A-Z])"
)
WRITE_VERB = re.compile(
    r"(^|_)(create|add|delete|remove|update|set|commit|checkout|move|write|edit|insert|append|reset|start|stop|"
    r"press|release|lock|transfer|login|logout|send|post|put|rename)(_|$|[A-Z])"
)
AUTH_ERROR = re.compile(
    r"log ?in|logged|auth|sign.?in|session|token|credential|unauthori[sz]ed|forbidden|permission", re.I
)
PRECONDITION = re.compile(
    r"first|before|must|requires?|not (running|ready|started|open|pressed|engaged)|precondition", re.I
)
AUTH_TOOL = re.compile(r"log_?in|sign_?in|auth|connect|open_session", re.I)
AUTH_SAYS = re.compile(r"\b(log(s|ging)? ?in|authenticat\w*|sign(s|ing)? ?in)\b", re.I)
SECRET_PARAM = re.compile(r"pass|token|secret|pin$|api_?key|credential", re.I)


def _edges_of(graph: DependencyGraph, name: str) -> list[str]:
    out = []
    for e in graph.edges:
        if not e.confirmed:
            continue
        via = ", ".join(f"{f} -> {p}" for f, p in e.fields.items())
        how = f"{e.kind}{' via ' + via if via else ''}, {e.source}"
        if e.src == name:
            out.append(f"feeds {e.dst} ({how})")
        elif e.dst == name:
            out.append(f"follows {e.src} ({how})")
    return out


def _errors(snap: Snapshot, name: str) -> list[str]:
    return [
        str(c.get("error") or c.get("error_code") or "") for c in snap.probe_calls if c["name"] == name and not c["ok"]
    ]


def looks_read(name: str) -> bool:
    """A tool whose name says it reads (``list_*``, ``git_log``) and nothing it writes (``git_create_branch``)."""
    return bool(READ_VERB.search(name)) and not WRITE_VERB.search(name)


def login_tool(tools: list[ToolSpec], refusals: list[str]) -> ToolSpec | None:
    """The tool that logs in: the one a refusal names (``call authenticate(username, password) first``), else one
    whose name says so (``login``, ``authenticate``), else one whose description does (``Sign in with ...``)."""
    said = " ".join(re.sub(r"^Error executing tool \S+:", "", r) for r in refusals)  # the refused tool's own name
    named = [t for t in tools if re.search(rf"\b{re.escape(t.name)}\b", said)]
    return next(
        (t for t in named if not looks_read(t.name)),
        next(
            (t for t in tools if AUTH_TOOL.search(t.name)),
            next((t for t in tools if AUTH_SAYS.search(t.description) and not t.read_only), None),
        ),
    )


def _setup_fix(tools: list[ToolSpec], secrets: dict[str, str], refusals: list[str], server: str) -> dict[str, Any]:
    """``fix`` (the setup line, one servers-file fragment, as ``prove servers init`` reads it) and, where it names a
    secret the file does not hold yet, ``also`` (the ``secrets:`` line that reads it from the environment)."""
    line = _setup_line(tools, secrets, refusals, server)
    first, *more = line.splitlines()
    return {"fix": first, **({"also": more[0]} if more else {})}


def _setup_line(tools: list[ToolSpec], secrets: dict[str, str], refusals: list[str], server: str) -> str:
    """The set-up a user adds for a server that refuses calls until a login: the login call with a placeholder for
    each value only the user knows (``<username>``) and each secret named (``${secret:password}``), and, for a secret
    the file does not hold yet, the ``secrets:`` line that reads it from the user's environment (a second line)."""
    login = login_tool(tools, refusals)
    if login is None:
        return "setup: [{tool: <the call that must come first>, arguments: {...}}]"
    hidden = [p for p in login.required if p in secrets or p in login.sensitive or SECRET_PARAM.search(p)]
    args = ", ".join(f'{p}: "${{secret:{p}}}"' if p in hidden else f"{p}: <{p}>" for p in login.required)
    line = f"setup: [{{tool: {login.name}, arguments: {{{args}}}}}]"
    new = [p for p in hidden if p not in secrets]
    if new:
        var = re.sub(r"\W", "_", server).upper()
        line += "\nsecrets: {" + ", ".join(f'{p}: "${{{var}_{p.upper()}}}"' for p in new) + "}"
    return line


def explain_tool(
    t: ToolSpec,
    tools: list[ToolSpec],
    snap: Snapshot,
    graph: DependencyGraph,
    excluded: dict[str, str],
    allowlist: list[str],
    secrets: dict[str, str],
    setup: list[str] | None = None,
) -> dict[str, Any]:
    """{"chainable": bool, "why": str, "fix": config line or None, and "also": a second line to add with the fix
    where there is one (a login's ``secrets:``)} for one tool (``setup``: the tools the server's ``setup`` calls)."""
    if t.name in (setup or []):
        return {"chainable": False, "why": "runs as every session's set-up (setup), never as a step", "fix": None}
    if t.name in excluded:
        fix = (
            "isolation: process  (or reset_tool: <a tool that restores the initial state>)"
            if "isolation" in excluded[t.name]
            else None
        )
        return {"chainable": False, "why": f"excluded: {excluded[t.name]}", "fix": fix}
    links = _edges_of(graph, t.name)
    if links:
        return {"chainable": True, "why": "; ".join(links), "fix": None}
    errors = _errors(snap, t.name)
    probed = t.read_only or t.name in allowlist
    if errors and any(AUTH_ERROR.search(e) for e in errors):
        return {
            "chainable": False,
            "why": f"its probe calls were refused: {errors[0][:120]}",
            **_setup_fix(tools, secrets, errors, snap.server),
        }
    if errors and any(PRECONDITION.search(e) for e in errors):
        return {
            "chainable": False,
            "why": f"its probe calls hit a precondition: {errors[0][:120]}",
            **_setup_fix(tools, secrets, errors, snap.server),
        }
    if not probed and looks_read(t.name) and not t.annotated:
        return {
            "chainable": False,
            "why": "no readOnlyHint annotation, so never probed, and no confirmed dependency",
            "fix": f"probe_allowlist: [{t.name}]  (only if it reads and never writes)",
        }
    reason = snap.skipped_tools.get(t.name)
    if reason and reason.startswith("no observed values"):
        missing = [p for p in t.required if not snap.values.get(p)] or list(t.required)
        stated = ", ".join(f"{p}: <your {p}>" for p in missing)
        return {
            "chainable": False,
            "why": f"{reason}: no probed tool listed values for them",
            "fix": f"known_values: {{{stated}}}  (a value you know; or probe_allowlist: [<a tool that lists them>])",
        }
    if errors:
        return {"chainable": False, "why": f"every probe call failed: {errors[0][:120]}", "fix": None}
    if not probed:
        # no config line would give it an edge (a ``state_tool`` only gives replay a state to compare): none is offered
        why = "its writes changed nothing a reading tool returned, and no tool accepted a value of its results"
        return {"chainable": False, "why": why, "fix": None}
    why = "no other tool's result fed it, and no write changed what it returns"
    return {
        "chainable": False,
        "why": why + (" (it is probed as a read: allow-listed)" if t.name in allowlist else ""),
        "fix": None,
    }


def explain(
    tools: list[ToolSpec],
    snap: Snapshot,
    graph: DependencyGraph,
    excluded: dict[str, str],
    allowlist: list[str],
    secrets: dict[str, str],
    setup: list[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per tool (every listed tool, in listing order): :func:`explain_tool`. Where the server refused probe calls
    until a login, a tool that cannot chain for want of an edge, and has no other fix, gets that login's set-up as its
    fix too: the refused reads are what would have shown its writes."""
    out = {t.name: explain_tool(t, tools, snap, graph, excluded, allowlist, secrets, setup) for t in tools}
    refusals = [e for c in snap.probe_calls if not c["ok"] and AUTH_ERROR.search(e := str(c.get("error") or ""))]
    login = login_tool(tools, refusals) if refusals else None
    for name, info in out.items():
        if login is None or info["chainable"] or name == login.name or name in (setup or []):
            continue
        if info["fix"] is None:  # (a value only the user knows is still asked for: prove servers init asks it once)
            why = f"{info['why']}; the server refused probe calls until a login: {refusals[0][:120]}"
            out[name] = {**info, "why": why, **_setup_fix(tools, secrets, refusals, snap.server)}
    return out
