"""Goals: what a conversation is for, and the calls that would work against it.

A conversation pursues something a user of the service wants: it finds (reads), decides (reads that narrow
to one entity), acts (writes) and checks (reads after the act). Two shapes serve no goal a person has:

* **undo-then-redo**: an entity is closed, deleted or taken off, and a later call puts it back or works on
  it again with success (remove a saved place, then save it again; unfollow a user, then follow them);
* **do-then-undo**: a call ends what an earlier call of the same conversation made (place a bid, then
  retract it; add to the cart, then remove it);
* **acting on what was closed**: a later write names an entity the conversation itself closed or deleted
  (close a listing, then bid on it), which fails by construction. Kept only as a deliberate error case,
  at the share :attr:`pipeline.core.config.SimulateConfig.closed_entity_rate`.

A tool *closes* by the first word of its name (:data:`ENDS_ENTITY`: the entity itself ends, e.g.
``cancel_order``, ``rm``; :data:`ENDS_RELATION`: a link between entities ends, e.g. ``remove_from_cart``,
``unfollow_user``). What it closes is read off its arguments (:func:`closed_by`), and whether a later call
acts on that is :func:`acts_on`. Reads never count: a read after a close is the goal's check.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pipeline.language.lexicon import PREPOSITIONS, intent_of, singular

# a call whose name opens with one of these ends the entity it names (a later write on it fails)
ENDS_ENTITY = frozenset(
    {
        "archive",
        "cancel",
        "close",
        "deactivate",
        "delete",
        "freeze",
        "retract",
        "revoke",
        "rm",
        "rmdir",
        "terminate",
        "trash",
        "void",
    }
)
# a call whose name opens with one of these ends a link between entities (a later call may restore it)
ENDS_RELATION = frozenset({"remove", "unfollow", "unlike", "unlink", "untag", "leave", "unsubscribe", "unassign"})
# a call whose verb (its lexicon family or first word) is one of these makes a new entity or link
MAKES = frozenset(
    {
        "add",
        "book",
        "checkout",
        "comment",
        "create",
        "enroll",
        "follow",
        "invite",
        "join",
        "like",
        "link",
        "log",
        "open",
        "place",
        "post",
        "record",
        "register",
        "reserve",
        "save",
        "schedule",
        "send",
        "tag",
    }
)
_NAME_TOKENS = re.compile(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])")
_PATH_PARAMS = ("path",)


def _tokens(name: str) -> list[str]:
    return [t.lower() for t in _NAME_TOKENS.split(name.strip()) if t]


@functools.cache  # a pure function of a tool's name, asked millions of times while chains are sampled
def closes(name: str) -> bool:
    """Does a successful call of ``name`` close, delete or take off something?"""
    toks = _tokens(name)
    return bool(toks) and (toks[0] in ENDS_ENTITY or toks[0] in ENDS_RELATION)


def _nouns(name: str) -> frozenset[str]:
    """The words of a tool's name after its verb, in the singular (``save_place``: {"place"})."""
    return frozenset(singular(t) for t in _tokens(name)[1:] if t not in PREPOSITIONS)


def _link_nouns(name: str) -> frozenset[str]:
    """The words of what a link is taken off, where the name says it (``remove_issue_from_sprint``: {"sprint"};
    assigning the issue afterwards restores nothing), else the words after the verb (``unfollow_user``)."""
    toks = _tokens(name)[1:]
    cut = max((i for i, t in enumerate(toks) if t in PREPOSITIONS), default=-1)
    return frozenset(singular(t) for t in toks[cut + 1 :] if t not in PREPOSITIONS) or _nouns(name)


def _handles(args: dict[str, Any]) -> dict[str, str]:
    """The arguments that name an entity (an id, a path, an email, a tag): string values without spaces."""
    out: dict[str, str] = {}
    for p, v in args.items():
        vals = v if isinstance(v, list) else [v]
        for i, x in enumerate(vals):
            if isinstance(x, str) and x and not any(c.isspace() for c in x):
                out[p if not isinstance(v, list) else f"{p}[{i}]"] = x
    return out


@dataclass(frozen=True)
class Closed:
    """What one call closed: a single entity (``whole``: any later write naming it acts on it), or a link
    between ``values`` (a later write acts on it when it names them all and shares a noun of the name)."""

    tool: str
    values: tuple[str, ...]
    nouns: frozenset[str]
    whole: bool


