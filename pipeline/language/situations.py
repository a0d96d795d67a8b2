"""Why a user asks: the situation a person gives with a request, in the words of the service's domain.

A first turn may say what the user is up to ("I'm reconciling last month's statement", "my card got declined at
lunch", "the auditors come Monday") before or after
what it asks for; a later turn may add a short aside ("before I forget"). A situation is drawn from the
reasons of the service the conversation uses (its domain texts, :mod:`pipeline.core.domain`; a service without them
gets the general pool) and for whether the turn only reads or also changes something, so a reason never promises
what the turn does not do: a read is never "I need to pay this today". Situations name no value (no
id, amount or date), so they add nothing a call could be grounded on.
"""

from __future__ import annotations

import random
import re

from pipeline.core.domain import Domain
from pipeline.language.lexicon import READ_VERBS, WRITE_VERBS

# the general pool: reasons true of any service, for a service whose domain gives none (reads, writes); a built-in
# server's own are in its package's domain.yaml. Across every pool, no two-word opening starts more than 5 of them and
# no word trigram is in more than 3 (tests/pipeline/test_situations.py), so no "I'm checking ..." or "I'm looking for"
# runs through the corpus
GENERAL = (
    [
        "something needs checking",
        "I'm trying to get a clear picture",
        "I'd like to see where things stand",
        "I'm looking into something",
        "a question came up",
        "my boss wants an update",
        "something seems off",
        "I have a meeting soon",
        "I'd rather know before I decide",
        "someone asked me about it",
    ],
    [
        "I've got a few things to sort out",
        "I'd like to get this done now",
        "something needs changing",
        "I'm tidying things up",
        "my boss asked me to handle this",
        "it's been on my list all week",
        "a deadline is close",
        "plans changed",
        "I finally have time for this",
        "someone is waiting on me",
    ],
)
# how a situation goes with the request: before it as a sentence, before it with "so", after it with "since"
LEADS = ["{R}. {t}", "{R}, so {t}", "{R}. {t}", "{R}; {t}"]
# one word before the reason: a two-word one ("seeing as", "given that") makes a trigram with the reason's first word
# ("seeing as the", "given that a") that repeats whatever the reason is
TRAILS = ["{t}, since {r}{end}", "{t}, because {r}{end}", "{t}, as {r}{end}"]
# asides a later turn may carry: true whatever it asks
ASIDES = [
    "before I forget",
    "while I think of it",
    "while we're on it",
    "since we're here",
    "if you don't mind",
    "when you get a chance",
    "just so I have it",
    "while you're in there",
    "while I remember",
    "now that I think of it",
    "while you're at it",
    "no rush",
    "if it's no trouble",
    "whenever suits you",
]
KEEP_CASE = {"i", "i'd", "i'm", "i've", "i'll"}


def situation(domain: Domain | None, writes: bool, rng: random.Random, told: set[str] | None = None) -> str:
    """A reason a user of the service gives (``domain``'s, for a reading or a writing turn; the general pool where it
    has none), none of ``told`` (those a conversation gave already, to which it is added) while there is another."""
    reasons = (domain.reasons.writes if writes else domain.reasons.reads) if domain is not None else []
    pool = reasons or GENERAL[1 if writes else 0]
    said = rng.choice([s for s in pool if s not in (told or ())] or pool)
    if told is not None:
        told.add(said)
    return said


def lower_first(text: str) -> str:
    """``Could you ...`` -> ``could you ...``; a word that keeps its capital (I, a name, an id) stays."""
    first = text.split(" ", 1)[0]
    if first.lower().strip(",.:;!?") in KEEP_CASE or not first[1:].islower() or not first[:1].isupper():
        return text
    return text[:1].lower() + text[1:]


def with_situation(text: str, why: str, rng: random.Random) -> str:
    """``text`` (a request ending with ``.`` or ``?``) with the situation ``why`` said before or after it."""
    end = text[-1:] if text[-1:] in ".?!" else "."
    body = text[:-1] if text[-1:] in ".?!" else text
    if rng.random() < 0.3 and ":" not in body and ";" not in body:
        return rng.choice(TRAILS).format(t=body, r=why, end=end)
    so = re.match(r"so\b", text, re.IGNORECASE) is not None  # "So next, ...": never "..., so so next"
    # never "...; quick favour: ..."
    form = rng.choice([f for f in LEADS if not (so and ", so" in f)]) if ":" not in text else LEADS[0]
    t = lower_first(text) if "so" in form or ";" in form else text
    return form.format(R=why[:1].upper() + why[1:], t=t)


def with_aside(text: str, rng: random.Random) -> str:
    """A later turn with a short aside after its request ("..., before I forget.")."""
    end = text[-1:] if text[-1:] in ".?!" else "."
    body = text[:-1] if text[-1:] in ".?!" else text
    return f"{body}, {rng.choice(ASIDES)}{end}"


DETERMINED = re.compile(
    r"(?:\b(?:the|a|an|that|this|these|those|my|your|our|their|its|each|every|any|all|which|new|same|"
    r"first|last|other|pending)|'s|s'|\b[A-Z]+-\d+)\s*$"
)
UNQUOTED = re.compile(r'"[^"]*"|\([^)]*\)|[A-Za-z]+')


def noun_choice(domain: Domain | None, rng: random.Random) -> dict[str, str]:
    """One way to say each of the service's nouns (``domain``'s), for a whole conversation (a user who says "branch"
    keeps saying it): word -> the word said, singular and plural."""
    out: dict[str, str] = {}
    for ways in domain.nouns if domain is not None else ():
        (one, many), (said_one, said_many) = ways.noun, rng.choice(ways.said)
        out |= {one: said_one, many: said_many}
    return out


def verbs_too(domain: Domain | None) -> set[str]:
    """The service's nouns that are verbs too ("transfer the stock", "place a bid"): swapped only after a determiner,
    an id or a possessive ("the transfer", "TRF-0001 transfer", "the store's transfers")."""
    nouns = domain.nouns if domain is not None else ()
    return {w for ways in nouns if ways.noun[0] in WRITE_VERBS | READ_VERBS for w in ways.noun}


def reword(
    text: str, domain: Domain | None, keep: set[str], rng: random.Random, nouns: dict[str, str] | None = None
) -> str:
    """``text`` with the service's nouns said as its users say them ("the car VEH-003"), in about half the turns;
    quoted text, names in brackets and the words of ``keep`` (values the request names) left as they are. ``nouns``:
    the conversation's choice (:func:`noun_choice`), else one drawn here."""
    nouns = nouns if nouns is not None else noun_choice(domain, rng)
    if not nouns or rng.random() < 0.5:
        return text
    verbs = verbs_too(domain)

    def swap(m: re.Match[str]) -> str:
        w = m.group(0)
        if w in keep or (w in verbs and not _after_determiner(text[: m.start()])):
            return w  # "transfer the stock" stays a verb: never "shipment the stock"
        return nouns.get(w, w)

    said = UNQUOTED.sub(swap, text)
    # "an order" said "a trade", "a meeting" said "an appointment"
    return re.sub(r"\b(a|an) ([a-z]+)", lambda m: _article(m) if m.group(2) in nouns.values() else m.group(0), said)


def _article(m: re.Match[str]) -> str:
    word = m.group(2)
    return ("an " if word[0] in "aeiou" else "a ") + word


def _after_determiner(before: str) -> bool:
    """Does a word after ``before`` stand as a noun ("the ", "my ", "STR-0001's ")?"""
    return DETERMINED.search(before) is not None
