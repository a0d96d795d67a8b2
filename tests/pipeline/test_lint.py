"""The corpus linter: each rule fires on the defect it names and stays quiet on a clean example."""

from __future__ import annotations

import json

from assets.cli import main
from pipeline.core.config import BuildConfig, ChainConfig, LintConfig
from pipeline.core.records import Conversation, RefCall, ToolSpec, TraceCall
from pipeline.corpus.lint import lint_frame
from pipeline.corpus.store import read_examples, write_corpus

LIST = ToolSpec(
    name="list_accounts",
    server="bank",
    read_only=True,
    description="List open accounts, filtered by customer, type or minimum balance.",
    input_schema={"type": "object", "properties": {"customer_id": {"type": "string"}}},
)
CLOSE = ToolSpec(
    name="close_account",
    server="bank",
    description="Close an account. Its balance must be exactly 0 first.",
    input_schema={
        "type": "object",
        "properties": {"account_id": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["account_id", "reason"],
    },
)
READ_ONLY = {"list_accounts": True, "close_account": False}
LISTED = {"accounts": [{"account_id": "ACC-0001"}, {"account_id": "ACC-0002"}]}


def _conv(
    cid: str,
    user: list[str],
    calls: list[tuple[ToolSpec, dict, object]],
    replies: list[str],
    kind: str = "multi_turn",
    between: list[dict] | None = None,
) -> Conversation:
    msgs: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": user[0]}, *(between or [])]
    ref = []
    for i, (tool, args, result) in enumerate(calls):
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{i}", "type": "function", "function": {"name": tool.name, "arguments": json.dumps(args)}}
                ],
            }
        )
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps(result)})
        ref.append(RefCall(name=tool.name, arguments=args))
        if i + 1 < len(user):
            msgs.append({"role": "assistant", "content": replies[i]})
            msgs.append({"role": "user", "content": user[i + 1]})
    msgs.append({"role": "assistant", "content": replies[-1]})
    return Conversation(
        conversation_id=cid,
        kind=kind,
        server="bank",
        servers=["bank"],
        seed=0,
        snapshot_id="s",
        messages=msgs,
        tools=[LIST, CLOSE],
        reference=[ref],
        info_level="missing" if kind == "clarification" else "complete",
    )


def _lint(convs, tmp_path, lint: LintConfig | None = None):
    cfg = BuildConfig(
        examples=len(convs),
        servers=["bank"],
        data_dir=str(tmp_path),
        lint=lint or LintConfig(min_distinct_frames=0, min_unique_openings=0),
    )
    path = write_corpus(cfg, convs, [])
    from pipeline.corpus.lint import lint_version

    return lint_version(path), path


def test_a_clean_conversation_has_no_defect(tmp_path):
    c = _conv(
        "c1",
        ["Could you show me the accounts of Hugo (CUS-0001)?", "Close ACC-0002 for me, the reason is a move abroad."],
        [
            (LIST, {"customer_id": "CUS-0001"}, LISTED),
            (CLOSE, {"account_id": "ACC-0002", "reason": "move abroad"}, {"ok": 1}),
        ],
        ["I found 2 accounts: ACC-0001 and ACC-0002.", "Done: I closed account ACC-0002."],
    )
    rep, _ = _lint([c], tmp_path)
    assert rep.passed, rep.as_dict()


def test_user_turns_with_description_text_json_or_parameter_names_are_flagged(tmp_path):
    bad = [
        _conv(
            "c1",
            ["Please list open accounts, filtered by customer, type or minimum balance."],
            [(LIST, {}, LISTED)],
            ["I found 2 accounts."],
        ),
        _conv(
            "c2",
            ['List accounts with {"customer_id": "CUS-0001"}'],
            [(LIST, {"customer_id": "CUS-0001"}, LISTED)],
            ["I found 2 accounts."],
        ),
        _conv(
            "c3",
            ["List accounts for customer_id CUS-0001"],
            [(LIST, {"customer_id": "CUS-0001"}, LISTED)],
            ["I found 2 accounts."],
        ),
    ]
    rep, _ = _lint(bad, tmp_path)
    assert rep.counts["description_paste"] == 1 and rep.counts["raw_json"] == 1 and rep.counts["parameter_name"] == 2


