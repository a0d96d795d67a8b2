"""Queries: varied template phrasings, grounding, relative dates, and the LLM backend against a real
OpenAI-compatible HTTP server started here on 127.0.0.1."""

from __future__ import annotations

import random
import re

import pytest

from pipeline.core.config import AugmentConfig, BuildConfig, QueryConfig, SimulateConfig
from pipeline.core.records import CallResult, Snapshot, ToolSpec
from pipeline.corpus.columns import messages_of
from pipeline.corpus.lint import lint_version
from pipeline.corpus.store import read_examples
from pipeline.language.phrasing import relative_date, say_value
from pipeline.synthesis.queries import LLMBackend, TemplateBackend, grounding_errors
from pipeline.synthesis.simulate import plan_query
from tests.builds import build_run
from tests.plans import plan_step
from tests.teacher_endpoint import ScriptedTeacher

# ---------------------------------------------------------------------------------------------- templates


def _turns(tools_by_name, snapshot):
    acc = snapshot.values["account_id"][0]
    bal = {
        "tool": tools_by_name["get_balance"],
        "args": {"account_id": acc},
        "user_args": {"account_id": acc},
        "from_steps": [],
        "sources": {},
        "source_fields": {},
        "index": 0,
        "result": CallResult(ok=True, data={"account_id": acc, "balance": 10.0}),
    }
    dep = {
        "tool": tools_by_name["deposit"],
        "args": {"account_id": acc, "amount": 25.0},
        "user_args": {"amount": 25.0},
        "from_steps": ["account_id"],
        "sources": {"account_id": 0},
        "source_fields": {"account_id": "account_id"},
        "index": 1,
        "result": CallResult(ok=True, data={"transaction_id": "TXN-00099", "account_id": acc, "amount": 25.0}),
    }
    return [[bal], [dep]]


def test_template_phrasings_vary_for_the_same_request(tools_by_name, snapshot):
    backend = TemplateBackend(QueryConfig())
    turns = _turns(tools_by_name, snapshot)
    texts = [
        tuple(backend.write("banking", turns, "complete", "student", [], snapshot, random.Random(i))) for i in range(30)
    ]
    assert len({t[0] for t in texts}) >= 20
    assert len({t[1] for t in texts}) >= 20
    # composed from independent parts, not a few frames: the first three words vary as much as the rest
    assert len({" ".join(t[0].split()[:3]) for t in texts}) >= 15
    # the values requested are always there; the account the first turn singled out is referred to, not repeated
    acc = snapshot.values["account_id"][0]
    assert all(acc in t[0] and re.search(r"\b25\b", t[1]) and acc not in t[1] for t in texts)
    # nothing of the tools' descriptions, no parameter names
    for t in texts:
        assert "current balance" not in t[0].lower() and "account_id" not in " ".join(t)


def test_template_texts_vary_across_chains(simulated):
    firsts = [q.turns[0] for _, q, _ in simulated]
    assert len(set(firsts)) == len(firsts)
    openers = {" ".join(t.split()[:2]) for t in firsts}
    assert len(openers) >= 8


def test_minimal_requests_are_terse_and_complete_ones_are_not(tools_by_name, snapshot):
    backend = TemplateBackend(QueryConfig())
    turns = _turns(tools_by_name, snapshot)
    acc = snapshot.values["account_id"][0]
    for i in range(10):
        terse = backend.write("banking", turns, "minimal", "student", [], snapshot, random.Random(i))
        full = backend.write("banking", turns, "complete", "student", [], snapshot, random.Random(i))
        assert len(terse[0]) <= len(full[0]) and acc in terse[0] and re.search(r"\b25\b", terse[1])
        assert not terse[0].endswith(("!", "?")) and len(terse[0].split()) <= 4


def test_a_withheld_value_is_left_out_of_the_request(tools_by_name, snapshot):
    backend = TemplateBackend(QueryConfig())
    turns = _turns(tools_by_name, snapshot)
    acc = snapshot.values["account_id"][0]
    for i in range(10):
        text = backend.write("banking", turns, "missing", "retiree", ["account_id"], snapshot, random.Random(i))[0]
        assert acc not in text and "account" in text


def test_template_queries_are_grounded(simulated, snapshot):
    for _, q, _ in simulated:
        assert q.backend == "template"
        synth = {str(v) for args in q.step_args for v in args.values()}
        assert grounding_errors(q.turns, snapshot, extra_ok=synth) == []


def test_grounding_flags_an_id_absent_from_the_snapshot(snapshot):
    real = snapshot.values["account_id"][0]
    assert grounding_errors([f"Check the balance of {real} please"], snapshot) == []
    assert grounding_errors([f"Move money from {real} to ACC-9999"], snapshot) == ["ACC-9999"]
    assert grounding_errors(["Look up CUS-0777"], snapshot) == ["CUS-0777"]
    assert grounding_errors(["Look up CUS-0777"], snapshot, extra_ok={"CUS-0777"}) == []


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2026-03-02", "today"),
        ("2026-03-03", "tomorrow"),
        ("2026-03-05", "this Thursday"),
        ("2026-03-08", "this Sunday"),
        ("2026-03-09", "next Monday"),
        ("2026-03-15", "on Sunday the 15th"),
        ("2026-04-20", None),
        ("2026-03-01", None),
        ("not a date", None),
    ],
)
def test_relative_dates_against_a_monday_reference(value, expected):
    assert relative_date(value, "2026-03-02") == expected


def test_relative_dates_from_a_friday_say_next_for_the_coming_week():
    assert relative_date("2026-03-09", "2026-03-06") == "next Monday"
    assert relative_date("2026-03-07", "2026-03-06") == "tomorrow"


def test_dates_are_said_as_a_person_says_them_never_wrong():
    seen = set()
    for i in range(40):
        r = say_value("date", "2026-03-03", "2026-03-02", random.Random(i))
        assert r in {"tomorrow", "March 3", "3 March", "March 3rd"}
        seen.add(r)
        r = say_value("date", "2026-03-06", "2026-03-02", random.Random(i))
        assert r in {"this Friday", "March 6", "6 March", "March 6th"}
    assert "tomorrow" in seen and len(seen) >= 3
    assert say_value("amount", 25.0, "2026-03-02", random.Random(0)) == "25"
    assert say_value("labels", ["urgent", "later"], "2026-03-02", random.Random(0)) == "urgent and later"


# ---------------------------------------------------------------------------------------------- LLM backend


@pytest.fixture()
def chat_server():
    s = ScriptedTeacher()
    yield s
    s.close()


def _cfg(server, **kw) -> QueryConfig:
    return QueryConfig(
        backend="llm",
        llm_base_url=f"http://127.0.0.1:{server.port}/v1",
        llm_model="teacher-test",
        llm_timeout_s=10,
        **kw,
    )


def _plan(env, snapshot, chain, backend, cfg, seed=0):
    return plan_query(env, snapshot, chain, backend, SimulateConfig(), cfg, random.Random(seed), info_level="complete")


def _plannable_chain(banking_env, snapshot, simulated):
    """The first simulated chain whose values drawn with seed 0 (as :func:`_plan` draws them) all execute."""
    offline = TemplateBackend(QueryConfig())
    return next(c for c, _, _ in simulated if _plan(banking_env, snapshot, c, offline, QueryConfig())[0] is not None)


def test_llm_backend_returns_the_models_turns(chat_server, banking_env, snapshot, simulated, tmp_path):
    cfg = _cfg(chat_server)
    backend = LLMBackend(cfg, tmp_path)
    chain = _plannable_chain(banking_env, snapshot, simulated)
    q, rej = _plan(banking_env, snapshot, chain, backend, cfg)
    assert rej is None and q is not None
    assert q.backend == "llm" and len(q.turns) == len(q.turn_steps)
    assert all(" — " in t for t in q.turns)
    assert chat_server.requests == 1 and backend.calls == 1
    assert "Mention ONLY the values listed" in chat_server.prompts[0]


