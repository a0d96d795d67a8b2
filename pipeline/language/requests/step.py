"""A step's phrase: the :class:`StepWriter` that says one chain step as a verb phrase, from its tool's intent
(the verb, the nouns of the tool's name as slots) and its arguments, made of the mixins that say the parts
(:mod:`.mentions`, :mod:`.acting`, :mod:`.possessives`, :mod:`.arguments`) and sharing one state with them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from pipeline.core.records import ToolSpec
from pipeline.language.argforms import ref_preposition
from pipeline.language.lexicon import (
    PREPOSITIONS,
    SWITCH_VERBS,
    Intent,
    article,
    intent_of,
    is_plural,
    join_prose,
    plural,
    singular,
    switch_of,
    words,
)
from pipeline.language.phrasing import description_grams, is_text, ngrams, stutter
from pipeline.language.requests.acting import ActingUser
from pipeline.language.requests.arguments import ArgumentPhrases
from pipeline.language.requests.mentions import Mentions
from pipeline.language.requests.possessives import Possessives
from pipeline.language.requests.step_parts import (
    acts_as,
    bare_preposition,
    described_param,
    from_to,
    makes,
    object_first,
    one_with,
)
from pipeline.language.requests.step_words import (
    COMMAND_VERBS,
    MASS_NOUNS,
    OWNED_WRITES,
    PASTE_WORDS,
    PROCESSES,
    SHOWING,
)
from pipeline.language.sqltext import say as say_sql
from pipeline.language.sqltext import sql_kind
from pipeline.language.statements import runs_any


def _join_once(pieces: list[str], sep: str) -> str:
    """Join ``pieces``, dropping from a piece the words (up to three) that the text before it ends with:
    ``find by tag`` + ``tag archive`` is ``find by tag archive``, not ``find by tag tag archive``."""
    out = ""
    for piece in pieces:
        if out:
            tail, head = out.lower().split(), piece.split(" ")
            for n in (3, 2, 1):
                if len(head) > n and [w.lower() for w in head[:n]] == tail[-n:]:
                    piece = " ".join(head[n:])
                    break
        out = f"{out}{sep}{piece}" if out else piece
    return out


def _sql_asked(tool: ToolSpec, args: dict[str, Any], withheld: list[str], rng: random.Random) -> str | None:
    """What a step of SQL asks for in words ("show me the customers in Lyon"); a statement left out of a tool that runs
    any statement: something to do in the database (the statement is said when the assistant asks)."""
    sql = next((v for p, v in args.items() if p not in withheld and isinstance(v, str) and sql_kind(tool, p)), None)
    asked = say_sql(sql) if sql else None
    if not asked and runs_any(tool) in withheld:
        return rng.choice(["help me with something in the database", "do something in the database for me"])
    return asked


class StepWriter(Mentions, ActingUser, Possessives, ArgumentPhrases):
    """Phrases one chain step; ``steps`` are all steps of the chain (for back references)."""

    def __init__(
        self,
        steps: list[dict[str, Any]],
        entities: dict[str, dict[str, Any]],
        reference: str,
        rng: random.Random,
        known: Callable[[str], bool] | None = None,
    ):
        self.steps, self.entities, self.reference, self.rng = steps, entities, reference, rng
        self.known = known or (lambda v: v in entities)
        self.shown: list[Any] = []  # results of earlier turns (what the user has seen), walked only when asked
        self.said_it = False  # the step being phrased already points at an earlier result as "it"
        self.verb = ""  # the verb of the step being phrased
        self.taking_off = (
            False  # it removes something from an entity its name does not name: "remove CON-0001 from event EVT-0001"
        )
        self.careful = (
            False  # a second wording of a step whose first ran words together or repeated its tool's description
        )
        self.recent_refs: list[
            str
        ] = []  # the last three back references said: never "that account again ... that account again"
        self._seen: set[str] = set()  # the values of the first ``_walked`` results shown (:meth:`seen`)
        self.acted_as: set[str] = set()  # the users earlier steps acted as (:meth:`same_actor`)
        self.secrets_told: set[str] = set()  # the PINs and keys the user has given (:meth:`secret`)
        self.named: dict[str, set[str]] = {}  # the entities earlier requests dealt with, by kind (:meth:`note_named`)
        self.said_ids: set[str] = set()  # those of them a request named by id
        self.told_ids: set[str] = set()  # those of them a request told apart by name ("the shop called ...")
        self.retold: set[str] = set()  # those told apart by name twice: never a third time
        self.bare: str | None = None  # the noun of the slot of the step being phrased that names a thing by its kind
        self.owned = False  # that slot was said as its owner's ("CUS-0001's accounts")
        self._singles: dict[tuple[int, str], set[str]] = {}  # (step, field) -> values (step_field_strings)
        self._walked = 0  # how many of ``shown`` are in ``_seen``

    def phrase(self, step: dict[str, Any], withheld: list[str], terse: bool) -> str:
        """The step as a verb phrase: ``deposit 25.00 for account ACC-0040 with the memo "gift"``.

        A wording that says a word twice running (``add Add monitoring ...``: a name that opens with the verb)
        or repeats a run of the tool's description (``remove a product from the wishlist``) is worded again
        from the same draws, carefully: names in quotes, a withheld entity as ``one of my products``."""
        state, refs, actors = self.rng.getstate(), list(self.recent_refs), set(self.acted_as)
        secrets = set(self.secrets_told)
        said = self._phrase(step, withheld, terse)
        if stutter(said) or (
            ngrams(said, PASTE_WORDS) & description_grams(step["tool"].description or "", PASTE_WORDS)
        ):
            self.rng.setstate(state)
            self.recent_refs = refs
            self.acted_as = actors
            self.secrets_told = secrets
            self.careful = True
            try:
                said = self._phrase(step, withheld, terse)
            finally:
                self.careful = False
        self.note_named(step, said)
        return said

    def _phrase(self, step: dict[str, Any], withheld: list[str], terse: bool) -> str:
        tool = step["tool"]
        self.said_it, self.verb = False, ""
        asked = _sql_asked(tool, step["args"], withheld, self.rng)
        if asked:  # SQL text: what it asks for ("show me the customers in Lyon"), not the statement
            return asked
        intent: Intent = intent_of(tool.name, tool.read_only)
        changed = self.changed_fields(step, intent, withheld, terse)
        if changed:  # "change EVT-0004's title to "Sync" and its start to 2pm"
            return changed
        verb = self._verb(intent, terse)
        args = step["args"]
        toggle = switch_of(intent, args, withheld)
        if toggle:  # set_trunk(open=true): "open the trunk", never "change the trunk ... and open"
            verb = SWITCH_VERBS[toggle][0 if args[toggle] else 1]
        self.verb = verb
        self.taking_off = False
        self.bare, self.owned = None, False
        used: set[str] = {toggle} if toggle else set()
        slots = self._noun_slots(step, intent, verb, toggle, withheld, used, terse)
        # git_add: "add the files README.md", not "add with files ..."
        if not intent.nouns and not terse and tool.output_schema is None:
            obj = next(
                (
                    p
                    for p, v in args.items()
                    if p not in withheld
                    and p not in step["sources"]
                    and not isinstance(v, bool)
                    and v not in (None, "", [], {})
                    and not is_text(p, v)
                ),
                None,
            )
            if obj is not None:
                used.add(obj)
                slots.append(
                    f"the {words(obj)} "
                    f"{join_prose([str(x) for x in args[obj]]) if isinstance(args[obj], list) else args[obj]}"
                )
        if intent.nouns and intent.nouns[0][0]:  # add_to_cart: the thing added comes before "to the cart"
            # the last id left: owner ids come first (food add_to_cart(customer_id, item_id) adds the item, not the
            # customer)
            direct = next(
                (p for p in reversed(args) if p not in used and p.endswith("_id") and not acts_as(tool, p)), None
            )
            if direct is not None:
                used.add(direct)
                if direct in withheld:
                    slots.insert(
                        0,
                        f"one of my {plural(words(direct))}"
                        if self.careful
                        else article(words(direct)) + " " + words(direct),
                    )
                elif direct in step["sources"]:
                    slots.insert(0, self.back_ref(step, direct, terse)[0])
                else:
                    slots.insert(0, self.entity(direct, args[direct], words(direct), terse))
        if slots and verb.split(" ")[-1] in PREPOSITIONS and slots[0].split(" ")[0] in PREPOSITIONS:
            verb = verb.rsplit(" ", 1)[0]  # reply_in_thread: "reply in the thread", never "reply to in the thread"
        parts = [verb, *slots]
        # what is removed is named and its name has no "from": the other ids are what it comes off
        self.taking_off = intent.family == "remove" and bool(used) and not any(prep for prep, _ in intent.nouns)
        # the user the call acts as: right after what it acts on where the verb's slots name it ("comment on the post
        # PST-0004 as Priya Sato, ..."), else after the rest ("get the thread of message M-00024 as U-0001"); never
        # "and for"
        actor = [p for p in args if p not in used and acts_as(tool, p)]
        acting = self._acting(step, actor, withheld, used, terse)
        named = len(used) > len(actor)
        parts += acting if named else []
        extras: list[str] = []
        # "at 9 am today": a bare preposition's phrase closes the request, never joined with "and"
        tail: list[str] = [] if named else acting
        for p, v in args.items():
            # "the balance of my account": which one is asked for
            if p in withheld and p not in used and p.endswith("_id") and not terse:
                noun = words(p)
                extras.append(
                    f"{self.rng.choice(['for', 'of', 'on'])} "
                    f"{self.rng.choice(['my ', 'the ', article(noun) + ' '])}{noun}"
                )
                continue
            if p in used or p in withheld:
                continue
            if p in step["tool"].sensitive and p not in step["sources"]:  # a PIN or a key: told once, then known
                extras += self.secret(p, v, terse)
                continue
            if p in step["sources"]:
                ref, named = self.back_ref(step, p, terse)
                if not named and self.own(step, p, parts, terse, ref):  # "that customer's accounts"
                    continue
                if ref.split(" ")[0] in PREPOSITIONS or (named and not p.endswith(("_id", "_ids"))):
                    extras.append(ref)  # a value said as a value
                elif p.endswith(("_id", "_ids")):  # an entity: "for the account you just found", "on that account"
                    extras.append(f"{self._for(p)} {ref}")
                else:  # a value from a result, not named: "with the same start time", "for that month"
                    extras.append(f"{ref_preposition(p)} {ref}")
            elif v not in (None, "", [], {}):
                if self.own(step, p, parts, terse):  # "CUS-0001's accounts", never "the accounts for customer CUS-0001"
                    continue
                (tail if bare_preposition(p, v) else extras).append(self.arg_phrase(p, v, intent.read, terse))
        extras = self.last_with(one_with(from_to(extras)))
        if terse:
            return _join_once(parts + extras + tail, " ")
        if not extras:
            return " ".join(parts + tail)
        # "update the event EVT-0004, status confirmed"; a phrase that opens with a preposition joins directly
        sep = (
            " "
            if not slots
            or extras[0].split(" ")[0] in PREPOSITIONS
            or extras[0].startswith(("with", "including", "only"))
            else ", "
        )
        said = _join_once([" ".join(parts), join_prose(extras)], sep)
        return _join_once([said, *tail], " ") if tail else said

    def _verb(self, intent: Intent, terse: bool) -> str:
        """The step's verb: any of its family's; a terse user's is a one-word command, not always the same one
        ("list", "show", "fetch")."""
        if not terse:
            return self.rng.choice(intent.verbs)
        return self.rng.choice([v for v in intent.verbs if v in COMMAND_VERBS] or [min(intent.verbs, key=len)])

    def _noun_slots(
        self,
        step: dict[str, Any],
        intent: Intent,
        verb: str,
        toggle: str | None,
        withheld: list[str],
        used: set[str],
        terse: bool,
    ) -> list[str]:
        """The phrases of the nouns a tool's name holds, each with its preposition: "to the cart", "the account
        ACC-0003" (the parameters they name are added to ``used``)."""
        tool, args = step["tool"], step["args"]
        slots: list[str] = []
        for prep, noun in intent.nouns:
            if prep == "to" and verb in ("put", "include"):
                prep = "in"  # "put it in the cart", never "put it to the cart"
            if toggle:
                noun = noun.removesuffix(f" {toggle}")  # set_automation_enabled: "enable the automation"
            p = self._param_for(tool, noun, args, used)
            # an id the noun's word names only in its description: "the attendee CON-0001"
            said_as = words(p) if p is not None else noun
            p = p if p is not None else described_param(tool, noun, args, used)
            if p is not None:
                used.add(p)
                if p in withheld:
                    ent = ("the " if terse else self.rng.choice(["the ", "my ", article(noun) + " "])) + singular(noun)
                elif p in step["sources"]:
                    ent, _ = self.back_ref(step, p, terse)
                else:
                    ent = self.entity(p, args[p], said_as, terse)
            else:
                ent = ("" if terse else self._determiner(intent, noun, prep, tool.name)) + noun
                # "the accounts", which may be said as "CUS-0001's accounts"; never of a thing the call makes ("create
                # CAL-0004's event")
                if not prep and self.bare is None and (intent.read or intent.family in OWNED_WRITES):
                    self.bare = noun
            slots.append(f"{prep} {ent}".strip())
        return slots

    def thing_shown(self, step: dict[str, Any], said: str) -> str | None:
        """What a read worded as its verb and a noun phrase shows ("pull up the balance for account ACC-0003": "the
        balance for account ACC-0003"); None for a write, another wording or SQL text."""
        tool = step["tool"]
        if not tool.read_only or not self.verb or not said.startswith(self.verb + " "):
            return None
        if intent_of(tool.name, True).family not in SHOWING:
            return None
        rest = said[len(self.verb) + 1 :]
        return rest if rest.startswith(("the ", "all the ")) or self.owned else None

    def _determiner(self, intent: Intent, noun: str, prep: str, tool: str = "") -> str:
        """``the`` before a thing the request names by its kind; a read of a list may ask for "all the merchants"; a
        thing the call makes is new: "create an invoice", "set up a new webhook", never "set up the invoice"."""
        last = noun.split(" ")[-1]
        if not prep and last in MASS_NOUNS:  # deposit_cash: "deposit cash into ...", never "deposit the cash"
            return ""
        if not prep and not intent.read and makes(tool, last) and last not in PROCESSES and not is_plural(last):
            return self.rng.choice([article(noun) + " ", article(noun) + " ", "a new "])
        if prep or not intent.read or intent.family not in ("list", "search") or not is_plural(noun.split(" ")[-1]):
            return "the "
        return self.rng.choice(["the ", "the ", "the ", "all the "])

    @staticmethod
    def _param_for(tool: ToolSpec, noun: str, args: dict[str, Any], used: set[str]) -> str | None:
        """The argument a noun of the tool's name stands for (``account`` <- ``account_id``; :func:`object_first`)."""
        one = singular(noun)
        hits = []
        for p in args:
            if p in used or not (p.endswith("_id") or p.endswith("_ids")):
                continue
            w = singular(words(p))
            if w == one or w.endswith(" " + one) or one.endswith(" " + w):
                hits.append(p)
        return object_first(tool, hits)
