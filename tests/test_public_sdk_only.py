"""The project uses the mcp SDK (and asyncio) through their public API only (house rule; issue 16).

An AST scan of every Python file outside ``tests/``: no import from a private module of ``mcp`` /
``mcp_types`` (``mcp.server._otel``) or of a private name from them, no ``asyncio._*``, and no
``._name`` access (or ``getattr(x, "_name")``) where ``_name`` is a private attribute of the installed
SDK's own classes and modules that the project does not define itself (``server._lowlevel_server``,
``session._tool_output_schemas``).
"""

import ast
import functools
import importlib.util
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {"tests", "data", ".venv", "venv", ".git", "node_modules", "build", "dist", "__pycache__"}
SDK_PACKAGES = ("mcp", "mcp_types")
# always private SDK state, whatever the project names its own attributes
KNOWN_PRIVATE = {"_lowlevel_server", "_tool_manager", "_resource_manager", "_prompt_manager", "_tool_output_schemas",
                 "_server_info_stamp_source", "_request_handlers", "_notification_handlers"}


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


@functools.cache
def sdk_private_names() -> frozenset[str]:
    """Private attribute names the installed SDK defines on its classes and modules."""
    trees = []
    for pkg in SDK_PACKAGES:
        spec = importlib.util.find_spec(pkg)
        assert spec is not None and spec.submodule_search_locations, f"{pkg} is not installed"
        for root in spec.submodule_search_locations:
            for path in Path(root).rglob("*.py"):
                trees.append(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return frozenset(_private_names_defined(trees))


def _is_sdk_module(module: str) -> bool:
    return module.split(".")[0] in SDK_PACKAGES


def violations(source: str, filename: str, own_private: set[str]) -> list[str]:
    """What ``source`` does with the SDK's (or asyncio's) private parts, one line per use."""
    tree = ast.parse(source, filename)
    forbidden = (sdk_private_names() - own_private) | KNOWN_PRIVATE
    found: list[str] = []

    def flag(node: ast.AST, what: str) -> None:
        found.append(f"{filename}:{getattr(node, 'lineno', '?')}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (_is_sdk_module(node.module) or node.module == "asyncio"):
            if any(p.startswith("_") for p in node.module.split(".")):
                flag(node, f"import from private module {node.module}")
            for alias in node.names:
                if alias.name.startswith("_"):
                    flag(node, f"import of private name {node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_sdk_module(alias.name) and any(p.startswith("_") for p in alias.name.split(".")):
                    flag(node, f"import of private module {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            if isinstance(base, ast.Name) and base.id == "asyncio":
                flag(node, f"asyncio.{node.attr}")
            elif node.attr in forbidden:
                flag(node, f"private SDK attribute .{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"getattr", "setattr", "hasattr"}:
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in forbidden:
                flag(node, f"{node.func.id}(..., {node.args[1].value!r}) on a private SDK attribute")
    return found


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
    good = "from mcp.server.mcpserver import MCPServer\ndef f(s):\n    s.middleware.append(1)\n    return s._own_thing\n"
    assert violations(good, "good.py", {"_own_thing"}) == []


def test_no_private_sdk_use_outside_tests() -> None:
    files = project_files()
    assert any(p.as_posix().endswith("servers/kit/server.py") for p in files)  # the scan sees the project
    sources = {p: p.read_text(encoding="utf-8") for p in files}
    own = _private_names_defined([ast.parse(src, str(p)) for p, src in sources.items()])
    found = [v for p, src in sources.items() for v in violations(src, str(p.relative_to(ROOT)), own)]
    assert not found, "private SDK use (use mcp's public API):\n" + "\n".join(found)
