"""A rejection's story as a reader sees it in the Dagster UI: the rule, where it came from, every call with its
arguments and its result or error; failing calls whole and valid, and an empty read named as such."""

from __future__ import annotations

import json
import random
import re

from pipeline.core.config import QueryConfig, SimulateConfig
from pipeline.core.records import rejection
from pipeline.core.stage_names import StageName
from pipeline.corpus.lineage import RESULT_CHARS, rejection_samples, rejection_story, story_markdown
from pipeline.synthesis.queries import TemplateBackend
from pipeline.synthesis.simulate import plan_query

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


def _result_story(result: object) -> str:
    r = _chain_rejection(
        "error_rate", [{"turn": 0, "name": "search_customers", "arguments": {}, "ok": True, "result": result}]
    )
    return story_markdown(rejection_story(r))


def test_a_long_result_shows_its_first_part_and_a_count_of_what_was_left_out():
    big = [{"customer_id": f"CUS-{i:04d}", "name": "n" * 20} for i in range(150)]
    whole = json.dumps(big, sort_keys=True)
    assert len(whole) > RESULT_CHARS >= 4000  # a few thousand characters: what a person reads
    md = _result_story(big)
    assert f"→ `{whole[:RESULT_CHARS]}… ({len(whole) - RESULT_CHARS} more characters)`" in md
    assert whole[: RESULT_CHARS + 1] not in md


def test_a_result_a_person_reads_is_shown_whole():
    mid = [{"customer_id": f"CUS-{i:04d}", "name": "n" * 20} for i in range(40)]  # ~2,000 characters
    whole = json.dumps(mid, sort_keys=True)
    assert 600 < len(whole) < RESULT_CHARS
    md = _result_story(mid)
    assert f"→ `{whole}`" in md and "more characters" not in md


class _SilentWriter(TemplateBackend):
    """A writer that answers nothing (as a teacher that times out does): the query stage rejects the request."""

    name = "silent"

    def write(self, *args, **kwargs):
        raise TimeoutError("the teacher did not answer")


def _user_values(call: dict, chain) -> dict:
    step = next(s for s in chain.steps if s.name == call["name"])
    from_steps = {p for p, a in step.args.items() if a.kind == "step"}
    return {k: v for k, v in call["arguments"].items() if k not in from_steps}


def test_a_query_stage_rejection_s_story_holds_its_request(banking_env, snapshot, chains):
    """A chain rejected by the query stage before its request is worded: the story holds that request as far as the
    stage had it (information level, persona, the values the user gives each step, what comes from earlier steps)."""
    found = None
    for i, chain in enumerate(chains):
        q, rej = plan_query(
            banking_env, snapshot, chain, _SilentWriter(QueryConfig()), SimulateConfig(), QueryConfig(),
            random.Random(f"t:{i}"), info_level="complete", persona="traveller",
        )  # fmt: skip
        if rej is not None and rej.reason == "query_backend_error":
            found = (chain, rej)
            break
    assert found, "no banking chain reached the writer"
    chain, rej = found
    story = rejection_story(rej)
    md = story_markdown(story)
    assert rej.stage == "query" and "rule `query/query_backend_error`" in md
    assert "request (complete, traveller): not written" in md, md
    asks = story["query"]["asks"]
    assert [a["name"] for a in asks] == [s.name for s in chain.steps]
    for i, (ask, call) in enumerate(zip(asks, story["calls"])):
        values = _user_values(call, chain)
        assert ask["values"] == values
        said = f"{i + 1}. `{ask['name']}` " + (f"with `{json.dumps(values, sort_keys=True)}`" if values else "with no")
        assert said in md, md


def test_a_request_the_query_stage_wrote_is_its_rejection_s_story(banking_env, snapshot, simulated):
    """A request rejected after it was written (here as the simulate stage's input): the story holds its turns."""
    chain, q, _conv = simulated[0]
    r = rejection("simulate", "server_failure", "RuntimeError: gone", "banking", {"query_id": q.query_id}, q)
    md = story_markdown(rejection_story(r))
    assert f"request ({q.info_level}, {q.persona}):" in md
    for i, turn in enumerate(q.turns):
        assert f"{i + 1}. {turn}" in md
