"""A service's own words: a servers file's ``domain:`` section gives a third-party server its reasons and nouns, the
same way a built-in server's ``domain.yaml`` gives it its own; a bad section is refused with the entry and the field
named; without one the general pool serves."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from pipeline.core.config import ProbeConfig, QueryConfig
from pipeline.core.records import Snapshot
from pipeline.core.servers_file import ConfigFileError, load_servers_file
from pipeline.discovery.probe import probe
from pipeline.env import Environment
from pipeline.env.environment import builtin_domain
from pipeline.language.situations import GENERAL, situation
from pipeline.synthesis.queries import TemplateBackend
from tests.plans import plan_step

NOTES = Path(__file__).resolve().parent.parent / "thirdparty" / "notes_server.py"
READS = ["my book club meets tonight", "the shopping list went missing from my head"]
WRITES = ["my desk is buried in sticky notes", "the move left my notebooks in a mess"]
SERVERS = f"""
servers:
  - name: notes
    kind: stdio
    command: {sys.executable}
    args: [{NOTES}]
    domain:
      reasons:
        reads: {READS}
        writes: {WRITES}
      nouns:
        - noun: [note, notes]
          said: [[memo, memos]]
"""


def _requests(cfg) -> tuple[Snapshot, list[str]]:
    """The server probed live, then first requests the offline writer composes on that snapshot: reads of a note and
    a note made (the request writer's input as a chain gives it)."""
    with Environment(cfg) as env, env.session(0) as s:
        snap = probe(s, env.tools(), ProbeConfig())
    read = plan_step("get_note", {"note_id": "n1"}, read_only=True)
    write = plan_step("create_note", {"title": "Plan", "body": "ship the notes", "folder": "work"})
    backend = TemplateBackend(QueryConfig())
    return snap, [
        backend.write(cfg.name, [[step]], "full", "retiree", [], snap, random.Random(i))[0]
        for step in (read, write)
        for i in range(40)
    ]


def test_a_servers_file_domain_gives_a_third_party_server_its_own_reasons_and_nouns(tmp_path):
    f = tmp_path / "servers.yaml"
    f.write_text(SERVERS)
    [cfg] = load_servers_file(f)
    snap, texts = _requests(cfg)
    assert snap.domain == cfg.domain and snap.domain.reasons.reads == READS
    low = [t.lower() for t in texts]
    reads, writes = low[:40], low[40:]
    # most first turns give a reason, in the server's words, true to what the turn does
    assert sum(any(r in t for r in READS) for t in reads) >= 15 and not any(r in t for r in WRITES for t in reads)
    assert sum(any(r in t for r in WRITES) for t in writes) >= 15 and not any(r in t for r in READS for t in writes)
    general = [r.lower() for r in GENERAL[0] + GENERAL[1]]
    assert not [t for t in low if any(r in t for r in general)], texts
    assert any("memo" in t for t in low) and any(" note" in t for t in low), texts  # its noun, said as its users do


def test_without_a_domain_a_third_party_server_has_none_and_the_general_pool_serves(tmp_path):
    f = tmp_path / "servers.yaml"
    f.write_text(SERVERS.split("    domain:")[0])
    [cfg] = load_servers_file(f)
    with Environment(cfg) as env, env.session(0) as s:
        assert env.domain is None and probe(s, env.tools(), ProbeConfig()).domain is None
    assert {situation(None, w, random.Random(i)) for w in (False, True) for i in range(40)} <= set(sum(GENERAL, []))


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        ("reasons: {reads: [my card expires in 2027]}", "holds a number"),
        ("reasons: {reads: [payday is close.]}", "ends with '.'"),
        ("nouns: [{noun: [note], said: [[memo, memos]]}]", "[singular, plural]"),
        ("nouns: [{noun: [note, notes], said: []}]", "say at least one other way"),
        ("reason: {reads: [payday is close]}", "reason"),
    ],
)
def test_a_bad_domain_section_is_refused_naming_the_server_and_the_field(tmp_path, section, problem):
    f = tmp_path / "servers.yaml"
    f.write_text(SERVERS.split("    domain:")[0] + f"    domain: {{{section}}}\n")
    with pytest.raises(ConfigFileError) as e:
        load_servers_file(f)
    assert "domain" in str(e.value) and problem in str(e.value) and "servers[0]" in str(e.value), str(e.value)


def test_a_built_in_server_has_its_own_domain_and_a_servers_file_section_replaces_it(tmp_path):
    with Environment("retail_chain") as env:
        assert env.domain == builtin_domain("retail_chain")
        assert [n.noun for n in env.domain.nouns] == [["store", "stores"], ["transfer", "transfers"]]
    f = tmp_path / "servers.yaml"
    f.write_text("servers:\n  - name: retail_chain\n    domain: {reasons: {reads: [the weekend rush is coming]}}\n")
    [cfg] = load_servers_file(f)
    with Environment(cfg) as env:
        assert env.domain.reasons.reads == ["the weekend rush is coming"] and env.domain.nouns == []