def test_llm_prompt_carries_only_the_entities_the_chain_touches(
    chat_server, banking_env, snapshot, simulated, tmp_path
):
    """The sampled context is narrowed to the chain's entities before it reaches the model."""
    cfg = _cfg(chat_server)
    chain = _plannable_chain(banking_env, snapshot, simulated)
    q, _ = _plan(banking_env, snapshot, chain, LLMBackend(cfg, tmp_path), cfg)
    prompt = chat_server.prompts[0]
    named = {str(v) for v in q.step_args[0].values()} & set(snapshot.entities)  # the first step takes only user values
    assert named, "the chain names sampled entities"
    assert all(eid in prompt for eid in named)
    untouched = [eid for eid in snapshot.entities if eid not in prompt]
    assert len(untouched) > len(snapshot.entities) / 2, "most of the sampled state stays out of the prompt"


def test_llm_answers_are_cached_by_prompt_hash(chat_server, banking_env, snapshot, simulated, tmp_path):
    cfg = _cfg(chat_server)
    chain = _plannable_chain(banking_env, snapshot, simulated)
    q1, _ = _plan(banking_env, snapshot, chain, LLMBackend(cfg, tmp_path), cfg)
    assert chat_server.requests == 1
    again = LLMBackend(cfg, tmp_path)  # a new process reading the same on-disk cache
    q2, _ = _plan(banking_env, snapshot, chain, again, cfg)
    assert chat_server.requests == 1, "an identical prompt must not reach the endpoint again"
    assert again.cache_hits == 1 and again.calls == 0
    assert q2.turns == q1.turns
    # a different prompt (another model) is a cache miss
    other = _cfg(chat_server).model_copy(update={"llm_model": "other-model"})
    LLMBackend(other, tmp_path).complete(chat_server.prompts[0])
    assert chat_server.requests == 2


def test_llm_backend_retries_after_a_server_error(chat_server, banking_env, snapshot, simulated, tmp_path):
    cfg = _cfg(chat_server)
    chat_server.fail_next = 1
    backend = LLMBackend(cfg, tmp_path)
    q, rej = _plan(banking_env, snapshot, _plannable_chain(banking_env, snapshot, simulated), backend, cfg)
    assert rej is None and q is not None
    assert chat_server.requests == 2 and backend.calls == 2


def test_llm_backend_gives_up_after_its_retries_and_the_query_is_rejected(
    chat_server, banking_env, snapshot, simulated, tmp_path
):
    cfg = _cfg(chat_server, llm_retries=2)
    chat_server.fail_next = 10
    backend = LLMBackend(cfg, tmp_path)
    with pytest.raises(RuntimeError, match="failed after 2 tries"):
        backend.complete("hello")
    assert chat_server.requests == 2
    q, rej = _plan(banking_env, snapshot, _plannable_chain(banking_env, snapshot, simulated), backend, cfg)
    assert q is None and rej.reason == "query_backend_error"
    assert not list(tmp_path.glob("*.json")), "failures are never cached"


def test_ungrounded_llm_request_is_rejected(chat_server, banking_env, snapshot, simulated, tmp_path):
    cfg = _cfg(chat_server)
    chat_server.ungrounded = True
    q, rej = _plan(
        banking_env, snapshot, _plannable_chain(banking_env, snapshot, simulated), LLMBackend(cfg, tmp_path), cfg
    )
    assert q is None
    assert rej.reason == "ungrounded_query" and rej.stage == "query" and "ACC-9999" in rej.detail
    assert rej.upstream["chain_id"] and rej.upstream["query_id"]


def test_teacher_path_builds_a_corpus_that_passes_the_linter(chat_server, tmp_path):
    """End to end over HTTP: the teacher writes every user turn and every final reply of a two-server build,
    and the corpus passes the same linter as the offline writer's."""
    cfg = BuildConfig(
        examples=40,
        servers=["banking", "crm"],
        data_dir=str(tmp_path / "data"),
        query=_cfg(chat_server),
        augment=AugmentConfig(irrelevance_rate=0.05, abstention_rate=0.05, missing_function_rate=0.05),
    )
    b = build_run(cfg)
    path = b.corpus_path
    rep = lint_version(path)
    assert rep.passed, rep.as_dict()["samples"]
    df = read_examples(path)
    tool_rows = [
        messages_of(m)
        for m, k in zip(df["messages"].to_list(), df["kind"].to_list())
        if k in ("multi_turn", "clarification")
    ]
    assert tool_rows
    users = [m["content"] for msgs in tool_rows for m in msgs if m["role"] == "user" and " — " in m["content"]]
    replies = [
        m["content"]
        for msgs in tool_rows
        for m in msgs
        if m["role"] == "assistant" and m.get("content") and m["content"].startswith("Here is what I found.")
    ]
    assert len(users) >= len(tool_rows) and len(replies) >= len(tool_rows)
    assert all(b.output("conversations", s).stats.get("reply_fallbacks") == 0 for s in cfg.servers)


def test_a_teacher_reply_stating_what_no_result_holds_falls_back_to_the_offline_reply(
    chat_server, banking_env, snapshot, simulated, tmp_path
):
    chat_server.bad_replies = True
    teacher = LLMBackend(_cfg(chat_server), tmp_path)
    draft = "There are 2 accounts: ACC-0042 and ACC-0043."
    calls = [
        {
            "action": "list accounts",
            "arguments": {},
            "result": {"accounts": [{"account_id": "ACC-0042"}, {"account_id": "ACC-0043"}]},
        }
    ]
    assert teacher.reply("banking", "Show me my accounts", calls, draft) == draft
    assert teacher.reply_fallbacks == 1
    chat_server.bad_replies = False
    assert (
        LLMBackend(_cfg(chat_server), tmp_path / "other").reply("banking", "Show me my accounts", calls, draft)
        == "Here is what I found. " + draft
    )


def test_llm_backend_needs_an_endpoint(tmp_path):
    with pytest.raises(ValueError, match="llm_base_url"):
        LLMBackend(QueryConfig(backend="llm"), tmp_path)


def test_resolution_keeps_values_whose_dry_run_stays_within_the_error_threshold(banking_env, snapshot, chains):
    """Values that make most calls fail are re-drawn before a request is written; a chain whose
    every value set fails too often is rejected at the query stage as error_rate."""
    backend = TemplateBackend(QueryConfig())
    lax_failing = strict_failing = strict_rejected = 0
    for i, chain in enumerate(chains):
        lax, _ = plan_query(
            banking_env,
            snapshot,
            chain,
            backend,
            SimulateConfig(),
            QueryConfig(),
            random.Random(f"e:{i}"),
            info_level="complete",
            max_error_rate=1.0,
        )
        lax_failing += lax is not None and not all(lax.step_ok)
        strict, rej = plan_query(
            banking_env,
            snapshot,
            chain,
            backend,
            SimulateConfig(),
            QueryConfig(),
            random.Random(f"e:{i}"),
            info_level="complete",
            max_error_rate=0.0,
        )
        if strict is not None:
            assert all(strict.step_ok), f"{chain.names}: {strict.step_ok}"
            strict_failing += not all(strict.step_ok)
        elif rej.reason == "error_rate":
            strict_rejected += 1
    assert lax_failing >= 3, "without the threshold some resolved chains keep failing calls"
    assert strict_failing == 0


