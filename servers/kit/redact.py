"""Validation errors that never echo a sensitive argument (a PIN, a password, a token) back to the caller.

pydantic words a rejected argument as ``pin\\n  String should match pattern ... [type=..., input_value='98765',
input_type=str]``, and mcp returns that text as the tool result, on its own path and (through it) on the kit's
direct path. For a tool with parameters marked sensitive (``x-sensitive`` in the schema, see
:func:`servers.kit.sensitive`), the kit swaps the tool's argument model for a subclass that re-raises such an
error with every input hidden whenever a sensitive parameter is among the failures: the message still names
each parameter and what is wrong with it, never the value. Other tools and other failures read as before.
"""

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from servers.kit.keys import SENSITIVE_KEY


def sensitive_parameters(input_schema: dict[str, Any]) -> set[str]:
    """Top-level parameters marked ``x-sensitive`` (directly, or on a branch of ``X | None``)."""
    out = set()
    for name, prop in (input_schema.get("properties") or {}).items():
        branches = [prop, *(prop.get("anyOf") or []), *(prop.get("oneOf") or [])]
        if any(isinstance(b, dict) and b.get(SENSITIVE_KEY) for b in branches):
            out.add(name)
    return out


def redacted(exc: ValidationError, sensitive: Iterable[str]) -> ValidationError:
    """``exc`` itself when no sensitive parameter failed; else the same errors with every input hidden."""
    secret = set(sensitive)
    errors = exc.errors(include_url=False)
    if not any(e["loc"] and e["loc"][0] in secret for e in errors):
        return exc
    try:
        lines = [
            {"type": e["type"], "loc": e["loc"], "input": None, **({"ctx": e["ctx"]} if "ctx" in e else {})}
            for e in errors
        ]
        return ValidationError.from_exception_data(exc.title, lines, hide_input=True)  # type: ignore[arg-type]
    except Exception:  # an error type pydantic cannot rebuild from its parts: keep its wording as a custom error
        lines = [
            {
                "type": PydanticCustomError(e["type"], e["msg"].replace("{", "{{").replace("}", "}}")),
                "loc": e["loc"],
                "input": None,
            }
            for e in errors
        ]
        return ValidationError.from_exception_data(exc.title, lines, hide_input=True)  # type: ignore[arg-type]


def redacting_model(model: type[BaseModel], sensitive: set[str]) -> type[BaseModel]:
    """A subclass of argument model ``model`` (same name, fields and schema) whose validation errors go through
    :func:`redacted`."""

    def model_validate(cls: type[BaseModel], obj: Any, *args: Any, **kwargs: Any) -> BaseModel:
        try:
            return super(sub, cls).model_validate(obj, *args, **kwargs)
        except ValidationError as exc:
            raise redacted(exc, sensitive) from None

    sub = type(
        model.__name__,
        (model,),
        {"__module__": model.__module__, "__doc__": model.__doc__, "model_validate": classmethod(model_validate)},
    )
    return sub
