"""Prompts for the OpenAI-compatible teacher, and the checks its answers must pass.

The teacher writes the user's turns (the first request and the follow-ups, each with what the
assistant reported before it) and the assistant's final reply of each turn. Every prompt carries
a plain draft from the offline writers and the values the text must keep; every answer is checked
with the linter's rules (no description text, no JSON or parameter names, no placeholders, every
required value mentioned, a withheld value left out; a reply names no id or number the results do
not hold). A user-turn answer that fails is a backend error (the query is rejected); a reply that
fails falls back to the offline reply.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from pipeline.core.records import ToolSpec
from pipeline.language.lexicon import intent_of, words
from pipeline.language.phrasing import ID_TOKEN, JSONISH, PLACEHOLDER, SENTENCE, SNAKE, mentions, ngrams, say_value
from pipeline.language.requests.step_parts import singled_out

NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")


def describe_tool(tool: ToolSpec) -> str:
    """What a tool does, as an infinitive verb phrase from its name (never its description):
    ``list_payees`` -> ``list payees``, ``add_issue_to_sprint`` -> ``add issue to sprint``."""
    return intent_of(tool.name, tool.read_only).say()


def must_say(step: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The values a user turn has to state for a step: its own values, and a value an earlier result returned
    among others (a write on it must name it; :func:`pipeline.language.requests.step_parts.singled_out`)."""
    out = dict(step["user_args"])
    for p, src in step.get("sources", {}).items():
        res = steps[src]["result"] if src < len(steps) else None
        if (
            res is not None
            and not (res.ok and singled_out(res.data, step["source_fields"][p], step["args"][p]))
            and not step["tool"].read_only
        ):
            out[p] = step["args"][p]
    return out


def turn_spec(
    turns: list[list[dict[str, Any]]], drafts: list[str], withheld: list[str], reference: str
) -> list[dict[str, Any]]:
    """Per user turn: the plain draft, the actions (from tool names), the values to keep (in a person's words)
    and, for a follow-up, the results the assistant reported before it."""
    spec = []
    steps_all = sorted((s for t in turns for s in t), key=lambda s: s["index"])
    for ti, steps in enumerate(turns):
        keep: dict[str, Any] = {}
        for s in steps:
            for p, v in must_say(s, steps_all).items():
                if not (ti == 0 and s is turns[0][0] and p in withheld) and v not in (None, "", [], {}):
                    keep[words(p)] = v
        entry: dict[str, Any] = {
            "draft": drafts[ti],
            "actions": [describe_tool(s["tool"]) for s in steps],
            "values": keep,
        }
        if ti == 0 and withheld:
            entry["leave_out"] = [words(p) for p in withheld]
        if ti > 0:
            entry["assistant_reported"] = [
                s["result"].data if s["result"].ok else {"error": s["result"].error} for s in turns[ti - 1]
            ]
        spec.append(entry)
    return spec


def user_turns_prompt(
    server: str, persona: str, info_level: str, reference: str, touched: Any, spec: list[dict[str, Any]]
) -> str:
    return (
        f"You write the user's messages in a conversation with an assistant that operates a "
        f"{server.replace('_', ' ')} service.\n"
        f"What the user's account holds (the only entities you may refer to): "
        f"{json.dumps(touched, default=str, sort_keys=True)}\n"
        f"Persona: {persona.replace('_', ' ')}. Information level: {info_level} (complete: give every value listed; "
        "missing: leave out what 'leave_out' names, the assistant will ask; minimal: be terse but keep every value).\n"
        f"Today is {reference}. Mention ONLY the values listed; never invent ids or names. Say what you want "
        f"in your own words: "
        "no JSON, no parameter names with underscores, no text copied from tool documentation; lists as prose.\n"
        "Turn 1 is the request; every later turn is a follow-up written after the assistant reported "
        "'assistant_reported'.\n"
        f"Turns (one user message per turn, in order): {json.dumps(spec, default=str)}\n"
        'Answer with JSON: {"turns": ["message for turn 1", ...]}'
    )


def text_problems(text: str, tools: list[ToolSpec], ngram: int = 6) -> list[str]:
    """The linter's language rules on one user text."""
    out = []
    grams = ngrams(text, ngram)
    if any(grams & ngrams(t.description, ngram) for t in tools):
        out.append("copies tool documentation")
    if JSONISH.search(text):
        out.append("holds JSON")
    names = {t.name for t in tools} | {p for t in tools for p in t.properties if "_" in p}
    if any(w in names for w in SNAKE.findall(text)):
        out.append("names a parameter")
    if PLACEHOLDER.search(text):
        out.append("holds a placeholder")
    return out


def user_turn_problems(
    texts: list[str], turns: list[list[dict[str, Any]]], withheld: dict[str, Any], tools: list[ToolSpec], reference: str
) -> list[str]:
    """What is wrong with the teacher's user turns: language rules, values left out, a withheld value given."""
    out = []
    steps_all = sorted((s for t in turns for s in t), key=lambda s: s["index"])
    for ti, (text, steps) in enumerate(zip(texts, turns)):
        out += [f"turn {ti + 1} {p}" for p in text_problems(text, tools)]
        for s in steps:
            for p, v in must_say(s, steps_all).items():
                if ti == 0 and s is turns[0][0] and p in withheld:
                    if mentions(text, v, reference) and not isinstance(v, bool):
                        out.append(f"turn 1 gives the withheld {words(p)}")
                elif not mentions(text, v, reference):
                    out.append(f"turn {ti + 1} leaves out the {words(p)} ({v!r})")
    return out


def reply_prompt(server: str, request: str, calls: list[dict[str, Any]], draft: str) -> str:
    return (
        f"You are the assistant operating a {server.replace('_', ' ')} service. The user asked: {request!r}\n"
        f"You made these tool calls, with these results: {json.dumps(calls, default=str, sort_keys=True)}\n"
        f"A plain draft of your reply: {draft!r}\n"
        "Write the final reply to the user: report only what the results say (counts as whole numbers, things by their "
        "names), confirm what was changed, say plainly what failed, never repeat a sentence, no placeholders.\n"
        'Answer with JSON: {"reply": "..."}'
    )


def reply_problems(reply: str, request: str, calls: list[dict[str, Any]], draft: str) -> list[str]:
    """A reply may name only ids and numbers that the results, the request or the draft hold."""
    out = []
    source = json.dumps(calls, default=str) + " " + request + " " + draft
    if PLACEHOLDER.search(reply):
        out.append("holds a placeholder")
    sents = [s.strip().lower() for s in SENTENCE.split(reply) if len(s.split()) >= 3]
    if len(sents) != len(set(sents)):
        out.append("repeats a sentence")
    for tok in ID_TOKEN.findall(reply):
        if tok not in source:
            out.append(f"names {tok}, which no result holds")
    for num in NUMBER.findall(reply):
        if num not in source and num.rstrip("0").rstrip(".") not in source:
            out.append(f"states {num}, which no result holds")
    return out


def parse_json_answer(text: str, key: str) -> Any:
    try:
        data = json.loads(text[text.index("{") : text.rindex("}") + 1])
        return data[key]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"LLM answer is not the JSON asked for: {text[:200]!r}") from exc


def call_record(
    tool: ToolSpec, args: dict[str, Any], ok: bool, data: Any, error: str | None, reference: str
) -> dict[str, Any]:
    """A call as the reply prompt shows it (the action in words, the arguments as values)."""
    said = {words(k): say_value(k, v, reference, random.Random(0)) for k, v in args.items()}
    return {"action": describe_tool(tool), "arguments": said, **({"result": data} if ok else {"error": error})}
