"""The fixes ``prove servers check`` prints, as questions to ask the user and entries of a servers file
(``prove servers init``).

A fix line (:mod:`pipeline.discovery.chainability`) is a fragment of the server's entry, as printed:
``known_values: {workspace: <your workspace>}  (a value you know; ...)``. Its first key is its kind; a ``<...>``
is a value only the user has; ``"${secret:NAME}"`` a secret, read from an environment variable when connecting.

:data:`FIX_KINDS` maps each kind to the questions it asks and to where an answer goes in the entry. An answer is
keyed by its place there: ``known_values.workspace``, ``setup.login.username``, ``secrets.password`` (the name of
the environment variable holding it), ``probe_allowlist.get_history`` (yes or no), ``isolation``, ``reset_tool``:
the keys a values file (``--values``) and ``--value KEY=VALUE`` use. A new fix kind is one more :class:`FixKind`
in the table; a kind not in it is asked as it was printed (its value, in YAML) and merged into the entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from pipeline.core.records import ToolSpec

PLACEHOLDER = re.compile(r"^<(.+)>$")
SECRET = re.compile(r"^\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}$")
NOTE = re.compile(r"\s{2,}\(.*\)\s*$")  # the note a fix line ends with: "  (only if it reads and never writes)"


@dataclass(frozen=True)
class Question:
    """One value to ask for. ``key``: its place in the entry (and in a values file). ``also``: entries put with
    it when it is answered (a setup argument naming the secret the answer holds)."""

    key: str
    prompt: str
    kind: Literal["value", "secret", "confirm", "choice", "yaml"] = "value"
    tools: tuple[str, ...] = ()
    default: Any = None
    choices: tuple[str, ...] = ()
    schema: dict[str, Any] = field(default_factory=dict)
    also: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Context:
    """What the questions may name: the server's name, kind (stdio, http) and tools."""

    server: str
    kind: str
    tools: dict[str, ToolSpec]


Ask = Callable[[Any, str, Context], list[Question]]
Put = Callable[[dict[str, Any], tuple[str, ...], Any], None]


@dataclass(frozen=True)
class FixKind:
    """``field``: the servers-file key a fix line starts with. ``depth``: how many names follow it in an answer's
    key (``known_values.workspace``: 1; ``setup.login.username``: 2). ``ask``: the printed value and the tool whose
    fix it is -> questions. ``put``: an answer into the entry. ``follow``: questions an answer leads to (the
    arguments of the tool named as the call to make first)."""

    field: str
    depth: int
    ask: Ask | None
    put: Put
    follow: Callable[[tuple[str, ...], Any, Context], list[Question]] | None = None


def parse_fix(line: str) -> tuple[str, Any] | None:
    """A printed fix line as (its kind, its value): ``probe_allowlist: [t]  (note)`` -> ("probe_allowlist", ["t"]).
    None for a line that is no servers-file fragment."""
    try:
        data = yaml.safe_load(NOTE.sub("", line))
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict) or len(data) != 1:
        return None
    [(kind, value)] = data.items()
    return str(kind), value


def _hole(v: Any) -> str | None:
    m = PLACEHOLDER.match(v) if isinstance(v, str) else None
    return m.group(1) if m else None


# -- asking ---------------------------------------------------------------------------------------------------


def _ask_setup(value: Any, tool: str, ctx: Context) -> list[Question]:
    out: list[Question] = []
    for call in value if isinstance(value, list) else []:
        name = call.get("tool") if isinstance(call, dict) else None
        if not isinstance(name, str):
            continue
        if _hole(name):
            why = f"{tool} needs a call made first (a login, a precondition): which tool is it? (empty: none)"
            out.append(Question("setup", why, "choice", (tool,), choices=tuple(ctx.tools)))
            continue
        out += _arguments(name, call.get("arguments") or {}, ctx, (tool,))
    return out


def _arguments(name: str, printed: dict[str, Any], ctx: Context, tools: tuple[str, ...]) -> list[Question]:
    """A question per argument the setup call ``name`` needs: its printed ones, else the tool's required ones."""
    spec = ctx.tools.get(name)
    params = list(printed) or (list(spec.input_schema.get("required") or []) if spec else [])
    out = []
    for p in params:
        schema = (spec.properties.get(p) or {}) if spec else {}
        secret = SECRET.match(printed.get(p)) if isinstance(printed.get(p), str) else None
        if secret or (not printed and re.search(r"pass|token|secret|api_?key", p, re.I)):
            ref = secret.group(1) if secret else p
            var = re.sub(r"[^A-Za-z0-9_]", "_", f"{ctx.server}_{ref}").upper()
            prompt = f"{p} for {name} is a secret: the environment variable that holds it (never written to the file)"
            also = (("setup." + name + "." + p, "${secret:" + ref + "}"),)
            out.append(Question(f"secrets.{ref}", prompt, "secret", tools, default=var, also=also))
        else:
            out.append(
                Question(
                    f"setup.{name}.{p}",
                    f"{p} for {name} (called at the start of every session)",
                    tools=tools,
                    schema=schema,
                )
            )
    return out


