"""`passes.hlo.schema`, the one declaration of XLA's messages, held to XLA's
own protos: what the classes built from it decode out of XLA's serialized
modules is what XLA's printing of the same module says, every field the
declaration names is decoded with the type it declares, and the wire walk's
tables (`pipeline.reading.wire`) say what the classes say."""

from __future__ import annotations

import re

import pytest
from google.protobuf.unknown_fields import UnknownFieldSet

from passes.hlo import proto, schema
from paths import TESTS
from pipeline.reading import binary, wire
from pipeline.reading.parameters import shape_text
from pipeline.xla import native

MODULES = sorted(TESTS.glob("xla_style/*.hlo"))[:40]
RUNNABLE = proto.runnable_classes()
_LAYOUT_OR_COMMENT = re.compile(r"\{[^{}]*\}|/\*.*?\*/|\s")


def xla_protos():
    for path in MODULES:
        try:
            data = native.parse_to_proto(path.read_text())
            printed = native.print_proto(data)
        except Exception:  # a module of the corpus written to be refused
            continue
        yield path.name, data, printed


PROTOS = list(xla_protos())


def messages(message):
    """`message` and every message inside it (a stack)."""
    stack = [message]
    while stack:
        m = stack.pop()
        yield m
        for field, value in m.ListFields():
            if field.type != field.TYPE_MESSAGE:
                continue
            if field.message_type.GetOptions().map_entry:
                if field.message_type.fields_by_name["value"].type == field.TYPE_MESSAGE:
                    stack.extend(value.values())
            else:
                stack.extend(value if field.is_repeated else [value])


def test_the_corpus_gives_protos():
    assert len(PROTOS) >= 20


@pytest.mark.parametrize("classes", [proto, RUNNABLE], ids=["module", "runnable"])
def test_no_declared_field_of_xlas_protos_is_left_unread(classes):
    """A field XLA writes with a number the declaration gives it is decoded
    (a wrong type would leave it an unknown field)."""
    module_class = classes.HloModuleProto if classes is proto else classes["HloModuleProto"]
    for name, data, _ in PROTOS:
        module = module_class.FromString(data)
        for m in messages(module):
            declared = {f.number for f in m.DESCRIPTOR.fields}
            unread = {f.field_number for f in UnknownFieldSet(m)} & declared
            assert not unread, (name, m.DESCRIPTOR.full_name, unread)


def test_shapes_names_and_edges_decoded_are_xlas_printing():
    """Each instruction's name, opcode, shape (element type, dimensions,
    tuple elements) and control predecessors as decoded are those XLA prints."""
    checked = edges = 0
    for name, data, printed in PROTOS:
        module = proto.HloModuleProto.FromString(data)
        lines = {}
        for line in printed.splitlines():
            found = re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = (.*?) ([\w\-]+)\(", line)
            if found:
                lines[found[1]] = (found[2], found[3], line)
        for computation in module.computations:
            names = {i.id: i.name for i in computation.instructions}
            for i in computation.instructions:
                if i.name not in lines:  # an async op's wrapped computation: XLA prints it as its sugar
                    continue
                shape, opcode, line = lines[i.name]
                assert opcode == i.opcode or i.opcode.startswith("async"), (name, i.name)  # async: printed as sugar
                ours = shape_text(i.shape)
                if "type" not in ours and "<=" not in shape:
                    assert _LAYOUT_OR_COMMENT.sub("", shape) == ours.replace(" ", ""), (name, i.name, line)
                    checked += 1
                printed_preds = re.search(r"control-predecessors=\{([^}]*)\}", line)
                assert sorted(f"%{names[p]}" for p in i.control_predecessor_ids) == sorted(
                    printed_preds[1].replace(" ", "").split(",") if printed_preds else []), (name, i.name)
                edges += len(i.control_predecessor_ids)
    assert checked > 100 and edges > 20


def test_layouts_decoded_are_xlas_printing():
    module = RUNNABLE["HloModuleProto"].FromString(native.parse_to_proto(
        "HloModule m\nENTRY %e (x: f32[2,3]) -> f32[3,2] {\n  %x = f32[2,3]{0,1} parameter(0)\n"
        "  ROOT %t = f32[3,2]{1,0} transpose(%x), dimensions={1,0}\n}\n"))
    [computation] = module.computations
    assert [list(i.shape.layout.minor_to_major) for i in computation.instructions] == [[0, 1], [1, 0]]
    assert list(computation.instructions[1].dimensions) == [1, 0]


def test_the_binary_readers_classes_and_the_wire_tables_are_the_declaration():
    for message, fields in schema.XLA.items():
        types = schema.wire_types(message)
        assert sorted(types) == sorted(number for _, number, _ in fields)
        for field_name, number, _ in fields:
            for classes in (binary._CLASSES, {"HloModuleProto": proto.HloModuleProto,
                                              "ShapeProto": proto.ShapeProto}, RUNNABLE):
                if message in classes and field_name in classes[message].DESCRIPTOR.fields_by_name:
                    assert classes[message].DESCRIPTOR.fields_by_name[field_name].number == number
            form = wire.FORMS.get(message, {}).get(number)
            assert form is None or form in schema.XLA or types[number] in {
                "varint": {0}, "len": {2}, "packed": {2}, "packed32": {2}, "packed64": {2}, "i32": {5},
                "i64": {1}}[form]
    assert wire.OUTER["HloModuleProto"] == schema.wire_types("HloModuleProto")


def test_xlas_protos_walk_as_the_wire_tables_say():
    """XLA's serialized modules are HloModuleProtos to the wire walk, through
    every declared nested message, and hold no top-level field it does not know."""
    for name, data, _ in PROTOS:
        assert wire.conforms(data, "HloModuleProto", wire.MODULE_FORMS), name
        top = {number: kind for number, kind, _, _ in wire.scan(data, 0, len(data))}
        assert all(wire.OUTER["HloModuleProto"].get(n) == k for n, k in top.items()), name
