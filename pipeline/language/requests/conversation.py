"""The conversation: the user's message for each turn of a chain (one :class:`StepWriter` through all of them,
what each turn's results showed carried to the next), and the writes a user could not name when asking.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from pipeline.core.domain import Domain
from pipeline.language.lexicon import intent_of
from pipeline.language.requests.step import StepWriter
from pipeline.language.requests.step_parts import result_values, step_field_strings
from pipeline.language.requests.step_words import SHOWING
from pipeline.language.requests.turn import compose_turn
from pipeline.language.situations import noun_choice, reword


def unnamed_writes(
    turns_idx: list[list[int]],
    steps: list[dict[str, Any]],
    known: Callable[[str], bool],
    singles: dict[tuple[int, str], set[str]] | None = None,
) -> list[int]:
    """Writing steps that act on a value an earlier result did not single out, which the user could not
    name when asking: the value is neither an entity the user knows nor shown in an earlier turn. ``singles``:
    the :func:`step_field_strings` memo of a caller that tries several splits of the same steps."""
    singles = {} if singles is None else singles
    turn_of = {k: ti for ti, idx in enumerate(turns_idx) for k in idx}
    bad = []
    for k, st in enumerate(steps):
        if st["tool"].read_only:
            continue
        for p, src in st["sources"].items():
            res = steps[src]["result"]
            v = st["args"][p]
            if res.ok and step_field_strings(steps, src, st["source_fields"][p], singles) == {str(v)}:
                continue
            if turn_of[src] < turn_of[k] or known(str(v)):
                continue
            bad.append(k)
            break
    return bad


def value_words(args: dict[str, Any]) -> set[str]:
    """Every word of an argument's text (a value a request names is said as it is)."""
    return {w for v in result_values(args) for w in re.findall(r"[A-Za-z]+", v)}


def shows(step: dict[str, Any]) -> bool:
    """Does the step only show something (a list, a record, a search), so that a read right after it may leave its
    verb unsaid ("show me the events, then the attendees for that event")?"""
    tool = step["tool"]
    return tool.read_only and intent_of(tool.name, True).family in SHOWING


def write_turns(
    turns: list[list[dict[str, Any]]],
    steps: list[dict[str, Any]],
    info_level: str,
    persona: str,
    withheld: list[str],
    entities: dict[str, dict[str, Any]],
    reference: str,
    rng: random.Random,
    known: Callable[[str], bool] | None = None,
    domain: Domain | None = None,
) -> list[str]:
    """The user's message for each turn (``withheld``: values the first step's request leaves out;
    ``known``: whether the user knows a value without seeing it in a result, e.g. their own account's id;
    ``domain``: the service's words, :mod:`pipeline.core.domain`)."""
    w = StepWriter(steps, entities, reference, rng, known)
    terse = info_level == "minimal"
    out = []
    told: set[str] = set()  # the situations given so far
    nouns = noun_choice(domain, rng)  # "the branch STR-0001" all through the conversation
    for ti, turn in enumerate(turns):
        phrases: list[str] = []
        for i, st in enumerate(turn):
            held = withheld if (ti == 0 and i == 0) else []
            actors, secrets = set(w.acted_as), set(w.secrets_told)
            said = w.phrase(st, held, terse)
            if terse and said in phrases:  # "check it; check it" asks for one thing twice: say which thing this one is
                w.acted_as, w.secrets_told = actors, secrets
                said = w.phrase(st, held, False)
            if not terse and i and shows(turn[i - 1]):  # "pull up the events, then the attendees for that event"
                thing = w.thing_shown(st, said)
                if thing and thing.startswith(("the ", "all the ")) and rng.random() < 0.45:
                    said = thing
            if not terse:  # "the car VEH-003": the service's nouns as its users say them, values as they are
                said = reword(said, domain, value_words(st["args"]), rng, nouns)
            phrases.append(said)
        writes = any(not st["tool"].read_only for st in turn)
        thing = w.thing_shown(turn[0], phrases[0]) if len(turn) == 1 and not terse else None
        out.append(compose_turn(phrases, rng, persona, ti, terse, domain, writes, thing, told))
        w.saw([st["result"].data for st in turn if st["result"].ok])
    return out
