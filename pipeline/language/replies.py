"""The assistant's words: final replies built from the tool results they report, and clarification questions.

Replies are typed: a count is the number of records a list holds (an integer, with the noun in the
right number), a name is a record's name field, an absent value is left out rather than printed,
a write is confirmed with what it changed, a failure says what the tool said. A turn's reply never
repeats a sentence.
"""

from __future__ import annotations

import random
import re
from typing import Any

from pipeline.core.records import CallResult, ToolSpec
from pipeline.language.entities import parse_result
from pipeline.language.lexicon import (
    AMOUNT_VERBS,
    PREPOSITIONS,
    SWITCH_VERBS,
    VERB_PREPOSITIONS,
    count_noun,
    intent_of,
    is_plural,
    join_prose,
    past,
    plural,
    singular,
    switch_of,
    words,
)
from pipeline.language.phrasing import NAME_FIELDS, UNITS, entity_name, is_text, say_value
from pipeline.language.requests.step_parts import acts_as, object_first
from pipeline.language.sqltext import say as say_sql
from pipeline.language.sqltext import sql_kind
from pipeline.language.statements import runs_any, statement_reply

LABEL_FIELDS = (*NAME_FIELDS, "path", "filename", "email", "code", "number", "sku", "city", "tag", "value")
WHEN_FIELDS = ("start", "starts_at", "start_time", "date", "at")  # what tells apart records that share a name and an id
# parameters whose value is words the user writes (a message's body, a note), asked for as what they should say
WRITTEN = ("body", "text", "content", "message", "note", "comment", "memo", "description")
COUNT_KEYS = ("total", "count", "total_count", "n")
GENERIC_KEYS = {"rows", "items", "results", "data", "entries", "records", "matches"}
SKIP_FACT = re.compile(r"(^|_)(id|ids|secret|pin|token|hash|password)$")


def _id_of(rec: dict[str, Any]) -> tuple[str, str] | None:
    for k, v in rec.items():
        if (k == "id" or k.endswith("_id")) and isinstance(v, (str, int)) and not isinstance(v, bool):
            return k, str(v)
    return None


def label_of(item: Any) -> str | None:
    """How a record is named in a reply: its name (with its id), else its id; a scalar as itself."""
    if isinstance(item, dict):
        name = next(
            (
                str(item[f]).strip()
                for f in LABEL_FIELDS
                if isinstance(item.get(f), (str, int)) and not isinstance(item.get(f), bool) and str(item[f]).strip()
            ),
            None,
        )
        ident = _id_of(item)
        if ident and name == item.get("sku"):  # a reservation holds a product's SKU: it is named by its own id
            return ident[1]
        if name and ident and ident[1] != name:
            return f"{name} ({ident[1]})"
        return name or (ident[1] if ident else None)
    if isinstance(item, (str, int)) and not isinstance(item, bool) and str(item).strip():
        return str(item)
    return None


def telling_id(items: list[Any]) -> str | None:
    """The id field that tells a list's records apart best (most distinct values), if it beats their labels."""
    recs = [i for i in items if isinstance(i, dict)]
    keys = {k for r in recs for k in r if k == "id" or k.endswith("_id")}
    best = max(sorted(keys), key=lambda k: len({str(r.get(k)) for r in recs if r.get(k) is not None}), default=None)
    if best is None or len({str(r.get(best)) for r in recs if r.get(best) is not None}) <= len(
        {label_of(r) for r in recs}
    ):
        return None
    return best


def main_list(data: dict[str, Any], noun: str) -> tuple[str, list[Any]] | None:
    """The list a listing result is about: the one named like the tool's object, else the longest."""
    lists = [(k, v) for k, v in data.items() if isinstance(v, list)]
    if not lists:
        return None
    one = singular(noun)
    for k, v in lists:
        if singular(words(k)) == one or singular(words(k)).endswith(one):
            return k, v
    return max(lists, key=lambda kv: len(kv[1]))


def say_number(v: int | float) -> str:
    """A number as the tool returned it, less a whole float's ``.0`` (``25.0`` -> ``25``)."""
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


class Steady(random.Random):
    """One wording for every date of a reply: :func:`fact` sets it back to its seed before each value, so a reply
    never says "start 4 March at 14:00, end 2:45 pm March 4"."""

    def __init__(self, seed: float) -> None:
        super().__init__(seed)
        self.start: tuple[Any, ...] | None = None  # the state at the seed, taken when first set back to it

    def again(self) -> Steady:
        """Back at the seed: the next value is worded as the last one was. (The seed's state is taken at the first
        call: every value is worded after one, so nothing is drawn before it; most replies word none.)"""
        if self.start is None:
            self.start = self.getstate()
        else:
            self.setstate(self.start)
        return self