def closed_by(name: str, args: dict[str, Any]) -> Closed | None:
    """What a successful call of ``name`` with ``args`` closes, or None when the call closes nothing."""
    toks = _tokens(name)
    if not toks or not closes(name):
        return None
    handles = _handles(args)
    if not handles:
        return None
    if toks[0] in ENDS_ENTITY:
        intent = intent_of(name, False)
        obj = singular(intent.object.split(" ")[-1]) if intent.object else ""
        cands = ([f"{obj}_id"] if obj else []) + list(_PATH_PARAMS)
        param = next((p for p in cands if p in handles), None)
        if param is not None:
            return Closed(name, (handles[param],), _nouns(name), True)
    return Closed(name, tuple(sorted(set(handles.values()))), _link_nouns(name), False)


def acts_on(closed: Closed, name: str, args: dict[str, Any]) -> bool:
    """Does a later write ``name(args)`` act on what ``closed`` closed?"""
    named = set(_handles(args).values())
    if closed.whole:
        return closed.values[0] in named
    # a link is restored by a call that makes one (follow after unfollow), never by one that ends another
    return set(closed.values) <= named and bool(closed.nouns & _nouns(name)) and not closes(name)


@dataclass(frozen=True)
class Conflict:
    """Two calls of a conversation working against each other (indices into its calls). ``undo``: the later call
    (``later``) closes what an earlier write (``closer`` here: the call it undoes) made or linked, a do-then-undo;
    else the later call is a write on what ``closer`` closed, which succeeded (``ok``: an undo-then-redo) or
    failed (acting on a closed entity)."""

    closer: int
    later: int
    ok: bool
    undo: bool = False

    @property
    def kind(self) -> str:
        if self.undo:
            return "do_then_undo"
        return "undo_then_redo" if self.ok else "acts_on_closed"


def _values(data: Any) -> set[str]:
    """Every string a result holds."""
    out: set[str] = set()
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, dict):
            stack.extend(d.values())
        elif isinstance(d, list):
            stack.extend(d)
        elif isinstance(d, str):
            out.add(d)
    return out


def _undoes(c: Closed, name: str, args: dict[str, Any], result: Any) -> bool:
    """Does closing ``c`` undo an earlier write ``name(args) -> result``: end the entity it created (its result
    holds the id, its arguments do not), or the link it made (``remove_from_cart`` after ``add_to_cart``)?"""
    named = set(_handles(args).values())
    if c.whole:  # a write that makes something (not one that changes a record holding other ids)
        made = intent_of(name, False).family in MAKES or _tokens(name)[0] in MAKES
        return made and c.values[0] not in named and c.values[0] in _values(result)
    return set(c.values) <= named and bool(c.nouns & _nouns(name))


def conflicts(calls: Iterable[tuple[str, dict[str, Any], bool, bool, Any]]) -> list[Conflict]:
    """The conflicts of a conversation's calls, in order: each call as (name, arguments, ok, read_only, result).
    A failed call closes nothing; a read is never a conflict (it is the goal's check)."""
    closed: list[tuple[int, Closed]] = []
    done: list[tuple[int, str, dict[str, Any], Any]] = []  # the successful writes that close nothing
    out: list[Conflict] = []
    for i, (name, args, ok, read_only, result) in enumerate(calls):
        if read_only:
            continue
        hit = next((j for j, c in closed if acts_on(c, name, args)), None)
        if hit is not None:
            out.append(Conflict(hit, i, ok))
        c = closed_by(name, args) if ok else None
        if c is not None:
            undone = next((j for j, n, a, r in done if _undoes(c, n, a, r)), None)
            if undone is not None:
                out.append(Conflict(undone, i, True, undo=True))
            closed.append((i, c))
        elif ok and not closes(name):
            done.append((i, name, args, result))
    return out


def goal_order(path: list[str]) -> list[str]:
    """A chain's tools in the order that serves a goal: whatever closes or deletes comes after the calls that
    find, decide and act (stable otherwise), so no later step works on what an earlier one closed."""
    return [n for n in path if not closes(n)] + [n for n in path if closes(n)]
