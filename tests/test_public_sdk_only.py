"""The project uses the mcp SDK, Dagster (and asyncio) through their public API only (house rule; issues 16, 39).

An AST scan of every Python file outside ``tests/``: no import from a private module of ``mcp`` /
``mcp_types`` (``mcp.server._otel``) or of Dagster (``dagster._core...``, any ``dagster*`` distribution) or of
a private name from them, no ``._name`` on a module imported from them (``dg._core``), no ``asyncio._*``,
and no ``._name`` access (or ``getattr(x, "_name")``) where ``_name`` is a private attribute of the
installed SDK's or Dagster's own classes and modules that the project does not define itself
(``server._lowlevel_server``, ``session._tool_output_schemas``, ``instance._event_log_storage``).

One documented exception, :data:`ALLOWED_PRIVATE_USE`: ``assets/instance_storage.py`` may use Dagster's
private API (and only Dagster's).
"""

import ast
import functools
import importlib.util
import os
import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {"tests", "data", ".venv", "venv", ".git", "node_modules", "build", "dist", "__pycache__"}
SDK_PACKAGES = ("mcp", "mcp_types")
# Dagster ships as several distributions (dagster, dagster_shared, dagster_pipes, dagster_graphql, ...): an
# import from any of them is Dagster's; private attribute names are collected from the two the assets use
DAGSTER_PREFIX = "dagster"
DAGSTER_SOURCES = ("dagster", "dagster_shared")
# The one exception, with why. assets/instance_storage.py subclasses Dagster's SQLite event log storage
# (SqliteEventLogStorage, from dagster._core) to keep one SQLAlchemy engine per database file: Dagster has
# no public storage class to extend and no public hook for the engine it makes per connection, and the
# override has to reuse the storage's own state (_db_lock, _initialized_dbs, _initdb, _event_log_storage).
# Its module docstring says so; tests/assets/test_instance_storage.py checks it against Dagster's behaviour.
ALLOWED_PRIVATE_USE: dict[str, set[str]] = {"assets/instance_storage.py": {"dagster"}}
# always private SDK state, whatever the project names its own attributes
KNOWN_PRIVATE = {
    "_lowlevel_server",
    "_tool_manager",
    "_resource_manager",
    "_prompt_manager",
    "_tool_output_schemas",
    "_server_info_stamp_source",
    "_request_handlers",
    "_notification_handlers",
}


def project_files() -> list[Path]:
    """Every Python file of the project outside ``tests/`` (and data, virtual environments, hidden folders),
    scripts without a ``.py`` suffix included (``bench/run_all``)."""
    files = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        for name in names:
            path = Path(folder) / name
            if name.endswith(".py"):
                files.append(path)
            elif "." not in name:
                with path.open("rb") as fh:
                    head = fh.read(64)
                if head.startswith(b"#!") and b"python" in head:
                    files.append(path)
    return sorted(files)


def _private_names_defined(trees: list[ast.AST]) -> set[str]:
    """Private names a body of code defines: ``def _x``, ``class _X``, ``self._x = ...``, ``_x = ...``."""
    out: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name.startswith("_"):
                out.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr.startswith("_"):
                out.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id.startswith("_"):
                out.add(node.id)
    return {n for n in out if not (n.startswith("__") and n.endswith("__"))}


# an identifier that opens with "_" wherever it stands in a source text (code, comment or string): a superset of
# the private names the file's code can define, so only the files holding a name need parsing to tell
PRIVATE_TOKEN = re.compile(r"(?<!\w)_\w*")


