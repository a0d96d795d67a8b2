"""A step's words: how an earlier result or a new entity is pointed back at (back, short, new and first
references), the parameters said by a preposition or a role word, the words of flags, read states and value
nouns, the tool families that make or only show something, and the terse user's one-word command verbs.
The order of every list is part of the output: a draw picks by index.
"""

from __future__ import annotations

import re

from pipeline.core.config import LintConfig
from pipeline.language.lexicon import PREPOSITIONS

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

# the one-word verbs a terse user types, as to a command line ("fetch CUS-0001", "grab invoices")
COMMAND_VERBS = frozenset(
    "list show check get fetch find search view open read grab add create make set change update edit delete remove "
    "cancel close send book move".split()
)
