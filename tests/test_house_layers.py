"""The house's shape: the layers of pipeline/ (an import-linter contract in pyproject.toml), no import circle
anywhere in the product, function-level imports of our own code only where they defer something heavy,
and per-server assets whose code versions cannot see the corpus writer, its charts or its linter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx

from assets import code_versions as CV
from assets import synthesis as S

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("servers", "pipeline", "training", "assets")


def test_the_layers_contracts_hold():
    """pipeline's layers and the packages' one import direction, as import-linter checks them."""
    exe = Path(sys.executable).with_name("lint-imports")
    r = subprocess.run([str(exe), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout and "2 kept" in r.stdout, r.stdout[-2000:]


def import_circles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """The import circles of a module graph: each strongly connected part of more than one module, sorted."""
    g = nx.DiGraph(edges)
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def product_imports() -> list[tuple[str, str]]:
    """Every import between two product modules, at the top or inside a function (not under TYPE_CHECKING)."""
    graph = grimp.build_graph(*PRODUCT, exclude_type_checking_imports=True)
    return [(m, d) for m in graph.modules for d in graph.find_modules_directly_imported_by(m)]


def test_no_import_circle_in_the_product():
    edges = product_imports()
    assert len(edges) > 300, "the graph was read"
    assert import_circles(edges) == []


def test_the_circle_check_finds_a_circle():
    assert import_circles([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]) == [["a", "b", "c"]]
    assert import_circles([("a", "b"), ("b", "c")]) == []


def deferred_imports_without_reason(source: str, own: tuple[str, ...] = PRODUCT) -> list[int]:
    """Lines of function-level imports of our own modules that do not say why they are deferred: a comment on
    the import's line, or the line above it, starting ``deferred:``."""
    tree = ast.parse(source)
    lines = source.splitlines()
    top = {id(n) for n in tree.body}
    for n in tree.body:  # imports under a top-level if/try (TYPE_CHECKING, optional packages) are module-level
        if isinstance(n, (ast.If, ast.Try)):
            top.update(id(m) for m in ast.walk(n))
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in top:
            continue
        mod = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
        if not (getattr(node, "level", 0) or (mod or "").split(".")[0] in own):
            continue
        if not _says_deferred(lines, node.lineno - 1):
            bad.append(node.lineno)
    return bad


def _says_deferred(lines: list[str], i: int) -> bool:
    """The import at line index ``i``, or the block of imports and comments right above it, says ``# deferred:``."""
    while i >= 0:
        line = lines[i].strip()
        if "# deferred:" in line:
            return True
        if not line.startswith(("import ", "from ", "#")) or (i < len(lines) and not line):
            return False
        i -= 1
    return False


def test_function_level_imports_of_our_code_say_what_they_defer():
    bad = {}
    for pkg in PRODUCT:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            lines = deferred_imports_without_reason(f.read_text())
            if lines:
                bad[str(f.relative_to(ROOT))] = lines
    assert bad == {}, f"import at the top, or say '# deferred: <what it defers>' beside it: {bad}"


def test_the_deferred_import_check_sees_an_unexplained_one():
    src = (
        "import os\n\n\ndef f():\n    from pipeline.core import config\n    # deferred: torch\n"
        "    from training import train\n    from training import config\n    x = 1\n"
        "    from assets.cli import console\n"
        "    from assets import progress  # deferred: dagster\n"
    )
    assert deferred_imports_without_reason(src) == [5, 10]


def per_server_closure() -> set[str]:
    return set().union(*(CV.import_closure(CV.function_modules(a.op.compute_fn.decorated_fn)) for a in S.PER_SERVER))


def test_per_server_assets_code_versions_never_see_the_corpus_code():
    """Editing the corpus writer, its charts, its linter or its SQL views leaves every synthesis asset fresh."""
    closure = per_server_closure()
    assert {"pipeline.stages.discovery", "pipeline.stages.synthesis", "pipeline.synthesis.simulate"} <= closure
    held = sorted(
        m
        for m in closure
        if m.startswith(
            (
                "pipeline.corpus",
                "pipeline.assembly",
                "pipeline.stages.assembly",
                "pipeline.stages.registry",
                "training",
                "assets.corpus",
                "assets.training",
            )
        )
    )
    assert held == []


def test_editing_the_corpus_report_leaves_every_synthesis_asset_fresh(tmp_path):
    """The code versions of the per-server assets, computed on a copy of the tree whose chart module changed."""
    import shutil

    for pkg in CV.project_packages(CV.ROOT):
        shutil.copytree(CV.ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    fns = [a.op.compute_fn.decorated_fn for a in S.PER_SERVER]
    before = [CV.code_version(fn, tmp_path) for fn in fns]
    for module in ("pipeline.corpus.report", "pipeline.corpus.lint", "pipeline.corpus.store"):
        f = CV.module_file(module, tmp_path)
        f.write_text(f.read_text() + "\n# a changed chart\n")
    assert [CV.code_version(fn, tmp_path) for fn in fns] == before
    f = CV.module_file("pipeline.synthesis.simulate", tmp_path)
    f.write_text(f.read_text() + "\n# a changed simulator\n")
    after = [CV.code_version(fn, tmp_path) for fn in fns]
    changed = [a.key.to_user_string() for a, b, c in zip(S.PER_SERVER, before, after) if b != c]
    assert {"conversations", "validated_conversations"} <= set(changed)
