"""The offline request writer: what a person would say to get a chain's calls made.

A step's request is composed from its tool's intent (:mod:`pipeline.language.lexicon`: a verb phrasing and
the nouns of the tool's name as slots), the entities and values of its arguments in a person's
words (:mod:`pipeline.language.phrasing`), and, for a value an earlier step returned, a reference to that
result ("that account") when the result singled it out, or the value named when it did not.
A turn wraps its steps in parts drawn independently (greeting, persona context, ask frame,
connectors, closer), so requests do not fall into a few fixed frames. Nothing is taken from a
tool's description; a parameter's description is read only to tell the id of the user a call acts as
(:func:`acts_as`) from the ids it acts on, and which id a noun of the tool's name stands for where no
id is named after it (``remove_attendee``'s ``contact_id``, "Contact id of the attendee to remove").
Deterministic for a given random generator.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from pipeline.core.config import LintConfig
from pipeline.core.domain import Domain
from pipeline.core.records import ToolSpec
from pipeline.language.argforms import field_forms, ref_preposition
from pipeline.language.fields import field_values
from pipeline.language.lexicon import (
    PEOPLE,
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
from pipeline.language.phrasing import (
    UNITS,
    description_grams,
    entity_name,
    is_text,
    known_by,
    ngrams,
    possessive,
    say_entity,
    say_owner,
    say_value,
    stutter,
)
from pipeline.language.references import distinguishing
from pipeline.language.situations import (
    TRAILS,
    lower_first,
    noun_choice,
    reword,
    situation,
    with_aside,
    with_situation,
)
from pipeline.language.sqltext import say as say_sql
from pipeline.language.sqltext import sql_kind

GREETINGS = [
    "Hi",
    "Hey",
    "Hello",
    "Morning",
    "Good morning",
    "Good afternoon",
    "Hi there",
    "Hey there",
    "Evening",
    "Hiya",
    "Howdy",
    "Hello again",
    "Hey, it's me again",
    "Hi, hope you're well",
    "Good evening",
    "Hi, quick one",
    "Hello, me again",
    "Hey, sorry to bother you",
    "Hi, got a minute",
    "Hi, hope your day's going well",
    "Hey, good to catch you",
    "Morning, hope all's well",
]
CONTEXTS = {
    "busy_parent": [
        "between school runs",
        "before the kids get home",
        "while dinner's in the oven",
        "on my lunch break",
        "before pickup at three",
    ],
    "small_business_owner": [
        "for the shop's books",
        "before we open",
        "for my end-of-month numbers",
        "while the store is quiet",
        "for an invoice I'm chasing",
    ],
    "student": [
        "for my group project",
        "before my next class",
        "for the club I run",
        "while I'm in the library",
        "for my side gig",
    ],
    "ops_engineer": [
        "for the ops review",
        "during my on-call shift",
        "for a ticket I'm closing",
        "before the change window",
        "for the weekly audit",
    ],
    "retiree": [
        "when you have a moment",
        "for my own records",
        "as my daughter suggested",
        "at your leisure",
        "while I have my glasses on",
    ],
    "traveller": [
        "from the airport",
        "before my flight boards",
        "from the hotel lobby",
        "while I still have wifi",
        "from the train",
    ],
}
ASKS = [
    "Can you {p}?",
    "Could you {p}?",
    "Please {p}.",
    "I need you to {p}.",
    "{P}.",
    "{P}, please.",
    "Would you {p}?",
    "I'd like you to {p}.",
    "Go ahead and {p}.",
    "Quick favour: {p}.",
    "Can I get you to {p}?",
    "I want you to {p}.",
    "Would you be able to {p}?",
    "Any chance you could {p}?",
    "{P} for me.",
    "Think you could {p}?",
    "{P} when you can.",
    "{P}, if that's OK.",
    "Could I ask you to {p}?",
    "{P}; that's all for now.",
    "Do me a favour and {p}.",
    "Could you please {p}?",
    "Would you please {p}?",
    "I was hoping you could {p}.",
    "Can you help me out and {p}?",
    "If you could {p}, that'd be great.",
    "I'd appreciate it if you could {p}.",
    "Are you able to {p}?",
    "I'm hoping you can {p}.",
    "Can you {p} real quick?",
    "Could you {p} for me?",
    "When you have a second, {p}.",
    "First thing: {p}.",
    "Please could you {p}?",
    "Can you quickly {p}?",
    "Could you kindly {p}?",
    "I'd be grateful if you'd {p}.",
    "Mind if I ask you to {p}?",
    "Could you sort this out for me: {p}.",
    "Can you do something for me? {P}.",
    "Something quick: {p}.",
    "Could you {p} when you get a moment?",
    "Would you {p}, please?",
    "Can you please {p}?",
    "Hoping you can {p}.",
    "Could you help by doing this: {p}.",
    "Need a hand: {p}.",
    "Could you take care of this for me: {p}.",
    "Here's what I need: {p}.",
    "Can you {p} today?",
    "When you're free, could you {p}?",
    "So, could you {p}?",
    "Okay, so: {p}.",
    "Right, can you {p}?",
    "Can you {p}, please?",
    "Could you {p} now?",
    "Will you {p}?",
    "Would you kindly {p}?",
    "Can you handle this: {p}?",
    "Please, {p}.",
    "Would you {p} for me?",
    "Can you {p} for me, please?",
    "Could you get on with this: {p}.",
    "Could you try to {p}?",
    "I'd ask you to {p}.",
    "Just {p}, please.",
    "Can you sort out one thing: {p}?",
]
# asks in the user's own voice ("I'd like to cancel ..."): never with a verb that says "me" ("I'd like to show me")
OWN_ASKS = [
    "I'd like to {p}.",
    "I want to {p}.",
    "I need to {p}.",
    "I'm looking to {p}.",
    "What I'd like is to {p}.",
    "Help me {p}.",
    "I'm trying to {p}. Can you do that?",
    "I need to {p}. Could you handle it?",
    "Is there a way to {p}?",
    "Let's {p}.",
    "Would it be possible to {p}?",
    "I'm hoping to {p}.",
    "I'd love to {p}, if you can help.",
    "I'm going to need to {p}.",
    "I have to {p}.",
    "I've been meaning to {p}.",
    "I'm after a way to {p}.",
]
FOLLOW_ACKS = [
    "Thanks.",
    "Great.",
    "OK.",
    "Perfect.",
    "Got it.",
    "Nice.",
    "Alright.",
    "Good.",
    "Cool.",
    "Lovely.",
    "Right.",
    "Okay, thanks.",
    "Super.",
    "Thanks, that helps.",
    "Fine.",
    "Brilliant.",
    "Thanks for that.",
    "That's helpful.",
    "Okay, good.",
    "Ah, good.",
    "Makes sense.",
    "Great, thanks.",
    "Understood.",
    "Sounds good.",
    "Good to know.",
    "Perfect, thank you.",
]
FOLLOW_LEADS = [
    "Now {p}.",
    "Next, {p}.",
    "Also, {p}.",
    "Could you also {p}?",
    "One more thing: {p}.",
    "And {p}, please.",
    "Then {p}.",
    "While you're at it, {p}.",
    "Now could you {p}?",
    "Can you {p} as well?",
    "{P} too, please.",
    "After that, {p}.",
    "Following on, {p}.",
    "Last bit: {p}.",
    "{P} as well.",
    "Next, could you {p}?",
    "Right, {p}.",
    "And now {p}.",
    "Okay, now {p}.",
    "Next up: {p}.",
    "Could you {p} next?",
    "Another thing: {p}.",
    "Good, now {p}.",
    "And could you {p}?",
    "Can you also {p}?",
    "Also, could you {p}?",
    "Now {p}, please.",
    "From there, {p}.",
    "With that, {p}.",
    "Would you {p} too?",
    "Based on that, {p}.",
    "In that case, {p}.",
    "Okay. Can you {p}?",
    "So, {p}.",
    "Okay, {p}.",
    "Now, {p}.",
    "So next, {p}.",
    "And next, {p}.",
    "Moving on, {p}.",
    "Then could you {p}?",
    "Please {p} next.",
    "Please also {p}.",
    "Could you go ahead and {p}?",
    "One other thing: {p}.",
    "Also, please {p}.",
    "Can you {p} now?",
    "Could you now {p}?",
    "Next thing: {p}.",
    "Following that, {p}.",
    "Good. Could you {p}?",
    "If there's time, {p} too.",
    "Let's keep going: {p}.",
    "Great, and now {p}.",
    "While we're at it, {p}.",
    "And after that, {p}.",
    "Perfect, now {p}.",
    "Next, {p} if you can.",
    "Then, {p}.",
    "Could you also {p} for me?",
    "Now, can you {p}?",
    "And could you {p} next?",
    "Following up: {p}.",
    "On top of that, {p}.",
    "Alongside that, {p}.",
    "Right, now {p}.",
    "So then, {p}.",
    "Next: {p}.",
    "Could you {p} too?",
    "Would you also {p}?",
    "Will you {p} next?",
    "And please {p}.",
    "Also {p}, if possible.",
    "Then please {p}.",
    "Can you follow up and {p}?",
]
OWN_FOLLOW_LEADS = [
    "I'd also like to {p}.",
    "Now I have to {p}.",
    "I also need to {p}.",
    "Next I'd like to {p}.",
    "In that case I'll need to {p}.",
    "Let's also {p}.",
    "Now let's {p}.",
    "Next, I've got to {p}.",
    "I'd like to {p} as well.",
    "Can we {p} now?",
    "Would it be possible to {p} too?",
    "Then I'll want to {p}.",
    "Now I'm hoping to {p}.",
]
THEN = [
    "then {p}",
    "and then {p}",
    "after that {p}",
    "and {p}",
    "and also {p}",
    "and next {p}",
    "then also {p}",
    "and afterwards {p}",
    "plus {p}",
    "and after that, {p}",
    "followed by: {p}",
    "and once that's done, {p}",
    "and when that's done, {p}",
    "and next up, {p}",
    "and right after, {p}",
    "and from there {p}",
    "and then, {p}",
    "and later {p}",
    "then, {p}",
    "and next, {p}",
    "and then also {p}",
    "after which {p}",
]
# joining a read's object alone to the request before it ("..., and then the attendees for that event")
THEN_THING = ["and {p}", "then {p}", "and then {p}", "plus {p}", "and also {p}", "as well as {p}", "and {p} too"]
CLOSERS = [
    "Thanks!",
    "Thank you.",
    "Cheers.",
    "Appreciate it.",
    "Thanks a lot.",
    "Much appreciated.",
    "Thanks in advance.",
    "Ta.",
    "Many thanks.",
    "Thank you so much.",
    "Thanks, you're a star.",
    "Thanks so much.",
    "That'd be great.",
    "That would help a lot.",
    "Appreciate the help.",
    "Thanks for your help.",
    "Cheers for that.",
    "Thank you kindly.",
    "Thanks, that'd be a big help.",
    "I owe you one.",
    "You're a lifesaver.",
    "Thanks heaps.",
    "Grateful for the help.",
    "Thanks, much obliged.",
    "Cheers, thanks.",
    "Thank you, really.",
    "Thanks again.",
    "Nice one, thanks.",
    "Thanks, that's a help.",
    "Thanks, I appreciate it.",
    "Thank you, that's great.",
    "Cheers, much appreciated.",
    "Thanks for sorting it.",
    "Let me know how it goes.",
    "Tell me when it's done.",
    "Let me know if anything's off.",
    "That's everything for now.",
]
NAMING = ("name", "display_name", "full_name")
PASTE_WORDS = (
    LintConfig().description_ngram
)  # a run this long shared with a tool's description repeats its documentation
# parameters named by a preposition alone (``at``, ``before``): the preposition and the value are the whole phrase
BARE_PREPOSITIONS = PREPOSITIONS | {"before", "after", "since", "until", "near"}
# role words said as the preposition they stand for: origin_place_id "from place PLC-0003", destination_place_id "to
# ..."
ROLE_PREPOSITIONS = {"origin": "from", "destination": "to"}
# a parameter described as the user a call acts as ("Id of the signed-in user performing the action", "Id of the
# workspace member acting"): said "as the user Priya Sato (USR-0017)", never as what the call acts on
ACTOR = re.compile(r"\b(acting|performing the action|signed-in|member (?:reading|searching))\b", re.IGNORECASE)
# flags said after "mark": "mark it as read", "as unstarred", never "mark it marked read"
UN_FLAGS = {"read", "starred", "pinned", "flagged", "archived"}
# a value parameter named as a verb phrase, pointed at as the thing it is: "the same end date", never "the same ends on"
REF_NOUNS = {
    "ends on": "end date",
    "starts on": "start date",
    "check in": "check-in date",
    "check out": "check-out date",
    "due on": "due date",
    "expires on": "expiry date",
}
# a read's filter on a state, with the word for its opposite
READ_STATES = {
    "enabled": "disabled",
    "active": "inactive",
    "open": "closed",
    "locked": "unlocked",
    "muted": "unmuted",
    "charging": None,
}
# the user a call acts as, said as whose account it goes through: "using Grace Mendes's account (USR-0013)"
ACTOR_OWNED = [("on", "behalf"), ("using", "login"), ("using", "account"), ("signed in to", "account")]
# write families whose thing, named by its kind, may be said as an entity's: "change DEA-0026's stage"
OWNED_WRITES = {"update", "delete", "remove", "cancel"}
WHEN_WORDS = {"while", "before", "when", "during", "between", "on", "at"}
BACK_REFS = [
    "that {n}",
    "the same {n}",
    "the {n} you just found",
    "the {n} from before",
    "that {n} again",
    "that same {n}",
    "the {n} you mentioned",
    "the {n} we just looked at",
    "this {n}",
    "the {n} you pulled up",
    "that particular {n}",
    "the {n} in question",
    "the {n} you just showed me",
    "the {n} you told me about",
    "the earlier {n}",
    "the very same {n}",
    "the {n} from your last answer",
    "the {n} I just asked about",
    "the {n} you brought up",
    "the {n} from a moment ago",
    "that exact {n}",
    "the {n} from that answer",
    "the {n} from just now",
    "that {n} there",
    "the {n} we were just on",
    "the {n} you gave me",
    "the {n} we just talked about",
    "that {n} once more",
    "the {n} I asked about before",
    "this same {n}",
    "the {n} at hand",
]
# the read families that only show something (a list, a record, a search): said as what they show
SHOWING = ("list", "get", "search", "view", "check", "read")
# what a making verb starts that is not a thing made: "start the charging", never "start a charging"
PROCESSES = {"charging", "navigation", "playback", "tracking", "monitoring", "streaming", "sharing", "sync", "syncing"}
# what a tool's name may hold that is never "the" anything: "withdraw cash", "add funds"
MASS_NOUNS = {"cash", "money", "funds", "credit"}
# verbs of a call that makes the entity its name names (open_account, create_invoice, schedule_meeting)
MAKING = {"create", "add", "open", "place", "book", "schedule", "register", "post", "reserve", "save", "make", "start"}


def makes(tool: str, noun: str) -> bool:
    """Does the tool make a new ``noun`` (``open_account`` an account; ``add_issue_to_sprint`` no project)?"""
    head, *rest = tool.lower().split("_")
    return head in MAKING and noun in rest


# an entity the conversation's own write made: "the new account", "the invoice you just created"
NEW_REFS = ["the new {n}", "that new {n}", "the {n} you just made", "the new {n} you just set up", "the brand-new {n}"]
# the plain ways to point back at something, said most of the time
SHORT_REFS = [
    "that {n}",
    "the same {n}",
    "this {n}",
    "that same {n}",
    "the {n} above",
    "that {n} again",
    "the {n} from earlier",
]
# words of a back reference that say a result showed the value: never said of one the user named to a write
SHOWN = ("found", "pulled up", "showed", "told me", "brought up", "answer", "gave me", "you mentioned")
FIRST_REFS = [
    "the first {n} there",
    "the first one",
    "the top {n} on that list",
    "the first {n} it shows",
    "the first {n} you listed",
    "the {n} at the top",
    "the top one",
    "the first {n} in that list",
    "the one listed first",
    "the first result",
    "the first {n} on the list",
    "the {n} that came up first",
    "the first {n} in the results",
    "the one at the top of the list",
    "the first entry",
    "whichever {n} is first",
    "the first {n} you found",
    "the lead {n} in that list",
    "the first of them",
    "the {n} listed at the top",
    "the first {n} that came back",
    "the opening entry",
    "the topmost {n}",
    "the first {n} of those",
]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _first_word(s: str) -> str:
    return s.split(" ", 1)[0].strip(".,;:!?").lower()


# a follow-up that opens with one of these acknowledges already ("Good. Could you ...", "Great, and now ...")
ACK_WORDS = frozenset(_first_word(a) for a in FOLLOW_ACKS)


def _last_word(s: str) -> str:
    return s.rsplit(" ", 1)[-1].strip(".,;:!?").lower()


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


class StepWriter:
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

    def earlier(self, noun: str, found: bool = True) -> str:
        """``that account``, ``the account from before`` ...: a wording not among the last three said; "the account
        you just found" only when a read (``found``) returned it, never after the user named it to a write."""
        pool = SHORT_REFS if self.rng.random() < 0.6 else BACK_REFS  # mostly just "that account"
        ref = self.rng.choice(
            [r for r in pool if r not in self.recent_refs and (found or not any(w in r for w in SHOWN))]
        )
        self.recent_refs = [*self.recent_refs[-2:], ref]
        return ref.format(n=noun)

    def seen(self, value: str) -> bool:
        """Has the user seen ``value`` in a result of an earlier turn?"""
        if self._walked < len(self.shown):  # the results shown since the last time asked
            self._seen.update(*(result_values(d) for d in self.shown[self._walked :]))
            self._walked = len(self.shown)
        return value in self._seen

    def saw(self, results: list[Any]) -> None:
        """The user has now seen these results (a turn's)."""
        self.shown += results

    def entity(self, p: str, v: Any, noun: str, terse: bool) -> str:
        if isinstance(v, list):
            return join_prose([self.entity(p, x, singular(noun), terse) for x in v])
        prep, rest = role(noun)
        again = self.named_again(str(v), singular(rest if prep else noun), terse)
        if again:  # "check the shop called Seattle Northgate, then the transfers for that shop"
            return f"{prep} {again}" if prep else again
        if terse:  # "from ACC-0001", "to PLC-0019": a route or a transfer keeps its direction even in a terse turn
            return f"{prep} {v}" if prep else str(v)
        # from_store_id: "from store STR-0010", "from Seattle Northgate (STR-0001)";
        # origin_place_id: "from place PLC-0003"
        if prep:
            said = say_entity(str(v), singular(rest), self.entities.get(str(v)), self.rng, quote=self.careful)
            # "from the STR-0010 store" keeps its "the"; "from store STR-0010", never "from the store STR-0010"
            return f"{prep} {said if said.endswith(' ' + singular(rest)) else said.removeprefix('the ')}"
        return say_entity(str(v), singular(noun) or "one", self.entities.get(str(v)), self.rng, quote=self.careful)

    def named_again(self, v: str, noun: str, terse: bool, told: set[str] | None = None) -> str | None:
        """How the user points at an entity they named by its id in an earlier request of the conversation, in two of
        three mentions: "that shop", "the same shop"; None where they have not, in a terse turn, or where the
        conversation has dealt with another of its kind (which "that shop" would leave unclear). ``told``: more ids
        that count as named (those an earlier request told apart by name, for a read)."""
        if terse or self.careful or not noun or noun == "one" or (v not in self.said_ids and v not in (told or ())):
            return None
        if self.named.get(noun) != {v} or (v not in self.retold and self.rng.random() < 0.34):
            return None
        return self.rng.choice(["that {n}", "the same {n}", "this {n}", "that {n}"]).format(n=noun)

    def note_named(self, step: dict[str, Any], said: str) -> None:
        """The entities a phrased step deals with, by kind, and those its words name by id (:meth:`named_again`)."""
        for p, v in step["args"].items():
            if not p.endswith(("_id", "_ids")):
                continue
            prep, rest = role(words(p))
            noun = singular(rest if prep else words(p))
            for x in v if isinstance(v, list) else [v]:
                self.named.setdefault(noun, set()).add(str(x))
                if str(x) in said:
                    self.said_ids.add(str(x))

    def back_ref(self, step: dict[str, Any], p: str, terse: bool) -> tuple[str, bool]:
        """How the user points at a value an earlier step returned; (phrase, named the value?)."""
        src = step["sources"][p]
        v = step["args"][p]
        noun = (
            REF_NOUNS.get(words(p), words(p)) or "one"
        )  # "with that check-in date again", never "with that check in again"
        prep, rest = role(noun)
        lead = ""
        if prep:  # to_account_id: "to the account you just got"; a role keeps its word: "from that origin place"
            lead, noun = prep + " ", rest if noun.split(" ")[0] in PREPOSITIONS else noun
        data = self.steps[src]["result"].data if self.steps[src]["result"].ok else None
        field = step["source_fields"][p]
        if self.shadowed(
            src, step.get("index", len(self.steps)), field, v
        ):  # a later step returned another one: say which
            return (
                self.entity(p, v, words(p) or "one", terse)
                if p.endswith(("_id", "_ids"))
                else self.arg_phrase(p, v, step["tool"].read_only, terse)
            ), True
        nameable = self.seen(str(v)) or self.known(str(v))
        if data is not None and step_field_strings(self.steps, src, field, self._singles) == {str(v)}:
            # "book FL-0105 TRV-0006 ITN-0007", then "check TRV-0006", never "check it" (which of the three?): "it"
            # only after a call on one entity, or for a value the user cannot name
            several = sum(q.endswith(("_id", "_ids")) for q in self.steps[src]["args"]) > 1
            if terse and several and p.endswith("_id") and nameable:
                return self.entity(p, v, words(p) or "one", terse), True
            if terse and not self.said_it:  # a step says "it" once; a second entity is "the same customer"
                self.said_it = True
                return lead + "it", False
            source = self.steps[src]
            last = noun.split(" ")[-1]
            made = makes(source["tool"].name, last) and str(v) not in {str(x) for x in source["args"].values()}
            rival = any(q != p and q.endswith("_id") and words(q).split(" ")[-1] == last for q in step["args"])
            if not terse and made and p.endswith("_id") and (rival or self.rng.random() < 0.6):
                # what the user's own earlier request made: "to the new account", never "to the same account" next
                # to another account just named
                return lead + self.rng.choice(NEW_REFS).format(n=noun), False
            if not terse and rival and p.endswith("_id") and nameable:
                # "from ACC-0037 to ACC-0046", never "to that account" next to another account
                return self.entity(p, v, words(p) or "one", terse), True
            ref = (
                self.rng.choice(["the same ", "that ", "that same "]) + noun
                if terse
                else self.earlier(noun, source["tool"].read_only)
            )
            if not terse and ref.endswith(" " + noun) and p.endswith(("_id", "_ids")):
                ref = self.known_as(ref, noun, v, data)
            return lead + ref, False
        # "the shop called Seattle Northgate ... the transfers for that shop": a read may point at what an earlier
        # request told apart by name; a write only at what a request named by id (a write's id is always said)
        told_apart = self.told_ids if step["tool"].read_only else set()
        again = self.named_again(str(v), singular(noun), terse, told_apart) if p.endswith("_id") else None
        if again:
            return lead + again, False
        told = self.told_apart(step, data, field, v, noun, terse)
        if told is not None:
            if str(v) in self.told_ids:  # told apart by name twice: the next mention points back (named_again)
                self.retold.add(str(v))
            self.told_ids.add(str(v))
            return lead + told, False
        if step["tool"].read_only and data is not None and first_of(data, field, v) and not (terse and nameable):
            return lead + self.rng.choice(FIRST_REFS).format(n=noun), False
        if step["tool"].read_only and not nameable:
            return lead + f"one of those {plural(noun)}", False
        if not p.endswith(("_id", "_ids")):  # a value, not an entity: "end time 10:30 March 15", "named Nora Ibrahim"
            return self.arg_phrase(p, v, step["tool"].read_only, terse), True
        return self.entity(p, v, words(p) or "one", terse), True

    def known_as(self, ref: str, noun: str, v: Any, data: Any) -> str:
        """A back reference said with what the result showed of the entity, in about half of them: "that customer in
        Austin", "Ravi Okafor", "the listing "Robot lawn mower"" (its name only where the result showed it)."""
        record = self.entities.get(str(v))
        r = self.rng.random()
        name = entity_name(record)
        if r < 0.35 and name and name != str(v) and name in result_values(data) and '"' not in name:
            person = noun.split(" ")[-1] in PEOPLE or bool(record and record.get("first_name"))
            return name if person else f'the {noun} "{name}"'
        by = known_by(record, self.rng) if r < 0.75 else None
        return f"{ref} {by}" if by else ref

    def same_actor(self, who: Any, terse: bool) -> bool:
        """Does the call act as the user an earlier step of the conversation acted as, named by their id then? A
        person says who they are once: the later requests go on as them (a terse turn still says it)."""
        return not terse and str(who) in self.acted_as

    def told_apart(self, step: dict[str, Any], data: Any, field: str, v: Any, noun: str, terse: bool) -> str | None:
        """A read's follow-up on one record of a list, by what tells it apart ("the cheapest room", "the hotel in
        Denver"; :mod:`pipeline.language.references`), or None (a write names its entity; a terse turn says less)."""
        if terse or not step["tool"].read_only or data is None:
            return None
        return distinguishing(data, field, v, singular(noun) or "one", self.rng)

    def shadowed(self, src: int, now: int, field: str, v: Any) -> bool:
        """Did a step between ``src`` and ``now`` return another value of ``field`` (``create_invoice`` after the
        invoice was found): "the invoice you just found" would point at the newer one."""
        return any(
            st["result"].ok and any(str(x) != str(v) for x in field_values(st["result"].data, field))
            for st in self.steps[src + 1 : now]
        )

    def arg_phrase(self, p: str, v: Any, read: bool, terse: bool) -> str:
        pw = words(p)
        if p.endswith("_id") or p.endswith("_ids"):
            ent = self.entity(p, v, pw, terse)
            if terse or role(pw)[0]:  # from_account_id: "from account ACC-0001"
                return ent
            if self.taking_off and not read:
                return f"from {ent}"
            said = self.rng.choice(
                ["for {e}", "on {e}", "with {e}"] if not read else ["for {e}", "of {e}", "for {e}", "on {e}"]
            ).format(e=ent)
            return f"for {ent}" if not read and pw.split(" ")[-1] in PEOPLE else said
        if (
            isinstance(v, bool) and read and p in READ_STATES and not terse
        ):  # a filter: "only the disabled ones", never "and not enabled"
            said = p if v else READ_STATES[p]
            return f"only the {said} ones" if said else f"only the ones not {p}"
        if isinstance(v, bool):  # a switch named "on": "switched on", never "on yes"
            return self._flag(p, v)
        if bare_preposition(
            p, v
        ):  # a parameter named "at", "before": "at 9 am today", never "with the at at 9 am" or "at today at 9 am"
            return f"{p} {say_value(p, v, self.reference, self.rng, self.entities, time_first=True)}"
        val = say_value(p, v, self.reference, self.rng, self.entities)
        if (
            isinstance(v, (int, float)) and "_" in p and p.rsplit("_", 1)[1] in UNITS
        ):  # radius_km 7: "radius 7 km", not "radius km 7 km"
            pw = words(p.rsplit("_", 1)[0])
        if p in NAMING and isinstance(v, str) and not terse:  # a plain "named X" rather than "name X" or "on name X"
            return self.rng.choice(
                ['named "{v}"', 'called "{v}"'] if is_text(p, v) else ["named {v}", "called {v}"]
            ).format(v=v)
        if (
            p.endswith("_contains") and isinstance(v, str) and not terse
        ):  # "with the merchant containing "draft"", never "draft as the merchant contains"
            form = self.rng.choice(
                ["with the {w} containing {v}", "with the {w} containing {v}", "whose {w} contains {v}"]
            )
            return form.format(w=words(p[:-9]), v=f'"{v}"' if is_text(p, v) else v)
        head, _, thing = pw.partition(" ")
        if (
            head in ("add", "remove") and thing and not terse
        ):  # add_labels: "adding the label follow-up", never "follow-up as the add labels"
            one = not isinstance(v, list) or len(v) == 1
            return f"{'adding' if head == 'add' else 'removing'} the {singular(thing) if one else plural(thing)} {val}"
        specific = None if terse else field_forms(p, v, read, is_text(p, v))
        if specific:  # "due March 9th", "titled "Sync"", "with a rating of at least 4"
            return self.rng.choice(specific).format(w=pw, v=v if is_text(p, v) else val)
        if is_text(p, v):
            return self.rng.choice(
                [
                    '{w} "{v}"',
                    'with the {w} "{v}"',
                    'saying "{v}"' if p in ("text", "body", "message", "content") else '{w} "{v}"',
                ]
            ).format(w=pw, v=v)
        if (
            terse or pw.rsplit(" ", 1)[-1] in BARE_PREPOSITIONS
        ):  # ends_on: "ends on March 9th", never "ends on set to March 9th"
            return f"{pw} {val}"
        if isinstance(v, (int, float)):  # "with the temperature at 21", "amount of 25.00"
            forms = ["{w} {v}", "with {w} {v}", "{w} set to {v}", "{v} as the {w}", "with the {w} at {v}", "{w} of {v}"]
            forms += ["{w}: {v}", f"{article(pw)} {{w}} of {{v}}"]
            forms += ["setting the {w} to {v}"] if not read else ["whose {w} is {v}"]
            return self.rng.choice(forms).format(w=pw, v=val)
        # a word or a date: "with status in progress", never "with the status at in progress" or "reason of changed
        # mind"
        forms = ["{w} {v}", "with {w} {v}", "{w} set to {v}", "{v} as the {w}", "with the {w} {v}", "{w}: {v}"]
        forms += ["where the {w} is {v}", "whose {w} is {v}"] if read and not isinstance(v, list) else []
        forms += ["setting the {w} to {v}", "making the {w} {v}"] if not read and not self.undoing() else []
        return self.rng.choice(forms).format(w=pw, v=val)

    def secret(self, p: str, v: Any, terse: bool) -> list[str]:
        """A PIN, password or key, said the first time the conversation needs it ("using my API token sk_live_...",
        "with my PIN 8010"); the later calls of the conversation reuse it unsaid (no phrase), as a person tells it
        once."""
        if str(v) in self.secrets_told:
            return []
        self.secrets_told.add(str(v))
        w = words(p)
        if terse:
            return [f"{w} {v}"]
        forms = ["using my {w} {v}", "with {w} {v}", "{w} {v}", "my {w} is {v}", "the {w} being {v}"]
        return [self.rng.choice(forms).format(w=w, v=v)]

    def undoing(self) -> bool:
        """Does the step being worded take something off ("untag", "remove", "unfollow")? Its values say what, never
        "setting the tag to archive"."""
        return self.taking_off or self.verb.startswith(("un", "remove", "delete", "drop", "take off", "clear"))

    def last_with(self, extras: list[str]) -> list[str]:
        """The last of several phrases said at times without its "with": "title "Sprint planning" and the start March
        21", as often as "and with the start March 21"; a filter keeps its "with" ("with the name containing ...")."""
        if len(extras) < 2 or not extras[-1].startswith("with the ") or " containing " in extras[-1]:
            return extras
        lead = self.rng.choice(["with the ", "the ", "the "])
        return [*extras[:-1], lead + extras[-1].removeprefix("with the ")]

    def _flag(self, p: str, v: bool) -> str:
        if p.startswith("include_"):
            return ("including " if v else "leaving out ") + words(p[8:])
        if p.endswith("_only"):
            return ("only " + words(p[:-5])) if v else ("not just " + words(p[:-5]))
        if p.startswith("is_") and self.verb == "mark":  # mark_message: "mark it as read", "as unstarred"
            rest = words(p[3:])
            return f"as {rest}" if v else (f"as un{rest}" if rest in UN_FLAGS else f"as not {rest}")
        if p.startswith(("is_", "has_")):
            rest = words(p[p.index("_") + 1 :])
            return (
                (f"marked {rest}" if p.startswith("is_") else f"with {rest}")
                if v
                else (f"not {rest}" if p.startswith("is_") else f"without {rest}")
            )
        if p == "on" or p in READ_STATES:
            return ("switched " if p == "on" else "") + (
                "on" if p == "on" and v else "off" if p == "on" else (p if v else f"not {p}")
            )
        *rest, last = words(p).split(" ")
        if rest and last in ("on", "off"):  # climate_on: "with climate on", never "with climate on on"
            return f"with {' '.join(rest)} {'on' if v else 'off'}"
        if rest and last in ("enabled", "disabled"):
            return f"with {' '.join(rest)} {'enabled' if v == (last == 'enabled') else 'disabled'}"
        if rest and last.endswith("ed"):  # brake_pressed: "with the brake pressed", never "with brake pressed on"
            return f"with the {' '.join(rest)} {last}" if v else f"with the {' '.join(rest)} not {last}"
        return f"with {words(p)} {'on' if v else 'off'}"

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

    def _for(self, p: str) -> str:
        """The preposition before an entity a value points back at: ``for`` or ``on``; a write is done for a person,
        never on one."""
        return "for" if words(p).split(" ")[-1] in PEOPLE else self.rng.choice(["for", "for", "on"])

    def _as(self, terse: bool) -> str:
        """How the user says who the call acts as: "as", "logged in as", "acting as" ..."""
        return (
            "as " if terse else self.rng.choice(["as ", "as ", "as ", "logged in as ", "acting as ", "signed in as "])
        )

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

    def _phrase(self, step: dict[str, Any], withheld: list[str], terse: bool) -> str:
        tool = step["tool"]
        self.said_it, self.verb = False, ""
        sql = next(
            (v for p, v in step["args"].items() if p not in withheld and isinstance(v, str) and sql_kind(tool, p)), None
        )
        asked = say_sql(sql) if sql else None
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

    def own(self, step: dict[str, Any], p: str, parts: list[str], terse: bool, ref: str | None = None) -> bool:
        """Say the thing a slot names by its kind as the entity ``p``'s, in three in four of the requests that could:
        "show me CUS-0001's accounts", "Hugo Hughes' orders (customer CUS-0001)", "that customer's accounts"
        (``ref``: how the user points back at it), instead of "... the accounts for customer CUS-0001". True where the
        slot was said so (``p`` is then said)."""
        v = step["args"][p]
        pw = words(p)
        if (
            terse
            or self.careful
            or self.bare is None
            or self.owned
            or not p.endswith("_id")
            or isinstance(v, (list, dict, bool))
            or role(pw)[0]
            or self.taking_off
            or acts_as(step["tool"], p)
        ):
            return False
        owner = singular(pw)
        if ref is not None and not (ref.split(" ")[0] in ("that", "the", "this") and ref.endswith(" " + owner)):
            return False  # "the first customer in the results's" is no possessive
        if self.rng.random() < 0.25:
            return False
        noun = self.bare
        at = next((i for i, s in enumerate(parts) if i and s in (f"the {noun}", f"all the {noun}")), None)
        if at is None:
            return False
        head, _, rest = noun.partition(" ")
        thing = rest if rest and head == owner.split(" ")[-1] else noun  # "USR-0001's posts", not "user posts"
        if ref is not None:
            said = f"{possessive(ref)} {thing}"
        else:
            said = say_owner(str(v), owner, self.entities.get(str(v)), self.rng).format(t=thing)
        parts[at] = said
        self.owned = True
        return True

    def changed_fields(self, step: dict[str, Any], intent: Intent, withheld: list[str], terse: bool) -> str | None:
        """An update of one entity's plain fields said as what becomes of them, in about half the updates that can be
        said so: "change EVT-0004's title to "Sync" and its status to confirmed", "set that listing's reserve price to
        324" (the entity owns the fields, named once); None for any other step (ids, flags, lists, values from results
        or withheld, the user the call acts as)."""
        tool, args = step["tool"], step["args"]
        if terse or self.careful or intent.family not in ("update", "set") or withheld:
            return None
        ids = [p for p in args if p.endswith(("_id", "_ids"))]
        fields = [p for p in args if p not in ids]
        if len(ids) != 1 or not 1 <= len(fields) <= 3 or acts_as(tool, ids[0]) or role(words(ids[0]))[0]:
            return None
        for p in fields:
            v, pw = args[p], words(p)
            if p in step["sources"] or isinstance(v, (bool, list, dict)) or v in (None, "") or p in BARE_PREPOSITIONS:
                return None
            if pw.split(" ")[0] in ("add", "remove", "new") or pw.split(" ")[-1] in BARE_PREPOSITIONS or p in REF_NOUNS:
                return None
        if self.rng.random() < 0.5:
            return None
        owner_p, owner = ids[0], singular(words(ids[0]))
        first, *more = fields
        if owner_p in step["sources"]:
            ref, named = self.back_ref(step, owner_p, False)
            if named or not (ref.split(" ")[0] in ("that", "the", "this") and ref.endswith(" " + owner)):
                return None
            whose = possessive(ref) + " {t}"
        else:
            v = args[owner_p]
            # the id before the values: never "Porch Light's color to #FFA94D (DEV-0040)"
            whose = say_owner(str(v), owner, None, self.rng)
        self.verb = self.rng.choice(["change", "set", "update"])

        def said(p: str) -> str:
            v = args[p]
            return f'"{v}"' if is_text(p, v) else say_value(p, v, self.reference, self.rng, self.entities)

        head = whose.format(t=f"{words(first)} to {said(first)}")
        return f"{self.verb} " + join_prose([head, *(f"its {words(p)} to {said(p)}" for p in more)])

    def _acting(
        self, step: dict[str, Any], actor: list[str], withheld: list[str], used: set[str], terse: bool
    ) -> list[str]:
        """The phrases naming the user a call acts as ("as Priya Sato"), each actor parameter marked used."""
        args = step["args"]
        acting: list[str] = []
        for p in actor:
            used.add(p)
            if self.same_actor(args[p], terse):  # still the user it acted as before: never "as that seller again"
                continue
            if p in withheld:  # the user leaves out who to act as: "as a user", never "and on a user"
                acting.append(f"as {article(words(p))} {words(p)}")
                self.acted_as.add(str(args[p]))  # the answer to the question names them
                continue
            if p not in step["sources"] and not terse and not self.careful and self.rng.random() < 0.4:
                # "using Grace Mendes's account (user USR-0013)", "on USR-0013's behalf"
                mine = say_owner(str(args[p]), singular(words(p)), self.entities.get(str(args[p])), self.rng)
                lead, thing = self.rng.choice(ACTOR_OWNED)
                acting.append(f"{lead} {mine.format(t=thing)}")
                self.acted_as.add(str(args[p]))
                continue
            who = self.back_ref(step, p, terse)[0] if p in step["sources"] else self.entity(p, args[p], words(p), terse)
            acting.append(self._as(terse) + ("that " + words(p) if who == "it" else who))
            if str(args[p]) in who:  # named: the later requests may go on as them
                self.acted_as.add(str(args[p]))
        return acting

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


