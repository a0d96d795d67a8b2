"""Robustness augmentation and the no-call example kinds.

* distractors: 3-8 tools from *other* servers added to the offered tools (exact share of examples)
* enum stripping: enum constraints removed from the schemas shown (exact share)
* irrelevance: requests no tool applies to (general questions); the reference is no call
* abstention: near misses (an action none of the offered tools performs on what they handle,
:mod:`pipeline.language.offtopic`),
  else in-domain-sounding requests another server could serve, offered this server's tools
* missing function: a needed tool hidden from the offered tools; the assistant says it cannot do
  that with the tools it has and asks how to proceed (clarification), making no call
* importer for When2Call / xLAM-irrelevance style JSONL files a user already has on disk

Shares are met exactly by a deterministic selection, so a corpus matches its knobs.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.core.config import AugmentConfig
from pipeline.core.records import Augmentation, Conversation, Example, Message, RefCall, ToolSpec, stable_hash
from pipeline.core.speedups import IdentityMemo
from pipeline.language.offtopic import NO_TOOL_REPLIES, irrelevant_request, near_miss
from pipeline.language.replies import describe
from pipeline.synthesis.simulate import system_prompt

NO_TOOL_REPLY = NO_TOOL_REPLIES[0]


def strip_enums(schema: dict[str, Any]) -> tuple[dict[str, Any], int]:
    s = copy.deepcopy(schema)
    n = 0

    def visit(node: Any) -> None:
        nonlocal n
        if isinstance(node, dict):
            if "enum" in node:
                del node["enum"]
                n += 1
            for v in node.values():
                visit(v)
        elif isinstance(node, list):
            for v in node:
                visit(v)

    visit(s)
    return s, n


def has_enum(tools: list[ToolSpec]) -> bool:
    return any("enum" in json.dumps(t.input_schema) for t in tools)


def _quota(ids: list[str], rate: float, total: int, salt: str) -> set[str]:
    k = min(len(ids), round(rate * total))
    return set(sorted(ids, key=lambda i: stable_hash([salt, i]))[:k])


def distractor_choices(c: Example, pool: dict[str, list[ToolSpec]]) -> list[ToolSpec]:
    """The tools that may be added to ``c``'s offered tools as distractors: other servers' tools, never a name
    already offered (servers share names: list_customers, get_order, ...), never the tool a no-call example is about
    (the hidden tool of a missing-function variant, the other server's tool of an abstention), and never one named
    after the action a near-miss abstention asks for (export, print, ...)."""
    augs = [Augmentation.parse(a) for a in c.augmentations]
    own = {t.name for t in c.tools} | {a.tool for a in augs if a.tool}
    actions = [a.action for a in augs if a.action]
    return [
        t
        for s, ts in pool.items()
        if s not in c.servers
        for t in ts
        if t.name not in own and not any(k in t.name.lower() for k in actions)
    ]


def robustness_reach(
    convs: list[Example], pool: dict[str, list[ToolSpec]], with_enum: Callable[[list[ToolSpec]], bool] = has_enum
) -> dict[str, set[str]]:
    """The examples each robustness knob can apply to, by id: ``distractors`` where another server has a tool to
    add (:func:`distractor_choices`), ``enum_stripped`` where an offered schema has an enum. An example already
    augmented counts for its augmentation, so the same answer comes before :func:`apply_robustness` and after it:
    the augment stage chooses within these sets, and the composition gate caps each knob's target to what they
    allow (:func:`pipeline.corpus.store.composition`)."""
    out: dict[str, set[str]] = {"distractors": set(), "enum_stripped": set()}
    for c in convs:
        kinds = {Augmentation.parse(a).kind for a in c.augmentations}
        if "distractors" in kinds or distractor_choices(c, pool):
            out["distractors"].add(c.conversation_id)
        if "enum_stripped" in kinds or with_enum(c.tools):
            out["enum_stripped"].add(c.conversation_id)
    return out


def apply_robustness(
    convs: list[Example], pool: dict[str, list[ToolSpec]], cfg: AugmentConfig, seed: int
) -> dict[str, int]:
    """Distractors and enum stripping on exact shares of the given examples (in place, tagged), chosen among the
    examples each can apply to (:func:`robustness_reach`); how many each could apply to."""
    total = len(convs)
    # the conversations of a server share their tool records: judge and strip each record once
    # (every record stays alive in ``convs`` or ``pool`` while this runs)
    enum_of = IdentityMemo(lambda t: has_enum([t]))
    enum_stripped = IdentityMemo(lambda t: t.model_copy(update={"input_schema": strip_enums(t.input_schema)[0]}))

    def with_enum(tools: list[ToolSpec]) -> bool:
        return any(enum_of.all(tools))

    reach = robustness_reach(convs, pool, with_enum)
    pick_d = _quota(sorted(reach["distractors"]), cfg.distractor_rate, total, f"distractors:{seed}")
    pick_e = _quota(sorted(reach["enum_stripped"]), cfg.enum_strip_rate, total, f"enums:{seed}")
    for c in convs:
        rng = random.Random(f"aug:{seed}:{c.conversation_id}")
        if c.conversation_id in pick_d:
            others = distractor_choices(c, pool)
            k = min(len({t.name for t in others}), rng.randint(cfg.distractor_min, cfg.distractor_max))
            extra, names = [], set()
            for t in rng.sample(others, len(others)):
                if len(extra) == k:
                    break
                if t.name not in names:
                    names.add(t.name)
                    extra.append(t)
            tools = list(c.tools) + extra
            rng.shuffle(tools)
            c.tools = tools
            c.augmentations.append(Augmentation.distractors(len(extra)))
        if c.conversation_id in pick_e:
            c.tools = [enum_stripped(t) for t in c.tools]
            c.augmentations.append(Augmentation.enum_stripped())
    return {k: len(ids) for k, ids in reach.items()}


def no_tool_reply(server: str, rng: random.Random, off_topic: bool) -> str:
    extra = (
        rng.choice(
            [
                "That question is outside what this service does.",
                f"It's a general question, not something the {server.replace('_', ' ')} tools cover.",
                f"Happy to help with anything on your {server.replace('_', ' ')} account, though.",
            ]
        )
        if off_topic
        else rng.choice(
            [
                f"I can only work with the {server.replace('_', ' ')} service here, and it doesn't offer that.",
                "You may be able to do it in the app itself.",
                "Is there something else I can do with your account?",
            ]
        )
    )
    return rng.choice(NO_TOOL_REPLIES).format(extra=extra)


def irrelevance_example(
    server: str, tools: list[ToolSpec], seed: int, rng: random.Random, snapshot_id: str, avoid: set[str] | None = None
) -> Example:
    q = irrelevant_request(rng, avoid if avoid is not None else set())
    msgs = [
        Message(role="system", content=system_prompt(server)),
        Message(role="user", content=q),
        Message(role="assistant", content=no_tool_reply(server, rng, True)),
    ]
    cid = "irr-" + stable_hash([server, q, seed, rng.random()], 14)
    return Example(
        conversation_id=cid,
        kind="irrelevance",
        server=server,
        servers=[server],
        seed=seed,
        snapshot_id=snapshot_id,
        messages=msgs,
        tools=tools,
        reference=[[]],
        augmentations=[Augmentation.irrelevance()],
    )


def abstention_example(
    server: str,
    tools: list[ToolSpec],
    other: ToolSpec,
    seed: int,
    rng: random.Random,
    snapshot_id: str,
    avoid: set[str] | None = None,
) -> Example:
    """A request the offered tools cannot serve: a near miss (an action none of them performs on the things
    they handle) where one is found, else what ``other`` (another server's tool) does."""
    avoid = avoid if avoid is not None else set()
    miss = near_miss(tools, rng, avoid)
    if miss is not None:
        q, tag = miss[0], Augmentation.abstention_near_miss(miss[1])
    else:
        q = rng.choice(["Could you {d}?", "Please {d}.", "I need to {d} today.", "Can you {d} for me?"]).format(
            d=describe(other)
        )
        tag = Augmentation.abstention(other.name)
    msgs = [
        Message(role="system", content=system_prompt(server)),
        Message(role="user", content=q),
        Message(role="assistant", content=no_tool_reply(server, rng, False)),
    ]
    cid = "abs-" + stable_hash([server, q, other.name, seed, rng.random()], 14)
    return Example(
        conversation_id=cid,
        kind="abstention",
        server=server,
        servers=[server],
        seed=seed,
        snapshot_id=snapshot_id,
        messages=msgs,
        tools=tools,
        reference=[[]],
        augmentations=[tag],
    )


def missing_function_variant(conv: Conversation, rng: random.Random) -> Example | None:
    """Hide the first reference tool from the offered tools: the right answer is to say so and ask."""
    first = next((c for turn in conv.reference for c in turn), None)
    if first is None:
        return None
    hidden = next((t for t in conv.tools if t.name == first.name), None)
    if hidden is None:
        return None
    users = [m for m in conv.messages if m.role == "user"]
    if not users:
        return None
    what = describe(hidden)  # "look up the order", never "look up order"
    reply = rng.choice(
        [
            f"I can't {what} with the tools I have here, so I haven't done anything yet.",
            f"No tool of mine lets me {what}, so I can't do that part.",
            f"There's no tool available to me to {what}, so I'll stop before doing anything.",
            f"I'm not able to {what}: that capability isn't among the tools offered to me.",
        ]
    )
    reply += " " + rng.choice(
        [
            "Would you like me to help with something else?",
            "If that tool can be enabled, I can try again.",
            "Is there another way I can help?",
            "You may need to do that step yourself.",
        ]
    )
    msgs = [conv.messages[0], users[0], Message(role="assistant", content=reply)]
    tools = [t for t in conv.tools if t.name != first.name]
    cid = "mf-" + stable_hash([conv.conversation_id, first.name], 14)
    return Example(
        conversation_id=cid,
        kind="missing_function",
        server=conv.server,
        servers=conv.servers,
        seed=conv.seed,
        snapshot_id=conv.snapshot_id,
        chain_id=conv.chain_id,
        query_id=conv.query_id,
        info_level=conv.info_level,
        persona=conv.persona,
        messages=msgs,
        tools=tools,
        reference=[[]],
        augmentations=[Augmentation.missing_function(first.name)],
        parent_id=conv.conversation_id,
        setup=conv.setup,
    )


def import_abstention_file(path: str | Path, default_server: str = "external") -> list[Example]:
    """Read a When2Call- or xLAM-irrelevance-style JSONL file (no download): examples with no reference call.

    Accepted fields per line: ``question`` or ``query`` (the request); ``tools`` (a list or a JSON
    string of OpenAI-style or bare function schemas); optional ``correct_answer`` (When2Call: a line
    whose correct answer is ``tool_call`` is skipped; for the others the assistant turn is
    ``answers[correct_answer]`` where given) or ``answers`` as a list of calls (xLAM: a line with a
    non-empty list is skipped). A malformed line raises ``ValueError`` naming the file and line."""
    out = []
    p = Path(path)
    for n, line in enumerate(p.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p}:{n}: not JSON: {exc}") from None
        if not isinstance(row, dict):
            raise ValueError(f"{p}:{n}: expected a JSON object, got {type(row).__name__}")
        q = row.get("question") or row.get("query")
        if not isinstance(q, str) or not q.strip():
            raise ValueError(f"{p}:{n}: needs a 'question' or 'query' string")
        correct = row.get("correct_answer")
        answers = row.get("answers", "[]")
        reply = NO_TOOL_REPLY.format(extra="").strip()
        if (
            correct is not None
        ):  # When2Call: answers is {category: candidate answer}, correct_answer names the right one
            if correct == "tool_call":
                continue
            if isinstance(answers, dict) and isinstance(answers.get(correct), str) and answers[correct].strip():
                reply = answers[correct]
        else:  # xLAM irrelevance: answers is the list of ground-truth calls, empty for "no call"
            if isinstance(answers, str):
                try:
                    answers = json.loads(answers)
                except json.JSONDecodeError:
                    answers = []
            if answers:
                continue
        try:
            raw_tools = row.get("tools", [])
            if isinstance(raw_tools, str):
                raw_tools = json.loads(raw_tools)
            tools = []
            for t in raw_tools:
                if isinstance(t, str):
                    t = json.loads(t)
                fn = t.get("function", t)
                tools.append(
                    ToolSpec(
                        name=fn["name"],
                        server=default_server,
                        description=fn.get("description", ""),
                        input_schema=fn.get("parameters") or {"type": "object", "properties": {}},
                    )
                )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{p}:{n}: malformed 'tools': {type(exc).__name__}: {exc}") from None
        src = "when2call" if "question" in row else "xlam_irrelevance"
        msgs = [Message(role="user", content=q), Message(role="assistant", content=reply)]
        cid = f"imp-{src}-" + stable_hash([str(p.name), n, q], 12)
        out.append(
            Example(
                conversation_id=cid,
                kind="abstention",
                server=default_server,
                servers=[default_server],
                seed=0,
                snapshot_id=f"import:{p.name}",
                messages=msgs,
                tools=tools,
                reference=[[]],
                augmentations=[Augmentation.imported(src)],
            )
        )
    return out


def ref_to_json(reference: list[list[RefCall]]) -> str:
    return json.dumps([[c.model_dump() for c in turn] for turn in reference], default=str)
