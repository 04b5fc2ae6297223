"""XLA's protobuf schema is declared once, in `passes.hlo.schema`: no other
source declares a protobuf field (`descriptor_pb2`), pairs one of XLA's
field names with its number, or writes a table of field numbers (a dict
keyed by three or more ints whose values are wire types or forms, field
or message names). The sources are read with `ast`, never imported."""

from __future__ import annotations

import ast

from paths import REPO as ROOT

from passes.hlo import schema

SCHEMA = ROOT / "passes" / "hlo" / "schema.py"
SOURCES = [p for folder in ("pipeline", "passes", "printer") for p in sorted((ROOT / folder).rglob("*.py"))]
FIELDS = {(name, number) for fields in schema.XLA.values() for name, number, _ in fields}
WORDS = ({name for name, _ in FIELDS} | set(schema.XLA)
         | {"varint", "len", "packed", "packed32", "packed64", "i32", "i64"})
WIRE_NAMES = {"_VARINT", "_LEN", "_I32", "_I64", "VARINT", "LEN", "I32", "I64"}


def _value_is_schema_word(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in WORDS or node.value.split(" (")[0] in WORDS
    if isinstance(node, ast.Name):
        return node.id in WIRE_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in WIRE_NAMES
    return False


def schema_declarations(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "descriptor_pb2" or (
                isinstance(node, ast.Attribute) and node.attr in ("descriptor_pb2", "FieldDescriptorProto")):
            found.append(f"line {node.lineno}: protobuf's descriptor API")
        elif isinstance(node, (ast.ImportFrom, ast.Import)) and any(
                a.name in ("descriptor_pb2", "google.protobuf.descriptor_pb2") for a in node.names):
            found.append(f"line {node.lineno}: imports descriptor_pb2")
        elif isinstance(node, ast.Tuple) and len(node.elts) >= 2:
            name, number = node.elts[0], node.elts[1]
            if (isinstance(name, ast.Constant) and isinstance(number, ast.Constant)
                    and (name.value, number.value) in FIELDS and number.value is not True):
                found.append(f"line {node.lineno}: field {name.value!r} numbered {number.value}")
        elif isinstance(node, ast.Dict):
            ints = [k for k in node.keys if isinstance(k, ast.Constant) and type(k.value) is int]
            if len(ints) >= 3 and all(_value_is_schema_word(v) for v in node.values):
                found.append(f"line {node.lineno}: a table of {len(ints)} field numbers")
    return found


def test_the_scan_sees_a_declaration():
    assert schema_declarations(ast.parse('F = descriptor_pb2.FieldDescriptorProto\n'))
    assert schema_declarations(ast.parse('S = [("dimensions", 3, F.TYPE_INT64)]\n'))
    assert schema_declarations(ast.parse('T = {1: _LEN, 2: _LEN, 5: _VARINT}\n'))
    assert schema_declarations(ast.parse('T = {2: "packed", 3: "len", 10: "LiteralProto"}\n'))
    assert schema_declarations(ast.parse('T = {1: "preds", 2: "s8s", 4: "s32s"}\n'))
    assert not schema_declarations(ast.parse('T = {1: ("pred", "bool"), 2: ("s8", "int8"), 3: ("s16", "int16")}\n'))


def test_xlas_field_numbers_are_declared_only_in_the_schema():
    found = {str(p.relative_to(ROOT)): d for p in SOURCES if p != SCHEMA
             if (d := schema_declarations(ast.parse(p.read_text(), str(p))))}
    assert not found, f"XLA's schema written outside passes/hlo/schema.py: {found}"
    assert schema_declarations(ast.parse(SCHEMA.read_text()))  # the one place it is written
