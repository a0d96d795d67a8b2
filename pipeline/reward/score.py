"""The programmatic reward of PAPER.md section 3: one implementation for training, evaluation and the CLI.

Inputs are plain data:

* ``tools``: the offered tool schemas, OpenAI function format (``{"type": "function", "function":
  {"name", "parameters"}}``) or the bare ``{"name", "parameters"}`` form;
* ``reference`` (G): ``[{"name", "arguments", "depends_on": [indices into G]}]``; ``[]`` means abstention;
* ``calls`` (Ĉ): the model's calls in order, ``[{"name", "arguments", "ok"}]`` where ``ok`` is the outcome
  of executing the call live (missing ``ok`` counts as not executed successfully).

Components (each reported, see :class:`RewardBreakdown`):

* validity: per call, three cumulative thirds: the name is offered; and every required parameter is
  present with a compatible JSON type; and the live execution succeeded. Mean over calls, 0 when no call.
* coverage: (1/|G|) Σ m(g)·o(g) with the greedy matching decision (walk G in order; g takes the earliest
  unmatched call of the same name whose argument keys include g's keys) and the dependency order o(g).
* efficiency: −α·max(0, N − B)/B, B = n_gt + ⌈β·n_gt⌉.
* name: precision of the call names against names(G); 0 when no call.
* args: mean over matched pairs of the share of g's keys whose values are JSON-equal (1 equals 1.0, a
  boolean is never a number); a step with no arguments scores 1; no matched pair gives 0.
* abstention (G empty): the total is 1.0 when the model made no call, else 0.0. The other components are
  then reported as: validity and name as computed on the calls (0 without calls), coverage, efficiency and
  args 0, and ``abstention`` carries the score.

Beyond the paper, both off by default: ``state`` (weight ``w_state``): the policy session's final state hash
equals the state reached by replaying the reference on a fresh session of the same seed; per turn for
multi-turn (share of turns whose post-turn state matches). ``per_turn``: multi-turn conversations are scored
turn by turn and averaged over user turns (otherwise all turns are flattened into one trajectory).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.env import Environment, Session

__all__ = [
    "RewardConfig",
    "RewardBreakdown",
    "RewardInputError",
    "ToolIndex",
    "tool_index",
    "json_equal",
    "score",
    "score_turns",
    "execute_and_hash",
    "execute_calls",
    "replay_state_hashes",
    "parse_reference",
    "parse_calls",
    "parse_tools",
]

COMPONENTS = ("validity", "coverage", "efficiency", "name", "args", "total")


class RewardConfig(BaseModel):
    """Weights and the efficiency parameters; the defaults are the paper's."""

    model_config = {"extra": "forbid"}

    w_validity: float = 0.5
    w_coverage: float = 0.5
    w_efficiency: float = 0.15
    w_name: float = 0.2
    w_args: float = 0.1
    w_state: float = Field(0.0, description="weight of the final-state match (beyond the paper; 0 = off)")
    alpha: float = Field(0.5, ge=0)
    beta: float = Field(0.5, ge=0)
    abstain_correct: float = 1.0
    abstain_wrong: float = 0.0
    per_turn: bool = Field(False, description="multi-turn: mean over user turns instead of one flattened trajectory")


class RewardBreakdown(BaseModel):
    validity: float = 0.0
    coverage: float = 0.0
    efficiency: float = 0.0
    name: float = 0.0
    args: float = 0.0
    state: float | None = None  # None when no state comparison was made
    abstention: float | None = None  # set when G is empty
    total: float = 0.0
    n_calls: int = 0
    n_reference: int = 0
    matched: list[int | None] = []  # per reference step: the position in Ĉ it matched, or None
    exact: bool = False  # every step matched, in dependency order, with all values equal (abstention: no call)

    def components(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in COMPONENTS}


class RewardInputError(ValueError):
    """Malformed reward input; the message names the line (when reading a file) and the field."""


# ----------------------------------------------------------------------------------------------------------------
# tool schemas -> a compact index: name -> ((param, accepted JSON types or None), ...) of the required params

_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})


