"""A walk of protobuf's wire format, for the binary reader
(`pipeline.reading.binary`): what message some bytes are, and the byte
where a broken one breaks.

Python's protobuf parses any bytes as any message (what it does not know
is an unknown field) and says nowhere where decoding failed, so the reader
walks the wire format itself: field tags, varints and lengths, checked
against the field numbers and wire types of XLA's messages. Those tables
are derived from the one declaration of XLA's schema
(`passes.hlo.schema`). Every walk is a loop over a stack or a list: a
message nests as deep as its bytes say.
"""

from __future__ import annotations

from passes.hlo import schema
from passes.hlo.schema import I32, I64, LEN, VARINT

__all__ = ["FORMS", "MODULE_FORMS", "OUTER", "Broken", "broken_inside", "conforms", "module_end", "nesting", "scan", "starts_as_module"]


class Broken(Exception):
    """The wire format breaks at byte `offset`: `why`."""

    def __init__(self, offset: int, why: str):
        super().__init__(why)
        self.offset, self.why = offset, why


def varint(data: bytes, at: int, end: int) -> tuple[int, int]:
    """(the varint at `at`, the byte after it); Broken where it breaks."""
    value, shift, start = 0, 0, at
    while True:
        if at >= end:
            raise Broken(start, "the data ends inside a number (truncated)")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift >= 70:
            raise Broken(start, "a number longer than 10 bytes")


