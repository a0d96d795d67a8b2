"""A rejected sensitive argument (PIN, access code, API token, passcode) is never echoed back: the error names the
parameter and the problem, not the value, on the kit's direct path and on mcp's own path, for every built-in tool
that takes one. Other validation errors keep pydantic's wording, input included."""

from __future__ import annotations

import importlib

import anyio
import pytest
from mcp import Client

from servers.kit import EnvServer
from servers.kit.redact import sensitive_parameters
from servers.registry import available, entry

SECRETS = ["98765", 98765, "Zq7#"]  # wrong length, wrong type, too short: none passes any sensitive field's schema


def _server(name: str, direct: bool) -> EnvServer:
    mod = importlib.import_module(entry(name).module)
    return EnvServer(
        name, seeder=mod.seed_world, category="test", description=name, tools=mod.TOOLS, direct_calls=direct
    )


async def _sensitive_errors(srv: EnvServer) -> list[tuple[str, str, object, str]]:
    out = []
    async with Client(srv) as c:
        for t in (await c.list_tools()).tools:
            for param in sorted(sensitive_parameters(t.input_schema)):
                for value in SECRETS:
                    r = await c.call_tool(t.name, {param: value})  # the other required arguments missing too
                    out.append((t.name, param, value, r.content[0].text if r.is_error else "<accepted>"))
    return out


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "mcp"])
def test_a_malformed_secret_is_named_but_never_echoed(direct: bool) -> None:
    seen = 0
    for name in available():
        for tool, param, value, text in anyio.run(_sensitive_errors, _server(name, direct)):
            seen += 1
            assert text.startswith(f"Error executing tool {tool}: ") and "validation error" in text, (name, tool, text)
            assert f"\n{param}\n" in text and "should" in text, (
                f"{name}.{tool}: the error does not name {param}: {text}"
            )
            assert str(value) not in text and "input_value" not in text, f"{name}.{tool}: {param} echoed: {text}"
    assert seen >= 10 * len(SECRETS)  # banking, trading, payments, iot_devices, vehicle and video_meeting take secrets


def test_a_banking_pin_of_five_digits_reads_as_a_pattern_error_without_the_pin() -> None:
    async def call() -> str:
        async with Client(_server("banking", True)) as c:
            r = await c.call_tool("withdraw", {"account_id": "ACC-0001", "amount": 5, "pin": "98765"})
            return r.content[0].text

    text = anyio.run(call)
    assert "pin\n  String should match pattern '^\\d{4}$' [type=string_pattern_mismatch]" in text
    assert "98765" not in text


def test_errors_on_other_parameters_keep_their_input() -> None:
    async def call() -> str:
        async with Client(_server("banking", True)) as c:
            r = await c.call_tool("withdraw", {"account_id": "ACC-0001", "amount": -5, "pin": "1234"})
            return r.content[0].text

    assert "input_value=-5" in anyio.run(call)  # nothing sensitive failed: pydantic's full wording
