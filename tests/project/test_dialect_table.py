"""One table per dialect (`passes.dialects`): every op name in it is an op
MLIR knows, every pass it names is one MLIR's pipeline parser knows, and no
other module of the project spells an op name in its code."""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import re

import pytest
from jaxlib.mlir import passmanager

from passes import dialects
from pipeline.xla.mlir_context import make_context, register_passes
from paths import REPO

PACKAGES = ("pipeline", "passes", "printer", "bench")
TABLE = REPO / "passes" / "dialects.py"
OP_NAME = re.compile(r"\b(?:stablehlo|mhlo|chlo|func|sdy)\.[a-z][a-z_]*\b")


def table_op_names() -> set[str]:
    names = {dialects.FUNC_FUNC, dialects.FUNC_RETURN}
    for row in dialects.DIALECTS.values():
        for f in dataclasses.fields(row):
            value = getattr(row, f.name)
            if isinstance(value, str) and "." in value:
                names.add(value)
    return names


def test_every_op_name_in_the_table_is_an_op_mlir_registers():
    context = make_context()
    unknown = sorted(name for name in table_op_names() if not context.is_registered_operation(name))
    assert not unknown, f"not ops of any dialect loaded by the chain: {unknown}"
    # Each row spells its own dialect's ops.
    for row in dialects.DIALECTS.values():
        for f in dataclasses.fields(row):
            value = getattr(row, f.name)
            if isinstance(value, str) and "." in value:
                assert dialects.namespace(value) == row.name, (row.name, f.name, value)


@pytest.mark.parametrize("name", list(dialects.DIALECTS))
def test_the_passes_a_row_names_are_known_to_mlir(name):
    register_passes()
    context = make_context()
    for pass_name in dialects.DIALECTS[name].from_stablehlo:
        with context:
            passmanager.PassManager.parse(f"builtin.module({pass_name})")  # raises on an unknown pass


def test_the_sets_hold_each_dialect_and_the_kinds_agree():
    assert dialects.TUPLE_OPS == {row.tuple for row in dialects.DIALECTS.values()}
    assert dialects.RETURN_OPS >= {dialects.FUNC_RETURN}
    for row in dialects.DIALECTS.values():
        assert dialects.kind(row.custom_call) == "custom_call"
        assert dialects.kind(row.get_tuple_element) == "get_tuple_element"
    assert set(dialects.EXECUTABLE) == {*dialects.DIALECTS, dialects.FUNC}


def test_an_unknown_dialect_is_refused_with_the_choices():
    with pytest.raises(dialects.UnknownDialect, match="unknown dialect 'stablhlo': choose 'stablehlo' or 'mhlo'"):
        dialects.dialect("stablhlo")


def _code_strings(tree: ast.AST):
    """Every string constant of the code, docstrings left out."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node


def spelled_op_names(root: pathlib.Path = REPO) -> list[str]:
    """`file:line: name` for every registered op name spelled in a string of
    the project's code outside the table."""
    context = make_context()
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if path == root / TABLE.relative_to(REPO):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in _code_strings(tree):
                for name in OP_NAME.findall(node.value):
                    if context.is_registered_operation(name):
                        found.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    return found


def test_no_op_name_is_spelled_outside_the_table():
    found = spelled_op_names()
    assert not found, "op names spelled outside passes/dialects.py:\n" + "\n".join(found)


def test_the_scan_finds_a_planted_op_name(tmp_path):
    # The scan itself must see an op name in code, and not in a docstring.
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "passes" / "dialects.py").write_text('X = "stablehlo.tuple"\n')
    (tmp_path / "printer" / "planted.py").write_text(
        '"""Mentions stablehlo.tuple in prose."""\n\nTUPLES = {"mhlo.tuple", "mhlo.not_an_op"}\n')
    assert spelled_op_names(tmp_path) == ["printer/planted.py:3: mhlo.tuple"]
