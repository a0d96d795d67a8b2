"""Small functions (house rule): outside ``tests/``, no function over 120 lines. An AST scan of the same files
``test_public_sdk_only`` scans. (Modules are kept to one concern by the layers contract and the no-circle test
in ``tests/test_house_layers.py``, not by a line count.)"""

import ast

from tests.test_public_sdk_only import ROOT, project_files

MAX_FUNCTION_LINES = 120


def test_no_function_is_over_120_lines():
    long = {}
    for p in project_files():
        for node in ast.walk(ast.parse(p.read_text(), filename=str(p))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{p.relative_to(ROOT)}:{node.lineno} {node.name}"] = n
    assert not long, long