def test_replies_with_placeholders_repeats_or_wrong_counts_are_flagged(tmp_path):
    ask = ["Show me my accounts, please."]
    bad = [
        _conv("c1", ask, [(LIST, {}, LISTED)], ["I found 2 options: None, None and 1 more."]),
        _conv("c2", ask, [(LIST, {}, LISTED)], ["I found 2 accounts here. I found 2 accounts here."]),
        _conv("c3", ask, [(LIST, {}, LISTED)], ["I found 68.02 items: ACC-0001."]),
        _conv("c4", ask, [(LIST, {}, LISTED)], ["I found 1 webhooks."]),
    ]
    rep, _ = _lint(bad, tmp_path)
    assert rep.counts["placeholder"] == 1 and rep.counts["repeated_sentence"] == 1
    assert rep.counts["non_integer_count"] == 1 and rep.counts["plural_mismatch"] == 1
    assert any(s.startswith("c") or s.startswith("ex-") for s in rep.samples["placeholder"])


def test_a_reply_quoting_a_text_result_word_for_word_holds_no_placeholder(tmp_path):
    """git's own '(use "git add <file>..." ...)' and a diff's '/dev/null' quoted back are the server's text; a
    '<name>' no result holds is a template's hole."""
    status = 'On branch docs\n  (use "git add <file>..." to update)\n--- /dev/null\n+++ b/CHANGELOG.md'
    ask = ["What is the state of my working tree?"]
    quoting = _conv("c1", ask, [(LIST, {}, status)], [f"Here's what came back: {status}"])
    hole = _conv("c2", ask, [(LIST, {}, status)], ["Here's what came back for <name>."])
    rep, _ = _lint([quoting, hole], tmp_path)
    assert rep.counts["placeholder"] == 1 and "<name>" in rep.samples["placeholder"][0], rep.as_dict()


def test_a_reply_quoting_a_failed_calls_error_holds_no_placeholder(tmp_path):
    """A failed call's result is JSON ({"error": ..., "message": ...}); git's '[<revision>...]' in its message,
    quoted back, is the server's text. JSON syntax itself ('{}') excuses nothing."""
    err = {
        "error": "tool_error",
        "message": "fatal: ambiguous argument 'docs'\n'git <command> [<revision>...] -- [<file>...]'",
    }
    ask = ["Show me the diff against docs."]
    quoting = _conv("c1", ask, [(LIST, {}, err)], ["I couldn't show you the diff: " + err["message"] + "."])
    hole = _conv("c2", ask, [(LIST, {}, {})], ["Here's what came back: {}."])
    rep, _ = _lint([quoting, hole], tmp_path)
    assert rep.counts["placeholder"] == 1 and rep.samples["placeholder"][0].endswith("{}."), rep.as_dict()


def test_a_count_quoted_from_a_tool_result_is_the_tools_grammar_not_a_plural_mismatch(tmp_path):
    listing = {"content": "[DIR] orion\n\nTotal: 0 files, 1 directories"}
    ask = ["What is in the projects folder?"]
    quoting = _conv("c1", ask, [(LIST, {}, listing)], ["Here's what came back: " + listing["content"]])
    own = _conv("c2", ask, [(LIST, {}, listing)], ["I found 1 folders in it."])
    rep, _ = _lint([quoting, own], tmp_path)
    assert rep.counts["plural_mismatch"] == 1 and "I found 1 folders" in rep.samples["plural_mismatch"][0]


