"""Values as a person says them: dates, amounts, lists in prose, entities by name and id.

``say_value`` renders one argument value for a user turn; ``renderings`` lists every form a value
may take in text, so a checker can tell whether a text mentions a value (the linter and the request
writer share it: what the writer says, the linter recognises).
"""

from __future__ import annotations

import functools
import random
import re
from datetime import date
from typing import Any

from pipeline.language.lexicon import join_prose, words

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
NAME_FIELDS = ("name", "title", "subject", "display_name", "full_name", "label", "username", "company_name", "symbol")
MONEY = ("amount", "price", "deposit", "limit", "total", "fee", "tip", "budget", "cost", "balance", "goal")
UNITS = {
    "pct": "%",
    "percent": "%",
    "km": " km",
    "minutes": " minutes",
    "hours": " hours",
    "days": " days",
    "c": "°C",
    "kg": " kg",
    "mb": " MB",
    "gb": " GB",
    "seconds": " seconds",
    "kwh": " kWh",
}
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ISO_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})")
ENUM_WORD = re.compile(r"[a-z]+(?:_[a-z]+)+")  # an enum value such as changed_mind, rear_left
WORD = re.compile(r"[a-z0-9']+")
QUOTED = re.compile(r'"[^"]*"')
# what a person never writes in a message (the linter and the teacher's checks both look for it), and sentence ends
JSONISH = re.compile(r'[\[{]\s*["\[{]|"\s*:\s*["\d\[{tfn]')
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
PLACEHOLDER = re.compile(r"\bNone\b|\bnull\b|\bundefined\b|\bNaN\b|\{[A-Za-z_.]*\}|<[a-z_]+>")
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")
ID_TOKEN = re.compile(r"\b[A-Z]{2,6}-\d{2,6}\b")  # an entity id as the built-in servers write them (ACC-0001)


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    """The runs of ``n`` words in ``text`` (lower case)."""
    toks = WORD.findall(text.lower())
    return {tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)}


@functools.lru_cache(maxsize=4096)
def description_grams(description: str, n: int) -> frozenset[tuple[str, ...]]:
    """:func:`ngrams` of a tool description (a corpus offers each tool many times; worked out once)."""
    return frozenset(ngrams(description, n))


def stutter(text: str, longest: int = 3) -> str | None:
    """The first word or phrase of up to ``longest`` words said twice back to back in ``text``
    (quoted text masked, each quote its own token; punctuation stays on its word, so ``5, 5`` is no repeat).
    The linter's ``repeated_phrase`` rule, and what the request writer avoids."""
    masked = QUOTED.sub(lambda m: f" \x00{m.start()} ", text)
    toks = masked.lower().split()
    for n in range(1, longest + 1):
        for i in range(len(toks) - 2 * n + 1):
            if toks[i : i + n] == toks[i + n : i + 2 * n] and not toks[i].startswith("\x00"):
                return " ".join(toks[i : i + 2 * n])
    return None


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 11 <= n % 100 <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def relative_date(value: str, reference: str) -> str | None:
    """``tomorrow``, ``this Friday``, ``next Tuesday`` against ``reference``; None further out."""
    try:
        d, ref = date.fromisoformat(value), date.fromisoformat(reference)
    except ValueError:
        return None
    delta = (d - ref).days
    if delta == 0:
        return "today"
    if delta == 1:
        return "tomorrow"
    if 2 <= delta <= 6:
        return f"this {WEEKDAYS[d.weekday()]}" if d.weekday() > ref.weekday() else f"next {WEEKDAYS[d.weekday()]}"
    if 7 <= delta <= 13:
        return (
            f"next {WEEKDAYS[d.weekday()]}"
            if delta < 7 + (6 - ref.weekday())
            else f"on {WEEKDAYS[d.weekday()]} the {_ordinal(d.day)}"
        )
    return None


def date_forms(value: str, reference: str) -> list[str]:
    """Every way the writer says a date: ISO, ``March 9``, ``9 March``, ``March 9th`` and the relative form."""
    try:
        d = date.fromisoformat(value)
    except ValueError:
        return [value]
    forms = [
        value,
        f"{MONTHS[d.month - 1]} {d.day}",
        f"{d.day} {MONTHS[d.month - 1]}",
        f"{MONTHS[d.month - 1]} {_ordinal(d.day)}",
    ]
    rel = relative_date(value, reference)
    return forms + ([rel, rel.removeprefix("on ")] if rel else [])


