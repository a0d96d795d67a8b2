"""Conversation simulation as a state machine, executed live.

States per user turn: REQUEST (the user asks) -> [CLARIFY (assistant asks for a withheld value,
user answers)] -> CALL (assistant calls a tool; live execution) -> OBSERVE (SUCCESS / FAILURE)
-> RECOVER (corrected retry after an argument error, or graceful give-up after a state failure)
-> CONTINUE (next call, or the turn's final answer) -> next turn (follow-up) or END.

Final answers only state what the tools returned. The reference of a turn holds the calls a
correct assistant makes (a call that fails because of the live state is still the right call);
a wrong first attempt that was corrected is in the messages but not in the reference.
"""

from __future__ import annotations

import json
import random
from typing import Any

from pipeline.core.composition import INFO_LEVELS, level_weights
from pipeline.core.config import QueryConfig, ReplayConfig, SimulateConfig
from pipeline.core.records import (
    Chain,
    ChainStep,
    Conversation,
    Message,
    RefCall,
    Rejection,
    Snapshot,
    ToolSpec,
    TraceCall,
    UserQuery,
    messages_json,
    rejection,
    stable_hash,
)
from pipeline.core.rules import error_rate, over_budget, recovery_room
from pipeline.core.stage_names import StageName
from pipeline.discovery.goals import conflicts
from pipeline.discovery.sql_schema import statement_param
from pipeline.env import Environment
from pipeline.language.fields import field_values, find_field
from pipeline.language.replies import answer_with, ask_for, skipped_reply, step_reply, turn_reply
from pipeline.language.requests.conversation import unnamed_writes
from pipeline.language.requests.step_parts import result_values
from pipeline.language.teacher import call_record
from pipeline.language.value_agreement import RecordIndex
from pipeline.language.value_plans import ValueMemo
from pipeline.language.values import fill_args
from pipeline.synthesis.mistakes import first_attempt
from pipeline.synthesis.queries import PERSONAS, QueryBackend, grounding_errors, is_known_id
from pipeline.synthesis.references import ground_names, missing_references, remember, world_of

RESOLVE_ATTEMPTS = 5


def system_prompt(server: str) -> str:
    return (
        f"You are an assistant operating the {server.replace('_', ' ')} service through tools. "
        "Call tools to act for the user; ask when a required value is missing; "
        "report only what the tools return."
    )


def split_turns(n_steps: int, rng: random.Random, cfg: SimulateConfig) -> list[list[int]]:
    n_turns = min(n_steps, rng.randint(cfg.min_turns, cfg.max_turns))
    cuts = sorted(rng.sample(range(1, n_steps), n_turns - 1)) if n_turns > 1 else []
    bounds = [0, *cuts, n_steps]
    return [list(range(bounds[i], bounds[i + 1])) for i in range(len(bounds) - 1)]


def pick_info_level(rng: random.Random, cfg: SimulateConfig) -> str:
    return rng.choices(INFO_LEVELS, weights=level_weights(cfg), k=1)[0]