def fact(k: str, v: Any, rng: random.Random) -> str | None:
    """``balance 11305.52``; None for an absent, secret or structured value."""
    if (
        v is None
        or isinstance(v, (dict, list))
        or SKIP_FACT.search(k)
        or (isinstance(v, str) and (not v.strip() or len(v) > 80 or "\n" in v))
    ):
        return None
    if isinstance(v, bool):
        return f"{words(k.removeprefix('is_'))}: {'yes' if v else 'no'}"  # "starred: yes", never "is starred: yes"
    name = words(k)
    if isinstance(
        v, (int, float)
    ):  # the number as the tool returned it, with its unit (duration_minutes 45 -> duration 45 minutes)
        num = say_number(v)
        if "_" in k and k.rsplit("_", 1)[1] in UNITS:
            return f"{words(k.rsplit('_', 1)[0])} {num}{UNITS[k.rsplit('_', 1)[1]]}"
        return f"{name} {num}"
    if isinstance(v, str) and v.lower().startswith(name.lower() + "-"):  # "SKU-00027", never "SKU SKU-00027"
        return v
    if isinstance(v, str) and (", " in v or v.rstrip().endswith((".", "!", "?")) or len(v.split()) > 5):
        # a sentence is quoted: never "description Steps to reproduce ... comment., issue type task"
        return f'{name} "{v.strip()}"'
    return f"{name} {say_value(k, v, '1970-01-01', rng.again() if isinstance(rng, Steady) else rng)}"


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def focus_facts(rec: dict[str, Any], rng: random.Random, focus: str) -> list[str]:
    """The facts of the flat record the reply is about, when the result holds it under the focus's name
    (``get_store_hours`` -> ``{"hours": {"monday": "08:00-20:00", ...}}``: "Monday 08:00-20:00, ..."), days in week
    order."""
    last = singular(focus.split(" ")[-1])
    inner = next((v for k, v in rec.items() if isinstance(v, dict) and v and singular(words(k)) == last), None)
    if inner is None:  # get_issue -> {"issue": {...}, "comment_count": 0}: the issue's own fields first
        return []
    keys = sorted(inner, key=lambda k: WEEKDAYS.index(k) if k in WEEKDAYS else len(WEEKDAYS))
    said = [(k, fact(k, inner[k], rng)) for k in keys]
    return [f[:1].upper() + f[1:] if k in WEEKDAYS else f for k, f in said if f][
        : 7 if any(k in WEEKDAYS for k in keys) else 5
    ]


def facts_of(
    rec: dict[str, Any], rng: random.Random, focus: str, limit: int = 4, skip: tuple[str, ...] = ()
) -> list[str]:
    lead = focus_facts(rec, rng, focus)
    if lead:  # what was asked for, then a little of the rest
        limit = 2
    keys = sorted(rec, key=lambda k: 0 if singular(words(k)) == singular(focus) else 1)
    out: list[str] = []
    for k in keys:
        if len(out) >= limit and isinstance(rng, Steady):  # the rest would be cut, and with a Steady (set back before
            break  # each value) wording them draws nothing a later value would see
        if k in skip:
            continue
        f = fact(k, rec[k], rng)
        if f and f not in out and f not in lead:  # never "month 2026-03, ..., month 2026-03"
            out.append(f)
    counts = [
        count_noun(len(v), words(k)) for k, v in rec.items() if isinstance(v, list) and singular(words(k)) != words(k)
    ]
    return lead + out[:limit] + counts[:1]


def written_facts(rec: dict[str, Any], keys: list[str], rng: random.Random) -> list[str]:
    """What the result says of the fields a write set (``set_lights`` headlights="off": "headlights off"), found at
    its top level or one record down (``{"climate": {"climate_on": false}}``), in the order they were given."""
    out: list[str] = []
    for k in keys:
        v = rec[k] if k in rec else next((d[k] for d in rec.values() if isinstance(d, dict) and k in d), None)
        f = fact(k, v, rng)
        if f and f not in out:
            out.append(f)
    return out