def test_grounding_accepts_an_id_the_state_holds_only_as_a_field_value():
    snap = Snapshot(
        snapshot_id="s",
        server="x",
        seed=0,
        schema_hash="h",
        tools=[],
        entities={"ACC-0001": {"account_id": "ACC-0001"}},
        values={"account_id": ["ACC-0001"], "owner_id": ["CUS-0002", 7], "note": ["CUS-0003 is mentioned"]},
    )
    assert grounding_errors(["Move money from ACC-0001 for CUS-0002"], snap) == []  # an entity, and a field value
    assert grounding_errors(["Ask CUS-0003 and CUS-0007"], snap) == ["CUS-0003", "CUS-0007"]  # not whole values
    assert grounding_errors(["Ask CUS-0007"], snap, extra_ok={"CUS-0007"}) == []


@pytest.mark.parametrize(
    "param,value,said,never",
    [
        ("climate_on", True, "with climate on", "on on"),
        ("climate_on", False, "with climate off", "on off"),
        ("defrost_enabled", False, "with defrost disabled", "enabled off"),
        ("at", "2026-03-02T09:00:00", "at ", "the at at"),
        ("from", "ACC-0001", "from ACC-0001", "from from"),
        ("before", "2026-03-09", "before ", "the before"),
    ],
)
def test_a_flag_or_a_preposition_named_parameter_is_said_once(param, value, said, never):
    import random

    from pipeline.language.requests.step import StepWriter

    w = StepWriter([], {}, "2026-03-02", random.Random(0))
    for seed in range(12):
        w.rng = random.Random(seed)
        text = w.arg_phrase(param, value, read=False, terse=False)
        assert said in text and never not in text, text


def test_a_time_with_minutes_is_never_said_as_the_bare_hour():
    for i in range(60):
        said = say_value("end_time", "2026-03-14T10:30", "2026-03-02", random.Random(i))
        assert "10 am" not in said and "10am" not in said and ("10:30" in said), said
    assert {
        say_value("end_time", "2026-03-14T10:00", "2026-03-02", random.Random(i)).split(" at ")[-1] for i in range(60)
    } >= {"10 am"}


def test_a_terse_turn_never_asks_for_the_same_thing_twice_in_the_same_words(tools_by_name, snapshot):
    from pipeline.language.phrasing import stutter

    bal = _turns(tools_by_name, snapshot)[0][0]
    # two reads of the account the first turn found, in one terse turn: "Check it; check it" asked one thing twice
    again = [
        dict(
            bal,
            tool=tools_by_name["get_account"],
            index=i,
            from_steps=["account_id"],
            sources={"account_id": 0},
            source_fields={"account_id": "account_id"},
        )
        for i in (1, 2)
    ]
    backend = TemplateBackend(QueryConfig())
    for i in range(10):
        text = backend.write("banking", [[bal], again], "minimal", "student", [], snapshot, random.Random(i))[1]
        parts = [p.strip(" .").lower() for p in text.split(";")]
        assert len(parts) == 2 and parts[0] != parts[1] and stutter(text + ";") is None, text


def test_steps_on_one_entity_in_a_terse_turn_never_say_a_phrase_twice_running():
    from pipeline.language.phrasing import stutter
    from pipeline.language.requests.turn import compose_turn

    phrases = ["reconnect it", "check it", "check sensor reading for it"]  # joined by "; ": "it; check it; check"
    for i in range(20):
        text = compose_turn(phrases, random.Random(i), "student", 1, terse=True)
        assert stutter(text) is None and all(p in text.lower() for p in phrases), text


def _step(name, desc, args, entities_result=None):
    return plan_step(name, args, description=desc)


def test_a_name_that_opens_with_the_verb_is_quoted_rather_than_said_twice():
    from pipeline.language.phrasing import stutter
    from pipeline.language.requests.step import StepWriter

    step = _step(
        "add_issue_to_sprint", "Put an issue into a sprint.", {"issue_id": "API-0005", "sprint_id": "SPR-0011"}
    )
    entities = {"API-0005": {"title": "Add monitoring for the nightly ETL"}}
    texts = [
        StepWriter([step], entities, "2026-03-02", random.Random(i)).phrase(step, [], terse=False) for i in range(60)
    ]
    assert all(stutter(t) is None for t in texts), [t for t in texts if stutter(t)]
    assert any(t.startswith('add "Add monitoring for the nightly ETL" (API-0005)') for t in texts), (
        texts
    )  # worded again, the name quoted


def test_a_request_never_repeats_its_tools_description():
    from pipeline.language.phrasing import ngrams
    from pipeline.language.requests.step import StepWriter

    desc = "Remove a product from the wishlist."
    step = _step("remove_from_wishlist", desc, {"product_id": "PRD-0023"})
    texts = [
        StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, ["product_id"], terse=False)
        for i in range(30)
    ]
    assert not any(ngrams(t, 6) & ngrams(desc, 6) for t in texts), texts
    assert any("one of my products" in t for t in texts), texts


def test_an_enum_value_is_said_in_words_not_quoted_as_a_code():
    from pipeline.language.requests.step import StepWriter

    w = StepWriter([], {}, "2026-03-02", random.Random(0))
    for seed in range(30):
        w.rng = random.Random(seed)
        text = w.arg_phrase("reason", "changed_mind", read=False, terse=False)
        assert "changed mind" in text and "changed_mind" not in text and '"' not in text, text
    # free text in a reason is still quoted as the user's own words
    assert '"' in StepWriter([], {}, "2026-03-02", random.Random(1)).arg_phrase(
        "reason", "arrived too late", read=False, terse=False
    )


def test_a_word_value_is_never_said_with_at_or_of():
    from pipeline.language.requests.step import StepWriter

    w = StepWriter([], {}, "2026-03-02", random.Random(0))
    texts = set()
    for seed in range(60):
        w.rng = random.Random(seed)
        texts.add(w.arg_phrase("status", "in_progress", read=True, terse=False))
    assert not any(" at in progress" in t or "of in progress" in t for t in texts), texts
    w.rng = random.Random(0)
    numbers = {
        StepWriter([], {}, "2026-03-02", random.Random(s)).arg_phrase("temperature", 21, read=False, terse=False)
        for s in range(60)
    }
    assert "temperature at 21" in numbers, numbers  # a number keeps "at"
    assert not any("of in" in t or t.endswith(" in 21") for t in numbers), numbers


def test_a_time_after_a_preposition_comes_before_its_day_and_closes_the_request():
    from pipeline.language.requests.step import StepWriter

    step = _step("get_opening_hours", "Opening hours of a place.", {"place_id": "PLC-0023", "at": "2026-03-02T09:00"})
    step["tool"] = step["tool"].model_copy(update={"read_only": True})
    entities = {"PLC-0023": {"name": "Design Art Centre"}}
    for i in range(40):
        text = StepWriter([step], entities, "2026-03-02", random.Random(i)).phrase(step, [], terse=False)
        assert "at today" not in text and " and at " not in text, text
        assert re.search(r" at (09:00|9(:00)? ?am) (today|on (March 2(nd)?|2 March))$", text), text


def test_a_route_is_said_from_one_place_to_the_other():
    from pipeline.language.requests.step import StepWriter

    step = _step(
        "estimate_arrival",
        "Estimate the arrival time.",
        {"origin_place_id": "PLC-0023", "destination_place_id": "PLC-0019"},
    )
    step["tool"] = step["tool"].model_copy(update={"read_only": True})
    for i in range(40):
        text = StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=False)
        assert re.search(r"from (the )?(place )?PLC-0023( place)? to (the )?(place )?PLC-0019( place)?", text), text
        assert "origin" not in text and "destination" not in text and " and to " not in text, text


