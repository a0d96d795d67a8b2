"""docs/catalog.md is generated from the servers themselves; it must match what they serve now."""

from __future__ import annotations

import difflib

from servers.catalog import DEFAULT_PATH, render_catalog


def test_catalog_is_up_to_date() -> None:
    assert DEFAULT_PATH.exists(), f"{DEFAULT_PATH} is missing: run `python -m servers.catalog`"
    current = DEFAULT_PATH.read_text(encoding="utf-8")
    fresh = render_catalog()
    if current != fresh:
        diff = "".join(
            list(
                difflib.unified_diff(
                    current.splitlines(True), fresh.splitlines(True), "docs/catalog.md", "generated", n=1
                )
            )[:40]
        )
        raise AssertionError(f"docs/catalog.md is stale: regenerate it with `python -m servers.catalog`\n{diff}")


def test_catalog_shows_tools_parameters_and_sensitivity() -> None:
    text = render_catalog(["banking"])
    assert "## banking" in text and "**Tools:** 17" in text
    assert "#### `transfer`" in text
    pin_line = next(line for line in text.splitlines() if line.startswith("| `pin` |"))
    assert "**sensitive**" in pin_line and "yes" in pin_line
    assert '"checking" \\| "savings" \\| "credit"' in text  # enum values of account_type
    assert "read-only · idempotent" in text and "destructive" in text
