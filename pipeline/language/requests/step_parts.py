"""What a step's tool, parameters and results tell the writer: a parameter's role preposition and description,
whether it is the id of the user the call acts as, which id a noun of the tool's name stands for, how a run of
phrases is said in one breath, and the values a result shows, singles out or lists first.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.core.records import ToolSpec
from pipeline.language.lexicon import PREPOSITIONS, singular
from pipeline.language.phrasing import is_text
from pipeline.language.requests.step_words import ACTOR, BARE_PREPOSITIONS, MAKING, ROLE_PREPOSITIONS


def makes(tool: str, noun: str) -> bool:
    """Does the tool make a new ``noun`` (``open_account`` an account; ``add_issue_to_sprint`` no project)?"""
    head, *rest = tool.lower().split("_")
    return head in MAKING and noun in rest


def role(noun: str) -> tuple[str, str]:
    """The preposition a parameter's words open with, and the rest: ``("from", "account")`` for ``from account``;
    a role word counts as its preposition (``origin place``: ``("from", "place")``). ``("", noun)`` for none."""
    prep, _, rest = noun.partition(" ")
    if rest and prep in PREPOSITIONS:
        return prep, rest
    if rest and prep in ROLE_PREPOSITIONS:
        return ROLE_PREPOSITIONS[prep], rest
    return "", noun


def param_doc(tool: ToolSpec, p: str) -> str:
    """The description of the tool's parameter ``p`` ("" without one)."""
    prop = tool.properties.get(p)
    return str(prop.get("description") or "") if isinstance(prop, dict) else ""


def acts_as(tool: ToolSpec, p: str) -> bool:
    """Is ``p`` the id of the user the call acts as (its description says so), not an entity it acts on?"""
    return p.endswith("_id") and bool(ACTOR.search(param_doc(tool, p)))


def object_first(tool: ToolSpec, params: list[str]) -> str | None:
    """Of the id arguments a noun of the tool's name could stand for, the one it acts on: the first that is not the
    user the call acts as, else the first (``unfollow_user(user_id, target_user_id)`` unfollows the target user)."""
    return next((p for p in params if not acts_as(tool, p)), params[0] if params else None)


def described_param(tool: ToolSpec, noun: str, args: dict[str, Any], used: set[str]) -> str | None:
    """The one unused id argument whose description names ``noun`` (``contact_id``, "Contact id of the attendee
    to remove", for the ``attendee`` of ``remove_attendee``); ``None`` where none or several do."""
    word = re.compile(
        rf"\bid of (?:the |an? )?{re.escape(singular(noun))}s?\b(?!')", re.IGNORECASE
    )  # not "id of the thread's parent"
    hits = [p for p in args if p not in used and p.endswith("_id") and word.search(param_doc(tool, p))]
    return hits[0] if len(hits) == 1 else None


def bare_preposition(p: str, v: Any) -> bool:
    """A parameter named by a preposition alone (``at``, ``before``) with a value said as such (not quoted text)."""
    return p in BARE_PREPOSITIONS and not is_text(p, v)


def from_to(phrases: list[str]) -> list[str]:
    """A ``from ...`` phrase and the ``to ...`` phrase right after it as one (``from PLC-0003 to PLC-0019``):
    a route or a transfer is said in one breath, not as ``from A and to B``."""
    out: list[str] = []
    for ph in phrases:
        if out and ph.startswith("to ") and out[-1].startswith("from ") and " to " not in out[-1]:
            out[-1] = f"{out[-1]} {ph}"
        else:
            out.append(ph)
    return out


def one_with(phrases: list[str]) -> list[str]:
    """``with`` said once for a run of phrases that each open with it: "with amount 25 and PIN 5978", never
    "with amount 25 and with the PIN 5978"; a filter keeps its own ("with the merchant containing notes")."""
    out: list[str] = []
    run = False
    for ph in phrases:
        opens = ph.startswith("with ")
        out.append(ph.removeprefix("with ") if opens and run and " containing " not in ph else ph)
        run = opens
    return out


def singled_out(source: Any, field: str, value: Any) -> bool:
    """Did a result single out ``value``: is it the only value of ``field`` anywhere in it?"""
    return field_strings(source, field) == {str(value)}


def step_field_strings(
    steps: list[dict[str, Any]], i: int, field: str, memo: dict[tuple[int, str], set[str]]
) -> set[str]:
    """:func:`field_strings` of step ``i``'s result, kept in ``memo`` by (step, field): a writer asks of the same
    step's result again for each reference and each turn split it tries."""
    key = (i, field)
    if key not in memo:
        memo[key] = field_strings(steps[i]["result"].data, field)
    return memo[key]


def field_strings(source: Any, field: str) -> set[str]:
    """Every value of ``field`` anywhere in a result, as text."""
    seen: set[str] = set()

    def walk(d: Any) -> None:
        if isinstance(d, dict):
            for k, v in d.items():
                if k == field and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                    seen.add(str(v))
                walk(v)
        elif isinstance(d, list):
            for v in d:
                walk(v)

    walk(source)
    return seen


def first_of(source: Any, field: str, value: Any) -> bool:
    """Is ``value`` the ``field`` of the first record of the result's first list?"""
    lists = (
        [v for v in source.values() if isinstance(v, list)]
        if isinstance(source, dict)
        else [source]
        if isinstance(source, list)
        else []
    )
    for lst in lists:
        for rec in lst:
            if isinstance(rec, dict) and field in rec:
                return str(rec[field]) == str(value)
    return False


def result_values(data: Any) -> set[str]:
    """Every scalar a result shows (what the user can read in it)."""
    out: set[str] = set()

    def walk(d: Any) -> None:
        if isinstance(d, dict):
            for v in d.values():
                walk(v)
        elif isinstance(d, list):
            for v in d:
                walk(v)
        elif isinstance(d, (str, int, float)) and not isinstance(d, bool):
            out.add(str(d))

    walk(data)
    return out