def test_a_route_between_two_places_from_earlier_results_names_each_role():
    from pipeline.language.requests.step import StepWriter

    found = _step(
        "get_route", "Route between two places.", {"origin_place_id": "PLC-0040", "destination_place_id": "PLC-0019"}
    )
    found["result"] = CallResult(ok=True, data={"origin_place_id": "PLC-0040", "destination_place_id": "PLC-0019"})
    step = _step(
        "compare_routes", "Compare travel modes.", {"origin_place_id": "PLC-0040", "destination_place_id": "PLC-0019"}
    )
    step.update(
        index=1,
        sources={"origin_place_id": 0, "destination_place_id": 0},
        source_fields={"origin_place_id": "origin_place_id", "destination_place_id": "destination_place_id"},
    )
    for tool in (found, step):
        tool["tool"] = tool["tool"].model_copy(update={"read_only": True})
    for i in range(40):
        text = StepWriter([found, step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=False)
        assert re.search(r"from .*origin place.* to .*destination place", text), (
            text
        )  # never "from that place to the same place"


def test_a_value_with_a_unit_in_its_name_says_the_unit_once():
    from pipeline.language.requests.step import StepWriter

    for terse in (True, False):
        for seed in range(30):
            text = StepWriter([], {}, "2026-03-02", random.Random(seed)).arg_phrase(
                "radius_km", 7.0, read=True, terse=terse
            )
            assert "7 km" in text and "km 7" not in text and text.count("km") == 1, text


def test_unfollowing_names_the_user_unfollowed_as_the_object_and_the_signed_in_user_as_who_acts():
    """unfollow_user(user_id: the signed-in user, target_user_id): the request and the reply are about the target,
    never "unfollow user USR-0028 for target user USR-0002" (the actor unfollowed) nor "I unfollowed user USR-0028"."""
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply
    from pipeline.language.requests.step import StepWriter

    props = {
        "user_id": {"type": "string", "description": "Id of the signed-in user performing the action, e.g. 'USR-0001'"},
        "target_user_id": {"type": "string", "description": "Id of the user to stop following (from list_following)"},
    }
    for name in ("unfollow_user", "follow_user"):
        tool = ToolSpec(
            name=name,
            server="social_media",
            input_schema={"type": "object", "properties": props, "required": list(props)},
        )
        step = {
            "tool": tool,
            "args": {"user_id": "USR-0028", "target_user_id": "USR-0002"},
            "sources": {},
            "source_fields": {},
            "result": CallResult(ok=True, data={}),
            "index": 0,
        }
        for i in range(12):
            text = StepWriter(
                [step], {"USR-0028": {"display_name": "Leah Silva"}}, "2026-03-02", random.Random(i)
            ).phrase(step, [], terse=i % 2 == 0)
            acting = re.search(r"\bas \S|'s? behalf|using \S+ ?\S*'s? (login|account)|signed in to ", text)
            assert text.index("USR-0002") < text.index("USR-0028") and acting and "for target user" not in text, text
            reply = confirm_reply(
                tool, step["args"], {"user_id": "USR-0028", "target_user_id": "USR-0002"}, random.Random(i)
            )
            assert "user USR-0002" in reply and "user USR-0028" not in reply, reply


def test_a_terse_route_keeps_its_direction():
    from pipeline.language.requests.step import StepWriter

    step = _step(
        "compare_routes", "Compare travel modes.", {"origin_place_id": "PLC-0133", "destination_place_id": "PLC-0082"}
    )
    for i in range(10):
        text = StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=True)
        assert "from PLC-0133 to PLC-0082" in text, text


def test_a_verb_ending_in_a_preposition_drops_it_before_a_slot_that_opens_with_one():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply
    from pipeline.language.requests.step import StepWriter

    tool = ToolSpec(name="reply_in_thread", server="x", input_schema={"type": "object", "properties": {}})
    step = {
        "tool": tool,
        "args": {"message_id": "M-00023", "text": "On it"},
        "sources": {},
        "source_fields": {},
        "result": CallResult(ok=True, data={}),
        "index": 0,
    }
    for i in range(20):
        text = StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=i % 2 == 0)
        assert "to in" not in text, text
        reply = confirm_reply(tool, step["args"], {"message_id": "M-00251"}, random.Random(i))
        assert "in the thread" in reply and "to in" not in reply, reply  # "replied to message M-00023 in the thread"


def test_a_listing_whose_records_share_a_label_names_each_by_the_id_that_tells_them_apart():
    from pipeline.language.replies import list_reply

    follows = [{"user_id": "USR-0017", "target_user_id": f"USR-00{n:02d}", "status": "active"} for n in (12, 3, 8)]
    reply = list_reply("follows", follows, None, random.Random(0))
    assert "USR-0012" in reply and "USR-0003" in reply and "USR-0017" not in reply, reply


def test_a_listing_whose_records_all_carry_their_parents_id_names_them_without_it():
    """list_positions: each position holds its portfolio's id; "LTHM and PTRA", never
    "LTHM (PF-0005) and PTRA (PF-0005)"."""
    from pipeline.language.replies import list_reply

    positions = [
        {"portfolio_id": "PF-0005", "symbol": s, "quantity": q} for s, q in (("LTHM", 20), ("PTRA", 5), ("AQUA", 7))
    ]
    for seed in range(8):
        reply = list_reply("positions", positions, 3, random.Random(seed))
        assert "PF-0005" not in reply and "LTHM, PTRA and AQUA" in reply, reply
    users = [{"user_id": f"USR-000{n}", "display_name": name} for n, name in ((1, "Omar Mendes"), (2, "Elena Silva"))]
    assert "Omar Mendes (USR-0001) and Elena Silva (USR-0002)" in list_reply(
        "users", users, 2, random.Random(0)
    )  # their own ids stay


def test_a_listing_named_by_the_id_that_tells_them_apart_counts_what_those_ids_name():
    """list_following's records are "follows"; listed by whom they follow, they are counted as users: never
    "8 follows came back"."""
    from pipeline.language.replies import list_reply

    follows = [
        {"user_id": "USR-0017", "target_user_id": f"USR-00{n:02d}", "status": "active", "since": "2026-01-0{n % 9 + 1}"}
        for n in (12, 3, 8, 21)
    ]
    for seed in range(12):
        reply = list_reply("follows", follows, 4, random.Random(seed))
        assert "follows" not in reply and "4 users" in reply and "USR-0012" in reply, reply
    alike = [
        {"user_id": "USR-0017", "target_user_id": "USR-0012", "status": "active"}
    ] * 2  # no id tells them apart: the list's own noun
    assert "2 follows" in list_reply("follows", alike, 2, random.Random(0))


def test_a_confirmation_of_a_transfer_says_from_which_account_not_for_from():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply

    tool = ToolSpec(name="transfer", server="banking", input_schema={"type": "object", "properties": {}})
    for i in range(10):
        reply = confirm_reply(
            tool, {"from_account_id": "ACC-0029", "to_account_id": "ACC-0030", "amount": 5.0}, {}, random.Random(i)
        )
        assert "from account ACC-0029" in reply and "for from" not in reply, reply


def test_a_write_is_done_for_a_person_never_on_or_with_one():
    from pipeline.language.requests.step import StepWriter

    book = _step("book_hotel", "Book a hotel room.", {"traveller_id": "TRV-0007", "room_id": "RM-0012"})
    meet = _step("schedule_meeting", "Schedule a meeting.", {"host_id": "USR-0009", "title": "Budget check-in"})
    for step, ident in ((book, "TRV-0007"), (meet, "USR-0009")):
        for i in range(20):
            text = StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=False)
            assert re.search(rf"\bfor (the )?(traveller |host )?{ident}", text), text
            assert not re.search(rf"\b(on|with) (the )?(traveller |host )?{ident}", text), text