def _follow_setup(names: tuple[str, ...], answer: Any, ctx: Context) -> list[Question]:
    return _arguments(str(answer), {}, ctx, ()) if not names and answer in ctx.tools else []


def _ask_known(value: Any, tool: str, ctx: Context) -> list[Question]:
    out = []
    for p, v in (value or {}).items() if isinstance(value, dict) else ():
        if _hole(v):
            prompt = f"a value for {p} (no probed tool listed one; several as [a, b]; empty skips)"
            out.append(Question(f"known_values.{p}", prompt, tools=(tool,)))
    return out


def _ask_allow(value: Any, tool: str, ctx: Context) -> list[Question]:
    out = []
    for t in value if isinstance(value, list) else []:
        if isinstance(t, str) and not _hole(t):
            prompt = f"{t} carries no readOnlyHint: does it only read (never change anything), so prove may probe it?"
            out.append(Question(f"probe_allowlist.{t}", prompt, "confirm", (tool,), default=False))
    return out


def _ask_isolation(value: Any, tool: str, ctx: Context) -> list[Question]:
    if ctx.kind == "stdio":
        prompt = "writes need sessions of their own: run each session in a fresh process (isolation: process)?"
        return [Question("isolation", prompt, "choice", (tool,), default="process", choices=("process", "none"))]
    prompt = "writes need a tool that puts the server back to its initial state (reset_tool; empty: reads only)"
    return [Question("reset_tool", prompt, "choice", (tool,), choices=tuple(ctx.tools))]


# -- putting --------------------------------------------------------------------------------------------------


def _put_setup(entry: dict[str, Any], names: tuple[str, ...], answer: Any) -> None:
    calls = entry.setdefault("setup", [])
    if not names:  # "setup": the tool to call first; or, from a values file, {tool: {argument: value}}
        pairs = answer.items() if isinstance(answer, dict) else [(answer, {})]
        for t, args in pairs:
            for p, v in (args or {}).items():
                _put_setup(entry, (str(t), str(p)), v)
            if not any(c["tool"] == t for c in calls):
                calls.append({"tool": str(t), "arguments": {}})
        return
    call = next((c for c in calls if c["tool"] == names[0]), None)
    if call is None:
        call = {"tool": names[0], "arguments": {}}
        calls.append(call)
    if len(names) > 1:
        call["arguments"][names[1]] = answer


def _put_in(name: str) -> Put:
    def put(entry: dict[str, Any], names: tuple[str, ...], answer: Any) -> None:
        if names:
            entry.setdefault(name, {})[names[0]] = answer
        elif isinstance(answer, dict):
            entry.setdefault(name, {}).update(answer)

    return put


def _put_secret(entry: dict[str, Any], names: tuple[str, ...], answer: Any) -> None:
    var = str(answer)
    _put_in("secrets")(entry, names, var if var.startswith("${") else "${" + var + "}")


def yes(answer: Any) -> bool:
    """A confirmation, typed or from a values file: true, y, yes."""
    return answer is True or (isinstance(answer, str) and answer.strip().lower() in ("y", "yes", "true"))


def _put_allow(entry: dict[str, Any], names: tuple[str, ...], answer: Any) -> None:
    tools = entry.setdefault("probe_allowlist", [])
    if names:
        chosen = [names[0]] if yes(answer) else []
    else:
        chosen = [t for t in answer if isinstance(t, str)] if isinstance(answer, list) else []
    tools += [t for t in chosen if t not in tools]


def _put_value(name: str) -> Put:
    def put(entry: dict[str, Any], names: tuple[str, ...], answer: Any) -> None:
        entry[name] = answer

    return put


FIX_KINDS: dict[str, FixKind] = {
    k.field: k
    for k in (
        FixKind("setup", 2, _ask_setup, _put_setup, _follow_setup),
        FixKind("secrets", 1, None, _put_secret),
        FixKind("known_values", 1, _ask_known, _put_in("known_values")),
        FixKind("probe_allowlist", 1, _ask_allow, _put_allow),
        FixKind("isolation", 0, _ask_isolation, _put_value("isolation")),
        FixKind("reset_tool", 0, None, _put_value("reset_tool")),
    )
}


def _merge(entry: dict[str, Any], names: tuple[str, ...], answer: Any) -> None:
    """A kind not in the table: its answer merged into the entry as printed (a mapping updated, a list extended)."""
    [name] = names[:1] or [""]
    old = entry.get(name)
    if isinstance(old, dict) and isinstance(answer, dict):
        old.update(answer)
    elif isinstance(old, list) and isinstance(answer, list):
        old += [x for x in answer if x not in old]
    else:
        entry[name] = answer


