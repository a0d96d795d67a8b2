"""A rejection's story as a reader sees it in the Dagster UI: the rule, where it came from, every call with its
arguments and its result or error; failing calls whole and valid, and an empty read named as such."""

from __future__ import annotations

import json
import re

from pipeline.core.records import rejection
from pipeline.core.stage_names import StageName
from pipeline.corpus.lineage import RESULT_CHARS, rejection_samples, rejection_story, story_markdown

LONG_NAME = "Hugo Hughes-" + "x" * 200  # an argument longer than any cut the samples once made


def _chain_rejection(reason: str, dry_run: list[dict]) -> object:
    payload = {
        "chain_id": "ch-1",
        "snapshot_id": "snap-1",
        "graph_id": "g-1",
        "seed": 3,
        "steps": [
            {"name": "search_customers", "args": {"last_name": {"kind": "user", "value": LONG_NAME}}},
            {"name": "get_customer", "args": {"customer_id": {"kind": "step", "step": 0, "field": "customer_id"}}},
        ],
        "dry_run": dry_run,
    }
    detail = "step 1 (get_customer) needs customer_id from step 0 (search_customers), which returned none"
    return rejection(StageName.QUERY, reason, detail, "crm", {"snapshot_id": "snap-1", "chain_id": "ch-1"}, payload,
                     record_type="chain")  # fmt: skip


def test_an_empty_read_is_the_sample_s_call_and_says_it_returned_nothing_usable():
    r = _chain_rejection(
        "unresolvable_dependency",
        [{"turn": 0, "name": "search_customers", "arguments": {"last_name": LONG_NAME}, "ok": True, "result": []}],
    )
    (row,) = rejection_samples([r])
    assert row["failing_call"].startswith("search_customers(")
    assert "-> ok, but returned nothing the next step could use: []" in row["failing_call"]
    md = story_markdown(rejection_story(r))
    assert "rule `query/unresolvable_dependency`" in md and "(nothing came back)" in md
    assert "`search_customers` → `get_customer`" in md and f"prove lineage {r.rejection_id}" in md


def test_a_failing_call_is_shown_whole_with_valid_json_arguments():
    error = "customer named " + LONG_NAME + " conflicts with an existing record; " + "details " * 40
    r = _chain_rejection(
        "error_rate",
        [
            {
                "turn": 0,
                "name": "search_customers",
                "arguments": {"last_name": LONG_NAME},
                "ok": False,
                "error_code": "state_conflict",
                "error": error,
            }
        ],  # fmt: skip
    )
    (row,) = rejection_samples([r])
    args = re.match(r"search_customers\((\{.*\})\) -> state_conflict: ", row["failing_call"])
    assert args and json.loads(args.group(1)) == {"last_name": LONG_NAME}
    assert row["failing_call"].endswith(error)
    md = story_markdown(rejection_story(r))
    assert f"✗ `search_customers` `{json.dumps({'last_name': LONG_NAME})}` → `state_conflict`: {error}" in md


def test_a_long_result_is_cut_with_a_count_of_what_was_left_out():
    big = [{"customer_id": f"CUS-{i:04d}", "name": "n" * 20} for i in range(100)]
    r = _chain_rejection(
        "error_rate", [{"turn": 0, "name": "search_customers", "arguments": {}, "ok": True, "result": big}]
    )
    md = story_markdown(rejection_story(r))
    left = len(json.dumps(big, sort_keys=True)) - RESULT_CHARS
    assert f"… ({left} more characters)" in md