def scan(data: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    """The fields of the message in data[start:end], as (number, wire type,
    payload start, payload end); Broken at the byte where the wire format breaks."""
    fields, at = [], start
    while at < end:
        tag_at = at
        tag, at = varint(data, at, end)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise Broken(tag_at, "a field numbered 0")
        if wire == VARINT:
            _, after = varint(data, at, end)
        elif wire == I64:
            after = at + 8
        elif wire == I32:
            after = at + 4
        elif wire == LEN:
            length, at = varint(data, at, end)
            after = at + length
        else:
            raise Broken(tag_at, f"field {number} has wire type {wire}, which protobuf does not write")
        if after > end:
            raise Broken(tag_at, f"field {number} needs {after - at} bytes, {end - at} remain (truncated)")
        fields.append((number, wire, at, after))
        at = after
    return fields


# Messages XLA writes beside its modules, to name them (`schema.wire_forms`). A literal's
# shape, a snapshot's module and its buffer assignment are not walked.
FORMS = schema.wire_forms(("LiteralProto", "HloSnapshot", "BufferAssignmentProto"),
                          opaque=("ShapeProto", "HloProto.buffer_assignment"), leave_out=("HloProto.hlo_module",))
# A module, walked through every message declared (its shapes too).
MODULE_FORMS = schema.wire_forms(("HloModuleProto",))
_WIRES = {"varint": {VARINT}, "len": {LEN}, "packed": {VARINT, LEN}, "packed32": {I32, LEN},
          "packed64": {I64, LEN}, "i32": {I32}, "i64": {I64}}


def conforms(data: bytes, message: str, forms: dict = FORMS) -> bool:
    """Whether `data` is a `message` of `forms`, down to its last nested
    message: each declared field with its wire type (a stack, not
    recursion). Fields not declared pass: XLA adds fields to its messages."""
    return nesting(data, message, forms) is not None


def nesting(data: bytes, message: str, forms: dict = FORMS) -> int | None:
    """How deep the messages of `data`, a `message` of `forms`, nest (1:
    no message inside), or None if it is no such message (`conforms`)."""
    stack, deepest = [(0, len(data), message, 1)], 0
    while stack:
        start, end, name, depth = stack.pop()
        deepest = max(deepest, depth)
        try:
            fields = scan(data, start, end)
        except Broken:
            return None
        for number, wire, at, after in fields:
            form = forms[name].get(number)
            if form is None:  # a field newer than these declarations
                continue
            if form in _WIRES:
                if wire not in _WIRES[form]:
                    return None
            elif wire != LEN:
                return None
            else:
                stack.append((at, after, form, depth + 1))
    return deepest


# The outer fields of the messages that hold a module ({number: wire type}), the module's field 1 in each.
OUTER = {message: schema.wire_types(message) for message in ("HloModuleProto", "HloProto", "HloSnapshot")}
_INNER = {"HloProto": schema.number("HloProto", "hlo_module"), "HloSnapshot": schema.number("HloSnapshot", "hlo")}
_NAME = schema.number("HloModuleProto", "name")
_COMPUTATIONS = schema.number("HloModuleProto", "computations")
_INSTRUCTIONS = schema.number("HloComputationProto", "instructions")


def starts_as_module(data: bytes) -> bool:
    """Whether `data` starts as a serialized HloModuleProto, HloProto or
    HloSnapshot does: its first two fields are fields that message has, of
    their wire types (`OUTER`), or the data ends inside or after the first
    one (cut short). Text with a stray control character does not."""
    end = len(data)
    for fields_of in OUTER.values():
        at, count = 0, 0
        while count < 2 and at < end:
            try:
                tag, at = varint(data, at, end)
                if fields_of.get(tag >> 3) != tag & 7:
                    break
                if tag & 7 == LEN:
                    length, at = varint(data, at, end)
                    at += length
                else:
                    _, at = varint(data, at, end)
            except Broken:  # the data ends inside a number: cut short
                at = end + 1
            count += 1
        else:
            return count > 0
    return False


def module_end(data: bytes, read) -> tuple[str, int, str] | None:
    """(kind, byte, why) if `data` up to `byte` is a whole module's message
    (its outer fields, as `OUTER` has them, read as a module by `read`,
    which gives an object with a `kind` or None) and the rest is not:
    garbage after a module, or a later field cut short. None if no such
    byte (the module itself breaks: the other diagnoses say where)."""
    end = len(data)
    for kind, fields_of in OUTER.items():
        at = 0
        while at < end:
            try:
                tag, after = varint(data, at, end)
                number, wire = tag >> 3, tag & 7
                if fields_of.get(number) != wire:
                    why = f"field {number} (wire type {wire}) is no field of an {kind}"
                    break
                if wire == LEN:
                    length, after = varint(data, after, end)
                    after += length
                else:
                    _, after = varint(data, after, end)
            except Broken as broken:
                why = broken.why
                break
            if after > end:
                why = f"field {number} needs {after - end} bytes more than remain (truncated)"
                break
            at = after
        if 0 < at < end:
            found = read(data[:at])
            if found is not None:
                return found.kind, at, why
    return None


def broken_inside(data: bytes, outers: tuple[str, ...]) -> Broken | None:
    """If `data` is the messages `outers` around an HloModuleProto (each
    one's outer fields as `OUTER` has them, the next one in its field 1:
    `hlo_module`, `hlo`),
    and the module's wire format breaks: where (None if it reads, or
    `data` is not such a nesting)."""
    start, end = 0, len(data)
    for outer in (*outers, "HloModuleProto"):
        try:
            fields = scan(data, start, end)
        except Broken as broken:
            return broken if outer == "HloModuleProto" and outers else None
        if not fields or any(OUTER[outer].get(n) != w for n, w, _, _ in fields):
            return None
        if outer == "HloModuleProto":
            break
        inner = [f for f in fields if f[0] == _INNER[outer]]
        if len(inner) != 1:
            return None
        start, end = inner[0][2], inner[0][3]
    names = [f for f in fields if f[0] == _NAME]
    try:
        if len(names) != 1 or not data[names[0][2]:names[0][3]].decode("utf-8").strip():
            return None  # a module has one name
        for number, _, at, after in fields:  # its computations, then their instructions
            if number == _COMPUTATIONS:
                for inner_number, wire, i_at, i_after in scan(data, at, after):
                    if inner_number == _INSTRUCTIONS and wire == LEN:
                        scan(data, i_at, i_after)
    except UnicodeDecodeError:
        return None
    except Broken as broken:
        return broken
    return None
