"""The acting user's phrases: who a call acts as ("as Priya Sato", "using Grace Mendes's account (USR-0013)"),
said once and then gone on as, and the PINs and keys the user tells once.
"""

from __future__ import annotations

from typing import Any

from pipeline.language.lexicon import article, singular, words
from pipeline.language.phrasing import say_owner
from pipeline.language.requests.step_words import ACTOR_OWNED


class ActingUser:
    """The acting-user phrases of a :class:`~pipeline.language.requests.step.StepWriter` (its ``acted_as`` and
    ``secrets_told``); ``entity`` and ``back_ref`` come from :class:`~pipeline.language.requests.mentions.Mentions`."""

    def same_actor(self, who: Any, terse: bool) -> bool:
        """Does the call act as the user an earlier step of the conversation acted as, named by their id then? A
        person says who they are once: the later requests go on as them (a terse turn still says it)."""
        return not terse and str(who) in self.acted_as

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

    def _as(self, terse: bool) -> str:
        """How the user says who the call acts as: "as", "logged in as", "acting as" ..."""
        return (
            "as " if terse else self.rng.choice(["as ", "as ", "as ", "logged in as ", "acting as ", "signed in as "])
        )

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