def time_forms(hh: int, mm: int) -> list[str]:
    h12 = hh % 12 or 12
    ampm = "am" if hh < 12 else "pm"
    # "10 am" is 10:00 only: a 10:30 said as "10 am" would teach the model to call with a time nobody said
    return [
        f"{hh:02d}:{mm:02d}",
        f"{h12}:{mm:02d} {ampm}",
        f"{h12}{ampm}" if mm == 0 else f"{h12}:{mm:02d}{ampm}",
        f"{h12} {ampm}" if mm == 0 else f"{h12}:{mm:02d} {ampm}",
    ]


def number_forms(v: float | int) -> list[str]:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    out = [str(v)]
    if isinstance(v, float):
        out += [f"{v:.2f}", f"{v:,.2f}"]
    else:
        out.append(f"{v:,}")
    return out


def renderings(value: Any, reference: str) -> list[str]:
    """The forms of ``value`` that count as mentioning it in a text (lower-cased)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [f.lower() for f in number_forms(value)]
    if isinstance(value, list):
        return [r for v in value for r in renderings(v, reference)]
    if not isinstance(value, str):
        return []
    v = value.strip()
    out = [v, v.replace("_", " ")]
    if ISO_DATE.match(v):
        out += date_forms(v, reference)
    m = ISO_DATETIME.match(v)
    if m:
        out += date_forms(m.group(1), reference) + time_forms(int(m.group(2)), int(m.group(3)))
    return [o.lower() for o in out if o]


def mentions(text: str, value: Any, reference: str) -> bool:
    """Does ``text`` name ``value`` in one of its :func:`renderings` (every item, for a list)?"""
    low = text.lower()
    if isinstance(value, list):
        return all(mentions(text, v, reference) for v in value) if value else True
    forms = renderings(value, reference)
    if not forms:
        return True  # booleans and objects are said in words, not checked
    if isinstance(value, str) and (ISO_DATE.match(value) or ISO_DATETIME.match(value)):
        return any(f in low for f in forms if not re.fullmatch(r"\d+(:\d+)?\s*(am|pm)?", f))
    return any(_said_as_word(f).search(low) for f in forms)


@functools.lru_cache(maxsize=1 << 16)
def _said_as_word(form: str) -> re.Pattern[str]:
    """``form`` standing on its own in a text (not inside a longer word or number). Compiled once per form:
    the forms are values (ids, amounts, names), more than the ``re`` module's own cache of 512 holds."""
    return re.compile(r"(?<![\w.])" + re.escape(form) + r"(?![\w])")


def entity_name(record: dict[str, Any] | None) -> str | None:
    """A record's human name (first and last name, ``name``, ``title``, ...), if it has one."""
    if not record:
        return None
    first, last = record.get("first_name"), record.get("last_name")
    if isinstance(first, str) and isinstance(last, str) and first.strip() and last.strip():
        return f"{first.strip()} {last.strip()}"  # a person: never by a job title the record also holds
    for f in NAME_FIELDS:
        v = record.get(f)
        if isinstance(v, str) and v.strip() and len(v) <= 60:
            return v.strip()
    return None


def say_date(value: str, reference: str, rng: random.Random) -> str:
    forms = date_forms(value, reference)
    if len(forms) < 4:  # not a calendar date (a pattern-shaped string such as 2026-02-31): said as given
        return value
    rel = relative_date(value, reference)
    if rel and rng.random() < 0.5:
        return rel.removeprefix("on ")  # the caller adds its own preposition
    return rng.choice(forms[1:4])


def say_datetime(value: str, reference: str, rng: random.Random, time_first: bool = False) -> str:
    """A date and time: ``March 2 at 9 am``, ``9 am today`` (``time_first``: always the time first, as after a
    preposition: ``at 9 am today``, ``before 5 pm on March 9th``, never ``at today at 9 am``)."""
    m = ISO_DATETIME.match(value)
    if not m:
        return value
    day = say_date(m.group(1), reference, rng)
    t = rng.choice(time_forms(int(m.group(2)), int(m.group(3))))
    if time_first:
        return f"{t} {day}" if day == relative_date(m.group(1), reference) else f"{t} on {day}"
    return rng.choice([f"{day} at {t}", f"{t} {day}" if not day.startswith("on ") else f"{day} at {t}"])


def say_number(param: str, v: float | int, rng: random.Random) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    tail = param.rsplit("_", 1)[-1]
    if tail in UNITS and "_" in param:
        return f"{v}{UNITS[tail]}"
    if any(m in param for m in MONEY):
        return f"{v:.2f}" if isinstance(v, float) else str(v)
    return str(v)


