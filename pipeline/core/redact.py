"""Sensitive values kept out of everything but the corpus: previews, metadata, logs and error texts.

A sensitive parameter is one a tool schema marks ``x-sensitive`` (PINs, passwords, tokens). The values
are the ones a probe found users to know (``Snapshot.secrets``, every sampled context) and a server's
configured ``secrets``; a :class:`Redactor` replaces each of them, as a whole token, with ``[redacted]``,
and any value under a sensitive key of a JSON object. The corpus itself keeps the values where a user
turn states them (the model has to learn to pass them on).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"
MIN_LEN = 3  # shorter values would redact ordinary numbers


class Redactor:
    def __init__(self, values: Iterable[Any] = (), keys: Iterable[str] = ()) -> None:
        vals = sorted(
            {
                str(v)
                for v in values
                if isinstance(v, (str, int)) and not isinstance(v, bool) and len(str(v)) >= MIN_LEN
            },
            key=lambda v: (-len(v), v),
        )
        self.keys = frozenset(keys)
        self.values = tuple(vals)
        alts = "|".join(re.escape(v) for v in vals)
        self._pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{alts})(?![A-Za-z0-9])") if vals else None

    @classmethod
    def for_snapshots(cls, snapshots: Iterable[Any], config_secrets: Iterable[str] = ()) -> Redactor:
        """From probes (``Snapshot``: its tools' sensitive parameters and the secrets of every context)."""
        values: list[Any] = list(config_secrets)
        keys: set[str] = set()
        for snap in snapshots:
            for tool in snap.tools:
                keys.update(tool.sensitive)
            for ctx in snap.contexts():
                for found in ctx.secrets.values():
                    values.extend(found.values())
        return cls(values, keys)

    def with_values(self, values: Iterable[Any]) -> Redactor:
        """This redactor and some more values (a call's own sensitive arguments, say)."""
        extra = [v for v in values if isinstance(v, (str, int)) and not isinstance(v, bool)]
        return Redactor([*self.values, *extra], self.keys) if extra else self

    def call_values(self, arguments: Any) -> list[Any]:
        """The values a call passes under sensitive keys."""
        return [v for k, v in arguments.items() if k in self.keys] if isinstance(arguments, dict) else []

    def __bool__(self) -> bool:
        return bool(self._pattern or self.keys)

    def text(self, s: str) -> str:
        return self._pattern.sub(REDACTED, s) if self._pattern is not None and s else s

    def obj(self, o: Any) -> Any:
        """A JSON-like value with every sensitive value (and every value under a sensitive key) redacted."""
        if isinstance(o, str):
            return self.text(o)
        if isinstance(o, dict):
            return {k: (REDACTED if k in self.keys and v is not None else self.obj(v)) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [self.obj(v) for v in o]
        if isinstance(o, int) and not isinstance(o, bool) and self._pattern is not None:
            return REDACTED if self._pattern.fullmatch(str(o)) else o
        return o


def redact_rejections(rejections: list[Any], redactor: Redactor) -> list[Any]:
    """Rejections whose ``detail`` (error texts of failing calls, say) carries no sensitive value; ids unchanged.
    The ``payload`` is the rejected record itself and keeps what its user turns state."""
    if not redactor:
        return rejections
    out = []
    for r in rejections:
        detail = redactor.text(r.detail)
        out.append(r if detail == r.detail else r.model_copy(update={"detail": detail}))
    return out