def list_reply(key: str, items: list[Any], total: Any, rng: random.Random) -> str:
    noun = words(key)
    if noun.split(" ")[0] in PREPOSITIONS or not noun:  # by_directory
        noun = "entry"
    labels = [lb for lb in (label_of(i) for i in items) if lb]
    ids = {_id_of(i) for i in items if isinstance(i, dict)}
    if (
        len(labels) > 1 and len(ids) == 1 and None not in ids
    ):  # every record holds the same id: its parent's, never its own
        # positions of one portfolio: "LTHM and PTRA", never "LTHM (PF-0005) and PTRA (PF-0005)"
        same = f" ({next(iter(ids))[1]})"
        bare = [lb.removesuffix(same) for lb in labels]
        if len(set(bare)) == len(bare) and bare != labels:
            labels = bare
    if len(set(labels)) < len(labels) and (
        key := telling_id(items)
    ):  # follows all labelled by their follower: by whom they follow
        labels = [str(i[key]) for i in items if isinstance(i, dict) and key in i]
        if key != "id":  # counted as what those ids name: "4 users: USR-0012, ...", never "4 follows: USR-0012, ..."
            noun = words(key).split(" ")[-1]  # words() drops the "_id"
    when = None
    if len(set(labels)) < len(labels):
        when = next(
            (
                k
                for k in WHEN_FIELDS
                if len({str(i.get(k)) for i in items if isinstance(i, dict) and i.get(k)}) == len(labels)
            ),
            None,
        )
    if when:  # a recurring event's occurrences: "Daily standup (EVT-0001, 2 March at 9:30 am)"
        steady = Steady(rng.random())  # one wording of the times for the whole list
        said = [say_value(when, i[when], "1970-01-01", steady.again()) for i in items]
        labels = [f"{lb[:-1]}, {t})" if lb.endswith(")") else f"{lb} ({t})" for lb, t in zip(labels, said)]
    n = total if isinstance(total, int) and not isinstance(total, bool) and total >= len(items) else len(items)
    if n == 0:
        return rng.choice(
            [
                f"There are no {plural(noun)} that match.",
                f"I didn't find any {plural(noun)}.",
                f"No {plural(noun)} came back.",
                f"There aren't any {plural(noun)} to show.",
                f"The list of {plural(noun)} is empty.",
            ]
        )
    shown = labels[:3]
    more = n - len(shown)
    listing = join_prose(shown + ([f"{more} more"] if more > 0 and shown else []))
    head = count_noun(n, noun)
    if not shown:
        return rng.choice([f"There {'is' if n == 1 else 'are'} {head}.", f"I found {head}.", f"That comes to {head}."])
    return rng.choice(
        [
            f"I found {head}: {listing}.",
            f"There {'is' if n == 1 else 'are'} {head}: {listing}.",
            f"{head[:1].upper() + head[1:]} came back: {listing}.",
            f"I can see {head}: {listing}.",
            f"All told, there {'is' if n == 1 else 'are'} {head}: {listing}.",
            f"I see {head}, namely {listing}.",
            f"The list has {head}: {listing}.",
        ]
    )


def record_reply(tool: ToolSpec, data: dict[str, Any], rng: random.Random) -> str:
    intent = intent_of(tool.name, tool.read_only)
    noun = intent.object or "result"
    ident = _id_of(data)
    if ident and not singular(words(ident[0])).endswith(singular(noun.split(" ")[-1])):
        ident = None  # get_current_time returns the user's contact_id: not the record's own id
    name = entity_name(data) if ident else None
    subject = f"{singular(noun)} {ident[1]}" if ident else f"the {noun}"
    if name and ident and name != ident[1]:
        subject += f" ({name})"
    facts = facts_of(data, Steady(rng.random()), noun, skip=NAME_FIELDS if name else ())
    if not facts:
        return f"I looked at {subject}, and there is nothing more to report."
    be = "are" if not ident and is_plural(noun.split(" ")[-1]) else "is"  # "Here are the store hours"
    return rng.choice(
        [
            f"{subject[:1].upper() + subject[1:]}: {join_prose(facts)}.",
            f"Here {be} {subject}: {join_prose(facts)}.",
            f"For {subject}, I see {join_prose(facts)}.",
            f"I pulled up {subject}: {join_prose(facts)}.",
            f"Looking at {subject}, I see {join_prose(facts)}.",
            f"{subject[:1].upper() + subject[1:]} {'show' if be == 'are' else 'shows'} {join_prose(facts)}.",
            f"Here's what I have for {subject}: {join_prose(facts)}.",
        ]
    )


def _spelled(verb_past: str) -> str:
    return re.sub(r"([a-z])\1", r"\1", verb_past)  # "canceled" and "cancelled" are one word