class PrivateNames:
    """The private names (as :func:`_private_names_defined` finds them) that the sources of ``packages`` define,
    answered per name: a file is parsed only when asked about a name its text holds, so a scan that asks about a
    few names parses a few files instead of all of Dagster's (``name in`` gives what the full set would give)."""

    def __init__(self, packages: tuple[str, ...]) -> None:
        self.files: dict[str, list[Path]] = {}  # token -> the files whose text holds it
        self.texts: dict[Path, str] = {}
        for pkg in packages:
            spec = importlib.util.find_spec(pkg)
            assert spec is not None and spec.submodule_search_locations, f"{pkg} is not installed"
            for root in spec.submodule_search_locations:
                for path in sorted(Path(root).rglob("*.py")):
                    text = self.texts[path] = path.read_text(encoding="utf-8")
                    for token in set(PRIVATE_TOKEN.findall(text)):
                        # the parser reads identifiers NFKC-normalized
                        key = token if token.isascii() else unicodedata.normalize("NFKC", token)
                        self.files.setdefault(key, []).append(path)
        self._answers: dict[str, bool] = {}
        self._defined: dict[Path, set[str]] = {}

    def _defined_in(self, path: Path) -> set[str]:
        if path not in self._defined:
            self._defined[path] = _private_names_defined([ast.parse(self.texts[path], str(path))])
        return self._defined[path]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name not in self._answers:
            self._answers[name] = any(name in self._defined_in(path) for path in self.files.get(name, ()))
        return self._answers[name]


@functools.cache
def sdk_private_names() -> PrivateNames:
    """Private attribute names the installed SDK defines on its classes and modules."""
    return PrivateNames(SDK_PACKAGES)


@functools.cache
def dagster_private_names() -> PrivateNames:
    """Private attribute names the installed Dagster defines on its classes and modules."""
    return PrivateNames(DAGSTER_SOURCES)


def _family(module: str) -> str | None:
    """Whose module ``module`` is: ``"SDK"`` (mcp), ``"dagster"``, ``"asyncio"``, or None (not scanned)."""
    top = module.split(".")[0]
    if top in SDK_PACKAGES:
        return "SDK"
    if top == DAGSTER_PREFIX or top.startswith(DAGSTER_PREFIX + "_"):
        return "dagster"
    return "asyncio" if top == "asyncio" else None


def _is_sdk_module(module: str) -> bool:
    return _family(module) == "SDK"


