"""``prove ui``: the Dagster UI (``dg dev``) over this project's instance, from the repository root.

It prepares ``$DAGSTER_HOME`` as ``prove build`` does (default: the data dir's ``dagster_home``, given a copy of the
repository's ``dagster.yaml`` when it has none: :func:`assets.instance_home.prepare_home`) and runs ``dg dev`` in
this process with the repository root as its project (``[tool.dg]`` in pyproject.toml); ``--host`` and ``--port``,
and after ``--`` any ``dg dev`` option, are passed on. Dagster's dev command warns whenever a ``dagster.yaml`` sits
in its folder while ``DAGSTER_HOME`` names another ("... will not be used"); here the home holds that file's copy,
so that one line is left out of the log. SIGTERM and SIGINT stop it with the webserver, the daemon, the code servers
and any run worker (tests/assets/test_dev_stop.py).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


class _HomeHoldsTheConfig(logging.Filter):
    """Drops Dagster's "a dagster.yaml in the current folder ... will not be used" warning: the home holds it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "will not be used to configure Dagster" not in record.getMessage()


def cmd_ui(a: argparse.Namespace) -> int:
    # deferred: loaded only when the UI starts (prove --help stays fast)
    from assets.instance_home import prepare_home

    data_dir = Path(a.data_dir or os.environ.get("PROVE_DATA_DIR") or ROOT / "data").resolve()
    os.environ["PROVE_DATA_DIR"] = str(data_dir)  # the code location's assets write there (docs/dagster.md)
    home = prepare_home(data_dir)
    os.environ.setdefault("VIRTUAL_ENV", sys.prefix)  # dg's check of the project's venv, as `activate` sets it
    print(f"prove ui: DAGSTER_HOME={home}, data under {data_dir}", file=sys.stderr)
    logging.getLogger("dagster").addFilter(_HomeHoldsTheConfig())
    # Dagster's CLIs map SIGTERM onto SIGINT's handler (dagster._utils.interrupts.setup_interrupt_handlers): started
    # with SIGINT ignored (a background job of a script, nohup), the dev command and every process it starts (an
    # ignored signal stays ignored across exec) ignored both and never stopped. Python's own SIGINT handler here: the
    # dev command stops on either, and its webserver, daemon and code servers start with the signals' defaults.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from dagster_dg_cli.cli import ENV_PREFIX, cli  # Dagster and dg load here, once the home is ready

    os.chdir(ROOT)
    try:
        opts = [*(["--host", a.host] if a.host else []), *(["--port", str(a.port)] if a.port else [])]
        rest = a.dg_args[1:] if a.dg_args[:1] == ["--"] else a.dg_args
        cli.main(args=["dev", *opts, *rest], prog_name="dg", auto_envvar_prefix=ENV_PREFIX, standalone_mode=True)
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0


def register(sub: Any) -> None:
    x = sub.add_parser(
        "ui",
        help="the Dagster UI: dg dev from the repository root over $DAGSTER_HOME (default DATA_DIR/dagster_home, "
        "given the repository's dagster.yaml); --host and --port, and after -- any dg dev option",
    )
    x.add_argument("--data-dir", default=None, help="where the UI's runs write (default $PROVE_DATA_DIR or data)")
    x.add_argument("--host", default=None, help="the webserver's host (dg dev's default: 127.0.0.1)")
    x.add_argument("--port", "-p", type=int, default=None, help="the webserver's port (dg dev's default: 3000)")
    x.add_argument("dg_args", nargs=argparse.REMAINDER, help="after --: passed to dg dev as they are")
    x.set_defaults(fn=cmd_ui)
