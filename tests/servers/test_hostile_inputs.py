"""Hostile input: every tool of every built-in server, called with each parameter in turn set to a hostile
regular expression or glob, the longest string or the largest/smallest number its schema allows, answers in
time (a hang detector: ``HANG_S`` is generous, a healthy call takes milliseconds) with a result or a named error.

Each server runs in its own stdio process, so a call that never returns is cut off, reported, and the sweep goes
on with a fresh process. The other arguments come from the seeded world (the ids the read-only tools list), so
the hostile value reaches the tool's own code instead of stopping at "not found".
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from servers.registry import available
from tests.servers.schema_strategies import hostile_values, simplest
from tests.servers.test_conformance import NAMED_ERRORS, _harvest, _required
from tests.thirdparty.prefork import builtin_server

HANG_S = 2.0
ROOT = Path(__file__).resolve().parents[2]


def _params(name: str) -> StdioServerParameters:
    # `python -m servers NAME` through the suite's quick start (tests/thirdparty/builtin_server.py): what is tested is
    # what the tools answer, not how the process starts (test_kit starts `python -m servers`, test_conformance too)
    command, args, env = builtin_server(name)
    return StdioServerParameters(command=command, args=args, cwd=str(ROOT), env={**env, "PATH": "/usr/bin:/bin"})


def hostile_calls(tools: list[Any], hints: dict[str, list[Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) pairs: simple arguments with one parameter at a time set to a hostile value."""
    calls = []
    for t in tools:
        schema = t.input_schema or {}
        props = schema.get("properties") or {}
        base = {p: simplest(props[p], schema, p, hints) for p in _required(t)}
        for p, prop in props.items():
            for v in hostile_values(prop, schema):
                calls.append((t.name, {**base, p: v}))
    return calls


async def sweep(name: str) -> tuple[int, list[str]]:
    """Make every hostile call on server ``name``; the calls that took over ``HANG_S`` or gave no named answer."""
    problems: list[str] = []
    calls: list[tuple[str, dict[str, Any]]] | None = None
    done = 0
    while calls is None or done < len(calls):
        async with Client(_params(name), read_timeout_seconds=60) as c:
            if calls is None:
                tools = (await c.list_tools()).tools
                hints: dict[str, list[Any]] = {}
                for t in tools:
                    if t.annotations and t.annotations.read_only_hint and not _required(t):
                        r = await c.call_tool(t.name, {})
                        if not r.is_error:
                            _harvest(r.structured_content, hints)
                calls = hostile_calls(tools, hints)
            while done < len(calls):
                tool, args = calls[done]
                done += 1
                shown = {
                    k: (v[:40] + f"...({len(v)} chars)" if isinstance(v, str) and len(v) > 40 else v)
                    for k, v in args.items()
                }
                t0 = time.perf_counter()
                with anyio.move_on_after(HANG_S * 5) as scope:
                    r = await c.call_tool(tool, args)
                took = time.perf_counter() - t0
                if scope.cancelled_caught:
                    problems.append(f"{tool}({shown}): no answer within {HANG_S * 5:.0f} s (server restarted)")
                    break  # the process is stuck: start a fresh one for the rest
                if took > HANG_S:
                    problems.append(f"{tool}({shown}): took {took:.1f} s")
                text = r.content[0].text if r.content else ""
                if (
                    r.is_error
                    and not any(
                        f": {code}: " in f" {text}"
                        or text.startswith(f"{code}:")
                        or f"Error executing tool {tool}: {code}:" in text
                        for code in NAMED_ERRORS
                    )
                    and "validation error" not in text
                ):
                    problems.append(f"{tool}({shown}): unnamed error {text[:200]!r}")
    return len(calls), problems


@pytest.mark.parametrize("name", available())
def test_hostile_patterns_sizes_and_counts_are_answered_in_time(name: str) -> None:
    n, problems = anyio.run(sweep, name)
    assert n > 0
    assert not problems, f"{name}: {len(problems)} of {n} hostile calls misbehaved:\n  " + "\n  ".join(problems)
