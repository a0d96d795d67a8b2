"""A service's domain texts: why its users ask, and the other ways they say its nouns.

A built-in server ships them beside its tools (``servers/<name>/domain.yaml``, read by the server kit); a servers
file may give any server the same texts in a ``domain:`` section (docs/thirdparty.md). The request writer reads
them through this model only and never names a server; a server without them gets the general pool
(:mod:`pipeline.language.situations`).

```yaml
domain:
  reasons:                  # clauses that fit after "since" and stand as a sentence, naming no value
    reads: [the weekend rush is coming, a customer asked about a delivery]   # turns that only look
    writes: [the stockroom flooded overnight, a shipment went to the wrong branch]   # turns that change something
  nouns:                    # the service's noun (singular, plural) and the other ways its users say it
    - noun: [store, stores]
      said: [[shop, shops], [branch, branches]]
```
"""

from __future__ import annotations

import re

from pydantic import BaseModel, field_validator

WORD = re.compile(r"^[a-z][a-z' -]*[a-z]$")


def _reason(text: str) -> str:
    said = text.strip()
    if not said:
        raise ValueError("a reason is empty")
    if said[-1] in ".?!;,:":
        raise ValueError(f"{text!r} ends with {said[-1]!r}: a reason is a clause the request writer ends itself")
    if re.search(r"\d", said):
        raise ValueError(f"{text!r} holds a number: a reason names no value (no id, amount or date)")
    return said


def _word(text: str) -> str:
    if not WORD.match(text):
        raise ValueError(f"{text!r} is not a lower-case word or phrase (letters, spaces, hyphens, apostrophes)")
    return text


class Reasons(BaseModel):
    """Why a user asks: ``reads`` for a turn that only looks, ``writes`` for one that changes something (a read never
    promises "I need to pay this today"). An empty list leaves that kind of turn to the general pool."""

    model_config = {"extra": "forbid"}

    reads: list[str] = []
    writes: list[str] = []

    @field_validator("reads", "writes")
    @classmethod
    def _clauses(cls, texts: list[str]) -> list[str]:
        return [_reason(t) for t in texts]


class NounWays(BaseModel):
    """A noun of the service's tools and results (singular, plural) and the ways its users say it instead."""

    model_config = {"extra": "forbid"}

    noun: list[str]  # [singular, plural]
    said: list[list[str]]  # [[singular, plural], ...]

    @field_validator("noun")
    @classmethod
    def _pair(cls, words: list[str]) -> list[str]:
        if len(words) != 2:
            raise ValueError(f"{words!r}: a noun is given as [singular, plural]")
        return [_word(w) for w in words]

    @field_validator("said")
    @classmethod
    def _pairs(cls, ways: list[list[str]]) -> list[list[str]]:
        if not ways:
            raise ValueError("say at least one other way ([singular, plural]) to say the noun")
        return [cls._pair(w) for w in ways]


class Domain(BaseModel):
    model_config = {"extra": "forbid"}

    reasons: Reasons = Reasons()
    nouns: list[NounWays] = []
