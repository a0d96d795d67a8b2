"""Small rooms (house rules): outside ``tests/``, no function over 120 lines; outside ``tests/`` and ``bench/``, no
module over 600 lines and no class over 300 (issue 54: split by concern, a table of words moved to a data file where
that reads better). An AST scan of the same files ``test_public_sdk_only`` scans. (What a module holds is kept to one
concern by the layers contract and the no-circle test in ``tests/test_house_layers.py``; the counts catch a room that
has grown past holding in one's head.)"""

import ast

from tests.test_public_sdk_only import ROOT, project_files

MAX_FUNCTION_LINES = 120
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 300


def _product_files():
    return [p for p in project_files() if p.relative_to(ROOT).parts[0] != "bench"]


def test_no_function_is_over_120_lines():
    long = {}
    for p in project_files():
        for node in ast.walk(ast.parse(p.read_text(), filename=str(p))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{p.relative_to(ROOT)}:{node.lineno} {node.name}"] = n
    assert not long, long


def test_no_module_is_over_600_lines_and_no_class_over_300():
    long = {}
    for p in _product_files():
        text = p.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            long[str(p.relative_to(ROOT))] = text.count("\n")
        for node in ast.walk(ast.parse(text, filename=str(p))):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                long[f"{p.relative_to(ROOT)}:{node.lineno} {node.name}"] = node.end_lineno - node.lineno + 1
    assert not long, long