def own_flags(verb: str, data: Any, value: bool) -> list[str]:
    """The result's flags named for the action itself (``delete_scene`` -> ``deleted``, ``cancel_navigation`` ->
    ``cancelled``) that hold ``value``."""
    if not isinstance(data, dict):
        return []
    did = _spelled(past(verb).split(" ")[0])
    return [k for k, v in data.items() if v is value and _spelled(k.removeprefix("is_")) == did]


def undone_flag(verb: str, data: Any) -> str | None:
    """The result's flag saying the action itself did not happen (``cancel_navigation`` -> ``{"cancelled": false}``:
    there was nothing to cancel), if it has one."""
    return next(iter(own_flags(verb, data, False)), None)


def confirm_reply(tool: ToolSpec, args: dict[str, Any], data: Any, rng: random.Random) -> str:
    intent = intent_of(tool.name, tool.read_only)
    flag = undone_flag(intent.verbs[0], data)
    if flag is not None:  # never "Done: I canceled the navigation. Result: cancelled: no."
        return (
            f"I asked to {describe(tool)}, but the service reports it was not "
            f"{words(flag.removeprefix('is_'))}, so nothing changed."
        )
    toggle = switch_of(intent, args)  # "I opened the trunk", never "I set the trunk"
    done = [past(SWITCH_VERBS[toggle][0 if args[toggle] else 1] if toggle else intent.verbs[0])]
    used: set[str] = {toggle} if toggle else set()
    for prep, noun in intent.nouns:
        noun = noun.removesuffix(f" {toggle}") if toggle else noun
        p = object_first(
            tool,
            [
                p
                for p in args
                if p not in used and p.endswith(("_id", "_ids")) and singular(words(p)).endswith(singular(noun))
            ],
        )
        if p:
            used.add(p)
            v = args[p]
            done.append(
                f"{prep} {singular(noun)} {join_prose([str(x) for x in v]) if isinstance(v, list) else v}".strip()
            )
        else:
            done.append(f"{prep} the {noun}".strip())
    if (
        intent.nouns and intent.nouns[0][0]
    ):  # add_to_cart: "added product PRD-0010 to the cart", never "added to the cart"
        # never the user it acts as: "commented on post PST-0091", not "commented user USR-0004 on post PST-0091"
        p = next(
            (
                p
                for p in reversed(args)
                if p not in used and p.endswith("_id") and isinstance(args[p], str) and not acts_as(tool, p)
            ),
            None,
        )
        if p:
            used.add(p)
            done.insert(1, f"{words(p)} {args[p]}")
    if len(done) > 1 and done[0].split(" ")[-1] in PREPOSITIONS and done[1].split(" ")[0] in PREPOSITIONS:
        done[0] = done[0].rsplit(" ", 1)[0]  # "replied in the thread", never "replied to in the thread"
    if not intent.nouns:
        p = next((p for p in args if p.endswith("_id")), None)
        if (
            p
        ):  # "for account ACC-0029"; a role says its own preposition: "from account ACC-0029", never "for from account"
            verb = intent.verbs[0].split(" ")[0]
            amount = args.get("amount")
            if verb in AMOUNT_VERBS and isinstance(amount, (int, float)) and not isinstance(amount, bool):
                done.append(say_number(amount))  # "deposited 25 into account ACC-0002"
            roles = [q for q in args if q.endswith("_id") and words(q).split(" ")[0] in PREPOSITIONS]
            if roles:  # "from account ACC-0001 to account ACC-0002"
                done += [f"{words(q)} {args[q]}" for q in roles]
            else:
                done.append(f"{VERB_PREPOSITIONS.get(verb, 'for')} {words(p)} {args[p]}")
        else:
            p = next((p for p, v in args.items() if isinstance(v, str) and v and " " not in v), None)
            if p:
                done.append(str(args[p]))
    text = (
        rng.choice(
            [
                "Done: I ",
                "All set. I ",
                "Done. I ",
                "That's done: I ",
                "OK, I ",
                "Sure, I ",
                "Finished: I ",
                "Right, I ",
                "Okay, that's sorted. I ",
                "I've taken care of it: I ",
                "No problem, I ",
            ]
        )
        + " ".join(done)
        + "."
    )
    if isinstance(data, dict):
        ident = _id_of(data)
        if ident and str(args.get(ident[0])) != ident[1]:
            text += f" The new {words(ident[0])} is {ident[1]}."
        # the fields the call set, as the service now reports them, then a little of the rest
        steady = Steady(rng.random())
        written = written_facts(data, [p for p in args if p not in used and not p.endswith(("_id", "_ids"))], steady)
        # "I deleted scene SCN-0002.", never "... It now shows deleted: yes."
        said = (*own_flags(intent.verbs[0], data, True), *([toggle] if toggle in data else []))
        rest = [f for f in facts_of(data, steady, intent.object or "status", limit=3, skip=said) if f not in written]
        facts = written[:4] + rest[: max(0, 3 - len(written))]
        if facts:
            lead = (  # what the call set, as the service reports it, or else what the record holds now
                ["It now shows ", "It now has ", "The service now shows ", "Now it reads ", "It's set with "]
                if written
                else ["Current details: ", "For reference, it shows ", "It also shows ", "The record now has "]
            )
            text += " " + rng.choice(lead) + join_prose(facts) + "."
    return text