def resolve_chain(
    env: Environment,
    snap: Snapshot,
    chain: Chain,
    rng: random.Random,
    qcfg: QueryConfig,
    by_name: dict[str, ToolSpec] | None = None,
    memo: ValueMemo | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """Dry-run the chain on a scratch session to fix every argument (user values, earlier outputs,
    the user's own secrets). Returns per-step {tool, args, user_args, from_steps, result}.
    ``by_name``: the snapshot's tools by name, when the caller has them; ``memo``: see :func:`fill_args`."""
    by_name = by_name if by_name is not None else {t.name: t for t in snap.tools}
    memo = memo if memo is not None else ValueMemo()
    pick: dict[str, Any] = {}
    steps: list[dict[str, Any]] = []
    earlier = RecordIndex()  # the records in the results so far, by the ids they carry
    # a third-party server may accept a name nothing holds: what the world and the calls so far hold
    known = world_of(snap) if env.config.kind != "builtin" else None
    with env.session(chain.seed) as s:
        for k, st in enumerate(chain.steps):
            tool = by_name[st.name]
            fixed: dict[str, Any] = {}
            from_steps: list[str] = []
            sources: dict[str, int] = {}
            source_fields: dict[str, str] = {}
            for p, src in st.args.items():
                if src.kind == "user" and src.value is not None:
                    pick.setdefault(
                        p, src.value
                    )  # the value a live call accepted where the probe saw none (graph discovery)
                if src.kind == "step":
                    sources[p], source_fields[p] = src.step, src.field
                    prev = steps[src.step]["result"]
                    val = find_field(prev.data, src.field) if prev.ok else None
                    if val is None:
                        return (
                            steps,
                            f"step {k} ({st.name}) needs {src.field} from step {src.step} "
                            f"({steps[src.step]['tool'].name}), which returned none",
                        )
                    fixed[p] = val
                    from_steps.append(p)
            _distinct_ids(fixed, st, steps)
            # a step's own statement (planned with the chain's others, pipeline.language.statements) is its own
            own = {p: src.value for p, src in st.args.items() if src.value is not None and p == statement_param(tool)}
            args = fill_args(
                tool,
                snap,
                rng,
                fixed=fixed,
                optional_rate=0.25,
                reference_date=qcfg.reference_date,
                pick={**pick, **own} if own else pick,
                context=earlier,
                memo=memo,
            )
            if known is not None:  # a made-up relation end or path becomes one the world holds
                args = ground_names(tool, args, snap, known, rng)
            sensitive = memo.facts(tool).sensitive
            for p, v in args.items():
                if p not in fixed and p not in sensitive:
                    pick.setdefault(p, v)
            res = s.call(tool.name, args)
            if known is not None:
                remember(known, args, res)
            if res.ok:
                earlier.add(res.data)
            user_args = {p: v for p, v in args.items() if p not in fixed}
            steps.append(
                {
                    "tool": tool,
                    "args": args,
                    "user_args": user_args,
                    "from_steps": from_steps,
                    "result": res,
                    "index": k,
                    "sources": sources,
                    "source_fields": source_fields,
                }
            )
    return steps, None


def _distinct_ids(fixed: dict[str, Any], st: ChainStep, steps: list[dict[str, Any]]) -> None:
    """Two id arguments taken from earlier results name two entities, where a result offers another
    (no route from a place to itself, no transfer from an account to itself): the later argument takes
    the next value its result holds, else the earlier one does (in place)."""
    ids = [p for p in fixed if p.endswith("_id")]
    for p in reversed(ids):
        others = {fixed[q] for q in ids if q != p}
        if fixed[p] not in others:
            continue
        src = st.args[p]
        prev = steps[src.step]["result"]
        alt = next((x for x in field_values(prev.data, src.field) if x not in others), None) if prev.ok else None
        if alt is not None:
            fixed[p] = alt


def live_calls(chain: Chain, step_ok: list[bool]) -> tuple[int, int]:
    """(calls, failed calls) the live conversation will make, given which steps fail: a step whose
    dependency failed is not called (the assistant gives up on it gracefully)."""
    failed: set[int] = set()
    calls = fails = 0
    for k, st in enumerate(chain.steps):
        if any(d in failed for d in st.depends_on):
            failed.add(k)
            continue
        calls += 1
        if k < len(step_ok) and not step_ok[k]:
            fails += 1
            failed.add(k)
    return calls, fails


def _with_dry_run(chain: Chain, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """A rejected chain with the calls of its (last kept) dry run, for lineage."""
    body = chain.model_dump(mode="json")
    body["dry_run"] = [
        {
            "name": st["tool"].name,
            "arguments": st["args"],
            "ok": st["result"].ok,
            "error_code": st["result"].error_code,
            "error": st["result"].error,
            "result": st["result"].data if st["result"].ok else None,
        }
        for st in steps
    ]
    return body


def _chain_rejected(
    reason: str, detail: str, snap: Snapshot, up: dict[str, Any], chain: Chain, steps: list[dict[str, Any]]
) -> Rejection:
    """The query stage's rejection of a chain, with the calls of its dry run."""
    return rejection(StageName.QUERY, reason, detail, snap.server, up, _with_dry_run(chain, steps), record_type="chain")


def _unwritten(rej: Rejection, info_level: str, persona: str) -> Rejection:
    """A chain rejected before its request was written, with the information level and persona that request was to
    have: its story shows them beside the values the user would have asked with (the dry run's arguments)."""
    body = json.loads(rej.payload) if rej.payload else {}
    body["request"] = {"written": False, "info_level": info_level, "persona": persona}
    return rej.model_copy(update={"payload": json.dumps(body, default=str)})


def plan_query(
    env: Environment,
    snap: Snapshot,
    chain: Chain,
    backend: QueryBackend,
    cfg: SimulateConfig,
    qcfg: QueryConfig,
    rng: random.Random,
    info_level: str | None = None,
    persona: str | None = None,
    max_error_rate: float = ReplayConfig.model_fields["max_error_rate"].default,
    memo: ValueMemo | None = None,
) -> tuple[UserQuery | None, Rejection | None]:
    """Resolve the chain's arguments on a scratch session and write the user's request per turn.

    Resolution tries up to ``RESOLVE_ATTEMPTS`` sets of values and keeps the first whose dry run
    both resolves every dependency and fails at most ``max_error_rate`` of its calls (the replay
    threshold): a request built on values that make most calls fail would be simulated and
    replayed only to be rejected. Failures within the threshold stay: they teach give-up. ``memo``: a
    :class:`~pipeline.language.value_plans.ValueMemo` shared by the queries of a stage."""
    up = {"snapshot_id": snap.snapshot_id, "chain_id": chain.chain_id}
    info_level = info_level or pick_info_level(rng, cfg)
    persona = persona or rng.choice(sorted(PERSONAS))
    tried = _dry_run(env, snap, chain, rng, qcfg, memo, max_error_rate, up)
    if isinstance(tried, Rejection):
        return None, _unwritten(tried, info_level, persona)
    steps = tried
    against = _against_goal(snap, chain, steps, up)
    if against is not None:
        return None, _unwritten(against, info_level, persona)
    turns_idx = _named_split(snap, chain, steps, rng, cfg, up)
    if isinstance(turns_idx, Rejection):
        return None, _unwritten(turns_idx, info_level, persona)
    turns = [[steps[i] for i in idx] for idx in turns_idx]
    withheld = _withheld(turns, info_level, rng)
    if withheld is None:
        why = f"{turns[0][0]['tool'].name} takes no user value the user could omit"
        rej = _chain_rejected("nothing_to_withhold", why, snap, up, chain, steps)
        return None, _unwritten(rej, info_level, persona)
    try:
        texts = backend.write(snap.server, turns, info_level, persona, list(withheld), snap, rng)
    except Exception as exc:  # an LLM that answers garbage or times out rejects this query only
        rej = _chain_rejected("query_backend_error", str(exc), snap, up, chain, steps)
        return None, _unwritten(rej, info_level, persona)
    qid = "q-" + stable_hash([chain.chain_id, texts, info_level], 12)
    query = UserQuery(
        query_id=qid,
        chain_id=chain.chain_id,
        server=snap.server,
        info_level=info_level,
        persona=persona,  # type: ignore[arg-type]
        turns=texts,
        turn_steps=turns_idx,
        withheld=withheld,
        backend=backend.name,
        snapshot_id=snap.snapshot_id,
        seed=chain.seed,
        step_args=[st["args"] for st in steps],
        step_ok=[st["result"].ok for st in steps],
    )
    up["query_id"] = qid
    synth_ok = {str(v) for st in steps for v in st["user_args"].values()} | {
        str(v) for st in steps for v in st["args"].values()
    }
    bad = grounding_errors(texts, snap, extra_ok=synth_ok if backend.name == "template" else None)
    if bad and backend.name == "template":  # the template writer may also name what the dry run's results showed
        shown = {v for st in steps if st["result"].ok for v in result_values(st["result"].data)}
        bad = [b for b in bad if b not in shown]
    if bad:
        return None, rejection(
            StageName.QUERY,
            "ungrounded_query",
            f"request names entities absent from the snapshot: {sorted(set(bad))}",
            snap.server,
            up,
            query,
        )
    return query, None


def _dry_run(
    env: Environment,
    snap: Snapshot,
    chain: Chain,
    rng: random.Random,
    qcfg: QueryConfig,
    memo: ValueMemo | None,
    max_error_rate: float,
    up: dict[str, Any],
) -> list[dict[str, Any]] | Rejection:
    """The chain resolved on a scratch session: the first of ``RESOLVE_ATTEMPTS`` value sets whose dry run resolves
    every dependency within the error budget (else the one failing least), or why none would do."""
    best: tuple[float, list[dict[str, Any]], int, int] | None = None
    problem: str | None = None
    dangling: list[str] = []
    steps: list[dict[str, Any]] = []
    by_name = {t.name: t for t in snap.tools}
    world: set[str] | None = None
    for _attempt in range(RESOLVE_ATTEMPTS):  # other sampled values may lead to a result the next step can use
        steps, problem = resolve_chain(env, snap, chain, rng, qcfg, by_name, memo)
        if problem:
            continue
        if env.config.kind != "builtin":  # a third-party server may accept a name nothing holds
            world = world if world is not None else world_of(snap)
            dangling = missing_references(snap, steps, world)
            if dangling:
                continue
        calls, errors = live_calls(chain, [st["result"].ok for st in steps])
        rate = error_rate(calls, errors)
        if best is None or rate < best[0]:
            best = (rate, steps, calls, errors)
        if not over_budget(calls, errors, max_error_rate):
            break
    if best is None and dangling and not problem:
        return rejection(
            StageName.QUERY,
            "missing_entity",
            f"every value set tried ({RESOLVE_ATTEMPTS}) names something that is neither in the world nor made by an "
            f"earlier call: {dangling}",
            snap.server,
            up,
            _with_dry_run(chain, steps),
            record_type="chain",
        )
    if best is None:
        return rejection(
            StageName.QUERY,
            "unresolvable_dependency",
            f"{problem} (tried {RESOLVE_ATTEMPTS} sets of values)",
            snap.server,
            up,
            _with_dry_run(chain, steps),
            record_type="chain",
        )
    _rate, steps, calls, errors = best
    if over_budget(calls, errors, max_error_rate):
        failing = [f"{st['tool'].name}: {st['result'].error_code}" for st in steps if not st["result"].ok]
        return rejection(
            StageName.QUERY,
            "error_rate",
            f"every value set tried ({RESOLVE_ATTEMPTS}) fails more than {max_error_rate:.0%} of the "
            f"calls in the dry run; fewest failing: {failing}",
            snap.server,
            up,
            _with_dry_run(chain, steps),
            record_type="chain",
        )
    return steps


def _against_goal(
    snap: Snapshot,
    chain: Chain,
    steps: list[dict[str, Any]],
    up: dict[str, Any],
) -> Rejection | None:
    """Why the dry run's calls serve no goal (:mod:`pipeline.discovery.goals`), or None: an undo-then-redo (a
    later write succeeds on what an earlier call closed) or a do-then-undo is rejected; a write that fails on what
    the conversation closed is kept where the chain is a deliberate error case (``chains.closed_entity_rate``),
    else rejected."""
    found = conflicts(
        (st["tool"].name, st["args"], st["result"].ok, st["tool"].read_only, st["result"].data) for st in steps
    )
    if not found or (chain.error_case and all(c.kind == "acts_on_closed" for c in found)):
        return None
    c = next((c for c in found if c.kind != "acts_on_closed"), found[0])
    return rejection(
        StageName.QUERY,
        c.kind,
        f"step {c.later} ({steps[c.later]['tool'].name}) "
        + ("undoes" if c.undo else "works on what was closed by")
        + f" step {c.closer} ({steps[c.closer]['tool'].name}): {steps[c.closer]['args']}",
        snap.server,
        up,
        _with_dry_run(chain, steps),
        record_type="chain",
    )


def _named_split(
    snap: Snapshot,
    chain: Chain,
    steps: list[dict[str, Any]],
    rng: random.Random,
    cfg: SimulateConfig,
    up: dict[str, Any],
) -> list[list[int]] | Rejection:
    """The steps split into user turns so that every write names its entity: a write on a value a list returned
    needs the list shown in an earlier turn, or a value the user knows (eight splits tried)."""

    def known(v: str) -> bool:
        return is_known_id(v, snap)

    singles: dict[tuple[int, str], set[str]] = {}  # the same steps each try: their results' values worked out once
    for _split in range(8):
        turns_idx = split_turns(len(steps), rng, cfg)
        unnamed = unnamed_writes(turns_idx, steps, known, singles)
        if not unnamed:
            return turns_idx
    why = (
        f"step {unnamed[0]} ({steps[unnamed[0]]['tool'].name}) writes on a value an earlier "
        "result of the same turn did not single out, and no turn split lets the user name it"
    )
    return _chain_rejected("unnamed_entity", why, snap, up, chain, steps)


def _withheld(turns: list[list[dict[str, Any]]], info_level: str, rng: random.Random) -> dict[str, Any] | None:
    """The value the user leaves out of the first request at the "missing" level (empty at the other levels), or
    None when the first call takes no value the user could omit. A yes/no flag is no value a person forgets to
    give: only values are withheld."""
    if info_level != "missing":
        return {}
    first = turns[0][0]
    cands = [
        p for p in first["tool"].required if p in first["user_args"] and not isinstance(first["user_args"][p], bool)
    ]
    if not cands:
        return None
    p = rng.choice(cands)
    return {p: first["user_args"][p]}


def recovery_budget(chain: Chain, step_ok: list[bool], max_error_rate: float) -> int:
    """How many corrected wrong attempts the conversation can show and stay within the replay's
    error-rate threshold, given which steps the dry run saw fail."""
    if not step_ok:
        return 0
    calls, fails = live_calls(chain, step_ok)
    return recovery_room(calls, fails, max_error_rate)


def _record_call(
    messages: list[Message],
    trace: list[TraceCall],
    cid: str,
    turn: int,
    name: str,
    args: dict[str, Any],
    res: Any,
    *,
    reference: bool,
) -> None:
    """A call as the conversation shows it (the assistant's call, the tool's message) and as its trace records it
    (``reference``: a call of the reference, not a recovery demonstration's wrong attempt)."""
    call = Message.calling(cid, name, args)
    if not reference:
        call.weight = 0  # a wrong attempt: shown, read by replay and the reward, never trained on
    messages.append(call)
    messages.append(Message(role="tool", tool_call_id=cid, content=res.as_tool_content()))
    trace.append(
        TraceCall(
            turn=turn,
            name=name,
            arguments=args,
            ok=res.ok,
            error_code=res.error_code,
            reference=reference,
            result=res.data if res.ok else None,
            error=res.error,
        )
    )


def run_conversation(
    env: Environment,
    snap: Snapshot,
    chain: Chain,
    query: UserQuery,
    rng: random.Random,
    *,
    recovery_rate: float,
    max_error_rate: float = ReplayConfig.model_fields["max_error_rate"].default,
    reference_date: str = QueryConfig.model_fields["reference_date"].default,
    replier: Any | None = None,
) -> Conversation:
    """Play the conversation live on a fresh session of the chain's seed.

    Some calls are preceded by a plausible wrong attempt that the assistant then corrects (a
    recovery demonstration), as many as the error-rate threshold of replay leaves room for. ``replier``: a teacher
    (:meth:`pipeline.synthesis.queries.LLMBackend.reply`) that rewrites each turn's final reply from its calls, or
    None."""
    by_name = {t.name: t for t in snap.tools}
    texts, withheld = query.turns, query.withheld
    # the assistant's wording; ``rng`` keeps deciding the recovery attempts
    say = random.Random(f"words:{query.query_id}")
    messages: list[Message] = [Message(role="system", content=system_prompt(snap.server))]
    reference: list[list[RefCall]] = []
    trace: list[TraceCall] = []
    outcomes: list[str] = []
    flat_index: dict[int, int] = {}  # chain step -> index in the flattened reference
    failed_steps: set[int] = set()
    n_ref = 0
    call_no = 0
    budget = recovery_budget(chain, query.step_ok, max_error_rate)
    with env.session(chain.seed) as s:
        s.reset()
        for ti, idx in enumerate(query.turn_steps):
            messages.append(Message(role="user", content=texts[ti]))
            first_tool = by_name[chain.steps[idx[0]].name]
            if ti == 0 and withheld:
                p, v = next(iter(withheld.items()))
                messages.append(Message(role="assistant", content=ask_for(first_tool, p, say)))
                messages.append(
                    Message(role="user", content=answer_with(first_tool, p, v, reference_date, say, snap.entities))
                )
            turn_ref: list[RefCall] = []
            ok_count = 0
            attempted = 0
            final_lines: list[str] = []
            for k in idx:
                tool = by_name[chain.steps[k].name]
                args = query.step_args[k]
                deps = chain.steps[k].depends_on
                if any(d in failed_steps for d in deps):
                    failed_steps.add(k)
                    final_lines.append(skipped_reply(tool))
                    continue
                # sometimes a wrong first attempt, then the corrected call (a recovery demonstration)
                if budget > 0 and rng.random() < recovery_rate:
                    wrong = first_attempt(s, snap, tool, args, rng, by_name, messages)
                    if wrong is not None:
                        budget -= 1
                        call_no += 1
                        bad = wrong.mistake
                        _record_call(
                            messages, trace, f"call_{call_no}", ti, bad.tool, bad.args, wrong.result, reference=False
                        )
                call_no += 1
                # the final hash comes with the conversation's last call
                res = s.call(tool.name, args, hash_after=ti == len(query.turn_steps) - 1 and k == idx[-1])
                attempted += 1
                _record_call(messages, trace, f"call_{call_no}", ti, tool.name, args, res, reference=True)
                turn_ref.append(
                    RefCall(name=tool.name, arguments=args, depends_on=[flat_index[d] for d in deps if d in flat_index])
                )
                flat_index[k] = n_ref
                n_ref += 1
                if res.ok:
                    ok_count += 1
                else:
                    failed_steps.add(k)
                final_lines.append(step_reply(tool, args, res, say))
            reply = turn_reply(final_lines)
            if replier is not None:
                calls = [
                    call_record(by_name[t.name], t.arguments, t.ok, t.result, t.error, reference_date)
                    for t in trace
                    if t.turn == ti and t.reference
                ]
                reply = replier.reply(snap.server, texts[ti], calls, reply)
            messages.append(Message(role="assistant", content=reply))
            reference.append(turn_ref)
            outcomes.append(
                "SUCCESS" if attempted and ok_count == attempted else ("PARTIAL" if ok_count else "FAILURE")
            )
        final_hash = s.state_hash()
    conv_id = "conv-" + stable_hash([chain.chain_id, query.query_id, messages_json(messages)], 14)
    return Conversation(
        conversation_id=conv_id,
        server=snap.server,
        servers=[snap.server],
        seed=chain.seed,
        snapshot_id=snap.snapshot_id,
        chain_id=chain.chain_id,
        query_id=query.query_id,
        info_level=query.info_level,
        persona=query.persona,
        messages=messages,
        tools=snap.tools,
        reference=reference,
        trace=trace,
        outcomes=outcomes,
        final_state_hash=final_hash,
        kind="clarification" if query.info_level == "missing" else "multi_turn",
        setup=[c.model_dump(mode="json") for c in env.config.setup],
    )
