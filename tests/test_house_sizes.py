"""Small modules and functions (house rule; issue 16): outside ``tests/``, no function over 120 lines and no
module over 600 lines. An AST scan of the same files ``test_public_sdk_only`` scans."""

import ast

from tests.test_public_sdk_only import ROOT, project_files

MAX_FUNCTION_LINES = 120
MAX_MODULE_LINES = 600


def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in project_files() if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, long


def test_no_function_is_over_120_lines():
    long = {}
    for p in project_files():
        for node in ast.walk(ast.parse(p.read_text(), filename=str(p))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{p.relative_to(ROOT)}:{node.lineno} {node.name}"] = n
    assert not long, long