def say_entity(eid: str, noun: str, record: dict[str, Any] | None, rng: random.Random, quote: bool = False) -> str:
    """An entity as a person names it: ``account ACC-0003``, ``Hugo Hughes (CUS-0001)``, ``the Northwind company,
    CMP-0002``
    (``quote``: the name in quotes, ``"Add monitoring" (API-0005)``, where its words would run into the sentence's)."""
    name = entity_name(record)
    told = described(eid, noun, name, record, rng) if rng.random() < 0.7 else None
    if told:
        return told
    forms = [f"{noun} {eid}", f"the {noun} {eid}", f"{eid}"] + ([f"the {eid} {noun}"] if noun != "one" else [])
    if name and name != eid:
        name = f'"{name}"' if quote else name
        forms += [
            f"{name} ({eid})",
            f"the {noun} {name}, {eid}",
            f"{noun} {eid} ({name})",
            f"{eid} ({name})",
            f"{name} ({noun} {eid})",
        ]
    return rng.choice(forms)


# a record's fields that say where it is, which team it is in, and what kind of thing it is ("the savings account")
PLACE_FIELDS = ("city", "zone", "building")
TEAM_FIELDS = ("department",)
KIND_FIELDS = ("account_type", "room_type", "powertrain", "industry", "cuisine")
MAKER_FIELDS = ("airline", "make", "manufacturer")  # a maker's name, said before the noun: "the Northstar flight"
TYPE_FIELDS = ("issue_type", "device_type")  # said instead of the noun: "the bug MOB-0001", "the lock DEV-0001"
# who a record is by or from: "the post PST-0088 by ethan.patel", "Diego Mendes's portfolio PF-0001"
BY_FIELDS = {
    "author_handle": "by",
    "author": "by",
    "user_name": "from",
    "from_address": "from",
    "host_name": "hosted by",
    "driver_name": "driven by",
    "owner_name": "'s",
}
PLAIN = re.compile(r"[A-Za-z][A-Za-z' .&-]{0,28}")
WHO = re.compile(r"[A-Za-z][\w.@' -]{0,39}")


def _field(record: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, str] | None:
    """The first of ``keys`` the record holds as a short plain word or name (no digits, no snake_case)."""
    for k in keys:
        v = record.get(k)
        if isinstance(v, str) and PLAIN.fullmatch(v) and "_" not in v and v.strip() == v:
            return k, v
    return None


def described(eid: str, noun: str, name: str | None, record: dict[str, Any] | None, rng: random.Random) -> str | None:
    """An entity said with what the user knows of it from its own record, beside its id: ``Hugo Hughes in Austin
    (CUS-0001)``, ``Yusuf Silva from Engineering (CON-0001)``, ``my savings account ACC-0001``, ``the healthcare
    company Lumen Care, COM-0001``; None where the record says nothing of the kind (the id is always said)."""
    if not record or noun == "one":
        return None
    forms: list[str] = []
    place, team, kind = _field(record, PLACE_FIELDS), _field(record, TEAM_FIELDS), _field(record, KIND_FIELDS)
    named = bool(name) and name != eid and not any(c in (name or "") for c in '()"')
    if place and not (named and place[1].lower() in (name or "").lower()):
        where = place[1] if place[0] != "building" else f"the {place[1]} building"
        forms += [f"{name} in {where} ({eid})", f"{name} ({noun} {eid}) in {where}"] if named else []
        forms += [f"the {noun} {eid} in {where}", f"the {noun} in {where}, {eid}"]
    if team and named:
        forms += [f"{name} from {team[1]} ({eid})", f"{name} in {team[1]} ({eid})"]
    if kind and kind[1].lower() not in noun.lower().split() and len(kind[1].split()) == 1:
        adj = kind[1].lower()
        mine = f"my {adj} {noun} {eid}" if not named else f"the {adj} {noun} {name} ({eid})"
        forms += [f"the {adj} {noun} {eid}", mine]
    forms += _made_or_typed(eid, noun, name if named else None, record)
    return rng.choice(forms) if forms else None


