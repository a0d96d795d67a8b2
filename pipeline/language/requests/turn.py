"""A turn's composition: one user turn from its steps' phrases, in parts drawn independently (greeting, persona
context or situation, ask frame or a question by what a read shows, connectors, acknowledgement, closer).
"""

from __future__ import annotations

import functools
import random
import re

from pipeline.core.domain import Domain
from pipeline.language.lexicon import PEOPLE, is_plural, singular
from pipeline.language.phrasing import stutter
from pipeline.language.requests.turn_words import (
    ASKS,
    CLOSERS,
    CONTEXTS,
    ECHOES,
    FOLLOW_ACKS,
    FOLLOW_LEADS,
    GREETINGS,
    HEAD_ENDS,
    MONTH_ENDS,
    OWN_ASKS,
    OWN_FOLLOW_LEADS,
    SHOWING_VERBS,
    THEN,
    THEN_THING,
    THING_ASKS,
    THING_FOLLOWS,
    TRAILING,
    VALUE_HEADS,
    WHEN_WORDS,
)
from pipeline.language.situations import TRAILS, lower_first, situation, with_aside, with_situation


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _first_word(s: str) -> str:
    return s.split(" ", 1)[0].strip(".,;:!?").lower()


# a follow-up that opens with one of these acknowledges already ("Good. Could you ...", "Great, and now ...")
ACK_WORDS = frozenset(_first_word(a) for a in FOLLOW_ACKS)


def _last_word(s: str) -> str:
    return s.rsplit(" ", 1)[-1].strip(".,;:!?").lower()


def thing_questions(thing: str, follow: bool) -> list[str]:
    """What a one-step read shows, asked as a question the way people ask it, by what it is: people "Who are the
    followers of USR-0016?", a value "What's the balance for account ACC-0003?", a list "What transactions are there
    for account ACC-0003?"; [] where none fits (a possessive "CUS-0001's accounts", a single record). ``follow``: a
    later turn ("And who are ...?")."""
    m = re.match(r"(all the|the) ", thing)
    if not m:
        return []
    toks = thing[m.end() :].split(" ")
    n = next((i for i, t in enumerate(toks) if t.lower() in HEAD_ENDS or not t.isalpha()), len(toks))
    head, rest = " ".join(toks[:n]), " ".join(toks[n:])
    last = head.split(" ")[-1].lower() if head else ""
    if not last:
        return []
    many = is_plural(last)
    be = "are" if many else "is"
    if singular(last) in PEOPLE:
        forms = [f"Who {be} {thing}?", f"Can you tell me who {thing} {be}?"]
    elif last in VALUE_HEADS:
        forms = [f"What {be} {thing}?", f"Can you tell me what {thing} {be}?", *([] if many else [f"What's {thing}?"])]
    elif many and head.isascii():
        tail = f" {rest}" if rest else ""
        forms = [f"What {head} are there{tail}?", f"Which {head} are there{tail}?"]
    else:
        return []
    if "," in thing or len(thing.split(" ")) > 8:  # "tell me who the contacts on COM-0005, with ... are": too far
        forms = [f for f in forms if not f.startswith("Can you tell me")]
    return [f"And {f[:1].lower()}{f[1:]}" for f in forms] if follow else forms


def _thing_frames(frames: list[str], thing: str) -> list[str]:
    """The frames that can go round ``thing``: "Could you bring {n} up?" never after "the company you brought up"
    ("... brought up up")."""
    return [f for f in frames if "{n} up" not in f] if thing.endswith(" up") else frames


def _follow_leads(body: str, steps: int) -> list[str]:
    """The frames of a follow-up: "Could you ... next?" only after a single step that ends in a word, never after a
    value ("response set to accepted next", "at 09:00 on 2 March next") or a list of steps."""
    if steps == 1 and not re.search(r"[\d\"')]", _last_word(body)) and not body.endswith(MONTH_ENDS):
        return FOLLOW_LEADS
    return [f for f in FOLLOW_LEADS if "{p} next" not in f]


@functools.lru_cache(maxsize=512)
def _kept(pool: tuple[str, ...], echoes: bool, trailing: bool) -> tuple[str, ...]:
    """``pool``'s frames without those that would echo the request's "too" or trail its value (a few pools, met in
    every turn: filtered once each)."""
    drop = [p for p, on in ((ECHOES, echoes), (TRAILING, trailing)) if on]
    return tuple(f for f in pool if not any(d.search(f) for d in drop))


def _asks(frames: list[str], own: list[str], body: str) -> list[str]:
    """The frames a request can take: the user's own voice only where its verb says no "me" ("show me ...") and
    is not the assistant's showing ("I want to show the saved places")."""
    echoes = ECHOES.search(body) is not None  # "... the attendees too": never "... too too, please"
    trailing = re.search(r"[\d_]", _last_word(body)) is not None  # "... my token is sk_live_x9", never "... for me?"
    if echoes or trailing:
        frames, own = (list(_kept(tuple(pool), echoes, trailing)) for pool in (frames, own))
    if re.search(r"\bme\b", body) or _first_word(body) in SHOWING_VERBS:
        return frames
    return frames + own


def _join_steps(phrases: list[str], rng: random.Random, terse: bool) -> str:
    """A turn's step phrases as one request: "A, and then B", "A, then the attendees for it"; a terse "A; B"."""
    body = phrases[0]
    for ph in phrases[1:]:
        joins = THEN if not ph.startswith(("the ", "all the ")) else THEN_THING  # a verb's object: no "after which"
        joined = body + ("; " if terse else ", ") + (ph if terse else rng.choice(joins).format(p=ph))
        if (
            stutter(joined) and not stutter(body) and not stutter(ph)
        ):  # "reconnect it; check it; check ...": not back to back
            joined = (
                body + (", then " if terse else rng.choice([", and after that ", ", and then ", ", and next "])) + ph
            )
        body = joined
    return body