def test_a_write_on_an_entity_nobody_named_or_singled_out_is_flagged(tmp_path):
    unnamed = _conv(
        "c1",
        ["List my accounts, then close one, the reason is a move."],
        [(LIST, {}, LISTED), (CLOSE, {"account_id": "ACC-0002", "reason": "move"}, {"ok": 1})],
        ["Done."],
    )
    single = _conv(
        "c2",
        ["List my accounts for CUS-0001, then close it, the reason is a move."],
        [
            (LIST, {"customer_id": "CUS-0001"}, {"accounts": [{"account_id": "ACC-0002"}]}),
            (CLOSE, {"account_id": "ACC-0002", "reason": "move"}, {"ok": 1}),
        ],
        ["Done."],
    )
    invented = _conv(
        "c3", ["Close ACC-0002."], [(CLOSE, {"account_id": "ACC-0002", "reason": "fraud"}, {"ok": 1})], ["Done."]
    )
    rep, _ = _lint([unnamed, single, invented], tmp_path)
    assert rep.counts["unnamed_write"] == 1 and rep.samples["unnamed_write"][0].endswith(
        "close_account(account_id=ACC-0002)"
    )
    assert rep.counts["invented_write_value"] == 1 and "fraud" in rep.samples["invented_write_value"][0]


def test_a_clarification_must_ask_for_the_missing_value_and_get_it(tmp_path):
    def clar(cid, question, answer):
        return _conv(
            cid,
            ["Please close my account, the reason is a move."],
            [(CLOSE, {"account_id": "ACC-0002", "reason": "move"}, {"ok": 1})],
            ["Done."],
            kind="clarification",
            between=[{"role": "assistant", "content": question}, {"role": "user", "content": answer}],
        )

    rep, _ = _lint(
        [
            clar("c1", "Which account should I close?", "It's ACC-0002."),
            clar("c2", "Could you tell me more?", "It's ACC-0002."),
            clar("c3", "Which account should I close?", "The usual one."),
        ],
        tmp_path,
    )
    assert rep.counts["clarification_mismatch"] == 2


def test_a_sql_statement_asked_for_is_supplied_by_saying_what_it_does(tmp_path):
    """ "What should the query be?" is answered with what the statement does, never with SQL (as the requests say
    it: pipeline.language.sqltext); an answer that says something else still supplies nothing."""
    create = ToolSpec(
        name="create_table",
        server="bank",
        description="Create a new table in the SQLite database",
        input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    )
    sql = "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)"

    def clar(cid, answer):
        c = _conv(
            cid,
            ["Can you please create the table?"],
            [(create, {"query": sql}, "Table created successfully")],
            ["All set. I created the table."],
            kind="clarification",
            between=[
                {"role": "assistant", "content": "Of course. What should the query be?"},
                {"role": "user", "content": answer},
            ],
        )
        return c.model_copy(update={"tools": [create]})

    rep, _ = _lint(
        [clar("c1", "Create a notes table with title and body columns, please."), clar("c2", "The usual one.")],
        tmp_path,
    )
    assert (
        rep.counts["clarification_mismatch"] == 1
        and "the usual one" in rep.samples["clarification_mismatch"][0].lower()
    )


def test_variety_of_frames_and_openings_is_measured_against_the_thresholds(tmp_path):
    same = [
        _conv(f"c{i}", ["Please list my accounts now."], [(LIST, {}, LISTED)], ["I found 2 accounts."])
        for i in range(6)
    ]
    rep, _ = _lint(same, tmp_path, LintConfig())
    assert rep.metrics["distinct_frames"] < 0.5 and rep.metrics["unique_openings"] == 0
    assert rep.counts["distinct_frames"] == 1 and rep.counts["unique_openings"] == 1
    varied = [
        _conv(f"c{i}", [f"ACC-000{i} first: list my accounts?"], [(LIST, {}, LISTED)], ["I found 2 accounts."])
        for i in range(6)
    ]
    assert (
        lint_frame(
            read_examples(_lint(varied, tmp_path / "v")[1]), BuildConfig.model_construct(lint=LintConfig()), READ_ONLY
        ).metrics["unique_openings"]
        == 1.0
    )


