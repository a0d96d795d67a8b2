"""Words for tools: what a tool does, said the way a person says it, derived from its name and parameters.

A tool name is split into a verb and the nouns it acts on (``add_issue_to_sprint`` -> ``add`` +
``issue`` + ``to`` + ``sprint``). The verb picks a family of everyday phrasings; the nouns become
slots that the request writer fills with the entities the call names. Names that are a single
command (``ls``, ``pwd``, ``checkout``) map to an intent of their own; an unknown single word is
taken as the verb itself. Nothing here reads a tool's description, so terse or boilerplate
descriptions cannot leak into what the user says.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from typing import Any


def _inflect_engine() -> Any:
    """inflect's engine, its module imported with typeguard's ``@typechecked`` as the no-op it is under
    ``python -O``. inflect 7 puts ``@typechecked`` on 23 methods, and typeguard instruments each one by
    parsing and recompiling inflect's whole module: 4.6 s of every process that imports this one (each
    ``prove build``, ``check`` and ``train``, each Dagster run worker, each test worker), against 0.3 s
    without (``bench/startup.py``). The checks only assert that the words handed in are strings, as every
    caller here hands them; the words inflect gives back are the same (the corpus's content hash does not
    move). An inflect imported before this module is used as it is."""
    if "inflect" not in sys.modules:
        import typeguard

        checked = typeguard.typechecked
        typeguard.typechecked = _unchecked  # type: ignore[assignment]
        try:
            import inflect  # noqa: F401
        finally:
            typeguard.typechecked = checked
    return sys.modules["inflect"].engine()


def _unchecked(target: Any = None, **_options: Any) -> Any:
    """``typeguard.typechecked`` as ``python -O`` makes it: the target as it is (bare or with options)."""
    return target if target is not None else (lambda t: t)


_INFLECT = _inflect_engine()

# verb families: the first entry is the family's name; phrasings a person uses for each
READ_VERBS = {
    "list": [
        "list",
        "show me",
        "pull up",
        "give me",
        "go through",
        "run through",
        "let me see",
        "fetch",
        "bring up",
        "look over",
        "get me",
        "list out",
        "check",
        "show",
        "grab",
        "walk me through",
        "review",
        "browse",
        "scan",
        "get",
        "go over",
        "pull",
    ],
    "get": [
        "look up",
        "pull up",
        "check",
        "get me",
        "bring up",
        "fetch",
        "find me",
        "check on",
        "dig out",
        "tell me about",
        "look into",
        "take a peek at",
        "retrieve",
        "dig up",
        "show me",
        "give me",
        "review",
        "inspect",
        "get",
        "grab",
        "find",
        "pull",
    ],
    "search": [
        "look for",
        "search for",
        "find",
        "dig up",
        "hunt for",
        "track down",
        "look through",
        "find me",
        "search",
        "locate",
        "scan for",
    ],
    "view": ["view", "open", "let me see", "bring up", "display"],
    "check": ["check", "look at", "see", "check on", "examine"],
    "count": ["count"],
    "read": ["read", "open", "read me", "read out"],
    "report": ["give me a report on", "summarize", "give me a rundown of"],
}
WRITE_VERBS = {
    "create": ["create", "set up", "make", "add"],
    "add": ["add", "put", "include"],
    "update": ["update", "change", "edit", "modify", "amend", "adjust", "tweak", "revise"],
    "set": ["set", "change", "adjust"],
    "delete": ["delete", "remove", "get rid of", "throw out", "erase", "scrap"],
    "remove": ["remove", "take off", "drop"],
    "cancel": ["cancel", "call off", "back out of"],
    "close": ["close"],
    "open": ["open"],
    "send": ["send", "fire off"],
    "book": ["book", "reserve", "lock in"],
    "move": ["move"],
    "transfer": ["transfer", "move"],
    "assign": ["assign"],
    "apply": ["apply", "use"],
    "register": ["register", "set up"],
    "schedule": ["schedule", "set up"],
    "reschedule": ["reschedule", "move"],
    "log": ["log", "record"],
    "record": ["record", "log"],
    "mark": ["mark"],
    "rename": ["rename"],
    "freeze": ["freeze", "lock"],
    "unfreeze": ["unfreeze", "unlock"],
    "pay": ["pay"],
    "place": ["place", "put in"],
    "reply": ["reply to", "answer"],
    "forward": ["forward", "pass on"],
    "invite": ["invite"],
    "like": ["like"],
    "follow": ["follow"],
    "start": ["start", "kick off"],
    "stop": ["stop"],
    "convert": ["convert"],
    "link": ["link"],
    "unlink": ["unlink"],
    "tag": ["tag"],
    "return": ["return", "send back"],
    "restore": ["restore", "bring back"],
    "accept": ["accept"],
    "retract": ["retract", "withdraw"],
    "enroll": ["enroll", "sign up"],
    "reserve": ["reserve", "hold"],
    "receive": ["receive", "check in"],
    "rate": ["rate"],
    "respond": ["respond to", "answer"],
    "shift": ["shift", "put"],
    "lock": ["lock"],
    "unlock": ["unlock"],
    "drive": ["drive"],
    "control": ["control"],
    "trigger": ["trigger", "run"],
    "run": ["run"],
    "post": ["post", "publish"],
    "share": ["share"],
    "archive": ["archive", "put away"],
}
# past tense for confirmations (inflect has no verb conjugation)
PAST = {
    "set": "set",
    "send": "sent",
    "pay": "paid",
    "make": "made",
    "run": "ran",
    "log": "logged",
    "shift": "shifted",
    "stop": "stopped",
    "tag": "tagged",
    "forward": "forwarded",
    "freeze": "froze",
    "unfreeze": "unfroze",
    "rate": "rated",
    "retract": "retracted",
    "book": "booked",
    "reply": "replied",
    "respond": "responded",
    "drive": "drove",
    "withdraw": "withdrew",
    "hold": "held",
    "get": "got",
    "take": "took",
    "unlink": "unlinked",
    "link": "linked",
    "write": "wrote",
    "find": "found",
    "read": "read",
    "bring": "brought",
    "dig": "dug",
    "give": "gave",
    "show": "showed",
    "switch": "switched",
    "touch": "touched",
    "copy": "copied",
    "compare": "compared",
    "search": "searched",
    "check": "checked",
    "pull": "pulled",
    "call": "called",
    "sign": "signed",
    "kick": "kicked",
    "put": "put",
    "begin": "began",
    "lock": "locked",
    "control": "controlled",
    "transfer": "transferred",
    "cancel": "canceled",
    "label": "labeled",
    "comment": "commented",
    "submit": "submitted",
    "plan": "planned",
    "commit": "committed",
    "drop": "dropped",
    "ship": "shipped",
    "unfollow": "unfollowed",
    "unlike": "unliked",
}
# whole-name commands (Unix tools and single-word actions): (verb family, verb phrase, object)
# a name's word that is no noun, said as the thing it means (``search_nearby``: "find the places nearby", never "the
# nearby")
NOUN_ALIASES = {"nearby": "places nearby"}
COMMANDS = {
    "ls": ("list", "list what's in", "directory"),
    "pwd": ("get", "tell me", "current directory"),
    "cd": ("move", "switch into", "directory"),
    "whoami": ("get", "tell me", "user I'm logged in as"),
    "tree": ("list", "show the layout of", "directory"),
    "stat": ("get", "show me the metadata of", "file"),
    "head": ("read", "show the first lines of", "file"),
    "tail": ("read", "show the last lines of", "file"),
    "wc": ("count", "count the lines and words in", "file"),
    "diff": ("check", "compare", "files"),
    "find": ("search", "find", "files"),
    "grep": ("search", "search the text of", "files"),
    "du": ("get", "tell me how much space is used by", "directory"),
    "mkdir": ("create", "make", "directory"),
    "touch": ("create", "touch", "file"),
    "ln": ("create", "make a symlink for", "target"),
    "readlink": ("get", "tell me where the link points for", "link"),
    "mv": ("move", "move", "file"),
    "cp": ("create", "copy", "file"),
    "rm": ("delete", "delete", "file"),
    "rmdir": ("delete", "remove the empty directory", ""),
    "chmod": ("set", "change the permissions of", "file"),
    "chown": ("set", "change the owner of", "file"),
    "trash": ("delete", "move to the trash", ""),
    "restore": ("restore", "restore", "item"),
    "checkout": ("create", "check out", "cart"),
    "geocode": ("search", "find the coordinates of", "address"),
    "deposit": ("add", "deposit", ""),
    "withdraw": ("remove", "withdraw", ""),
    "transfer": ("transfer", "transfer", ""),
}
# first words of published tools' names that are things, not actions: a namespace before the verb
# (``git_create_branch``) or the thing a read shows (``directory_tree``, ``git_status``)
NOUN_HEADS = {
    "git",
    "directory",
    "dir",
    "file",
    "folder",
    "repo",
    "repository",
    "table",
    "db",
    "database",
    "graph",
    "node",
    "memory",
    "system",
    "disk",
    "process",
    "branch",
    "tree",
    "docker",
    "container",
    "kube",
    "k8s",
    "slack",
    "github",
    "gitlab",
    "fs",
}
SHOW_VERBS = {"show", "display", "describe", "fetch", "open", "view", "lookup", "find", "read", "list", "get", "search"}
# nouns of parameters that name a person: a write is done *for* one ("book the hotel for traveller TRV-0007"),
# never "on" or "with" one ("schedule the meeting on the host")
PEOPLE = {
    "user",
    "customer",
    "host",
    "contact",
    "member",
    "traveller",
    "traveler",
    "seller",
    "buyer",
    "owner",
    "reporter",
    "assignee",
    "patient",
    "employee",
    "driver",
    "follower",
    "author",
    "recipient",
    "participant",
    "attendee",
    "guest",
    "passenger",
    "agent",
    "person",
    "student",
    "teacher",
    "client",
}
# the preposition a verb with no object noun takes before the thing it acts on ("deposited 25 into account ACC-0002")
VERB_PREPOSITIONS = {
    "deposit": "into",
    "withdraw": "from",
    "refund": "to",
    "charge": "to",
    "credit": "to",
    "debit": "from",
}
# verbs whose confirmation says the amount moved ("transferred 5 from account ACC-0001 to account ACC-0002")
AMOUNT_VERBS = {*VERB_PREPOSITIONS, "transfer", "pay"}
# a setter's switch said as its own verb: set_trunk(open=true) "open the trunk", set_automation_enabled(enabled=false)
# "disable the automation", never "change the trunk and open"
SWITCH_VERBS = {"open": ("open", "close"), "enabled": ("enable", "disable"), "locked": ("lock", "unlock")}


def switch_of(intent: Intent, args: dict[str, Any], withheld: Any = ()) -> str | None:
    """The switch argument a setter's verb becomes (:data:`SWITCH_VERBS`), if it has one."""
    if intent.family != "set":
        return None
    return next((p for p in SWITCH_VERBS if isinstance(args.get(p), bool) and p not in withheld), None)