def describe(tool: ToolSpec) -> str:
    """What the tool does, as the assistant says it to the user: "show you the git diff", never "show me"."""
    if runs_any(tool):
        return "run that on the database"
    return re.sub(r"\bme\b", "you", intent_of(tool.name, tool.read_only).say("the "))


def clean_error(err: str | None) -> str:
    e = (err or "the service refused it").strip().rstrip(".")
    e = re.sub(r"\b1 ([a-z]+)\b", lambda m: f"1 {singular(m.group(1))}", e)  # "only 1 units"
    e = re.sub(r"\b[a-z]+(?:_[a-z]+)+\b", lambda m: words(m.group(0)), e)  # "from_account_id" -> "from account"
    return re.sub(r"\b(None|null)\b", "empty", e)


def step_reply(tool: ToolSpec, args: dict[str, Any], res: CallResult, rng: random.Random) -> str:
    """One sentence (or two) on one call's result."""
    if not res.ok:
        return rng.choice(
            [
                "I couldn't {d}: {e}.",
                "I tried, but I couldn't {d}: {e}.",
                "Sorry, I couldn't {d}. The service said: {e}.",
                "That didn't go through, so I couldn't {d}: {e}.",
            ]
        ).format(d=describe(tool), e=clean_error(res.error))
    data = res.data
    sql = args.get(runs_any(tool) or "")
    said = statement_reply(sql, data, rng) if isinstance(sql, str) else None
    if said:  # a statement's result: the rows it found, the count it took, the change it made
        return said
    if tool.output_schema is not None and tool.text_result and isinstance(data, dict) and len(data) == 1:
        only = next(iter(data.values()))  # {"content": "[DIR] orion"}: the tool's text, wrapped (server-filesystem)
        data = only if isinstance(only, str) else data  # said as that text, never as a record with 1 content
    intent = intent_of(tool.name, tool.read_only)
    if not tool.read_only:
        return confirm_reply(tool, args, data, rng)
    if isinstance(data, dict):
        lst = (
            main_list(data, intent.object or "result")
            if intent.family in ("list", "search") or not _id_of(data)
            else None
        )
        obj = singular(intent.object or "result")
        if (
            lst is not None
            and intent.family not in ("list", "search")
            and not lst[1]
            and not singular(words(lst[0])).endswith(obj)
        ):
            lst = None  # stat on a directory: what it is, never "No tags came back."
        if lst is not None:
            key, items = lst
            # list_categories returns "rows": they are categories; list_followers returns "follows": they are followers
            named = key in GENERIC_KEYS or (obj != singular(words(key)) and obj.startswith(singular(words(key))))
            if named and intent.family in ("list", "search") and is_plural(intent.object.split(" ")[-1] or "x"):
                key = intent.object
            total = next((data[k] for k in COUNT_KEYS if k in data), None)
            return list_reply(key, items, total, rng)
        return record_reply(tool, data, rng)
    if isinstance(data, list):
        return list_reply(intent.object or "result", data, None, rng)
    parsed = parse_result(data)  # text that is data (JSON, printed rows): said as the records it holds
    if isinstance(parsed, list) and len(parsed) == 1 and isinstance(parsed[0], dict):
        parsed = parsed[0]  # one row: its fields
    if isinstance(parsed, dict) and parsed:
        return step_reply(tool, args, res.model_copy(update={"data": parsed}), rng)
    if isinstance(parsed, list) and parsed and all(isinstance(x, dict) for x in parsed):
        return list_reply(intent.object if intent.family in ("list", "search") else "result", parsed, None, rng)
    text = str(data).strip()
    return f"Here's what came back: {text[:300]}" if text else "The tool returned nothing."