def _made_or_typed(eid: str, noun: str, name: str | None, record: dict[str, Any]) -> list[str]:
    """:func:`described`'s forms by a record's maker, type or author: "the Northstar flight FL-0102", "the bug
    MOB-0001", "the post PST-0088 by ethan.patel", "Diego Mendes's portfolio PF-0001"."""
    forms: list[str] = []
    maker, kind = _field(record, MAKER_FIELDS), _field(record, TYPE_FIELDS)
    if maker and maker[1][:1].isupper() and maker[1].lower() not in (name or "").lower():
        forms.append(f"the {maker[1]} {noun} {eid}")
    if kind and len(kind[1].split()) == 1 and kind[1].islower() and kind[1] not in (name or "").lower():
        forms += [f"the {kind[1]} {eid}"] + ([f"the {kind[1]} {name} ({eid})"] if name else [])
    for key, how in BY_FIELDS.items():
        who = record.get(key)
        if isinstance(who, str) and WHO.fullmatch(who) and who.strip() == who and who != name:
            forms.append(f"{possessive(who)} {noun} {eid}" if how == "'s" else f"the {noun} {eid} {how} {who}")
            break
    return forms


def known_by(record: dict[str, Any] | None, rng: random.Random) -> str | None:
    """What a user who has seen a record may add when pointing back at it, from the record's own place, team or
    author: "in Austin", "from Engineering", "by ethan.patel" ("that customer in Austin"); None where it has none."""
    if not record:
        return None
    said: list[str] = []
    place, team = _field(record, PLACE_FIELDS), _field(record, TEAM_FIELDS)
    if place and place[0] != "building":
        said.append(f"in {place[1]}")
    if team:
        said.append(f"from {team[1]}")
    for key, how in BY_FIELDS.items():
        who = record.get(key)
        if how in ("by", "from") and isinstance(who, str) and WHO.fullmatch(who) and who.strip() == who:
            said.append(f"{how} {who}")
            break
    return rng.choice(said) if said else None


def possessive(name: str) -> str:
    """``Ava Chen`` -> ``Ava Chen's``; ``CUS-0001`` -> ``CUS-0001's``; a name ending in ``s`` -> ``Hugo Hughes'``."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def say_owner(eid: str, noun: str, record: dict[str, Any] | None, rng: random.Random) -> str:
    """An entity as the owner of what a request asks about, with ``{t}`` for the thing owned: ``CUS-0001's {t}``,
    ``customer CUS-0001's {t}``, ``Hugo Hughes' {t} (customer CUS-0001)``: the id is always said."""
    name = entity_name(record)
    forms = [f"{possessive(eid)} {{t}}", f"{noun} {possessive(eid)} {{t}}"]
    # a name of two to four plain words ("Hugo Hughes", "Maple Care"), never "Health's" or "... - Pilot's"
    if name and 2 <= len(name.split()) <= 4 and re.fullmatch(r"[A-Za-z][A-Za-z' .&]*", name):
        forms += [f"{possessive(name)} {{t}} ({noun} {eid})", f"{possessive(name)} {{t}} ({eid})"]
    return rng.choice(forms)


def say_value(
    param: str,
    value: Any,
    reference: str,
    rng: random.Random,
    entities: dict[str, dict[str, Any]] | None = None,
    time_first: bool = False,
) -> str:
    """One argument value in a user's words (the parameter's words are added by the caller; ``time_first``: a date
    and time after a preposition, :func:`say_datetime`)."""
    entities = entities or {}
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return say_number(param, value, rng)
    if isinstance(value, list):
        return join_prose([say_value(param, v, reference, rng, entities) for v in value])
    if isinstance(value, dict):
        return join_prose(
            [
                f"{words(k)} {say_value(k, v, reference, rng, entities)}"
                for k, v in value.items()
                if v not in (None, "", [], {})
            ]
        )
    if value is None:
        return ""
    s = str(value)
    if ISO_DATE.match(s):
        return say_date(s, reference, rng)
    if ISO_DATETIME.match(s):
        return say_datetime(s, reference, rng, time_first)
    if ENUM_WORD.fullmatch(s):  # an enum word: rear_left -> rear left
        return s.replace("_", " ")
    if s in entities and (param.endswith("_id") or param.endswith("_ids")):
        name = entity_name(entities[s])
        return rng.choice([f"{name} ({s})", s, s]) if name and name != s else s
    return s


def is_text(param: str, value: Any) -> bool:
    """Free text a person would quote (a title, a message body), rather than a code, a name or an enum word
    (a reason ``changed_mind`` is said as "changed mind", not quoted as ``"changed_mind"``)."""
    return (
        isinstance(value, str)
        and not ENUM_WORD.fullmatch(value.strip())
        and (
            " " in value.strip()
            or any(
                k in param
                for k in (
                    "title",
                    "body",
                    "text",
                    "content",
                    "message",
                    "note",
                    "description",
                    "comment",
                    "memo",
                    "subject",
                    "reason",
                    "goal",
                )
            )
        )
    )
