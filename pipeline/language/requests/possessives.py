"""A thing said as an entity's: "show me CUS-0001's accounts", "that customer's accounts", and an update said
as what becomes of the entity's fields ("change EVT-0004's title to "Sync" and its status to confirmed").
"""

from __future__ import annotations

from typing import Any

from pipeline.language.lexicon import Intent, join_prose, singular, words
from pipeline.language.phrasing import is_text, possessive, say_owner, say_value
from pipeline.language.requests.step_parts import acts_as, role
from pipeline.language.requests.step_words import BARE_PREPOSITIONS, REF_NOUNS


class Possessives:
    """The possessive wordings of a :class:`~pipeline.language.requests.step.StepWriter` (its ``bare`` and
    ``owned`` slot); ``back_ref`` comes from :class:`~pipeline.language.requests.mentions.Mentions`."""

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
