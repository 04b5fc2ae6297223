"""The chain's binary inputs, recognized by their content (never by their
name): a serialized `HloModuleProto`; an `HloProto`, which XLA writes for
each stage with `--xla_dump_hlo_as_proto` (`*.hlo.pb`: its `hlo_module`);
an `HloSnapshot`, which XLA writes with `--xla_dump_hlo_snapshots`
(`*.snapshot.N.pb`: its `hlo.hlo_module`, and the arguments it ran with);
and a serialized `jax.export` artifact (`exported.serialize()`), which the
chain compiles as `sources.from_export` does (`sources.export_module`).

    kind = sniff(data)                    # "text", "proto" or "jax.export"
    found = read_binary(data, "x.hlo.pb")  # a BinaryModule: kind, module (bytes), arguments()

Anything else binary is a `BadBinary`: one line that says what it is (a
truncated or corrupted proto and the byte where decoding fails, a
`BufferAssignmentProto`, a snapshot without a module, another message) and
what to give instead. XLA's own reading of a module (`isolated.read_proto`)
is the verdict on it; the chain then works on the proto as given, so the
names in reports and programs are the proto's instruction names.

Why the messages are declared here: jaxlib ships neither XLA's `.proto`
files nor Python classes for them, so `protobuf`'s descriptor API declares
the few fields the chain reads, with the field numbers of XLA's
`xla/service/hlo.proto` and `xla/xla_data.proto` (they are XLA's wire
format). The module itself is `passes.hlo.proto.HloModuleProto`. Python's
protobuf parses any bytes as any message (what it does not know is an
unknown field) and says nowhere where decoding failed, so telling the
message types apart, and the byte a broken proto breaks at, is a walk of
the wire format against the declared field numbers (`_conforms`, `_scan`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError

from passes.errors import ChainError
from passes.hlo import proto as hlo_proto
from pipeline.reading.parsed import decode_proto

__all__ = ["BadBinary", "BinaryModule", "read_binary", "sniff"]

_F = descriptor_pb2.FieldDescriptorProto
_OPT, _REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_PACKAGE = "hlo2penguin.xla_dumps"

# (message, [(field, number, type, label, message type)]): XLA's numbers.
_SCHEMA = [
    ("LayoutProto", [("minor_to_major", 1, _F.TYPE_INT64, _REP, None)]),
    ("ShapeProto", [
        ("element_type", 2, _F.TYPE_INT32, _OPT, None),
        ("dimensions", 3, _F.TYPE_INT64, _REP, None),
        ("tuple_shapes", 4, _F.TYPE_MESSAGE, _REP, "ShapeProto"),
        ("layout", 5, _F.TYPE_MESSAGE, _OPT, "LayoutProto"),
    ]),
    ("LiteralProto", [
        ("shape", 1, _F.TYPE_MESSAGE, _OPT, "ShapeProto"),
        ("preds", 2, _F.TYPE_BOOL, _REP, None),
        ("u8s", 3, _F.TYPE_BYTES, _OPT, None),
        ("s32s", 4, _F.TYPE_INT32, _REP, None),
        ("s64s", 5, _F.TYPE_INT64, _REP, None),
        ("u32s", 6, _F.TYPE_UINT32, _REP, None),
        ("u64s", 7, _F.TYPE_UINT64, _REP, None),
        ("f32s", 8, _F.TYPE_FLOAT, _REP, None),
        ("f64s", 9, _F.TYPE_DOUBLE, _REP, None),
        ("tuple_literals", 10, _F.TYPE_MESSAGE, _REP, "LiteralProto"),
        ("f16s", 11, _F.TYPE_BYTES, _OPT, None),
        ("c64s", 12, _F.TYPE_FLOAT, _REP, None),
        ("bf16s", 13, _F.TYPE_BYTES, _OPT, None),
        ("s8s", 15, _F.TYPE_BYTES, _OPT, None),
        ("u16s", 16, _F.TYPE_BYTES, _OPT, None),
        ("s16s", 17, _F.TYPE_BYTES, _OPT, None),
        ("c128s", 18, _F.TYPE_DOUBLE, _REP, None),
    ]),
    # The module stays bytes: the chain reads it as passes.hlo.proto's HloModuleProto, as XLA wrote it.
    ("HloProto", [
        ("hlo_module", 1, _F.TYPE_BYTES, _OPT, None),
        ("buffer_assignment", 3, _F.TYPE_BYTES, _OPT, None),
    ]),
    ("HloSnapshot", [
        ("hlo", 1, _F.TYPE_MESSAGE, _OPT, "HloProto"),
        ("arguments", 2, _F.TYPE_MESSAGE, _REP, "LiteralProto"),
        ("result", 3, _F.TYPE_MESSAGE, _OPT, "LiteralProto"),
        ("execution_platform", 4, _F.TYPE_STRING, _OPT, None),
    ]),
]


_CLASSES = hlo_proto.message_classes("hlo2penguin/xla_dumps.proto", _SCHEMA, package=_PACKAGE)
HloProto = _CLASSES["HloProto"]
HloSnapshot = _CLASSES["HloSnapshot"]
LiteralProto = _CLASSES["LiteralProto"]


class BadBinary(ChainError):
    """A binary input that is no module the chain reads: one line, what and where, and what to give.
    `broken`: it is a module's proto, but broken (truncated, corrupted, without its module); not
    another message (XLA's options, reports and buffer assignments beside its modules)."""

    def __init__(self, message: str, where: str | None = None, *, broken: bool = True):
        super().__init__(message, where)
        self.broken = broken


WHAT_TO_GIVE = ("give HLO text, XLA's *.hlo.pb or snapshot, a serialized HloModuleProto, or a jax.export "
                "artifact")


@dataclass
class BinaryModule:
    """A module read out of a binary input."""

    kind: str                 # "HloModuleProto", "HloProto" or "HloSnapshot"
    module: bytes             # the serialized HloModuleProto, as the input holds it
    proto: object = field(repr=False, default=None)  # it, decoded (passes.hlo.proto.HloModuleProto)
    _arguments: list = field(repr=False, default_factory=list)  # an HloSnapshot's LiteralProtos

    @property
    def has_arguments(self) -> bool:
        return bool(self._arguments)

    def arguments(self, where: str = "the snapshot") -> list:
        """An HloSnapshot's arguments as numpy arrays (the inputs it ran with): `literals.BadArgument`
        for one whose shape its values do not fill."""
        from pipeline.reading.literals import literal_array

        return [literal_array(lit, i, where) for i, lit in enumerate(self._arguments)]

    @property
    def control_edges(self) -> int:
        return sum(len(i.control_predecessor_ids) for c in self.proto.computations for i in c.instructions)


# --------------------------------------------------------------------------
# What the bytes are
# --------------------------------------------------------------------------


def sniff(data: bytes | str) -> str:
    """"text", "proto" (a module's proto, or a broken one: `read_binary`
    says why) or "jax.export" (a flatbuffer that jax.export reads back),
    decided by what the bytes are, never by a word in them (a proto's names
    and metadata can hold any). Protobuf's wire format always holds C0
    control bytes (its field tags: a module's computations are field 3,
    0x1a), and so does a flatbuffer (its offsets' zero bytes); HLO text
    never does, tab and line breaks aside. So bytes without one are text
    (not UTF-8: the text's own error says where); bytes with one are binary,
    unless they are UTF-8 that does not even start as a module's message
    (`_starts_as_module`) and reads as none: text with a stray control
    character, for XLA's parser to say where."""
    if isinstance(data, str) or _CONTROL_CHARACTER.search(data) is None:
        return "text"
    if _looks_like_flatbuffer(data) and _jax_export(data) is not None:
        return "jax.export"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "proto"
    if _starts_as_module(data) or _read(data) is not None:
        return "proto"
    return "text"


# What no text has (tab, line breaks and form feed aside), searched for in the whole input.
_CONTROL_CHARACTER = re.compile(b"[\x00-\x08\x0e-\x1f]")


def _starts_as_module(data: bytes) -> bool:
    """Whether `data` starts as a serialized HloModuleProto, HloProto or
    HloSnapshot does: its first two fields are fields that message has, of
    their wire types (`_OUTER`), or the data ends inside or after the first
    one (cut short). Text with a stray control character does not."""
    end = len(data)
    for fields_of in _OUTER.values():
        at, count = 0, 0
        while count < 2 and at < end:
            try:
                tag, at = _varint(data, at, end)
                if fields_of.get(tag >> 3) != tag & 7:
                    break
                if tag & 7 == _LEN:
                    length, at = _varint(data, at, end)
                    at += length
                else:
                    _, at = _varint(data, at, end)
            except _Broken:  # the data ends inside a number: cut short
                at = end + 1
            count += 1
        else:
            return count > 0
    return False


def _looks_like_flatbuffer(data: bytes) -> bool:
    """A flatbuffer starts with the offset of its root table, whose first
    word is the (signed) offset back to its vtable, of an even size of at
    least 4: cheap to test before asking jax to read it."""
    if len(data) < 12:
        return False
    root = int.from_bytes(data[:4], "little")
    if not 4 <= root <= len(data) - 4:
        return False
    vtable = root - int.from_bytes(data[root:root + 4], "little", signed=True)
    if not 0 <= vtable <= len(data) - 4:
        return False
    size = int.from_bytes(data[vtable:vtable + 2], "little")
    return size >= 4 and size % 2 == 0 and vtable + size <= len(data)


def _jax_export(data: bytes):
    """jax.export's reading of `data`, or None if it is not an artifact."""
    try:
        from jax import export as jax_export

        exported = jax_export.deserialize(bytearray(data))
        exported.in_avals, exported.fun_name  # noqa: B018 - the fields a bad buffer breaks
        return exported
    except Exception:  # flatbuffers raises what it likes on a bad buffer
        return None


def read_binary(data: bytes, where: str) -> BinaryModule:
    """The module in a serialized HloModuleProto, HloProto or HloSnapshot;
    BadBinary, naming `where`, for any other bytes."""
    found = _read(data)
    if found is None:
        raise _diagnosis(data, where)
    return found


def _read(data: bytes) -> BinaryModule | None:
    module = _as_module(data)
    if module is not None:
        return BinaryModule("HloModuleProto", data, module)
    try:
        hlo = HloProto.FromString(data)
    except DecodeError:
        hlo = None
    if hlo is not None and hlo.hlo_module:
        module = _as_module(hlo.hlo_module)
        if module is not None and not _other_fields(data, {1, 3}):
            return BinaryModule("HloProto", hlo.hlo_module, module)
    try:
        snapshot = HloSnapshot.FromString(data)
    except DecodeError:
        snapshot = None
    if snapshot is not None and snapshot.hlo.hlo_module:
        module = _as_module(snapshot.hlo.hlo_module)
        if module is not None and not _other_fields(data, {1, 2, 3, 4}):
            return BinaryModule("HloSnapshot", snapshot.hlo.hlo_module, module, list(snapshot.arguments))
    return None


def _as_module(data: bytes):
    """`data` as an HloModuleProto if it reads as one: computations, each
    named and with instructions that have a name and an opcode, and an
    entry among them; else None."""
    try:
        module = decode_proto(data)
    except DecodeError:
        return None
    if not module.computations:
        return None
    ids, names = set(), set()
    for computation in module.computations:
        if not computation.name or not computation.instructions:
            return None
        if any(not i.name or not i.opcode for i in computation.instructions):
            return None
        ids.add(computation.id)
        names.add(computation.name)
    if module.entry_computation_id not in ids and module.entry_computation_name not in names:
        return None
    return module


def _other_fields(data: bytes, numbers: set[int]) -> bool:
    try:
        return any(number not in numbers for number, _, _, _ in _scan(data, 0, len(data)))
    except _Broken:
        return True


# --------------------------------------------------------------------------
# Why the bytes are not a module
# --------------------------------------------------------------------------


class _Broken(Exception):
    def __init__(self, offset: int, why: str):
        super().__init__(why)
        self.offset, self.why = offset, why


_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


def _varint(data: bytes, at: int, end: int) -> tuple[int, int]:
    value, shift, start = 0, 0, at
    while True:
        if at >= end:
            raise _Broken(start, "the data ends inside a number (truncated)")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift >= 70:
            raise _Broken(start, "a number longer than 10 bytes")


def _scan(data: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    """The fields of the message in data[start:end], as (number, wire type,
    payload start, payload end); _Broken at the byte where the wire format breaks."""
    fields, at = [], start
    while at < end:
        tag_at = at
        tag, at = _varint(data, at, end)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise _Broken(tag_at, "a field numbered 0")
        if wire == _VARINT:
            _, after = _varint(data, at, end)
        elif wire == _I64:
            after = at + 8
        elif wire == _I32:
            after = at + 4
        elif wire == _LEN:
            length, at = _varint(data, at, end)
            after = at + length
        else:
            raise _Broken(tag_at, f"field {number} has wire type {wire}, which protobuf does not write")
        if after > end:
            raise _Broken(tag_at, f"field {number} needs {after - at} bytes, {end - at} remain (truncated)")
        fields.append((number, wire, at, after))
        at = after
    return fields


# Messages XLA writes beside its modules, to name them: {number: wire form},
# where a form is "varint", "len" (bytes or a string), "packed" (a repeated
# number: one at a time or packed), "i32", "i64", or a message's name here.
_SHAPES = {
    "LiteralProto": {1: "len", 2: "packed", 3: "len", 4: "packed", 5: "packed", 6: "packed", 7: "packed",
                     8: "packed32", 9: "packed64", 10: "LiteralProto", 11: "len", 12: "packed32", 13: "len",
                     14: "packed", 15: "len", 16: "len", 17: "len", 18: "packed64", 19: "len", 20: "len",
                     21: "len", 22: "len", 23: "len", 24: "len", 25: "len", 26: "len", 27: "len", 28: "len",
                     29: "len", 30: "len", 31: "len", 32: "len", 33: "len"},
    "HloProto (no module)": {3: "len"},
    "HloSnapshot": {1: "HloProto (no module)", 2: "LiteralProto", 3: "LiteralProto", 4: "len"},
    "BufferAssignmentProto": {1: "LogicalBufferProto", 2: "BufferAlias", 3: "BufferAllocationProto",
                              4: "HeapSimulatorTrace"},
    "LogicalBufferProto": {1: "varint", 2: "varint", 3: "Location", 4: "varint"},
    "Location": {2: "len", 3: "packed", 4: "varint"},
    "BufferAlias": {1: "varint", 2: "Location"},
    "BufferAllocationProto": {1: "varint", 2: "varint", 3: "varint", 5: "varint", 6: "varint", 7: "varint",
                              8: "varint", 9: "Assigned", 10: "packed", 11: "varint", 12: "varint"},
    "Assigned": {1: "varint", 2: "varint", 3: "varint"},
    "HeapSimulatorTrace": {1: "Event", 2: "varint", 3: "varint"},
    "Event": {1: "varint", 2: "varint", 3: "len", 4: "len", 5: "varint"},
}
_WIRES = {"varint": {_VARINT}, "len": {_LEN}, "packed": {_VARINT, _LEN}, "packed32": {_I32, _LEN},
          "packed64": {_I64, _LEN}, "i32": {_I32}, "i64": {_I64}}


def _conforms(data: bytes, message: str) -> bool:
    """Whether `data` is a `message` of `_SHAPES`, down to its last nested
    message: each declared field with its wire type (a stack, not
    recursion). Fields not declared pass: XLA adds fields to its messages."""
    stack = [(0, len(data), message)]
    while stack:
        start, end, name = stack.pop()
        try:
            fields = _scan(data, start, end)
        except _Broken:
            return False
        for number, wire, at, after in fields:
            form = _SHAPES[name].get(number)
            if form is None:  # a field newer than these declarations
                continue
            if form in _WIRES:
                if wire not in _WIRES[form]:
                    return False
            elif wire != _LEN:
                return False
            else:
                stack.append((at, after, form))
    return True


def _diagnosis(data: bytes, where: str) -> BadBinary:
    size = f"{len(data)} bytes"
    followed = _module_then_rest(data)
    if followed is not None:
        kind, at, why = followed
        return BadBinary(f"a truncated or corrupted {kind}: a whole module ends at byte {at} of {size}, and the "
                         f"{len(data) - at} bytes after it do not read as its fields: {why}; dump it again, or "
                         f"{WHAT_TO_GIVE}", where)
    try:
        fields = _scan(data, 0, len(data))
    except _Broken as broken:
        # A module, a module's HloProto and an HloSnapshot all start with their field 1, a message (byte 0x0a).
        return BadBinary(f"a truncated or corrupted proto (and no jax.export artifact): protobuf decoding fails at "
                         f"byte {broken.offset} of {size}: {broken.why}; dump it again, or {WHAT_TO_GIVE}", where,
                         broken=data[:1] == b"\n")
    numbers = sorted({number for number, *_ in fields})
    if _conforms(data, "HloSnapshot") and (4 in numbers or 2 in numbers):
        return BadBinary("an HloSnapshot without a module (its hlo.hlo_module is empty): give a snapshot "
                         "that holds its module, or the module's *.hlo.pb dump", where)
    if numbers == [3] and _conforms(data, "HloProto (no module)"):
        return BadBinary("an HloProto without a module (its hlo_module is empty): give a dump that holds "
                         "its module", where)
    if {1, 3} <= set(numbers) and _conforms(data, "BufferAssignmentProto"):  # buffers and their allocations
        return BadBinary(f"a BufferAssignmentProto (XLA's buffer assignment), not an HLO module: {WHAT_TO_GIVE}",
                         where, broken=False)
    # The outer messages read, as a module's wrappers, but the module inside does not: where does it break?
    for kind, outers in (("HloModuleProto", ()), ("HloProto", ("HloProto",)),
                         ("HloSnapshot", ("HloSnapshot", "HloProto"))):
        broken = _broken_inside(data, outers)
        if broken is not None:
            return BadBinary(f"a truncated or corrupted {kind}: decoding its module fails at byte {broken.offset} "
                             f"of {size}: {broken.why}; dump it again, or {WHAT_TO_GIVE}", where)
    listed = ", ".join(map(str, numbers[:8])) + (", …" if len(numbers) > 8 else "")
    return BadBinary(f"a protobuf message of another type (fields {listed}), not an HLO module: XLA writes "
                     f"memory-usage reports and options beside its modules, as *.pb too; {WHAT_TO_GIVE}", where,
                     broken=False)


# The outer fields of the messages that hold a module ({number: wire type}), the module's field 1 in each.
_OUTER = {
    "HloModuleProto": {1: _LEN, 2: _LEN, 3: _LEN, 4: _LEN, 5: _VARINT, 6: _VARINT, 7: _LEN, 8: _LEN, 10: _LEN,
                       11: _VARINT, 12: _LEN, 13: _LEN, 14: _LEN, 15: _LEN, 16: _VARINT, 17: _LEN, 18: _LEN,
                       19: _LEN},
    "HloProto": {1: _LEN, 3: _LEN},
    "HloSnapshot": {1: _LEN, 2: _LEN, 3: _LEN, 4: _LEN},
}


def _module_then_rest(data: bytes) -> tuple[str, int, str] | None:
    """(kind, byte, why) if `data` up to `byte` is a whole module's message
    (its outer fields, as `_OUTER` has them, read as a module) and the rest
    is not: garbage after a module, or a later field cut short. None if no
    such byte (the module itself breaks: the other diagnoses say where)."""
    end = len(data)
    for kind, fields_of in _OUTER.items():
        at = 0
        while at < end:
            try:
                tag, after = _varint(data, at, end)
                number, wire = tag >> 3, tag & 7
                if fields_of.get(number) != wire:
                    why = f"field {number} (wire type {wire}) is no field of an {kind}"
                    break
                if wire == _LEN:
                    length, after = _varint(data, after, end)
                    after += length
                else:
                    _, after = _varint(data, after, end)
            except _Broken as broken:
                why = broken.why
                break
            if after > end:
                why = f"field {number} needs {after - end} bytes more than remain (truncated)"
                break
            at = after
        if 0 < at < end:
            found = _read(data[:at])
            if found is not None:
                return found.kind, at, why
    return None


def _broken_inside(data: bytes, outers: tuple[str, ...]) -> _Broken | None:
    """If `data` is the messages `outers` around an HloModuleProto (each
    one's outer fields as `_OUTER` has them, the next one in its field 1),
    and the module's wire format breaks: where (None if it reads, or
    `data` is not such a nesting)."""
    start, end = 0, len(data)
    for outer in (*outers, "HloModuleProto"):
        try:
            fields = _scan(data, start, end)
        except _Broken as broken:
            return broken if outer == "HloModuleProto" and outers else None
        if not fields or any(_OUTER[outer].get(n) != w for n, w, _, _ in fields):
            return None
        if outer == "HloModuleProto":
            break
        inner = [f for f in fields if f[0] == 1]
        if len(inner) != 1:
            return None
        start, end = inner[0][2], inner[0][3]
    names = [f for f in fields if f[0] == 1]
    try:
        if len(names) != 1 or not data[names[0][2]:names[0][3]].decode("utf-8").strip():
            return None  # a module has one name
        for number, _, at, after in fields:  # its computations, then their instructions
            if number == 3:
                for inner_number, wire, i_at, i_after in _scan(data, at, after):
                    if inner_number == 2 and wire == _LEN:
                        _scan(data, i_at, i_after)
    except UnicodeDecodeError:
        return None
    except _Broken as broken:
        return broken
    return None