def _schema_types(schema: Any) -> frozenset[str] | None:
    """The JSON types a (sub)schema accepts; None when it does not say (anything goes)."""
    if not isinstance(schema, Mapping):
        return None
    t = schema.get("type")
    if isinstance(t, str):
        return frozenset({t}) if t in _JSON_TYPES else None
    if isinstance(t, list):
        ts = frozenset(x for x in t if x in _JSON_TYPES)
        return ts or None
    for key in ("anyOf", "oneOf"):
        alts = schema.get(key)
        if isinstance(alts, list) and alts:
            out: set[str] = set()
            for a in alts:
                at = _schema_types(a)
                if at is None:
                    return None
                out |= at
            return frozenset(out)
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        return frozenset(_json_type(v) for v in schema["enum"])
    if "const" in schema:
        return frozenset({_json_type(schema["const"])})
    return None


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "integer" if v.is_integer() else "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "unknown"


def _type_ok(value: Any, accepted: frozenset[str] | None) -> bool:
    if accepted is None:
        return True
    t = _json_type(value)
    if t in accepted:
        return True
    return t == "integer" and "number" in accepted


class ToolIndex:
    """The offered tools, compiled once: ``required[name]`` = ((param, accepted types), ...)."""

    __slots__ = ("required", "names")

    def __init__(self, tools: Iterable[Mapping[str, Any]]):
        required: dict[str, tuple[tuple[str, frozenset[str] | None], ...]] = {}
        for i, t in enumerate(tools):
            f = t.get("function", t) if isinstance(t, Mapping) else None
            if not isinstance(f, Mapping) or not isinstance(f.get("name"), str):
                raise RewardInputError(
                    f"field 'tools[{i}]': expected an OpenAI function schema with a string 'function.name'"
                )
            params = f.get("parameters") or f.get("input_schema") or {}
            if not isinstance(params, Mapping):
                raise RewardInputError(f"field 'tools[{i}].function.parameters': expected a JSON schema object")
            props = params.get("properties") or {}
            req = params.get("required") or []
            required[f["name"]] = tuple((k, _schema_types(props.get(k))) for k in req)
        self.required = required
        self.names = frozenset(required)

    def structure_ok(self, name: str, args: Any) -> bool:
        req = self.required[name]
        if not isinstance(args, dict):
            return False
        for k, accepted in req:
            if k not in args or not _type_ok(args[k], accepted):
                return False
        return True


@lru_cache(maxsize=4096)
def _tool_index_from_json(tools_json: str) -> ToolIndex:
    return ToolIndex(json.loads(tools_json))


def tool_index(tools: ToolIndex | str | Sequence[Mapping[str, Any]]) -> ToolIndex:
    """Compile the offered tools; a JSON string is cached, so repeated prompts compile once."""
    if isinstance(tools, ToolIndex):
        return tools
    if isinstance(tools, str):
        try:
            return _tool_index_from_json(tools)
        except json.JSONDecodeError as exc:
            raise RewardInputError(f"field 'tools': not valid JSON ({exc})") from None
    return ToolIndex(tools)


