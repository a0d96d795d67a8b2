"""The corpus linter's language rules, per example: what a user or assistant message says, read against the tools
the example offers (``description_paste``, ``raw_json``, ``parameter_name``, ``placeholder``, ``repeated_sentence``,
``repeated_phrase``, ``non_integer_count``, ``plural_mismatch``); and what the linter reads off an offered tool
list (:class:`ToolList`), once per distinct list."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from pipeline.corpus.lint_report import LintReport
from pipeline.language.lexicon import is_plural
from pipeline.language.phrasing import (
    JSONISH,
    PLACEHOLDER,
    QUOTED,
    SENTENCE,
    SNAKE,
    WORD,
    description_grams,
    ngrams,
    stutter,
)

DECIMAL_COUNT = re.compile(r"\b\d+\.\d+ ([a-z]+)\b")
ONE_OF = re.compile(r"(?<![\d.,])\b1 ([a-z]+)\b")
UNITS = {
    "hours",
    "minutes",
    "days",
    "seconds",
    "km",
    "kg",
    "years",
    "weeks",
    "months",
    "points",
    "stars",
    "percent",
    "nights",
}


@dataclass
class ToolList:
    """What the linter reads off one offered tool list (a corpus offers the same list in many examples)."""

    names: set[str]  # snake_case names a user should never say
    by_name: dict[str, dict[str, Any]]
    descriptions: list[frozenset[tuple[str, ...]]]  # each tool description's n-grams
    vocab: set[str]  # :func:`tool_vocab`
    described: frozenset[tuple[str, ...]] = frozenset()  # every description's n-grams (a text sharing none pastes none)

    @classmethod
    def of(cls, tools: list[dict[str, Any]], ngram: int) -> ToolList:
        """The facts of a decoded tool list (``ngram``: the length of a description's runs of words)."""
        names, by_name = _tool_facts(tools)
        descs = [description_grams(fn.get("description") or "", ngram) for fn in by_name.values()]
        return cls(names, by_name, descs, tool_vocab(tools), frozenset().union(*descs))


def tool_vocab(tools: list[dict[str, Any]]) -> set[str]:
    """The words of the offered tools: their names, parameter names and descriptions."""
    out: set[str] = set()
    for t in tools:
        fn = t.get("function", t)
        out.update(
            _tool_words(
                fn["name"], fn.get("description") or "", tuple((fn.get("parameters") or {}).get("properties") or {})
            )
        )
    return out


@functools.lru_cache(maxsize=4096)
def _tool_words(name: str, description: str, params: tuple[str, ...]) -> frozenset[str]:
    """One tool's words (a corpus offers each tool in many lists: distractors vary the lists, not the tools)."""
    text = " ".join([name.replace("_", " "), description, *(p.replace("_", " ") for p in params)])
    return frozenset(WORD.findall(text.lower()))


def _tool_facts(tools: list[dict[str, Any]]) -> tuple[set[str], dict[str, dict[str, Any]]]:
    """The snake_case names a user should never say (tools, parameters), and the tools by name."""
    names: set[str] = set()
    by_name: dict[str, dict[str, Any]] = {}
    for t in tools:
        fn = t.get("function", t)
        by_name[fn["name"]] = fn
        names.add(fn["name"])
        names.update(p for p in (fn.get("parameters") or {}).get("properties", {}) if "_" in p)
    return names, by_name


def message_defects(eid: str, msgs: list[dict[str, Any]], facts: ToolList, ngram: int, rep: LintReport) -> None:
    """The language rules over one example's user and assistant messages (``ngram``: ``lint.description_ngram``)."""
    names, descs = facts.names, facts.descriptions
    quoted = [m["content"] for m in msgs if m["role"] == "tool" and isinstance(m.get("content"), str)]
    for m in msgs:
        text = m.get("content")
        if not isinstance(text, str) or m["role"] not in ("user", "assistant"):
            continue
        if m["role"] == "user":
            grams = ngrams(text, ngram)
            hit = next((g for d in descs for g in grams & d), None) if grams & facts.described else None
            if hit:
                rep.add("description_paste", eid, " ".join(hit))
            if JSONISH.search(text):
                rep.add("raw_json", eid, text)
            rep_phrase = stutter(text)
            if rep_phrase:
                rep.add("repeated_phrase", eid, rep_phrase)
            bad = [w for w in SNAKE.findall(text) if w in names]
            if bad:
                rep.add("parameter_name", eid, ", ".join(bad))
        if _may_hold_placeholder(text) and any(not _server_said(text, h, quoted) for h in PLACEHOLDER.finditer(text)):
            rep.add("placeholder", eid, text)
        # quoted text (a message body, a note) is the data's words, not the speaker's: each quote is its own token
        unquoted = QUOTED.sub(lambda q: f"\x00{q.start()}", text)
        sents = [s.strip().lower() for s in SENTENCE.split(unquoted) if len(s.split()) >= 3]
        if len(sents) != len(set(sents)):
            rep.add("repeated_sentence", eid, text)
        if m["role"] == "assistant":
            dec = [
                m.group(1)
                for m in DECIMAL_COUNT.finditer(text)
                if m.group(1) not in UNITS and is_plural(m.group(1)) and not any(m.group(0) in t for t in quoted)
            ]  # a tool's own words quoted back ("442.85 exceeds") count nothing
            if dec:
                rep.add("non_integer_count", eid, text)
            if any(
                is_plural(m.group(1)) and m.group(1) not in UNITS and not any(m.group(0) in t for t in quoted)
                for m in ONE_OF.finditer(text)
            ):  # a tool's own words quoted back ("Total: 0 files, 1 directories") are the tool's grammar
                rep.add("plural_mismatch", eid, text)


_PLACEHOLDER_MARKS = ("None", "null", "undefined", "NaN", "{", "<")  # what every PLACEHOLDER match holds


def _may_hold_placeholder(text: str) -> bool:
    """Can :data:`PLACEHOLDER` match ``text`` at all? (A scan for six substrings is much cheaper than the pattern's.)"""
    return any(m in text for m in _PLACEHOLDER_MARKS)


def _server_said(text: str, hit: re.Match[str], quoted: list[str]) -> bool:
    """A ``<file>`` or ``{name}`` that a text result of the example holds word for word (git's own usage line,
    quoted back), or the ``null`` of a path (``/dev/null`` in a diff): the server's text, not a template's hole. A
    JSON result counts by the texts it holds (a failed call's ``{"error": ..., "message": "... [<revision>...]"}``),
    never by its own syntax (``{}``, ``null``). A bare ``None``/``null`` is never excused."""
    said = [s for q in quoted for s in _texts_of(q)]
    if hit.group(0)[0] in "<{":
        return any(hit.group(0) in q for q in said)
    path = text[max(0, hit.start() - 1) : hit.end()]
    return path.startswith("/") and any(path in q for q in said)


def _texts_of(result: str) -> list[str]:
    """The texts a tool message holds: itself, or for JSON the strings inside it."""
    if not result.lstrip().startswith(("{", "[")):
        return [result]
    try:
        data = json.loads(result)
    except ValueError:
        return []
    out: list[str] = []

    def walk(d: Any) -> None:
        if isinstance(d, str):
            out.append(d)
        elif isinstance(d, dict):
            for v in d.values():
                walk(v)
        elif isinstance(d, list):
            for v in d:
                walk(v)

    walk(data)
    return out
