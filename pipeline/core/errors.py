"""Configuration errors as people read them: one line per problem, naming where it is and what is wrong.

pydantic reports every problem of a model over several lines each (the type, the input, a URL);
YAML parse errors span several lines with a caret drawing. These turn both into short lines.
"""

from __future__ import annotations

from typing import Any

_MESSAGES = {
    "extra_forbidden": "unknown key (a typo? it is not a parameter here)",
    "missing": "required, but not given",
}


def _loc(parts: tuple[Any, ...]) -> str:
    text = ".".join(f"[{x}]" if isinstance(x, int) else str(x) for x in parts).replace(".[", "[")
    return text or "(top level)"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def validation_problems(exc: Any) -> list[str]:
    """One ``path: what is wrong (got VALUE)`` line per error of a pydantic ``ValidationError``."""
    out = []
    for err in exc.errors():
        kind = err.get("type", "")
        msg = _MESSAGES.get(kind) or str(err.get("msg", "")).removeprefix("Value error, ")
        if msg[:1].isupper() and not msg[:2].isupper():
            msg = msg[0].lower() + msg[1:]
        got = (
            ""
            if kind in _MESSAGES or isinstance(err.get("input"), (dict, list))
            else f" (got {_shown(err.get('input'))})"
        )
        out.append(f"{_loc(tuple(err.get('loc', ())))}: {msg}{got}")
    return out


def yaml_problem(exc: Any) -> str:
    """A YAML parse error in one line: ``line L, column C: problem (context)``."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if problem is None:
        return " ".join(str(exc).split())
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    context = getattr(exc, "context", None)
    return f"{where}{problem}" + (f" ({context})" if context else "")
