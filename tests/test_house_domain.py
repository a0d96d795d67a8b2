"""A server's domain lives with the server (DESIGN.md, Habits; issue 54): no module of ``pipeline/`` knows the built-in
catalogue by name. A built-in server's words are in its package's ``domain.yaml``; the pipeline reads any server's
through one model (``pipeline.core.domain``), so a new built-in server never means an edit of the language layer."""

from __future__ import annotations

import ast
import io
import re
import tokenize

from servers.registry import CATALOGUE
from tests.test_public_sdk_only import ROOT

# names of built-in servers that are also the name of a field their tools take or return (a customer's ``email``, a
# category's ``budget``): as a field name they are the data's own words, not the catalogue's
FIELD_NAMES = {"email", "budget"}
SERVERS = {e.name for e in CATALOGUE}


def server_names_in(source: str) -> list[str]:
    """Where ``source`` names a built-in server: a string that is exactly its name (a key, a lookup), an identifier,
    or a two-word name (``retail_chain``) anywhere, comments and docstrings included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and node.value in SERVERS - FIELD_NAMES:
            found.append(f"{node.lineno}: {node.value!r}")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        words = set(re.findall(r"[A-Za-z_]+", tok.string))
        if tok.type == tokenize.NAME and tok.string in SERVERS - FIELD_NAMES:
            found.append(f"{tok.start[0]}: identifier {tok.string}")
        elif tok.type in (tokenize.COMMENT, tokenize.STRING):
            found += [f"{tok.start[0]}: {w}" for w in sorted(words & SERVERS) if "_" in w]
    return found


def test_no_module_of_the_pipeline_names_a_built_in_server():
    named = {}
    for p in sorted((ROOT / "pipeline").rglob("*.py")):
        hits = server_names_in(p.read_text())
        if hits:
            named[str(p.relative_to(ROOT))] = hits
    assert not named, named


def test_the_check_sees_a_server_named_by_key_identifier_or_two_word_name():
    assert server_names_in('REASONS = {"banking": ["payday is close"]}\n') == ["1: 'banking'"]
    assert server_names_in("vehicle = 1\n") == ["1: identifier vehicle"]
    assert server_names_in("x = 1  # as retail_chain says it\n") == ["1: retail_chain"]
    assert server_names_in('FIELDS = ("email", "budget")  # a record\'s fields\n') == []


def test_the_field_names_exempted_are_fields_of_the_built_in_tools():
    from pipeline.env import Environment  # deferred: starts servers, which the scans above never need

    fields: set[str] = set()
    for name in ("crm", "budget"):
        with Environment(name) as env:
            for t in env.tools():
                fields |= set(t.input_schema.get("properties", {})) | set((t.output_schema or {}).get("properties", {}))
    assert FIELD_NAMES <= fields