def test_a_reply_says_the_record_that_was_asked_for_even_when_the_result_nests_it():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import step_reply

    hours = ToolSpec(
        name="get_store_hours", server="retail_chain", read_only=True, input_schema={"type": "object", "properties": {}}
    )
    week = {"friday": "09:00-18:00", "monday": "08:00-20:00", "sunday": "closed", "tuesday": "09:00-18:00"}
    data = {
        "store_id": "STR-0003",
        "name": "Madrid Northgate",
        "city": "Madrid",
        "phone": "+1-555-601-8189",
        "hours": week,
    }
    for i in range(10):
        reply = step_reply(hours, {"store_id": "STR-0003"}, CallResult(ok=True, data=data), random.Random(i))
        assert "Monday 08:00-20:00" in reply and "Sunday closed" in reply, reply
        assert reply.index("Monday") < reply.index("Tuesday") < reply.index("Friday") < reply.index("Sunday"), reply
        assert "Here is the store hours" not in reply, reply
    recur = ToolSpec(name="set_recurrence", server="calendar", input_schema={"type": "object", "properties": {}})
    event = {
        "event_id": "EVT-0001",
        "title": "Daily standup",
        "recurrence": {"frequency": "daily", "interval": 1, "count": None},
    }
    reply = step_reply(
        recur, {"event_id": "EVT-0001", "frequency": "daily"}, CallResult(ok=True, data=event), random.Random(0)
    )
    assert "frequency daily" in reply and "interval 1" in reply, reply


def test_a_tool_named_for_an_adverb_is_said_as_the_things_it_finds():
    from pipeline.language.requests.step import StepWriter

    step = _step("search_nearby", "Find places near a place.", {"place_id": "PLC-0070"})
    for i in range(10):
        text = StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=i % 2 == 0)
        assert "places nearby" in text and "the nearby" not in text, text


def test_a_value_that_opens_with_its_own_name_is_said_once():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import step_reply

    tool = ToolSpec(name="receive_transfer", server="retail_chain", input_schema={"type": "object", "properties": {}})
    data = {"transfer_id": "TRF-0011", "sku": "SKU-00027", "quantity": 1, "status": "received"}
    for i in range(10):
        reply = step_reply(tool, {"transfer_id": "TRF-0011"}, CallResult(ok=True, data=data), random.Random(i))
        assert "SKU-00027" in reply and "SKU SKU" not in reply, reply


def test_a_confirmed_deposit_says_how_much_went_into_which_account():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply

    deposit = ToolSpec(name="deposit", server="banking", input_schema={"type": "object", "properties": {}})
    withdraw = ToolSpec(name="withdraw", server="banking", input_schema={"type": "object", "properties": {}})
    for i in range(5):
        into = confirm_reply(
            deposit, {"account_id": "ACC-0034", "amount": 1250000.0}, {"transaction_id": "TXN-00041"}, random.Random(i)
        )
        assert "deposited 1250000 into account ACC-0034" in into and "for account" not in into, into
        out = confirm_reply(
            withdraw, {"account_id": "ACC-0004", "amount": 20.5}, {"transaction_id": "TXN-00042"}, random.Random(i)
        )
        assert "withdrew 20.5 from account ACC-0004" in out, out


def test_back_references_in_a_row_are_worded_differently():
    from pipeline.language.requests.step import StepWriter

    first = _step("list_accounts", "List accounts.", {})
    first["result"] = CallResult(ok=True, data={"accounts": [{"account_id": "ACC-0001"}]})
    later = _step(
        "compare_balances", "Compare two balances.", {"account_id": "ACC-0001", "other_account_id": "ACC-0001"}
    )
    later["sources"] = {"account_id": 0, "other_account_id": 0}
    later["source_fields"] = {"account_id": "account_id", "other_account_id": "account_id"}
    for i in range(30):
        w = StepWriter([first, later], {}, "2026-03-02", random.Random(i))
        text = " ".join(w.phrase(later, [], terse=False) for _ in range(2))
        assert text.count("again") <= 1, text


def test_a_value_a_later_step_shadowed_is_named_not_pointed_at():
    """After a new invoice was created, "the invoice you just found" would mean the new one: the older one is named."""
    from pipeline.language.requests.step import StepWriter

    found = _step("get_invoice", "Get an invoice.", {"invoice_id": "INV-00029"})
    found["result"] = CallResult(ok=True, data={"invoice_id": "INV-00029", "merchant_id": "MER-0006"})
    made = _step("create_invoice", "Create an invoice.", {"merchant_id": "MER-0006", "amount": 5.0})
    made["result"], made["index"] = CallResult(ok=True, data={"invoice_id": "INV-00068", "merchant_id": "MER-0006"}), 1
    again = _step("get_invoice", "Get an invoice.", {"invoice_id": "INV-00029"})
    again["sources"], again["source_fields"], again["index"] = {"invoice_id": 0}, {"invoice_id": "invoice_id"}, 2
    steps = [found, made, again]
    for i in range(20):
        text = StepWriter(steps, {}, "2026-03-02", random.Random(i)).phrase(again, [], terse=i % 2 == 0)
        assert "INV-00029" in text, text
    mer = _step("list_customers", "List customers.", {"merchant_id": "MER-0006"})
    mer["sources"], mer["source_fields"], mer["index"] = {"merchant_id": 0}, {"merchant_id": "merchant_id"}, 2
    pointed = [
        StepWriter([found, made, mer], {}, "2026-03-02", random.Random(i)).phrase(mer, [], terse=False)
        for i in range(20)
    ]
    assert any("MER-0006" not in t for t in pointed), pointed  # the same merchant both times: still pointed at


def test_a_write_whose_result_says_it_did_not_happen_is_not_confirmed_as_done():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply

    tool = ToolSpec(name="cancel_navigation", server="vehicle", input_schema={"type": "object", "properties": {}})
    for i in range(10):
        nothing = confirm_reply(
            tool,
            {"vehicle_id": "VEH-003"},
            {"cancelled": False, "place_id": None, "vehicle_id": "VEH-003"},
            random.Random(i),
        )
        assert "not cancelled" in nothing and not re.search(r"\b(Done|done|All set|OK)\b", nothing), nothing
        done = confirm_reply(
            tool, {"vehicle_id": "VEH-003"}, {"cancelled": True, "vehicle_id": "VEH-003"}, random.Random(i)
        )
        assert "I canceled the navigation" in done, done
    gone = ToolSpec(name="delete_file", server="x", input_schema={"type": "object", "properties": {}})
    assert "not deleted" in confirm_reply(gone, {"path": "/a"}, {"is_deleted": False}, random.Random(0))


def test_adding_to_a_cart_names_the_thing_added_not_its_owner():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply
    from pipeline.language.requests.step import StepWriter

    tool = ToolSpec(name="add_to_cart", server="food_delivery", input_schema={"type": "object", "properties": {}})
    step = {
        "tool": tool,
        "args": {"customer_id": "CUS-0010", "item_id": "ITM-0080", "quantity": 3},
        "sources": {},
        "source_fields": {},
        "result": CallResult(ok=True, data={}),
        "index": 0,
    }
    for i in range(20):
        text = StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=i % 2 == 0)
        assert text.index("ITM-0080") < text.index("cart") < text.index("CUS-0010"), text
        assert not re.search(r"\b(put|include)\b.* to the cart", text), text  # "put ITM-0080 in the cart"
        reply = confirm_reply(tool, step["args"], {"item_count": 3}, random.Random(i))
        assert "item ITM-0080 to the cart" in reply and "added to the cart" not in reply, reply


def test_a_missing_or_failed_reply_in_thread_is_said_without_a_doubled_preposition():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import describe
    from pipeline.language.teacher import describe_tool

    tool = ToolSpec(name="reply_in_thread", server="team_chat", input_schema={"type": "object", "properties": {}})
    assert describe_tool(tool) == "reply in thread"
    assert describe(tool) == "reply in the thread"
    cart = ToolSpec(name="add_to_cart", server="shopping", input_schema={"type": "object", "properties": {}})
    assert describe(cart) == "add to the cart"


