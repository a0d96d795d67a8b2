"""The check's fix lines as questions and servers-file entries (pipeline/discovery/fixes.py): each kind the check
prints today, as printed, becomes the questions ``prove servers init`` asks, and the answers an entry that loads."""

from pipeline.core.config import ServerConfig
from pipeline.core.records import ToolSpec
from pipeline.discovery.fixes import Context, answer_from, flatten, follow_up, parse_answer, put, questions


def _tool(name: str, required: tuple[str, ...] = (), **kw) -> ToolSpec:
    props = {p: {"type": "array" if p == "doors" else "string"} for p in required}
    schema = {"type": "object", "properties": props, "required": list(required)}
    return ToolSpec(name=name, server="s", input_schema=schema, **kw)


CTX = Context(
    "shop",
    "stdio",
    {t.name: t for t in (_tool("login", ("username", "password")), _tool("lock_doors", ("doors",)), _tool("get"))},
)


def _report(**fixes: str | None) -> dict:
    return {"tool_report": {t: {"chainable": False, "why": "...", "fix": f} for t, f in fixes.items()}}


def _entry(answers: dict) -> dict:
    entry = {"name": "shop", "kind": "stdio", "command": "python", "args": ["s.py"]}
    for q in questions(REPORT, CTX):
        found, answer = answer_from(answers, q)
        if found:
            put(entry, q.key, answer)
            for key, value in q.also if answer else ():
                put(entry, key, value)
    return entry


# every fix line the check prints today (pipeline/discovery/chainability.py), as it prints it
REPORT = _report(
    list_items="known_values: {workspace: <your workspace>, item: <your item>}  (a value you know; or "
    "probe_allowlist: [<a tool that lists them>])",
    show_item="known_values: {workspace: <your workspace>}  (a value you know; or probe_allowlist: [...])",
    list_accounts='setup: [{tool: login, arguments: {username: <username>, password: "${secret:password}"}}]',
    get_history="probe_allowlist: [get_history]  (only if it reads and never writes)",
    add_item="isolation: process  (or reset_tool: <a tool that restores the initial state>)",
    login=None,
)


def test_each_printed_fix_kind_asks_for_exactly_its_placeholders_once():
    asked = questions(REPORT, CTX)
    assert [q.key for q in asked] == [
        "setup.login.username",
        "secrets.password",
        "known_values.item",
        "known_values.workspace",
        "probe_allowlist.get_history",
        "isolation",
    ]
    by_key = {q.key: q for q in asked}
    assert by_key["known_values.workspace"].tools == ("list_items", "show_item")  # asked once, for both
    assert by_key["secrets.password"].kind == "secret" and by_key["secrets.password"].default == "SHOP_PASSWORD"
    assert by_key["probe_allowlist.get_history"].kind == "confirm"


def test_answers_from_a_values_file_make_an_entry_that_loads_with_the_secret_only_referenced():
    values = flatten(
        {
            "setup": {"login": {"username": "ada"}},
            "secrets": {"password": "SHOP_PASS"},
            "known_values": {"workspace": "desk", "item": None},
            "probe_allowlist": ["get_history"],
            "isolation": "process",
        }
    )
    cfg = ServerConfig.model_validate(_entry(values))
    assert cfg.setup[0].tool == "login"
    assert cfg.setup[0].arguments == {"username": "ada", "password": "${secret:password}"}
    assert cfg.secrets == {"password": "${SHOP_PASS}"}
    assert cfg.known_values == {"workspace": "desk"} and cfg.probe_allowlist == ["get_history"]


def test_an_allow_list_names_the_tools_confirmed_and_declines_the_rest():
    q = next(q for q in questions(REPORT, CTX) if q.key == "probe_allowlist.get_history")
    assert answer_from(flatten({"probe_allowlist": []}), q) == (True, False)
    assert answer_from({"probe_allowlist.get_history": "yes"}, q) == (True, True)
    assert answer_from({}, q) == (False, None)


def test_a_setup_call_with_no_tool_named_asks_which_then_its_arguments_typed_by_schema():
    report = _report(start_engine="setup: [{tool: <the call that must come first>, arguments: {...}}]")
    [q] = questions(report, CTX)
    assert q.key == "setup" and "lock_doors" in q.choices
    [arg] = follow_up(q, "lock_doors", CTX)
    assert arg.key == "setup.lock_doors.doors"
    entry: dict = {}
    put(entry, q.key, "lock_doors")
    put(entry, arg.key, parse_answer("[driver, passenger]", arg))
    assert entry == {"setup": [{"tool": "lock_doors", "arguments": {"doors": ["driver", "passenger"]}}]}


def test_a_fix_kind_the_table_does_not_know_is_asked_as_printed_and_merged():
    [q] = questions(_report(get="state_tool: <a tool that returns the whole state>"), CTX)
    assert q.key == "state_tool" and q.kind == "yaml" and "state_tool: <a tool" in q.prompt
    entry: dict = {}
    put(entry, q.key, parse_answer("dump_state", q))
    assert entry == {"state_tool": "dump_state"}


def test_typed_answers_keep_strings_for_string_parameters_and_refuse_a_wrong_choice():
    q = next(q for q in questions(REPORT, CTX) if q.key == "setup.login.username")
    assert parse_answer("007", q) == "007"  # a string parameter keeps the text
    kv = next(q for q in questions(REPORT, CTX) if q.key == "known_values.item")
    assert parse_answer("[a, b]", kv) == ["a", "b"] and parse_answer("", kv) is None
    iso = next(q for q in questions(REPORT, CTX) if q.key == "isolation")
    try:
        parse_answer("separate", iso)
    except ValueError as exc:
        assert "none of: process, none" in str(exc)
    else:
        raise AssertionError("a choice outside the list was taken")


def test_writes_on_a_shared_http_server_ask_for_its_reset_tool_not_for_process_isolation():
    http = Context("shop", "http", CTX.tools)
    [q] = questions(_report(add_item="isolation: process  (or reset_tool: <a tool that restores the state>)"), http)
    assert q.key == "reset_tool" and q.kind == "choice" and "login" in q.choices
    entry = {"name": "shop", "kind": "http", "url": "http://127.0.0.1:9/mcp"}
    put(entry, q.key, parse_answer("get", q))
    assert ServerConfig.model_validate(entry).reset_tool == "get"