def private_uses(
    source: str, filename: str, own_private: set[str], tree: ast.AST | None = None
) -> list[tuple[str, str]]:
    """What ``source`` does with the private parts of the SDK, Dagster or asyncio: (family, line) per use
    (``tree``: the source already parsed)."""
    tree = tree or ast.parse(source, filename)
    sdk_defined, dagster_defined = sdk_private_names(), dagster_private_names()
    modules = {
        "asyncio": "asyncio"
    }  # a name bound to a scanned package's module -> its family (``import dagster as dg``)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if family := _family(alias.name):
                    modules[alias.asname or alias.name.split(".")[0]] = family
    found: list[tuple[str, str]] = []

    def flag(node: ast.AST, family: str, what: str) -> None:
        found.append((family, f"{filename}:{getattr(node, 'lineno', '?')}: {what}"))

    def private_attribute(node: ast.AST, name: str, how: str) -> None:
        # the SDK's private names less the project's own, and the always private ones; then Dagster's less the own
        if name in KNOWN_PRIVATE or (name not in own_private and name in sdk_defined):
            flag(node, "SDK", how.format(name=name, whose="SDK"))
        elif name not in own_private and name in dagster_defined:
            flag(node, "dagster", how.format(name=name, whose="dagster"))

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (family := _family(node.module)):
            if any(p.startswith("_") for p in node.module.split(".")):
                flag(node, family, f"import from private module {node.module}")
            for alias in node.names:
                if alias.name.startswith("_"):
                    flag(node, family, f"import of private name {node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if (family := _family(alias.name)) and any(p.startswith("_") for p in alias.name.split(".")):
                    flag(node, family, f"import of private module {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            if isinstance(base, ast.Name) and base.id in modules:
                family = modules[base.id]
                flag(
                    node,
                    family,
                    f"asyncio.{node.attr}"
                    if family == "asyncio"
                    else f"private {family} module attribute {base.id}.{node.attr}",
                )
            else:
                private_attribute(node, node.attr, "private {whose} attribute .{name}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "setattr", "hasattr"}
        ):
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                private_attribute(
                    node, node.args[1].value, node.func.id + "(..., {name!r}) on a private {whose} attribute"
                )
    return found


def violations(
    source: str, filename: str, own_private: set[str], allowed: set[str] = frozenset(), tree: ast.AST | None = None
) -> list[str]:
    """What ``source`` does with the SDK's, Dagster's or asyncio's private parts, one line per use; ``allowed``:
    the families (``"dagster"``) whose private use this file is excused (:data:`ALLOWED_PRIVATE_USE`)."""
    return [line for family, line in private_uses(source, filename, own_private, tree) if family not in allowed]


def test_the_scan_catches_private_sdk_use() -> None:
    bad = (
        "from mcp.server._otel import OpenTelemetryMiddleware\n"
        "import asyncio\n"
        "loop = asyncio._get_running_loop()\n"
        "def f(server, client):\n"
        "    server._lowlevel_server.middleware.append(1)\n"
        "    server._tool_manager.get_tool('x')\n"
        "    return getattr(client.session, '_tool_output_schemas', None)\n"
    )
    found = sorted(violations(bad, "bad.py", set()), key=lambda line: int(line.split(":")[1]))
    assert [line.split(": ", 1)[1] for line in found] == [
        "import from private module mcp.server._otel",
        "asyncio._get_running_loop",
        "private SDK attribute ._lowlevel_server",
        "private SDK attribute ._tool_manager",
        "getattr(..., '_tool_output_schemas') on a private SDK attribute",
    ], found
    good = (
        "from mcp.server.mcpserver import MCPServer\ndef f(s):\n    s.middleware.append(1)\n    return s._own_thing\n"
    )
    assert violations(good, "good.py", {"_own_thing"}) == []


def test_the_scan_catches_private_dagster_use() -> None:
    bad = (
        "import dagster as dg\n"
        "import dagster._check as check\n"
        "from dagster._core.storage.sqlite_storage import DagsterSqliteStorage\n"
        "from dagster_shared.serdes import _whitelist_for_serdes\n"
        "def f(instance, context):\n"
        "    dg._core.instance.DagsterInstance.get()\n"
        "    instance._event_log_storage.dispose()\n"
        "    return getattr(instance, '_run_storage', None)\n"
    )
    found = sorted(violations(bad, "bad.py", set()), key=lambda line: int(line.split(":")[1]))
    assert [line.split(": ", 1)[1] for line in found] == [
        "import of private module dagster._check",
        "import from private module dagster._core.storage.sqlite_storage",
        "import of private name dagster_shared.serdes._whitelist_for_serdes",
        "private dagster module attribute dg._core",
        "private dagster attribute ._event_log_storage",
        "getattr(..., '_run_storage') on a private dagster attribute",
    ], found
    assert (
        violations(bad, "assets/instance_storage.py", set(), allowed={"dagster"}) == []
    )  # the exception excuses Dagster only
    assert violations("from mcp.server._otel import X\n", "x.py", set(), allowed={"dagster"}) != []
    good = (
        "import dagster as dg\n@dg.asset\ndef a(context: dg.AssetExecutionContext) -> int:\n"
        "    context.log.info('x')\n    return context._own_counter\n"
    )
    assert violations(good, "good.py", {"_own_counter"}) == []


def test_no_private_sdk_use_outside_tests() -> None:
    files = project_files()
    assert any(p.as_posix().endswith("servers/kit/server.py") for p in files)  # the scan sees the project
    sources = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in files}
    # what an excused file sets on Dagster's objects (self._event_log_storage = ...) is Dagster's, not the project's own
    trees = {rel: ast.parse(src, rel) for rel, src in sources.items()}  # each file parsed once
    own = _private_names_defined([tree for rel, tree in trees.items() if rel not in ALLOWED_PRIVATE_USE])
    found = [
        v
        for rel, src in sources.items()
        for v in violations(src, rel, own, ALLOWED_PRIVATE_USE.get(rel, set()), trees[rel])
    ]
    assert not found, "private SDK / Dagster use (use their public API):\n" + "\n".join(found)


def test_the_dagster_exception_is_still_needed_and_documented() -> None:
    for rel, families in ALLOWED_PRIVATE_USE.items():
        source = (ROOT / rel).read_text(encoding="utf-8")
        used = {family for family, _ in private_uses(source, rel, set())}
        assert families <= used, (
            f"{rel} no longer uses {sorted(families - used)} private API: drop it from ALLOWED_PRIVATE_USE"
        )
        top = "\n".join(source.splitlines()[:40])
        assert "test_public_sdk_only" in top, (
            f"{rel} must say near its top that it is the exception of tests/test_public_sdk_only.py"
        )