def test_prove_corpus_lint_prints_counts_per_defect_and_fails_on_any(tmp_path, capsys):
    bad = _conv(
        "c1",
        ["Please list open accounts, filtered by customer, type or minimum balance."],
        [(LIST, {}, LISTED)],
        ["I found 2 accounts."],
    )
    _, path = _lint([bad], tmp_path)
    assert main(["corpus", "lint", path.name, "--data-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "description_paste            1" in out and "ex-" in out
    assert main(["corpus", "lint", "--json", "--data-dir", str(tmp_path)]) == 1
    assert json.loads(capsys.readouterr().out)["counts"]["description_paste"] == 1


def test_a_word_or_short_phrase_said_twice_back_to_back_is_flagged(tmp_path):
    from pipeline.language.phrasing import stutter

    ask = [(LIST, {"customer_id": "CUS-0001"}, LISTED)]
    bad = [
        _conv("c1", ["list accounts for it for it CUS-0001"], ask, ["I found 2 accounts."]),
        _conv(
            "c2",
            ["Show the accounts of the customer from before before lunch, CUS-0001."],
            ask,
            ["I found 2 accounts."],
        ),
        _conv("c3", ["Show me the the accounts of CUS-0001 in my bank in my bank."], ask, ["I found 2 accounts."]),
    ]
    good = [
        _conv(
            "c4",
            ['Show the accounts of CUS-0001, then name the note "ha ha" and count 5, 5 times.'],
            ask,
            ["I found 2 accounts."],
        ),
        _conv(
            "c5",
            ["Could you show me the accounts of Hugo (CUS-0001) for it, and for the others?"],
            ask,
            ["I found 2 accounts."],
        ),
    ]
    rep, _ = _lint(bad + good, tmp_path)
    assert rep.counts["repeated_phrase"] == 3, rep.samples["repeated_phrase"]
    assert stutter("add deal for it for it for it amount 9900") == "for it for it"
    assert stutter("Could you show me the accounts for that customer?") is None


def test_a_decimal_quoted_from_the_tools_own_message_is_not_a_count(tmp_path):
    ask = ["Close ACC-0002, the reason is a move."]
    err = {"error": "refund amount 442.85 exceeds the refundable amount"}
    quoted = _conv(
        "c1",
        ask,
        [(CLOSE, {"account_id": "ACC-0002", "reason": "move"}, err)],
        ["I couldn't close it: refund amount 442.85 exceeds the refundable amount."],
    )
    counted = _conv(
        "c2", ask, [(CLOSE, {"account_id": "ACC-0002", "reason": "move"}, err)], ["I found 442.85 refunds on it."]
    )
    rep, _ = _lint([quoted, counted], tmp_path)
    assert rep.counts["non_integer_count"] == 1 and rep.samples["non_integer_count"][0].endswith(
        "I found 442.85 refunds on it."
    )


def test_a_quoted_text_said_twice_is_the_datas_words_not_a_repeated_sentence(tmp_path):
    body = '"This week: a deep dive on planners.\nUnsubscribe at any time.\n"'
    ask = [(LIST, {"customer_id": "CUS-0001"}, LISTED)]
    quoted = _conv(
        "c1", [f"Add the draft with body {body}, and then edit it again saying {body}?"], ask, ["I found 2 accounts."]
    )
    said = _conv("c2", ["Show my accounts please. Show my accounts please."], ask, ["I found 2 accounts."])
    rep, _ = _lint([quoted, said], tmp_path)
    assert rep.counts["repeated_sentence"] == 1 and rep.samples["repeated_sentence"][0].startswith(("c2", "ex-"))


def test_openings_are_compared_within_the_sample_so_the_share_does_not_fall_with_corpus_size(tmp_path):
    ask = [(LIST, {"customer_id": "CUS-0001"}, LISTED)]
    alike = [
        _conv(f"c{i}", [f"Could you show me the accounts of customer number {i}?"], ask, ["I found 2 accounts."])
        for i in range(4)
    ]
    whole, _ = _lint(alike, tmp_path / "a", LintConfig(min_distinct_frames=0, min_unique_openings=0.3))
    one, _ = _lint(alike, tmp_path / "b", LintConfig(min_distinct_frames=0, min_unique_openings=0.3, openings_sample=1))
    assert whole.metrics["unique_openings"] == 0.0 and whole.counts["unique_openings"] == 1
    assert one.metrics["unique_openings"] == 1.0 and one.counts["unique_openings"] == 0


def test_a_tools_value_is_read_tool_by_tool_and_a_split_inside_a_tool_falls_back_to_the_whole():
    from pipeline.corpus.columns import tool_items
    from pipeline.corpus.lint import Linter

    def fn(name: str, **extra) -> dict:
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": "Looks up a record.",
                "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
                **extra,
            },
        }

    plain = [fn("get_a"), fn("get_b")]
    # the separator's text inside a description is escaped; inside a nested list it stands between two values
    quoted = [fn("get_a", note='ends, {"type": "function", here'), fn("get_b")]
    nested = [fn("get_a", examples=[{"type": "string"}, {"type": "function", "k": 1}]), fn("get_b")]
    linter = Linter(LintConfig(), {}, "2026-03-02")
    for tools in (plain, quoted, nested, [], [{"name": "bare"}]):
        text = json.dumps(tools)
        assert linter.tools(text) == tools
    assert tool_items(json.dumps(plain)) == [json.dumps(t) for t in plain]
    assert len(tool_items(json.dumps(nested))) == 3  # split inside the first tool: its halves do not decode alone
    # a tool offered in two lists is decoded once and shared
    a, b = linter.tools(json.dumps(plain)), linter.tools(json.dumps([plain[1], fn("get_c")]))
    assert a[1] is b[0]