def test_mark_says_the_state_it_sets_as_read_or_unstarred_never_marked():
    from pipeline.core.records import ToolSpec
    from pipeline.language.requests.step import StepWriter

    tool = ToolSpec(name="mark_message", server="email", input_schema={"type": "object", "properties": {}})
    step = {
        "tool": tool,
        "args": {"message_id": "MSG-0041", "is_read": True, "is_starred": False},
        "sources": {},
        "source_fields": {},
        "result": CallResult(ok=True, data={}),
        "index": 0,
    }
    for i in range(20):
        text = StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=i % 2 == 0)
        assert "marked" not in text and "as read" in text and "as unstarred" in text, text
        assert not re.search(r"MSG-0041\s*,", text), text  # "mark MSG-0041 as read", never "mark MSG-0041, as read"


def _acting(name: str, server: str, actor_doc: str, args: dict) -> dict:
    props = {p: {"type": "string"} for p in args}
    props["user_id"] = {"type": "string", "description": actor_doc}
    tool = ToolSpec(name=name, server=server, input_schema={"type": "object", "properties": props})
    return plan_step(name, args) | {"tool": tool}


def test_the_user_a_call_acts_as_is_said_as_such_not_as_what_it_acts_on():
    from pipeline.language.requests.step import StepWriter

    comment = _acting(
        "comment_on_post",
        "social_media",
        "Id of the signed-in user performing the action, e.g. 'USR-0001'",
        {"user_id": "USR-0017", "post_id": "PST-0004", "text": "Let's discuss tomorrow"},
    )
    thread = _acting(
        "get_thread", "team_chat", "Id of the member reading", {"message_id": "M-00024", "user_id": "U-0001"}
    )
    for i in range(20):
        text = StepWriter([comment], {}, "2026-03-02", random.Random(i)).phrase(comment, [], terse=i % 2 == 0)
        assert "comment on" in text and text.index("PST-0004") < text.index("USR-0017"), text
        # "comment on the post PST-0004 as the user USR-0017", "... on USR-0017's behalf", "... using USR-0017's login"
        assert re.search(r"\b(as|on|using|signed in to) [^,\"]*USR-0017", text), text
        text = StepWriter([thread], {}, "2026-03-02", random.Random(i)).phrase(thread, [], terse=i % 2 == 0)
        assert re.search(r"\b(as|on|using|signed in to) [^,\"]*U-0001", text) and " and " not in text, (
            text
        )  # never "of M-00024 and for the user U-0001"
        asked = StepWriter([thread], {}, "2026-03-02", random.Random(i)).phrase(thread, ["user_id"], terse=False)
        assert asked.endswith("as a user") and "U-0001" not in asked, (
            asked
        )  # withheld: never "of M-00024 and on a user"


def test_a_noun_of_the_tool_name_takes_the_id_its_description_names():
    from pipeline.core.records import ToolSpec
    from pipeline.language.requests.step import StepWriter

    props = {
        "event_id": {"type": "string"},
        "contact_id": {"type": "string", "description": "Contact id of the attendee to remove (from get_event)"},
    }
    tool = ToolSpec(name="remove_attendee", server="calendar", input_schema={"type": "object", "properties": props})
    step = {
        "tool": tool,
        "args": {"event_id": "EVT-0001", "contact_id": "CON-0001"},
        "sources": {},
        "source_fields": {},
        "result": CallResult(ok=True, data={}),
        "index": 0,
    }
    for i in range(20):
        text = StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=i % 2 == 0)
        # "remove CON-0001 from event EVT-0001"-like, never
        # "take off the attendee on EVT-0001 and for the contact CON-0001"
        assert text.index("CON-0001") < text.index("EVT-0001") and " and " not in text, text
        assert not re.search(r"attendee (on|for|with)\b", text), text
        assert i % 2 == 0 or re.search(r"CON-0001\)?( attendee)? from (the )?(event )?EVT-0001", text), text


def test_a_parameter_named_with_a_trailing_preposition_takes_its_value_directly():
    from pipeline.language.requests.step import StepWriter

    said = {
        StepWriter([], {}, "2026-03-02", random.Random(s)).arg_phrase("ends_on", "2026-03-09", read=False, terse=False)
        for s in range(40)
    }
    assert all(t.startswith("ends on ") and "set to" not in t and " as the " not in t for t in said), (
        said
    )  # never "ends on set to March 9th"


def test_a_confirmation_says_the_fields_the_call_set_as_the_result_reports_them():
    """ "I set the lights. It now shows headlights off", never "Result: nickname Unit 17, make Tesla" (what was
    not asked)."""
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply

    vehicle = {
        "vehicle_id": "VEH-003",
        "nickname": "Unit 17",
        "make": "Tesla",
        "model": "Model 3",
        "year": 2023,
        "climate": {"climate_on": False, "temperature_c": 21.0},
        "headlights": "off",
        "hazard_lights": True,
    }
    lights = ToolSpec(name="set_lights", server="vehicle", input_schema={"type": "object", "properties": {}})
    climate = ToolSpec(name="set_climate", server="vehicle", input_schema={"type": "object", "properties": {}})
    for i in range(10):
        said = confirm_reply(
            lights, {"vehicle_id": "VEH-003", "headlights": "off", "hazard_lights": True}, vehicle, random.Random(i)
        )
        assert "headlights off" in said and "hazard lights: yes" in said, said
        said = confirm_reply(climate, {"vehicle_id": "VEH-003", "climate_on": False}, vehicle, random.Random(i))
        assert "climate on: no" in said, said  # one record down, as the service reports it


def test_a_reply_says_each_fact_once():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply

    tool = ToolSpec(name="add_expense", server="budget", input_schema={"type": "object", "properties": {}})
    data = {
        "category_id": "CAT-0008",
        "month": "2026-03",
        "category_spent": 207.81,
        "expense": {"amount": 89.29, "expense_id": "EXP-00224", "month": "2026-03", "merchant": "City Power"},
    }
    for i in range(10):
        said = confirm_reply(
            tool, {"category_id": "CAT-0008", "amount": 89.29, "merchant": "City Power"}, data, random.Random(i)
        )
        assert said.count("month 2026-03") <= 1 and said.count("89.29") == 1, said


def test_a_context_after_the_request_is_only_ever_a_when():
    """ "... savings goal of 500 from the airport" reads as where the goal comes from: a place or a purpose leads
    the turn."""
    from pipeline.language.requests.turn import compose_turn
    from pipeline.language.requests.turn_words import CONTEXTS, WHEN_WORDS

    trailing = [c for cs in CONTEXTS.values() for c in cs if c.split(" ")[0] not in WHEN_WORDS]
    seen_lead = 0
    for persona in CONTEXTS:
        for i in range(200):
            text = compose_turn(["set the budget with the savings goal of 500"], random.Random(i), persona, 0, False)
            assert not any(f"500 {c}" in text for c in trailing), text
            assert not re.search(
                r"(OK|for now|when you can|for me)[,;]? (while|before|when|during|between|on|at) ", text
            ), text
            # never "While it's quiet, so, could you" or "..., okay, so: ..." after a leading context
            assert not re.search(r"(?<!Okay), (so|right|okay, so)[,:] ", text), text
            seen_lead += any(
                text.startswith(c[:1].upper() + c[1:] + ",")
                or f"! {c[:1].upper() + c[1:]}," in text
                or f". {c[:1].upper() + c[1:]}," in text
                for c in trailing
            )
    assert seen_lead > 0


