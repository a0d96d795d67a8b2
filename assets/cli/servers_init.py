"""``prove servers init``: a servers file written for a server, from what the check could not find.

It connects to the server (a stdio command after ``--``, or ``--url``), runs the check, asks for each value the
check's fixes need (:mod:`pipeline.discovery.fixes`), or takes it from ``--values FILE`` / ``--value KEY=VALUE``,
writes the entry (atomically), checks the written file again, and asks again if that check needs more; then
says how many tools chain, before and after."""

from __future__ import annotations

import argparse
import getpass
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

ORDER = (
    "name kind command args cwd template_dir env url headers isolation reset_tool state_tool secrets setup "
    "known_values probe_allowlist"
).split()
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class InitError(Exception):
    """Bad input, said as the problem (and exit status 2)."""


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise InitError(f"{flag} takes KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def _name_of(a: argparse.Namespace, words: list[str]) -> str:
    if a.name:
        return a.name
    if a.url:
        host = re.sub(r"^https?://", "", a.url).split("/")[0].split(":")[0]
        base = "server" if re.match(r"^[\d.]+$|^localhost$|^\[", host) else host.split(".")[0]
    else:
        scripts = [w for w in words[1:] if not w.startswith("-")]
        base = Path(scripts[0] if scripts else words[0]).name.rsplit(".", 1)[0]
    base = re.sub(r"^(mcp[-_])?(server[-_])|[-_](mcp[-_])?server$", "", base.split("/")[-1]) or base
    return re.sub(r"[^A-Za-z0-9_.-]", "_", base) or "server"


def server_entry(a: argparse.Namespace) -> dict[str, Any]:
    """The entry the command line names: a stdio command (files it names made absolute: sessions run in a directory
    of their own) or a URL, with ``--env``/``--header``/``--cwd``."""
    words = a.command[1:] if a.command[:1] == ["--"] else list(a.command)
    if bool(words) == bool(a.url):
        raise InitError("give the server as a command after -- (prove servers init -- python server.py) or as --url")
    entry: dict[str, Any] = {"name": _name_of(a, words)}
    if a.url:
        entry.update(kind="http", url=a.url)
        if a.header:
            entry["headers"] = _pairs(a.header, "--header")
        if a.env or a.cwd:
            raise InitError("--env and --cwd apply to a stdio server (a command after --), not to --url")
        return entry
    command = words[0]
    if "/" in command and Path(command).exists():
        command = str(Path(command).absolute())
    elif shutil.which(command) is None:
        raise InitError(f"command {command!r} not found (not a file, and not on PATH)")
    args = [str(Path(w).absolute()) if not w.startswith("-") and Path(w).is_file() else w for w in words[1:]]
    entry.update(kind="stdio", command=command, args=args)
    if a.cwd:
        if not Path(a.cwd).is_dir():
            raise InitError(f"--cwd {a.cwd}: not a directory")
        entry["cwd"] = str(Path(a.cwd).absolute())
    if a.env:
        entry["env"] = _pairs(a.env, "--env")
    return entry


def read_values(a: argparse.Namespace) -> dict[str, Any]:
    """``--values FILE`` then ``--value KEY=VALUE`` (which win), as answers by key."""
    # deferred: the pipeline loads only when a command that needs it runs (prove --help stays fast)
    from pipeline.core.errors import yaml_problem
    from pipeline.discovery.fixes import Question, flatten, parse_answer

    values: dict[str, Any] = {}
    if a.values:
        try:
            data = yaml.safe_load(Path(a.values).read_text()) or {}
        except OSError as exc:
            raise InitError(f"--values {a.values}: cannot read: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise InitError(f"--values {a.values}: not valid YAML: {yaml_problem(exc)}") from None
        if not isinstance(data, dict):
            raise InitError(f"--values {a.values}: expected a mapping (known_values:, setup:, secrets:, ...)")
        values = flatten(data)
    for key, text in _pairs(a.value, "--value").items():
        values[key] = parse_answer(text, Question(key, key)) if text else None
    return values


def _ordered(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: entry[k] for k in sorted(entry, key=lambda k: ORDER.index(k) if k in ORDER else len(ORDER)) if entry[k]}


class _Block(dict):
    """A mapping written in block style (the entry), whatever its values."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Block, lambda d, m: d.represent_mapping("tag:yaml.org,2002:map", m.items(), flow_style=False))


def servers_text(entry: dict[str, Any]) -> str:
    """The servers file holding the entry, one line per field, short values in flow style (the same answers give
    the same bytes)."""
    head = "# written by `prove servers init`; `prove servers check <this file>` checks it again\n"
    body = {"servers": [_Block(_ordered(entry))]}
    return head + yaml.dump(body, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=120)


def _chain_count(report: dict[str, Any]) -> tuple[int, int]:
    tools = report.get("tool_report") or {}
    return sum(1 for t in tools.values() if t["chainable"]), len(report.get("tools") or [])


def _say_report(report: dict[str, Any], label: str) -> None:
    n, m = _chain_count(report)
    print(f"{label}: {n} of {m} tools chain (checked in {report['duration_s']:g}s)")
    for t, info in (report.get("tool_report") or {}).items():
        if not info["chainable"]:
            print(f"  cannot chain {t}: {info['why'][:150]}")
    for p in report["problems"]:
        if p.startswith(("stopped", "could not")):
            print(f"  problem: {p}")


class Asker:
    """Answers to the check's questions: from the values given, else from the user (a terminal), else noted as
    still needed."""

    def __init__(self, values: dict[str, Any], interactive: bool):
        self.values = values
        self.interactive = interactive
        self.answered: dict[str, Any] = {}
        self.needed: list[Any] = []

    def ask(self, q: Any) -> tuple[bool, Any]:
        # deferred: the pipeline loads only when a command that needs it runs (prove --help stays fast)
        from pipeline.discovery.fixes import answer_from, parse_answer

        found, answer = answer_from(self.values, q)
        if found:
            print(f"  {q.key}: {_shown(q, answer)}  (from the values given)")
            return True, answer
        if not self.interactive:
            self.needed.append(q)
            return False, None
        print(f"? {q.prompt}" + (f"  [asked by {', '.join(q.tools)}]" if q.tools else ""))
        if q.choices and q.kind == "choice":
            print(f"  one of: {', '.join(q.choices)}")
        hint = {"confirm": " [y/N]" if not q.default else " [Y/n]"}.get(q.kind, f" [{q.default}]" if q.default else "")
        while True:
            try:
                return True, parse_answer(input(f"  {q.key}{hint}: "), q)
            except ValueError as exc:
                print(f"  {exc}")
            except EOFError:
                raise InitError(f"input ended while asking for {q.key}") from None


def _shown(q: Any, answer: Any) -> str:
    return "(skipped)" if answer in (None, "", False) and q.kind != "confirm" else str(answer)


def _ask_round(report: dict[str, Any], ctx: Any, entry: dict[str, Any], asker: Asker, first: bool) -> int:
    """Ask what the report's fixes need (each key once per run), put the answers in the entry; on the first round
    also every value given that no question asked. Returns how many answers changed the entry."""
    # deferred: the pipeline loads only when a command that needs it runs (prove --help stays fast)
    from pipeline.discovery.fixes import follow_up, put, questions

    queue = [q for q in questions(report, ctx) if q.key not in asker.answered]
    changed = 0
    while queue:
        q = queue.pop(0)
        found, answer = asker.ask(q)
        if not found:
            continue
        asker.answered[q.key] = answer
        if answer not in (None, "", False):
            put(entry, q.key, answer)
            for key, value in q.also:
                put(entry, key, value)
            changed += 1
        queue += [f for f in follow_up(q, answer, ctx) if f.key not in asker.answered]
    if first:
        for key, value in asker.values.items():
            if key not in asker.answered and key != "probe_allowlist" and value not in (None, "", False):
                put(entry, key, value)
                print(f"  {key}: {value}  (from the values given)")
                asker.answered[key] = value
                changed += 1
    return changed


def _secrets_at_hand(entry: dict[str, Any], interactive: bool) -> list[str]:
    """The environment variables the entry reads (``${VAR}``) that are not set: asked for (hidden, for this run
    only) at a terminal, else returned."""
    refs = sorted(set(ENV_REF.findall(yaml.safe_dump(entry))) - {"SESSION_DIR"})
    missing = [v for v in refs if v not in os.environ]
    if not interactive:
        return missing
    for var in missing:
        os.environ[var] = getpass.getpass(f"  {var} is not set here: its value, for this run's checks (not written): ")
    return []


def _still_needed(asker: Asker, unset: list[str]) -> str:
    lines = [f"  {q.key}: {q.prompt}" + (f" [{', '.join(q.tools)}]" if q.tools else "") for q in asker.needed]
    lines += [f"  environment variable {v}: not set (the entry reads it when connecting; never written)" for v in unset]
    template: dict[str, Any] = {}
    for q in asker.needed:
        *path, last = q.key.split(".", 2) if q.key.startswith("setup.") else q.key.split(".", 1)
        where = template
        for name in path if q.kind != "confirm" else ():
            where = where.setdefault(name, {})
        if q.kind == "confirm":  # an allow-list: the tools confirmed
            template.setdefault(path[0], []).append(last)
        else:
            where[last] = q.default or f"<{last}>"
    example = "\n".join(  # block style at the top, each value on its line
        yaml.safe_dump({k: v}, default_flow_style=None).strip() if isinstance(v, (dict, list)) else f"{k}: {v}"
        for k, v in template.items()
    )
    return (
        "values still needed (nothing is asked with --no-input or without a terminal):\n"
        + "\n".join(lines)
        + (
            "\ngive them in a values file (--values FILE), as KEY=VALUE (--value), or answer at a terminal; a values "
            "file with them (an empty value, or no, skips one):\n" + example
            if example
            else ""
        )
    )


def cmd_servers_init(a: argparse.Namespace) -> int:
    try:
        return _init(a)
    except InitError as exc:
        print(f"prove servers init: {exc}", file=sys.stderr)
        return 2


def _init(a: argparse.Namespace) -> int:
    # deferred: the pipeline loads only when a command that needs it runs (prove --help stays fast)
    from pipeline.core.config import ServerConfig
    from pipeline.core.servers_file import ConfigFileError, load_servers_file
    from pipeline.core.storage import atomic_write_text
    from pipeline.discovery.check import check_server
    from pipeline.discovery.fixes import Context, questions
    from pipeline.env import Environment

    out = Path(a.out)
    if out.exists() and not a.force:
        raise InitError(f"{out} exists; pass --force to replace it, or --out another file")
    entry = server_entry(a)
    asker = Asker(read_values(a), interactive=not a.no_input and sys.stdin.isatty())
    log_dir = Path(a.data_dir) / "logs" / "servers"
    unset = _secrets_at_hand(entry, asker.interactive)
    if unset:
        raise InitError(_still_needed(asker, unset))
    try:
        cfg = ServerConfig.model_validate(entry)
        with Environment(cfg, log_dir=log_dir) as env:
            ctx = Context(cfg.name, cfg.kind, {t.name: t for t in env.tools()})
    except Exception as exc:  # the server did not start or answer: what it said, and where its log is
        raise InitError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    print(f"{cfg.name}: {len(ctx.tools)} tools; checking what chains (each tool called in fresh sessions) ...")
    report = check_server(cfg, log_dir=log_dir)
    before = _chain_count(report)
    _say_report(report, "before")
    draft = Path(a.data_dir) / "init" / f"{cfg.name}.yaml"  # each round's entry, checked as a file
    text = servers_text(entry)
    for n in range(a.rounds):
        asker.needed = []
        if not _ask_round(report, ctx, entry, asker, first=n == 0):
            break  # nothing more to ask, or nothing answered: the questions left are still needed
        unset = _secrets_at_hand(entry, asker.interactive)
        if unset:
            raise InitError(_still_needed(asker, unset))
        try:
            ServerConfig.model_validate(entry)
        except ValueError as exc:
            raise InitError(f"the answers make no valid server entry: {exc}") from None
        text = servers_text(entry)
        atomic_write_text(draft, text)
        try:
            [cfg] = load_servers_file(draft)
        except ConfigFileError as exc:
            raise InitError(str(exc)) from None
        print(f"wrote {draft}; checking it ...")
        report = check_server(cfg, log_dir=log_dir)
        _say_report(report, "with it")
    else:  # out of rounds: what the last check still asks is said, not required
        left = [q.key for q in questions(report, ctx) if q.key not in asker.answered]
        asker.needed = []
        if left:
            print(f"still open after {a.rounds} rounds (run init again with them): {', '.join(left)}")
    if asker.needed:
        raise InitError(_still_needed(asker, []))
    atomic_write_text(out, text)
    after = _chain_count(report)
    print(f"wrote {out}: {after[0]} of {after[1]} tools chain (before: {before[0]} of {before[1]})")
    print(f"next: prove servers check {out}   or   prove build --servers-file {out} --examples 200")
    return 1 if any(p.startswith("could not") for p in report["problems"]) else 0


def register(sv: Any) -> None:
    x = sv.add_parser(
        "init",
        help="write a servers file for a server: check it, ask what it needs, check again",
        description="Connect to a server, run the check, ask for each value it could not find (or take them from "
        "--values/--value), write a servers file that makes its tools chain, and check that file again.",
    )
    x.add_argument("--url", help="a streamable HTTP server's URL (instead of a command after --)")
    x.add_argument("--name", help="the server's name in the file (default: from the script or URL)")
    x.add_argument("--out", "-o", default="servers.yaml", help="the servers file to write (default servers.yaml)")
    x.add_argument("--force", action="store_true", help="replace --out if it exists")
    x.add_argument(
        "--values",
        help="a YAML file of answers: known_values:, setup: {tool: {arg: v}}, secrets: "
        "{name: ENV_VAR}, probe_allowlist: [tools], isolation:, reset_tool:",
    )
    x.add_argument(
        "--value",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one answer (known_values.workspace=desk, secrets.password=BANK_PASSWORD); repeatable",
    )
    x.add_argument("--no-input", action="store_true", help="never ask: fail, listing the values still needed")
    x.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an environment variable of the server process (use ${VAR} for a secret); repeatable",
    )
    x.add_argument("--header", action="append", default=[], metavar="KEY=VALUE", help="an HTTP header (--url)")
    x.add_argument("--cwd", help="a directory the server runs in (copied for each session; never written)")
    x.add_argument("--rounds", type=int, default=4, help="check-and-ask rounds at most (default 4)")
    x.add_argument("--data-dir", default="data", help="the server's stderr goes to <data-dir>/logs/servers/")
    x.add_argument("command", nargs=argparse.REMAINDER, help="-- the server's command and its arguments")
    x.set_defaults(fn=cmd_servers_init)