# ----------------------------------------------------------------------------------------------------------------
# value comparison


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: 1 equals 1.0; a boolean never equals a number; strings compare exactly."""
    ta, tb = type(a), type(b)
    if ta is tb and ta in (str, int, float, type(None)):
        return a == b
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if ta in (int, float) and tb in (int, float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return False
        return all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return False


# ----------------------------------------------------------------------------------------------------------------
# the score of one trajectory


def _name(c: Mapping[str, Any]) -> str:
    n = c.get("name")
    return n if isinstance(n, str) else ""


def _args(c: Mapping[str, Any]) -> Any:
    a = c.get("arguments", {})
    return {} if a is None else a


def score(
    calls: Sequence[Mapping[str, Any]],
    reference: Sequence[Mapping[str, Any]],
    tools: ToolIndex | str | Sequence[Mapping[str, Any]],
    config: RewardConfig | None = None,
    *,
    state_match: float | bool | None = None,
    dep_offset: int = 0,
    external_matched: Mapping[int, bool] | None = None,
) -> RewardBreakdown:
    """Score one trajectory. ``state_match`` (bool or share of turns) enters only with ``w_state`` != 0.

    ``dep_offset``/``external_matched`` serve per-turn scoring: reference ``depends_on`` indices are global over
    the conversation; an index below ``dep_offset`` names a step of an earlier turn, which counts as satisfied
    (it was necessarily placed before) when ``external_matched[index]`` is true.
    """
    cfg = config or _DEFAULT
    idx = tool_index(tools)
    n = len(calls)
    validity = _validity(calls, idx)
    state = None if state_match is None else float(state_match)

    n_gt = len(reference)
    if n_gt == 0:
        ab = cfg.abstain_correct if n == 0 else cfg.abstain_wrong
        total = ab + (cfg.w_state * state if state is not None and cfg.w_state else 0.0)
        return RewardBreakdown.model_construct(
            validity=validity,
            coverage=0.0,
            efficiency=0.0,
            name=0.0,
            args=0.0,
            state=state,
            abstention=ab,
            total=total,
            n_calls=n,
            n_reference=0,
            matched=[],
            exact=n == 0,
        )

    call_names = [_name(c) for c in calls]
    call_args = [_args(c) for c in calls]
    mu = _match(reference, call_names, call_args)
    ref_names = {g["name"] for g in reference}
    cov_sum, arg_sum, n_pairs, exact = _placed_and_valued(reference, mu, call_args, dep_offset, external_matched or {})
    coverage = cov_sum / n_gt
    args = arg_sum / n_pairs if n_pairs else 0.0
    budget = n_gt + math.ceil(cfg.beta * n_gt)
    efficiency = -cfg.alpha * max(0, n - budget) / budget
    name = sum(1 for nm in call_names if nm in ref_names) / n if n else 0.0
    total = (
        cfg.w_validity * validity
        + cfg.w_coverage * coverage
        + cfg.w_efficiency * efficiency
        + cfg.w_name * name
        + cfg.w_args * args
    )
    if state is not None and cfg.w_state:
        total += cfg.w_state * state
    return RewardBreakdown.model_construct(
        validity=validity,
        coverage=coverage,
        efficiency=efficiency,
        name=name,
        args=args,
        state=state,
        abstention=None,
        total=total,
        n_calls=n,
        n_reference=n_gt,
        matched=mu,
        exact=exact,
    )


def _validity(calls: Sequence[Mapping[str, Any]], idx: ToolIndex) -> float:
    """R_val: per call a third for a known name, a third for its required parameters with compatible types, a
    third for a successful execution (cumulative), averaged over the calls; 0 without calls."""
    val_sum = 0.0
    for c in calls:
        nm = _name(c)
        if nm in idx.names:
            if idx.structure_ok(nm, _args(c)):
                val_sum += 1.0 if c.get("ok") is True else 2.0 / 3.0
            else:
                val_sum += 1.0 / 3.0
    return val_sum / len(calls) if calls else 0.0


def _match(reference: Sequence[Mapping[str, Any]], call_names: list[str], call_args: list[Any]) -> list[int | None]:
    """Greedy matching: step g takes the earliest unmatched call with its name whose argument keys include g's keys
    (``mu[g]`` is that call's position, or None)."""
    n = len(call_names)
    taken = [False] * n
    mu: list[int | None] = [None] * len(reference)
    for gi, g in enumerate(reference):
        gname = g["name"]
        gargs = g.get("arguments") or {}
        for ci in range(n):
            if not taken[ci] and call_names[ci] == gname:
                ca = call_args[ci]
                if isinstance(ca, dict) and all(k in ca for k in gargs):
                    taken[ci] = True
                    mu[gi] = ci
                    break
    return mu


def _placed_and_valued(
    reference: Sequence[Mapping[str, Any]],
    mu: list[int | None],
    call_args: list[Any],
    dep_offset: int,
    ext: Mapping[int, bool],
) -> tuple[float, float, int, bool]:
    """Over the matched steps: how many are placed after every step they depend on (coverage's sum), the share of
    their argument values given right (argument values' sum), how many pairs, and whether all of it is exact."""
    n_gt = len(reference)
    cov_sum = 0.0
    arg_sum = 0.0
    n_pairs = 0
    exact = True
    for gi, g in enumerate(reference):
        ci = mu[gi]
        if ci is None:
            exact = False
            continue
        ordered = True
        for j in g.get("depends_on") or ():
            lj = j - dep_offset
            if lj < 0:
                if not ext.get(j, False):
                    ordered = False
                    break
                continue
            mj = mu[lj] if lj < n_gt else None
            if mj is None or mj >= ci:
                ordered = False
                break
        if ordered:
            cov_sum += 1.0
        else:
            exact = False
        gargs = g.get("arguments") or {}
        n_pairs += 1
        if gargs:
            ca = call_args[ci]
            eq = 0
            for k, v in gargs.items():
                if json_equal(ca[k], v):
                    eq += 1
            arg_sum += eq / len(gargs)
            if eq != len(gargs):
                exact = False
        else:
            arg_sum += 1.0
    return cov_sum, arg_sum, n_pairs, exact


_DEFAULT = RewardConfig()


def score_turns(
    calls_per_turn: Sequence[Sequence[Mapping[str, Any]]],
    reference_per_turn: Sequence[Sequence[Mapping[str, Any]]],
    tools: ToolIndex | str | Sequence[Mapping[str, Any]],
    config: RewardConfig | None = None,
    *,
    state_per_turn: Sequence[bool] | None = None,
) -> RewardBreakdown:
    """A multi-turn conversation. ``depends_on`` indices are over the flattened reference (as in the corpus).

    With ``config.per_turn`` each user turn is scored on its own and the components are averaged over turns
    (a dependency on an earlier turn's step counts when that step was matched); otherwise the turns are
    flattened into one trajectory. ``state_per_turn`` (did the state after turn t equal the reference's)
    gives the state component as the share of matching turns.
    """
    cfg = config or _DEFAULT
    if len(calls_per_turn) != len(reference_per_turn):
        raise RewardInputError(
            f"calls cover {len(calls_per_turn)} turns but the reference has {len(reference_per_turn)}"
        )
    idx = tool_index(tools)
    state = (
        None
        if state_per_turn is None
        else (sum(map(bool, state_per_turn)) / len(state_per_turn) if state_per_turn else 1.0)
    )
    if not cfg.per_turn:
        flat_calls = [c for t in calls_per_turn for c in t]
        flat_ref = [g for t in reference_per_turn for g in t]
        return score(flat_calls, flat_ref, idx, cfg, state_match=state)
    parts: list[RewardBreakdown] = []
    matched_global: dict[int, bool] = {}
    offset = 0
    for t, (calls, ref) in enumerate(zip(calls_per_turn, reference_per_turn)):
        st = None if state_per_turn is None else bool(state_per_turn[t])
        b = score(calls, ref, idx, cfg, state_match=st, dep_offset=offset, external_matched=matched_global)
        for gi, m in enumerate(b.matched):
            matched_global[offset + gi] = m is not None
        offset += len(ref)
        parts.append(b)
    k = len(parts) or 1
    mean = lambda attr: sum(getattr(p, attr) for p in parts) / k  # noqa: E731
    abst = [p.abstention for p in parts if p.abstention is not None]
    return RewardBreakdown.model_construct(
        validity=mean("validity"),
        coverage=mean("coverage"),
        efficiency=mean("efficiency"),
        name=mean("name"),
        args=mean("args"),
        state=state,
        abstention=(sum(abst) / len(abst)) if abst else None,
        total=mean("total"),
        n_calls=sum(p.n_calls for p in parts),
        n_reference=sum(p.n_reference for p in parts),
        matched=[m for p in parts for m in p.matched],
        exact=all(p.exact for p in parts),
    )


# ----------------------------------------------------------------------------------------------------------------
# live execution and state replay


def execute_calls(session: Session, calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Run the calls in order on a session; returns copies with ``ok`` (and ``error_code``) from the live outcome.

    A call without a string name or with non-object arguments is not sent and counts as failed.
    """
    return execute_and_hash(session, calls, state_hash=False)[0]


def execute_and_hash(
    session: Session, calls: Sequence[Mapping[str, Any]], state_hash: bool = True
) -> tuple[list[dict[str, Any]], str | None]:
    """:func:`execute_calls`, and (``state_hash``) the session's state hash after them, which rides back
    with the last call's result where the server allows it (``Session.call(..., hash_after=True)``)."""
    out = []
    for i, c in enumerate(calls):
        nm, a = c.get("name"), _args(c)
        if not isinstance(nm, str) or not nm or not isinstance(a, dict):
            out.append({**c, "ok": False, "error_code": "malformed_call"})
            continue
        try:
            r = session.call(nm, a, hash_after=state_hash and i == len(calls) - 1)
            out.append({**c, "ok": bool(r.ok), "error_code": r.error_code})
        except Exception as exc:  # the environment client never should raise, but a rollout must not die
            out.append({**c, "ok": False, "error_code": f"server_error: {type(exc).__name__}"})
    return out, (session.state_hash() if state_hash else None)


def replay_state_hashes(
    env: Environment, seed: int, reference_per_turn: Sequence[Sequence[Mapping[str, Any]]]
) -> list[str | None]:
    """Replay the reference on a fresh session of ``seed``; the state hash after each turn."""
    s = env.session(seed)
    try:
        return [execute_and_hash(s, turn)[1] for turn in reference_per_turn]
    finally:
        s.close()


# ----------------------------------------------------------------------------------------------------------------
# JSONL


def _where(line: int | None, field: str) -> str:
    return f"line {line}: field '{field}'" if line is not None else f"field '{field}'"


def parse_tools(obj: Any, line: int | None = None) -> ToolIndex:
    if not isinstance(obj, list):
        raise RewardInputError(
            f"{_where(line, 'tools')}: expected a list of OpenAI function schemas, got {type(obj).__name__}"
        )
    try:
        return ToolIndex(obj)
    except RewardInputError as exc:
        raise RewardInputError(f"line {line}: {exc}" if line is not None else str(exc)) from None


def parse_reference(obj: Any, line: int | None = None, field: str = "reference") -> list[dict[str, Any]]:
    if not isinstance(obj, list):
        raise RewardInputError(
            f"{_where(line, field)}: expected a list of {{name, arguments, depends_on}} ([] for abstention), "
            f"got {type(obj).__name__}"
        )
    out = []
    for i, g in enumerate(obj):
        f = f"{field}[{i}]"
        if not isinstance(g, dict):
            raise RewardInputError(f"{_where(line, f)}: expected an object, got {type(g).__name__}")
        if not isinstance(g.get("name"), str) or not g["name"]:
            raise RewardInputError(f"{_where(line, f + '.name')}: expected a non-empty string")
        args = g.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                raise RewardInputError(f"{_where(line, f + '.arguments')}: not valid JSON") from None
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise RewardInputError(f"{_where(line, f + '.arguments')}: expected an object, got {type(args).__name__}")
        deps = g.get("depends_on", [])
        if deps is None:
            deps = []
        if not isinstance(deps, list) or not all(isinstance(j, int) and not isinstance(j, bool) for j in deps):
            raise RewardInputError(f"{_where(line, f + '.depends_on')}: expected a list of integer indices")
        for j in deps:
            if not 0 <= j < len(obj) or j == i:
                raise RewardInputError(
                    f"{_where(line, f + '.depends_on')}: index {j} does not name another step of {len(obj)}"
                )
        out.append({"name": g["name"], "arguments": args, "depends_on": deps})
    return out


def parse_calls(obj: Any, line: int | None = None, field: str = "calls") -> list[dict[str, Any]]:
    """Model calls. Arguments may be an object or a JSON string; unparsable arguments are kept (they score as
    a malformed call), but a call must be an object with a string name and ``ok``, when present, a boolean."""
    if not isinstance(obj, list):
        raise RewardInputError(
            f"{_where(line, field)}: expected a list of {{name, arguments, ok}}, got {type(obj).__name__}"
        )
    out = []
    for i, c in enumerate(obj):
        f = f"{field}[{i}]"
        if not isinstance(c, dict):
            raise RewardInputError(f"{_where(line, f)}: expected an object, got {type(c).__name__}")
        if "function" in c and isinstance(c["function"], dict):  # an OpenAI tool_call
            c = {**c["function"], **({"ok": c["ok"]} if "ok" in c else {})}
        if not isinstance(c.get("name"), str):
            raise RewardInputError(f"{_where(line, f + '.name')}: expected a string")
        args = c.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                pass  # scored as malformed
        if args is None:
            args = {}
        if "ok" in c and not isinstance(c["ok"], bool):
            raise RewardInputError(f"{_where(line, f + '.ok')}: expected true or false, got {c['ok']!r}")
        d = {"name": c["name"], "arguments": args}
        if "ok" in c:
            d["ok"] = c["ok"]
        out.append(d)
    return out