def test_an_entity_the_user_named_to_a_write_is_never_what_you_just_found():
    from pipeline.language.requests.step import StepWriter

    wrote = _step("set_lights", "Set the lights.", {"vehicle_id": "VEH-005", "headlights": "on"})
    wrote["result"] = CallResult(ok=True, data={"vehicle_id": "VEH-005", "headlights": "on"})
    later = _step("get_vehicle_status", "Get the status.", {"vehicle_id": "VEH-005"})
    later["sources"], later["source_fields"], later["index"] = {"vehicle_id": 0}, {"vehicle_id": "vehicle_id"}, 1
    texts = [
        StepWriter([wrote, later], {}, "2026-03-02", random.Random(i)).phrase(later, [], terse=False) for i in range(40)
    ]
    assert not any("just found" in t or "you mentioned" in t for t in texts), texts
    found = _step("get_vehicle", "Get a vehicle.", {"vehicle_id": "VEH-005"})
    found["result"] = CallResult(ok=True, data={"vehicle_id": "VEH-005", "headlights": "on"})
    found["tool"] = found["tool"].model_copy(update={"read_only": True})
    texts = [
        StepWriter([found, later], {}, "2026-03-02", random.Random(i)).phrase(later, [], terse=False) for i in range(40)
    ]
    assert any("the vehicle you just found" in t for t in texts), texts  # after a read it is still said


def test_a_list_parameter_named_for_what_it_does_is_said_as_doing_it():
    """label_message(add_labels=["follow-up"]): "adding the label follow-up", never "follow-up as the add labels"."""
    from pipeline.language.requests.step import StepWriter

    step = _step(
        "label_message",
        "Label a message.",
        {"message_id": "MSG-0008", "add_labels": ["follow-up"], "remove_labels": ["a", "b"]},
    )
    for i in range(20):
        text = StepWriter([step], {}, "2026-03-02", random.Random(i)).phrase(step, [], terse=False)
        assert "adding the label follow-up" in text and "removing the labels a and b" in text, text
        assert "add labels" not in text, text


def test_a_confirmed_delete_does_not_report_its_own_flag():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply

    tool = ToolSpec(name="delete_scene", server="iot_devices", input_schema={"type": "object", "properties": {}})
    for i in range(10):
        said = confirm_reply(
            tool, {"scene_id": "SCN-0002"}, {"deleted": True, "scene_id": "SCN-0002", "name": "Away"}, random.Random(i)
        )
        assert "deleted scene SCN-0002" in said and "deleted: yes" not in said, said


def test_a_switch_is_said_as_its_verb_in_the_request_and_the_reply():
    """set_trunk(open=true): "open the trunk of my vehicle" / "I opened the trunk", never
    "change the trunk of my vehicle and open"."""
    from pipeline.language.replies import confirm_reply
    from pipeline.language.requests.step import StepWriter

    trunk = _step("set_trunk", "Open or close the trunk.", {"vehicle_id": "VEH-004", "open": True})
    auto = _step(
        "set_automation_enabled", "Turn an automation on or off.", {"automation_id": "AUT-0003", "enabled": False}
    )
    for i in range(20):
        text = StepWriter([trunk], {}, "2026-03-02", random.Random(i)).phrase(trunk, ["vehicle_id"], terse=False)
        assert text.startswith("open the trunk") and not re.search(r"\band open\b", text), text
        text = StepWriter([auto], {}, "2026-03-02", random.Random(i)).phrase(auto, [], terse=i % 2 == 0)
        assert text.startswith("disable") and "AUT-0003" in text and "enabled" not in text, text
    said = confirm_reply(trunk["tool"], trunk["args"], {"vehicle_id": "VEH-004", "trunk_open": True}, random.Random(0))
    assert "I opened the trunk" in said, said
    said = confirm_reply(auto["tool"], auto["args"], {"automation_id": "AUT-0003", "enabled": False}, random.Random(0))
    assert "I disabled automation AUT-0003" in said and "enabled: no" not in said, said


def test_a_listing_is_said_as_what_the_tool_lists_and_an_empty_side_list_is_not_the_answer():
    """list_followers returns "follows": "I found 2 followers"; stat's empty "tags" is not "No tags came back."."""
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import step_reply

    followers = ToolSpec(
        name="list_followers", server="social_media", read_only=True, input_schema={"type": "object", "properties": {}}
    )
    follows = {
        "follows": [
            {"user_id": "USR-0005", "target_user_id": "USR-0006"},
            {"user_id": "USR-0013", "target_user_id": "USR-0006"},
        ]
    }
    stat = ToolSpec(name="stat", server="filesystem", read_only=True, input_schema={"type": "object", "properties": {}})
    entry = {"path": "/home/priya", "kind": "directory", "size": 4096, "tags": [], "entries": 11}
    for i in range(10):
        said = step_reply(followers, {"user_id": "USR-0006"}, CallResult(ok=True, data=follows), random.Random(i))
        assert "2 followers" in said and "follows" not in said, said
        said = step_reply(stat, {"path": "/home/priya"}, CallResult(ok=True, data=entry), random.Random(i))
        assert "/home/priya" in said and "directory" in said and "came back" not in said, said


def test_a_value_named_as_a_verb_phrase_is_pointed_at_as_a_noun():
    """book_hotel(check_in from an earlier search): "with that check-in date again", never
    "with that check in again"."""
    from pipeline.language.requests.step import StepWriter

    search = _step("search_hotels", "Search hotels.", {"city": "Oslo", "check_in": "2026-03-20"})
    search["result"] = CallResult(ok=True, data={"check_in": "2026-03-20", "hotels": []})
    book = _step("list_rooms", "List rooms.", {"hotel_id": "HTL-0001", "check_in": "2026-03-20"})
    book["sources"], book["source_fields"], book["index"] = {"check_in": 0}, {"check_in": "check_in"}, 1
    texts = [
        StepWriter([search, book], {}, "2026-03-02", random.Random(i)).phrase(book, [], terse=False) for i in range(30)
    ]
    assert not any(re.search(r"(that|same) check in\b", t) for t in texts), texts
    assert any("check-in date" in t for t in texts), texts


def test_a_switch_named_on_is_said_switched_on_never_on_yes():
    from pipeline.language.requests.step import StepWriter

    first = _step("get_device", "Get a device.", {"device_id": "DEV-0013"})
    first["result"] = CallResult(ok=True, data={"device_id": "DEV-0013", "on": True})
    first["tool"] = first["tool"].model_copy(update={"read_only": True})
    power = _step("set_power", "Switch a device on or off.", {"device_id": "DEV-0013", "on": True})
    power["sources"], power["source_fields"], power["index"] = (
        {"device_id": 0, "on": 0},
        {"device_id": "device_id", "on": "on"},
        1,
    )
    for i in range(20):
        text = StepWriter([first, power], {}, "2026-03-02", random.Random(i)).phrase(power, [], terse=False)
        assert "on yes" not in text and "switched on" in text, text


def test_a_record_holding_another_records_code_is_named_by_its_own_id():
    from pipeline.language.replies import list_reply

    held = [{"reservation_id": f"RSV-000{n}", "sku": f"SKU-0002{n}", "quantity": 3} for n in (5, 7)]
    said = list_reply("reservations", held, None, random.Random(0))
    assert "RSV-0005" in said and "SKU-00025" not in said, said


def test_a_switch_named_as_a_state_is_said_as_that_state():
    """shift_gear(brake_pressed=true): "with the brake pressed", never "with brake pressed on"."""
    from pipeline.language.requests.step import StepWriter

    gear = _step("shift_gear", "Shift the gear.", {"vehicle_id": "VEH-002", "gear": "drive", "brake_pressed": True})
    loose = _step("shift_gear", "Shift the gear.", {"vehicle_id": "VEH-002", "gear": "drive", "brake_pressed": False})
    for i in range(10):
        # "with the brake pressed", or in a run of values that opens with "with": "with gear drive and the brake
        # pressed"
        pressed = StepWriter([gear], {}, "2026-03-02", random.Random(i)).phrase(gear, [], terse=False)
        assert "the brake pressed" in pressed and "pressed on" not in pressed, pressed
        released = StepWriter([loose], {}, "2026-03-02", random.Random(i)).phrase(loose, [], terse=False)
        assert "the brake not pressed" in released and "pressed off" not in released, released