def questions(report: dict[str, Any], ctx: Context) -> list[Question]:
    """The questions the check's fixes ask (``tool_report``), one per key, in the table's order, each naming the
    tools that asked it."""
    found: dict[str, Question] = {}
    order = list(FIX_KINDS)
    for tool, info in (report.get("tool_report") or {}).items():
        parsed = parse_fix(info.get("fix") or "")
        if parsed is None:
            continue
        kind, value = parsed
        fk = FIX_KINDS.get(kind)
        if fk is None or fk.ask is None:
            prompt = f"the check suggests `{info['fix']}` for {tool}: your value for {kind} (YAML; empty to skip)"
            asked = [Question(kind, prompt, "yaml", (tool,))]
        else:
            asked = fk.ask(value, tool, ctx)
        for q in asked:
            old = found.get(q.key)
            found[q.key] = q if old is None else Question(**{**old.__dict__, "tools": old.tools + q.tools})

    def rank(q: Question) -> tuple[int, str]:
        head = q.key.split(".")[0]
        return (order.index(head) if head in order else len(order), q.key)

    return sorted(found.values(), key=rank)


def follow_up(q: Question, answer: Any, ctx: Context) -> list[Question]:
    head, *names = q.key.split(".")
    fk = FIX_KINDS.get(head)
    return fk.follow(tuple(names), answer, ctx) if fk and fk.follow and answer not in (None, "") else []


def put(entry: dict[str, Any], key: str, answer: Any) -> None:
    """An answer into the entry, by its key (``known_values.workspace``); a declined one (None, no) puts nothing."""
    if answer is None or answer is False or answer == "" or (isinstance(answer, str) and answer.lower() == "no"):
        return
    head, *rest = key.split(".")
    fk = FIX_KINDS.get(head)
    if fk is None:
        _merge(entry, (head,), answer)
        return
    names = tuple(".".join(rest).split(".", fk.depth - 1)) if rest and fk.depth else ()
    fk.put(entry, names, answer)


def flatten(values: dict[str, Any]) -> dict[str, Any]:
    """A values file as answers by key: ``{known_values: {workspace: desk}}`` -> ``{"known_values.workspace":
    "desk"}``, as deep as each kind's keys go; ``probe_allowlist: [a, b]`` confirms those tools and declines the
    others asked; a servers-file ``setup`` list is taken as it is written there."""
    out: dict[str, Any] = {}
    for head, value in values.items():
        fk = FIX_KINDS.get(head)
        if head == "setup" and isinstance(value, list):
            value = {c["tool"]: c.get("arguments") or {} for c in value if isinstance(c, dict) and "tool" in c}
        if head == "probe_allowlist" and isinstance(value, list):
            out["probe_allowlist"] = value  # the whole list: every tool asked and not listed is declined
            value = {t: True for t in value}
        out.update(_flat(head, value, fk.depth if fk else 0))
    return out


def _flat(key: str, value: Any, depth: int) -> dict[str, Any]:
    if depth == 0 or not isinstance(value, dict):
        return {key: value}
    out: dict[str, Any] = {}
    for k, v in value.items():
        out.update(_flat(f"{key}.{k}", v, depth - 1))
    return out


def answer_from(values: dict[str, Any], q: Question) -> tuple[bool, Any]:
    """(found, answer) for a question from answers by key: an allow-list question not in a list the values give
    is declined."""
    if q.key in values:
        return True, (yes(values[q.key]) if q.kind == "confirm" else values[q.key])
    head = q.key.split(".")[0]
    if head == "probe_allowlist" and isinstance(values.get("probe_allowlist"), list):
        return True, False
    return False, None


def parse_answer(text: str, q: Question) -> Any:
    """Typed input: a confirm's y/n, a secret's variable name as typed, a value by its parameter's type (a
    string parameter keeps the text; ``[a, b]`` is a list; a number a number)."""
    text = text.strip()
    if q.kind == "confirm":
        if not text:
            return q.default
        if text.lower() in ("y", "yes", "true"):
            return True
        if text.lower() in ("n", "no", "false"):
            return False
        raise ValueError(f"answer y or n, not {text!r}")
    if not text:
        return q.default
    if q.kind == "choice" and q.choices and text not in q.choices:
        raise ValueError(f"{text!r} is none of: {', '.join(q.choices)}")
    if q.kind in ("secret", "choice") or q.schema.get("type") == "string":
        return text
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"not a value: {exc}") from None
    return value if isinstance(value, (int, float, list, dict)) and not isinstance(value, bool) else text
