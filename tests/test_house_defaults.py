"""Each configuration default is defined once (house rule; issue 39).

* The built-in worlds' reference day is written only in ``servers/clock.py`` (``REFERENCE_DAY``): every
  server's ``TODAY`` / ``NOW`` / ``DAY0``, its seeded timestamps and the dates its descriptions name derive
  from it, and ``QueryConfig.reference_date`` defaults to it. No other product file spells the day
  (``"2026-03-02"``, ``datetime(2026, 3, 2, ...)``).
* The build's knobs (``replay.max_error_rate``, ``simulate.recovery_rate``, ``query.reference_date``) get
  their defaults in ``pipeline/core/config.py`` only: a function or field elsewhere that takes one of them
  either requires it or reads the config model's default, never a literal of its own that could drift.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_public_sdk_only import ROOT

PRODUCT_DIRS = ("pipeline", "assets", "training", "servers", "bench")
CLOCK = "servers/clock.py"
CONFIG = "pipeline/core/config.py"
# the day, as text or as the arguments of a date/datetime constructor
DAY_SPELLED = re.compile(r"2026-03-02|\b(?:datetime|date)\(\s*2026\s*,\s*0?3\s*,\s*0?2\b")
# knobs whose default lives in the config model; a literal default for one elsewhere is a second definition
HOUSE_KNOBS = {"max_error_rate", "recovery_rate", "reference_date"}


def product_files() -> list[Path]:
    return sorted(p for d in PRODUCT_DIRS for p in (ROOT / d).rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def spelled_days(source: str, filename: str) -> list[str]:
    """Lines of ``source`` that spell the reference day themselves."""
    return [
        f"{filename}:{n}: {line.strip()}" for n, line in enumerate(source.splitlines(), 1) if DAY_SPELLED.search(line)
    ]


def _is_literal(node: ast.AST | None) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float, str))
        and not isinstance(node.value, bool)
    )


def literal_knob_defaults(source: str, filename: str) -> list[str]:
    """Parameters (and dataclass / model fields) named after a house knob whose default is a literal."""
    found: list[str] = []

    def flag(node: ast.AST, name: str, value: ast.AST) -> None:
        found.append(f"{filename}:{node.lineno}: {name} = {ast.unparse(value)}")

    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = a.posonlyargs + a.args
            pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults)) + list(
                zip(a.kwonlyargs, a.kw_defaults)
            )
            for arg, default in pairs:
                if arg.arg in HOUSE_KNOBS and _is_literal(default):
                    flag(default, arg.arg, default)
        elif isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and stmt.target.id in HOUSE_KNOBS
                ):
                    value = stmt.value
                    if (
                        isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Field"
                    ):  # Field(default=0.3, ...)
                        value = next(
                            (k.value for k in value.keywords if k.arg == "default"),
                            value.args[0] if value.args else None,
                        )
                    if _is_literal(value):
                        flag(stmt, stmt.target.id, value)
    return found


def test_the_reference_day_is_spelled_only_in_the_clock() -> None:
    files = product_files()
    assert any(_rel(p) == CLOCK for p in files)  # the scan sees the project
    found = [v for p in files if _rel(p) != CLOCK for v in spelled_days(p.read_text(encoding="utf-8"), _rel(p))]
    assert not found, "derive it from servers.clock.REFERENCE_DAY:\n" + "\n".join(found)


def test_house_knobs_get_literal_defaults_only_in_the_config() -> None:
    files = product_files()
    assert any(_rel(p) == CONFIG for p in files)
    found = [
        v for p in files if _rel(p) != CONFIG for v in literal_knob_defaults(p.read_text(encoding="utf-8"), _rel(p))
    ]
    assert not found, (
        "require the argument or read the config model's default (pipeline/core/config.py):\n" + "\n".join(found)
    )


def test_the_scans_catch_a_repeated_default() -> None:
    bad = (
        "from datetime import datetime\n"
        "TODAY = '2026-03-02'\n"
        "NOW = datetime(2026, 3, 2, 9, 0)\n"
        "def plan(q, max_error_rate: float = 0.30, *, recovery_rate=0.15, reference_date: str = 'x'):\n"
        "    return q\n"
        "class Stage:\n"
        "    max_error_rate: float = 0.3\n"
        "    recovery_rate: float = Field(default=0.15, ge=0)\n"
    )
    assert [v.split(": ", 1)[0] for v in spelled_days(bad, "bad.py")] == ["bad.py:2", "bad.py:3"]
    assert sorted(literal_knob_defaults(bad, "bad.py")) == [
        "bad.py:4: max_error_rate = 0.3",
        "bad.py:4: recovery_rate = 0.15",
        "bad.py:4: reference_date = 'x'",
        "bad.py:7: max_error_rate = 0.3",
        "bad.py:8: recovery_rate = 0.15",
    ]
    good = (
        "from servers.clock import REFERENCE_DAY\n"
        "NOW = f'{REFERENCE_DAY}T09:00:00'\n"
        "def plan(q, max_error_rate: float = ReplayConfig.model_fields['max_error_rate'].default, "
        "*, recovery_rate: float):\n"
        "    return q(max_error_rate=0.30)  # a caller's own argument is not a default\n"
    )
    assert spelled_days(good, "good.py") == [] and literal_knob_defaults(good, "good.py") == []


def test_the_worlds_and_the_config_share_one_reference_day() -> None:
    from pipeline.core.config import QueryConfig
    from servers import clock
    from servers.banking import world as banking_world
    from servers.email import world as email_world
    from servers.maps import build as build_maps
    from servers.video_meeting import world as meeting_world

    assert QueryConfig().reference_date == clock.REFERENCE_DAY
    assert banking_world.DAY0 == clock.REFERENCE_DAY and email_world.NOW.date().isoformat() == clock.REFERENCE_DAY
    assert meeting_world.NOW.startswith(clock.REFERENCE_DAY)
    assert f"Now is {clock.REFERENCE_DAY}T09:00 (Monday)." in build_maps().description
