"""An argument said as words: an id with its preposition, a value as a filter, a flag, a quoted text, a number
with its unit ("with the temperature at 21", "only the disabled ones", "as unstarred", "whose rating is 4").
"""

from __future__ import annotations

from typing import Any

from pipeline.language.argforms import field_forms
from pipeline.language.lexicon import PEOPLE, article, plural, singular, words
from pipeline.language.phrasing import UNITS, is_text, say_value
from pipeline.language.requests.step_parts import bare_preposition, role
from pipeline.language.requests.step_words import BARE_PREPOSITIONS, NAMING, READ_STATES, UN_FLAGS


class ArgumentPhrases:
    """The argument phrases of a :class:`~pipeline.language.requests.step.StepWriter` (its ``verb`` and
    ``taking_off``); ``entity`` comes from :class:`~pipeline.language.requests.mentions.Mentions`."""

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

    def _for(self, p: str) -> str:
        """The preposition before an entity a value points back at: ``for`` or ``on``; a write is done for a person,
        never on one."""
        return "for" if words(p).split(" ")[-1] in PEOPLE else self.rng.choice(["for", "for", "on"])
