"""How a request points at things: what the user has seen in earlier results, and how an entity or a value an
earlier step returned is said (by id, "that account", "the new account", "the first one", "the hotel in Denver").
"""

from __future__ import annotations

from typing import Any

from pipeline.language.fields import field_values
from pipeline.language.lexicon import PEOPLE, PREPOSITIONS, join_prose, plural, singular, words
from pipeline.language.phrasing import entity_name, known_by, say_entity
from pipeline.language.references import distinguishing
from pipeline.language.requests.step_parts import first_of, makes, result_values, role, step_field_strings
from pipeline.language.requests.step_words import BACK_REFS, FIRST_REFS, NEW_REFS, REF_NOUNS, SHORT_REFS, SHOWN


class Mentions:
    """The mentions of a :class:`~pipeline.language.requests.step.StepWriter`: its state (``steps``, ``shown``,
    ``named``, ``recent_refs`` ...) is set by the writer's ``__init__``; ``arg_phrase`` comes from
    :class:`~pipeline.language.requests.arguments.ArgumentPhrases`."""

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