PREPOSITIONS = {"to", "from", "in", "on", "into", "for", "of", "by", "with", "at", "as", "per"}
READ_FAMILIES = set(READ_VERBS)


@dataclass(frozen=True)
class Intent:
    """What a tool does: its verb family, the verb's phrasings, and the nouns it acts on (in order,
    with the preposition that introduces each after the first)."""

    family: str
    verbs: tuple[str, ...]
    nouns: tuple[tuple[str, str], ...]  # (preposition or "", noun words)
    read: bool

    @property
    def object(self) -> str:
        return self.nouns[0][1] if self.nouns else ""

    def say(self, article: str = "") -> str:
        """The intent as an infinitive phrase: ``reply_in_thread`` -> "reply in thread", never "reply to in thread"."""
        verb = self.verbs[0]
        if self.nouns and self.nouns[0][0] and verb.split(" ")[-1] in PREPOSITIONS:
            verb = verb.rsplit(" ", 1)[0]
        return " ".join([verb, *(f"{p} {article}{n}".strip() for p, n in self.nouns)])


@functools.lru_cache(maxsize=4096)
def intent_of(name: str, read_only: bool) -> Intent:
    """The intent of a tool, from its name (and whether it is read-only, for unknown verbs)."""
    tokens = [t for t in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", name.strip()) if t]
    tokens = [t.lower() for t in tokens] or ["use"]
    if name.lower() in COMMANDS:
        fam, verb, obj = COMMANDS[name.lower()]
        return Intent(fam, (verb,), ((("", obj),) if obj else ()), read_only)
    head, rest = tokens[0], tokens[1:]
    if head in NOUN_HEADS and rest and head not in READ_VERBS and head not in WRITE_VERBS:
        noun_head = _noun_head(tokens, read_only)
        if noun_head is not None:
            return noun_head
    if head in READ_VERBS:
        fam, verbs = head, tuple(READ_VERBS[head])
    elif head in WRITE_VERBS:
        fam, verbs = head, tuple(WRITE_VERBS[head])
    elif not rest:
        fam, verbs = ("get" if read_only else "run"), (head,)
    else:  # an unknown leading word is the verb (``freeze_account``, ``geocode_address``)
        fam, verbs = ("get" if read_only else head), (head,)
    nouns: list[tuple[str, str]] = []
    prep, cur = "", []
    for t in rest:
        if t in PREPOSITIONS and cur:
            nouns.append((prep, " ".join(cur)))
            prep, cur = t, []
        elif t in PREPOSITIONS:
            prep = t
        else:
            cur.append(t)
    if cur:
        nouns.append((prep, " ".join(cur)))
    nouns = [(p, NOUN_ALIASES.get(n, n)) for p, n in nouns]
    if (
        nouns and nouns[0][0] and any(v.endswith(" " + nouns[0][0]) for v in verbs)
    ):  # respond_to_event: "respond to" + "event"
        nouns[0] = ("", nouns[0][1])
    return Intent(fam, verbs, tuple(nouns), read_only or fam in READ_FAMILIES)


def _noun_head(tokens: list[str], read_only: bool) -> Intent | None:
    """A name that opens with a thing: the verb after a namespace (``git_create_branch``: create branch; ``git_commit``:
    commit), or, for a read with no verb, the whole name as what it shows (``directory_tree``: show me the directory
    tree)."""
    rest = tokens[1:]
    joined = "_".join(rest)
    if rest[0] in SHOW_VERBS or (not read_only and (rest[0] in WRITE_VERBS or len(rest) == 1)):
        if joined in COMMANDS:  # git_checkout is a verb of its own here, not the shop's "check out the cart"
            return Intent(rest[0], (COMMANDS[joined][1],), (), read_only)
        return intent_of(joined, read_only)
    if read_only:
        return Intent("get", ("show me", "pull up", "check", "bring up"), (("", " ".join(tokens)),), True)
    return None


@functools.lru_cache(maxsize=8192)
def singular(noun: str) -> str:
    """``categories`` -> ``category``; a word that is not a plural stays as it is."""
    if not noun:
        return noun
    *head, last = noun.split(" ")
    if last.lower().endswith(("ss", "us", "is")):  # address, status, analysis: singular already
        return noun
    s = _INFLECT.singular_noun(last)
    return " ".join([*head, s if isinstance(s, str) and s else last])


@functools.lru_cache(maxsize=8192)
def plural(noun: str) -> str:
    """``category`` -> ``categories`` (the last word of a phrase); a plural stays plural."""
    if not noun:
        return noun
    *head, last = noun.split(" ")
    if not last.lower().endswith(("ss", "us", "is")) and _INFLECT.singular_noun(last):
        return noun
    return " ".join([*head, _INFLECT.plural_noun(last)])


FUNCTION_WORDS = {
    "is",
    "was",
    "has",
    "does",
    "this",
    "its",
    "yes",
    "us",
    "plus",
    "less",
    "across",
    "thus",
    "always",
    "perhaps",
    "towards",
    "as",
    "his",
    "hers",
    "ours",
    "yours",
    "whereas",
    "unless",
    "besides",
    "afterwards",
}


@functools.lru_cache(maxsize=8192)
def is_plural(word: str) -> bool:
    """Is ``word`` (one word) a plural noun, as in ``1 webhooks``? Function words ending in s are not. (Kept per
    word: inflect's ``singular_noun`` runs dozens of patterns, and the same words come back in every reply.)"""
    w = word.lower()
    return (
        len(w) > 3
        and w.endswith("s")
        and not w.endswith(("ss", "us", "is"))
        and w not in FUNCTION_WORDS
        and bool(_INFLECT.singular_noun(w))
    )


def count_noun(n: int, noun: str) -> str:
    """``1 webhook``, ``2 webhooks``, ``no webhooks``: an integer count with the noun's right number."""
    if n == 0:
        return f"no {plural(noun)}"
    return f"{n} {singular(noun) if n == 1 else plural(noun)}"


def article(phrase: str) -> str:
    """``a`` or ``an`` before ``phrase``."""
    return _INFLECT.a(phrase).split(" ", 1)[0] if phrase else "a"


def past(verb: str) -> str:
    """The past tense of a verb phrase's first word (``set up`` -> ``set up``, ``create`` -> ``created``)."""
    first, _, rest = verb.partition(" ")
    if first in PAST:
        p = PAST[first]
    elif first.endswith("e"):
        p = first + "d"
    elif re.search(r"[^aeiou]y$", first):
        p = first[:-1] + "ied"
    else:
        p = first + "ed"
    return f"{p} {rest}".strip()


def join_prose(items: list[str], conj: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conj} " + items[-1]


@functools.lru_cache(maxsize=8192)
def words(name: str) -> str:
    """A parameter or field name as words: ``from_account_id`` -> ``from account``."""
    w = re.sub(r"_ids?$", "", name)
    w = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", w).replace("_", " ").strip().lower()
    return {"pin": "PIN", "url": "URL", "sku": "SKU", "api token": "API token"}.get(w, w) or name