def _split_steps(phrases: list[str], rng: random.Random) -> tuple[list[str], str]:
    """(the steps the turn's frame asks for, a second sentence for the rest or ""): in about a third of the turns of
    several steps the later ones are a sentence of their own, as people write them ("Can you check A? After that,
    move B."); never a read's object alone ("Then the attendees."), which stays joined to its verb's request."""
    if len(phrases) < 2 or phrases[1].startswith(("the ", "all the ")) or rng.random() >= 0.3:
        return phrases, ""
    rest = _join_steps(phrases[1:], rng, False)
    # never "Great, and now ..." inside one turn: an acknowledgement answers a reply
    leads = [
        f for f in _asks(_follow_leads(rest, len(phrases)), OWN_FOLLOW_LEADS, rest) if _first_word(f) not in ACK_WORDS
    ]
    lead = rng.choice(leads)
    return phrases[:1], lead.format(p=rest, P=_cap(rest))


def compose_turn(
    phrases: list[str],
    rng: random.Random,
    persona: str,
    turn: int,
    terse: bool,
    domain: Domain | None = None,
    writes: bool = False,
    thing: str | None = None,
    told: set[str] | None = None,
) -> str:
    """One user turn from its steps' phrases, in parts drawn independently (``domain``, ``writes``: the service's
    words and whether the turn changes something, for the situation a turn may give: :mod:`situations`; ``thing``: what
    a one-step read shows, as a noun phrase, which the turn may ask to see instead: "Can I see the balance ...?";
    ``told``: the situations the conversation gave already, never given twice, to which this turn's is added)."""
    told = set() if told is None else told
    if terse:
        body = _join_steps(phrases, rng, terse)
        return body if rng.random() < 0.6 else _cap(body)
    first, later = _split_steps(phrases, rng)
    body = _join_steps(first, rng, terse)
    by_thing = thing is not None and rng.random() < 0.35
    if turn == 0:
        if by_thing:
            asked = thing_questions(thing, False) if rng.random() < 0.5 else []
            text = rng.choice(asked) if asked else rng.choice(_thing_frames(THING_ASKS, thing)).format(n=thing)
        else:
            text = rng.choice(_asks(ASKS, OWN_ASKS, body)).format(p=body, P=_cap(body))
        text = f"{text} {later}" if later else text
        r = rng.random()
        if r < 0.75:  # why the user asks, in the service's words: "I'm reconciling last month's statement, so ..."
            text = with_situation(text, situation(domain, writes, rng, told), rng)
        elif r < 0.85:
            ctx = rng.choice(CONTEXTS.get(persona, CONTEXTS["retiree"]))
            # "While the store is quiet, could you ...", never "..., so, could you" or "..., right, can you"
            lead = re.sub(r"^(So, |Okay, so: |Right, )", "", text)
            forms = [f"{_cap(ctx)}, {lower_first(lead)}", f"{text[:-1]} {ctx}{text[-1]}"]
            # after the request only a when, right after it ("... before my flight boards"): never "savings goal of 500
            # from the airport" (the goal's source?), "..., if that's OK before the kids get home" or "from before
            # before noon"
            trails = (
                _first_word(ctx) in WHEN_WORDS
                and _last_word(text[:-1]) != _first_word(ctx)
                and text[:-1].lower().endswith(body.lower())
                and not re.search(r"[\d_\"]", _last_word(text[:-1]))  # never "... token sk_live_x9 before pickup"
            )
            text = rng.choice(forms) if trails else forms[0]
        if rng.random() < 0.3:
            text = f"{rng.choice(GREETINGS)}{rng.choice(['! ', '. '])}" + _cap(text)
    else:
        asked = thing_questions(thing, True) if by_thing and rng.random() < 0.5 else []
        text = (
            rng.choice(asked)
            if asked
            else rng.choice(_thing_frames(THING_FOLLOWS, thing)).format(n=thing)
            if by_thing
            else rng.choice(_asks(_follow_leads(body, len(phrases)), OWN_FOLLOW_LEADS, body)).format(
                p=body, P=_cap(body)
            )
        )
        text = f"{text} {later}" if later else text
        # a later turn may say why too, after what it asks ("Next, deposit 25, since my salary just came in."): one
        # sentence only, never "Good. Could you ..., so good." or "..., so and next ..."
        if len(told) < 2 and not re.search(r"[.:;!?] ", text) and rng.random() < 0.45:
            why = situation(domain, writes, rng, told)
            text = rng.choice(TRAILS).format(t=text[:-1], r=why, end=text[-1])
        elif rng.random() < 0.12 and text[-1:] in ".?" and not text.endswith("as well.") and "," not in text:
            text = with_aside(text, rng)
        if rng.random() < 0.35:
            ack = rng.choice(FOLLOW_ACKS)
            if _first_word(text) not in ACK_WORDS:  # not "Right. Right, ...", "Understood. Good. Could you ..."
                text = f"{ack} {text}"
    if rng.random() < 0.18:
        closer = rng.choice(CLOSERS)
        if closer.lower().rstrip(".!") not in text.lower():  # never "..., that'd be great. That'd be great."
            text += " " + closer
    return _cap(text)