def test_occurrences_that_share_a_name_and_an_id_are_told_apart_by_their_time():
    from pipeline.language.replies import list_reply

    events = [{"event_id": "EVT-0001", "title": "Daily standup", "start": f"2026-03-0{d}T09:30"} for d in (2, 3)]
    events.append({"event_id": "EVT-0039", "title": "Roadmap review", "start": "2026-03-03T15:15"})
    for i in range(10):
        said = list_reply("events", events, None, random.Random(i))
        standups = re.findall(r"Daily standup \(EVT-0001, ([^)]*)\)", said)
        assert len(standups) == 2 and standups[0] != standups[1], said
        assert "2" in standups[0] and "3" in standups[1], said


def test_a_reply_says_the_nested_record_asked_for_and_quotes_its_sentences():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import step_reply

    tool = ToolSpec(
        name="get_issue", server="issue_tracker", read_only=True, input_schema={"type": "object", "properties": {}}
    )
    data = {
        "issue": {
            "issue_id": "WEB-0003",
            "title": "Write runbook for the email worker",
            "labels": ["ux"],
            "status": "in_review",
            "description": "Steps to reproduce are in the first comment.",
        },
        "issue_id": "WEB-0003",
        "allowed_transitions": ["in_progress", "done"],
        "comment_count": 0,
    }
    for i in range(10):
        said = step_reply(tool, {"issue_id": "WEB-0003"}, CallResult(ok=True, data=data), random.Random(i))
        assert "status in review" in said and 'description "Steps to reproduce are in the first comment."' in said, said
        assert "comment.," not in said, said


def test_an_answer_of_the_enum_value_none_never_reads_as_a_placeholder():
    """set_recurrence(frequency="none"): "Let's go with none.", never "None, please." (the linter's placeholder
    rule)."""
    from pipeline.core.records import ToolSpec
    from pipeline.language.phrasing import PLACEHOLDER
    from pipeline.language.replies import answer_with

    tool = ToolSpec(name="set_recurrence", server="calendar", input_schema={"type": "object", "properties": {}})
    answers = [answer_with(tool, "frequency", "none", "2026-03-02", random.Random(i), {}) for i in range(40)]
    assert all("none" in a and not PLACEHOLDER.search(a) for a in answers), answers


def test_a_message_body_left_out_is_asked_for_as_what_it_says_and_answered_in_quotes():
    """reply_to_message without its body: "What should the body say?", answered 'It should say "..."' with the text
    as written (its inner line breaks kept: the call passes them), never "Which body?" / "That'd be Please return
    ...\n."."""
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import answer_with, ask_for

    tool = ToolSpec(name="reply_to_message", server="email", input_schema={"type": "object", "properties": {}})
    body = "Please return or renew your loans\nbefore the due date.\n"
    for i in range(30):
        q = ask_for(tool, "body", random.Random(i))
        a = answer_with(tool, "body", body, "2026-03-02", random.Random(i), {})
        assert "body" in q and "say" in q or "goes in" in q, q
        assert '"Please return or renew your loans\nbefore the due date."' in a and not a.endswith("\n."), a


def test_a_confirmation_never_names_the_user_the_call_acted_as_as_its_object():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply

    tool = ToolSpec(
        name="comment_on_post",
        server="social_media",
        input_schema={
            "type": "object",
            "properties": {
                "user_id": {"type": "string", "description": "Id of the signed-in user performing the action"},
                "post_id": {"type": "string"},
                "text": {"type": "string"},
            },
        },
    )
    for i in range(10):
        said = confirm_reply(
            tool,
            {"user_id": "USR-0004", "post_id": "PST-0091", "text": "On it"},
            {"comment_id": "CMT-0124", "post_id": "PST-0091", "text": "On it", "user_id": "USR-0004"},
            random.Random(i),
        )
        assert "commented on post PST-0091" in said and "commented user" not in said, said


def test_a_flag_is_said_without_its_is():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply

    tool = ToolSpec(name="mark_message", server="email", input_schema={"type": "object", "properties": {}})
    said = confirm_reply(
        tool,
        {"message_id": "MSG-0053", "is_starred": True},
        {"message_id": "MSG-0053", "is_starred": True},
        random.Random(0),
    )
    assert "starred: yes" in said and "is starred" not in said, said


def test_a_contains_filter_and_a_state_filter_are_said_as_filters():
    """ "with the merchant containing notes" ("whose merchant contains notes"), never "notes as the merchant contains";
    "only the disabled ones",
    never "and not enabled"."""
    from pipeline.language.requests.step import StepWriter

    spend = _step("list_expenses", "List expenses.", {"category_id": "CAT-0002", "merchant_contains": "notes"})
    autos = _step("list_automations", "List automations.", {"home_id": "HOME-0004", "enabled": False})
    spend["tool"] = spend["tool"].model_copy(update={"read_only": True})
    autos["tool"] = autos["tool"].model_copy(update={"read_only": True})
    for i in range(20):
        text = StepWriter([spend], {}, "2026-03-02", random.Random(i)).phrase(spend, [], terse=False)
        filters = ("with the merchant containing notes", "whose merchant contains notes")
        assert any(f in text for f in filters) and "as the merchant" not in text, text
        text = StepWriter([autos], {}, "2026-03-02", random.Random(i)).phrase(autos, [], terse=False)
        assert "only the disabled ones" in text and "not enabled" not in text, text


def test_the_dates_of_one_reply_are_worded_alike():
    from pipeline.core.records import ToolSpec
    from pipeline.language.replies import confirm_reply, step_reply

    move = ToolSpec(
        name="reschedule_meeting", server="video_meeting", input_schema={"type": "object", "properties": {}}
    )
    get = ToolSpec(
        name="get_meeting", server="video_meeting", read_only=True, input_schema={"type": "object", "properties": {}}
    )
    data = {
        "meeting_id": "MTG-0045",
        "title": "Vendor call",
        "start_time": "2026-03-04T14:00",
        "end_time": "2026-03-04T15:30",
    }
    shapes = set()
    for i in range(20):
        for said in (
            confirm_reply(
                move,
                {"meeting_id": "MTG-0045", "start_time": "2026-03-04T14:00", "end_time": "2026-03-04T15:30"},
                data,
                random.Random(i),
            ),
            step_reply(get, {"meeting_id": "MTG-0045"}, CallResult(ok=True, data=data), random.Random(i)),
        ):
            start, end = re.search(r"start time (.*?),? (?:and )?end time (.*?)(?: and |\.$)", said).groups()
            shape = re.sub(r"\d+(:\d\d)?", "N", start)  # "March 4th at 2pm" and "March 4th at 3:30pm" are one wording
            assert shape == re.sub(r"\d+(:\d\d)?", "N", end), said
            shapes.add(shape)
    assert len(shapes) > 1  # the wording still varies from reply to reply


def test_a_failed_call_is_told_as_what_the_assistant_could_not_do_for_the_user():
    """A tool whose verb is "show me" (git_diff) fails: "I couldn't show you the git diff", never "show me"."""
    from pipeline.language.replies import step_reply

    diff = ToolSpec(name="git_diff", server="git", description="", input_schema={"type": "object"}, read_only=True)
    failed = CallResult(ok=False, error="fatal: ambiguous argument 'docs'", error_code="tool_error")
    for seed in range(8):
        said = step_reply(diff, {}, failed, random.Random(seed))
        assert "show you the git diff" in said and "show me" not in said, said