def skipped_reply(tool: ToolSpec) -> str:
    return f"I didn't {describe(tool)}, since the step it depends on failed."


def turn_reply(sentences: list[str]) -> str:
    """A turn's final answer: its sentences in order, none twice."""
    out: list[str] = []
    for block in sentences:
        for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])", block or ""):
            if s and s.strip().lower() not in {o.strip().lower() for o in out}:
                out.append(s)
    return " ".join(out) if out else "There was nothing I could do for that."


def ask_for(tool: ToolSpec, p: str, rng: random.Random) -> str:
    """The assistant's question for a required value the user left out, naming what it means."""
    meaning = words(p)
    action = describe(tool)
    if p.endswith(("_id", "_ids")):
        q = rng.choice(
            [
                f"Which {meaning} should I use?",
                f"Which {meaning} do you mean?",
                f"Which {meaning} is it?",
                f"Which {meaning} should I use (its ID is enough)?",
                f"Which {meaning} is it, by ID or name?",
            ]
        )
    elif any(m in p for m in ("amount", "price", "quantity", "limit")):
        q = rng.choice(
            [f"What {meaning} should I use?", f"How much for the {meaning}?", f"What should the {meaning} be?"]
        )
    elif "date" in p or p.endswith(("_at", "time", "start", "end")):
        q = rng.choice(
            [
                f"What {meaning} should I put?",
                f"When should that be? I need the {meaning}.",
                f"Which {meaning} do you want?",
            ]
        )
    elif p in ("pin", "api_token") or "password" in p or "token" in p:
        q = rng.choice(
            [
                f"I'll need your {meaning} for that. What is it?",
                f"Could you give me your {meaning}? It's required for this.",
            ]
        )
    elif any(k in p for k in WRITTEN):  # words the user writes: "What should the body say?", never "Which body?"
        q = rng.choice(
            [
                f"What should the {meaning} say?",
                f"What would you like the {meaning} to say?",
                f"What goes in the {meaning}?",
            ]
        )
    else:
        q = rng.choice(
            [f"What {meaning} should I use?", f"What should the {meaning} be?", f"Which {meaning} would you like?"]
        )
    lead = rng.choice(["Sure. ", "Happy to. ", "I can do that. ", "", "Okay. ", "Of course. "])
    why = rng.choice(["", f"To {action}, I need one more detail. ", "", "One thing first. "])
    return f"{lead}{why}{q}".strip()


def answer_with(
    tool: ToolSpec, p: str, v: Any, reference: str, rng: random.Random, entities: dict[str, dict[str, Any]]
) -> str:
    """The user's answer to :func:`ask_for`: the value, said naturally."""
    if p in tool.sensitive:
        return rng.choice([f"My {words(p)} is {v}.", f"It's {v}.", f"{v}. Keep it safe."])
    asked = say_sql(v) if isinstance(v, str) and sql_kind(tool, p) else None
    if asked:  # SQL text: what the user wants from the database, not the statement
        return rng.choice([f"I'd like you to {asked}.", f"{asked[:1].upper() + asked[1:]}, please.", f"Just {asked}."])
    if is_text(p, v) and " " in v.strip():  # words to write, quoted: 'It should say "Running late."'
        text = v.strip()  # as written, its line breaks kept (the call passes them); never "... fees.\n."
        return rng.choice(
            [
                f'It should say "{text}"',
                f'Make it "{text}"',
                f'Something like "{text}"',
                f'Just "{text}"',
                f'Put "{text}"',
            ]
        )
    said = say_value(p, v, reference, rng, entities)
    if isinstance(v, (int, float)) and not isinstance(v, bool) and not said.replace(".", "").replace(",", "").isdigit():
        said = str(v)
    forms = [
        f"It's {said}.",
        f"That'd be {said}.",
        f"Ah, right: {said}.",
        f"Sorry, it's {said}.",
        f"{said[:1].upper() + said[1:]}, please.",
        f"Use {said}.",
        f"Oh, sorry: {said}.",
        f"The {words(p)} is {said}.",
        f"Let's go with {said}.",
        f"Make it {said}.",
        f"{said[:1].upper() + said[1:]}.",
    ]
    if said.lower() in ("none", "null"):  # an enum value "none" is never "None, please." (it reads as a missing value)
        forms = [f for f in forms if not f.startswith(said[:1].upper() + said[1:])]
    return rng.choice(forms)