def _with_wrong_attempt(cid: str, wrong: object, weight: int | None = 0) -> Conversation:
    """A request whose first call is a failed attempt (weight 0, or unmarked as versions before the marks have it)
    with ``customer_id`` ``wrong``, whose error echoes it, then the right call."""
    error = {"error": "not_found", "message": f"customer {wrong!r} not found"}
    attempt = [
        {
            "role": "assistant",
            "content": None,
            **({"weight": weight} if weight is not None else {}),
            "tool_calls": [
                {
                    "id": "w0",
                    "type": "function",
                    "function": {"name": LIST.name, "arguments": json.dumps({"customer_id": wrong})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "w0", "content": json.dumps(error)},
    ]
    return _conv(
        cid,
        [f"Could you show me the accounts of customer CUS-0001 ({cid})?"],
        [(LIST, {"customer_id": "CUS-0001"}, LISTED)],
        ["I found 2 accounts: ACC-0001 and ACC-0002."],
        between=attempt,
    )


def test_a_constant_in_wrong_attempts_is_flagged_and_world_drawn_mistakes_are_not(tmp_path):
    constant = [_with_wrong_attempt(f"c{i}", 12345, weight=0 if i else None) for i in range(3)]
    rep, _ = _lint(constant, tmp_path / "a")
    assert rep.counts["filler_value"] == 3 and rep.counts["repeated_filler"] == 1
    assert "12345" in rep.samples["repeated_filler"][0]
    # a value no example explains, repeated: the generator's constant even when it is no known filler word
    stand_in = [_with_wrong_attempt(f"c{i}", "ZZZ-0000") for i in range(3)]
    rep, _ = _lint(stand_in, tmp_path / "b")
    assert rep.counts["filler_value"] == 0 and rep.counts["repeated_filler"] == 1
    # slips of the right id and ids the conversation showed are mistakes drawn from the world
    drawn = [_with_wrong_attempt(f"c{i}", w) for i, w in enumerate(["CUS-001", "CUS-O001", "CUS0001", "ACC-0001"])]
    drawn += [_with_wrong_attempt("c9", "ACC-0001")]
    rep, _ = _lint(drawn, tmp_path / "c")
    assert rep.passed and rep.metrics["unexplained_attempt_values"] == 0, rep.as_dict()


def test_a_reference_call_failing_on_the_state_is_no_wrong_attempt(tmp_path):
    """The same value in three reference calls that fail on the state and are reported, not retried (a date out of
    the server's window): no generator's constant."""
    error = {"error": "invalid_argument", "message": "the date must be before 2026-03-16"}
    failing = [
        _conv(
            f"f{i}",
            ["Could you show me the accounts of that customer?"],
            [(LIST, {"customer_id": "CUS-0001", "since": "2026-03-20"}, error)],
            ["I couldn't: the date must be before 2026-03-16."],
        )
        for i in range(3)
    ]
    rep, _ = _lint(failing, tmp_path)
    assert rep.counts["repeated_filler"] == 0 and rep.metrics["unexplained_attempt_values"] == 0, rep.as_dict()


DEPOSIT = ToolSpec(
    name="deposit",
    server="bank",
    description="Put money into an account.",
    input_schema={
        "type": "object",
        "properties": {"account_id": {"type": "string"}, "amount": {"type": "number"}},
        "required": ["account_id", "amount"],
    },
)
REOPEN = ToolSpec(
    name="reopen_account",
    server="bank",
    description="Open a closed account again.",
    input_schema={"type": "object", "properties": {"account_id": {"type": "string"}}, "required": ["account_id"]},
)


def _after_close(cid: str, tool: ToolSpec, args: dict, ok: bool) -> Conversation:
    """Close ACC-0002, then call ``tool`` on it (``ok``: whether that call succeeded), with the trace of both."""
    result = {"account_id": "ACC-0002"} if ok else {"error": "state_conflict", "message": "account ACC-0002 is closed"}
    c = _conv(
        cid,
        ["Close ACC-0002 for me, the reason is a move.", "Now deal with ACC-0002 again, 20.00 if it asks."],
        [(CLOSE, {"account_id": "ACC-0002", "reason": "move"}, {"account_id": "ACC-0002"}), (tool, args, result)],
        ["Done: I closed account ACC-0002.", "Done." if ok else "I couldn't: account ACC-0002 is closed."],
    )
    c.tools = [LIST, CLOSE, DEPOSIT, REOPEN]
    c.trace = [
        TraceCall(turn=0, name="close_account", arguments={"account_id": "ACC-0002", "reason": "move"}, ok=True),
        # a wrong first attempt is no reference call: it never counts
        TraceCall(turn=1, name=tool.name, arguments={"account_id": "ACC-0002"}, ok=False, reference=False),
        TraceCall(turn=1, name=tool.name, arguments=args, ok=ok),
    ]
    return c


def test_an_undo_then_redo_is_flagged_and_acting_on_what_was_closed_only_past_the_allowed_share(tmp_path):
    redo = _after_close("c1", REOPEN, {"account_id": "ACC-0002"}, True)
    closed = _after_close("c2", DEPOSIT, {"account_id": "ACC-0002", "amount": 20.0}, False)
    checked = _conv(  # reading what was closed is the goal's check, never a defect
        "c3",
        ["Close ACC-0002, the reason is a move.", "Show me my accounts of CUS-0001 now."],
        [(CLOSE, {"account_id": "ACC-0002", "reason": "move"}, {"ok": 1}), (LIST, {"customer_id": "CUS-0001"}, LISTED)],
        ["Done.", "I found 2 accounts."],
    )
    rep, path = _lint([redo, closed, checked], tmp_path)
    assert rep.counts["undo_then_redo"] == 1
    assert "reopen_account after close_account" in rep.samples["undo_then_redo"][0]
    # the default share (2% of 3 examples with tool calls) allows none
    assert rep.counts["acts_on_closed"] == 1 and rep.metrics["acts_on_closed"] == 1
    # a share that allows one deliberate error case in three
    cfg = BuildConfig(
        examples=3,
        servers=["bank"],
        data_dir=str(tmp_path / "b"),
        lint=LintConfig(min_distinct_frames=0, min_unique_openings=0),
        chains=ChainConfig(closed_entity_rate=0.34),
    )
    rep = lint_frame(read_examples(path), cfg, {"close_account": False, "deposit": False, "reopen_account": False})
    assert rep.counts["acts_on_closed"] == 0 and rep.metrics["acts_on_closed_allowed"] == 1
    assert rep.counts["undo_then_redo"] == 1


def test_a_wrong_value_the_schema_offers_is_a_choice_not_a_constant_however_often_a_large_corpus_repeats_it(tmp_path):
    """A date, a number or an enum member in wrong attempts repeats by chance at 13,500 examples: no filler."""
    for wrong in ("2026-03-08", 26.0):
        rep, _ = _lint([_with_wrong_attempt(f"c{i}", wrong) for i in range(4)], tmp_path / str(wrong))
        assert rep.counts["repeated_filler"] == 0, (wrong, rep.samples)


def test_linting_in_two_processes_gives_the_report_of_one_and_the_second_half_runs_in_a_child(tmp_path, monkeypatch):
    import os

    import pipeline.corpus.lint as lint_module

    # defects spread over both halves of the rows (ids are hashes): a constant repeated in wrong attempts (counted
    # across the halves), writes on what the conversation closed (their share is judged over the corpus), a redo
    convs = [_with_wrong_attempt(f"w{i}", 12345) for i in range(6)]
    convs += [_after_close(f"x{i}", DEPOSIT, {"account_id": "ACC-0002", "amount": 20.0}, False) for i in range(6)]
    convs += [_after_close("r1", REOPEN, {"account_id": "ACC-0002"}, True)]
    _, path = _lint(convs, tmp_path)
    df = read_examples(path)
    read_only = {"close_account": False, "deposit": False, "reopen_account": False, "list_accounts": True}
    cfg = BuildConfig(examples=len(convs), servers=["bank"], data_dir=str(tmp_path), lint=LintConfig())
    one = lint_frame(df, cfg, read_only, parallel=False).as_dict()
    ran = tmp_path / "ran.txt"
    row_facts = lint_module._row_facts

    def noted(linter, rows):
        with open(ran, "a") as f:
            f.write(f"{os.getpid()} {rows.height}\n")
        return row_facts(linter, rows)

    monkeypatch.setattr(lint_module, "_row_facts", noted)
    two = lint_frame(df, cfg, read_only, parallel=True).as_dict()
    assert two == one
    assert one["counts"]["repeated_filler"] == 1 and one["counts"]["acts_on_closed"] >= 1, one
    assert one["counts"]["undo_then_redo"] == 1
    runs = [line.split() for line in ran.read_text().splitlines()]
    assert sorted(int(n) for _, n in runs) == [len(convs) // 2, len(convs) - len(convs) // 2]
    assert len({pid for pid, _ in runs}) == 2 and str(os.getpid()) in {pid for pid, _ in runs}


def test_work_given_to_a_child_that_fails_is_done_here_and_a_childs_answer_comes_back_whole():
    import os

    from pipeline.core.speedups import in_a_child

    def crashes() -> bytes:
        raise RuntimeError("the child's work failed")

    here = os.getpid()
    mine, theirs = in_a_child(lambda: f"{os.getpid():>10}".encode() * 100_000, os.getpid)
    assert mine == here and len(theirs) == 1_000_000  # many pipes' worth, whole
    assert {theirs[i : i + 10] for i in range(0, len(theirs), 10)} == {theirs[:10]} and int(theirs[:10]) != here
    mine, theirs = in_a_child(crashes, lambda: "parent", fallback=lambda: b"done here")
    assert (mine, theirs) == ("parent", b"done here")