# the one-word verbs a terse user types, as to a command line ("fetch CUS-0001", "grab invoices")
COMMAND_VERBS = frozenset(
    "list show check get fetch find search view open read grab add create make set change update edit delete remove "
    "cancel close send book move".split()
)
# a read asked for by what it shows ("Can I see the balance for account ACC-0003?"), first and in a follow-up
THING_ASKS = [
    "Can I see {n}?",
    "Could I get {n}?",
    "Can I get a look at {n}?",
    "Could you bring {n} up?",
    "Could you show me {n}?",
    "Mind showing me {n}?",
    "Any chance I could see {n}?",
    "Could I take a look at {n}?",
    "What does {n} look like?",
    "I'm after {n}.",
    "Could you pull up {n} for me?",
]
THING_FOLLOWS = [
    "What about {n}?",
    "And {n}?",
    "How about {n}?",
    "Could I also see {n}?",
    "Now can I see {n}?",
    "And what about {n}?",
    "Can you show me {n} too?",
    "Pull {n} up too, please.",
    "Next, {n}, please.",
    "I'll need {n} as well.",
]


# what a read shows that is a value rather than a record or a document: asked for as "What's the balance for account
# ACC-0003?", never "What is the monthly report for March?"
VALUE_HEADS = {
    "balance",
    "status",
    "price",
    "quote",
    "total",
    "forecast",
    "weather",
    "rate",
    "hours",
    "score",
    "usage",
    "route",
    "routes",
    "distance",
    "reading",
    "readings",
    "availability",
    "rating",
    "ratings",
}
# where the head of what a read shows ends: "the transactions | for account ACC-0003"
HEAD_ENDS = PREPOSITIONS | {"with", "whose", "where", "that", "nearby", "only"}


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


MONTH_ENDS = tuple(
    " " + m for m in ("January February March April May June July August September October November December").split()
)


# a frame's words after the request ("{p} for me", "{P} too, please"): never after a value that ends it
TRAILING = re.compile(r"\{[pP]\} \w")
# words a request says once: a frame with them never goes round a request that has them ("too too")
ECHOES = re.compile(r"\b(too|as well)\b")
# verbs that say what the assistant does for the user: never in the user's own voice ("I want to show the places")
SHOWING_VERBS = {"show", "display", "list", "fetch", "give", "tell", "summarize", "describe", "read", "retrieve"}


def _asks(frames: list[str], own: list[str], body: str) -> list[str]:
    """The frames a request can take: the user's own voice only where its verb says no "me" ("show me ...") and
    is not the assistant's showing ("I want to show the saved places")."""
    drop = [ECHOES] if ECHOES.search(body) else []  # "... the attendees too": never "... too too, please"
    if re.search(r"[\d_]", _last_word(body)):  # "... my API token is sk_live_x9", never "... sk_live_x9 for me?"
        drop.append(TRAILING)
    if drop:
        frames, own = ([f for f in pool if not any(d.search(f) for d in drop)] for pool in (frames, own))
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
