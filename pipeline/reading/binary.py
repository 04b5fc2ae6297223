"""The chain's binary inputs, recognized by their content (never by their
name): a serialized `HloModuleProto`; an `HloProto`, which XLA writes for
each stage with `--xla_dump_hlo_as_proto` (`*.hlo.pb`: its `hlo_module`);
an `HloSnapshot`, which XLA writes with `--xla_dump_hlo_snapshots`
(`*.snapshot.N.pb`: its `hlo.hlo_module`, and the arguments it ran with);
and a serialized `jax.export` artifact (`exported.serialize()`), which the
chain compiles as `sources.from_export` does (`sources.export_module`).

    kind = source.kind_of(data)           # "text", "proto" or "jax.export" (`sniff`)
    found = read_binary(data, "x.hlo.pb")  # a BinaryModule: kind, module (bytes), arguments()

Anything else binary is a `BadBinary`: one line that says what it is (a
truncated or corrupted proto and the byte where decoding fails, a
`BufferAssignmentProto`, a snapshot without a module, another message) and
what to give instead. XLA's own reading of a module (`isolated.read_proto`)
is the verdict on it; the chain then works on the proto as given, so the
names in reports and programs are the proto's instruction names.

Why the messages are declared in Python: jaxlib ships neither XLA's
`.proto` files nor Python classes for them, so the classes here are built
with protobuf's descriptor API from the one declaration of XLA's schema
(`passes.hlo.schema`: the field numbers of XLA's `xla/service/hlo.proto`
and `xla/xla_data.proto`, which are XLA's wire format). The module itself
is `passes.hlo.proto.HloModuleProto`. Python's protobuf parses any bytes as
any message (what it does not know is an unknown field) and says nowhere
where decoding failed, so telling the message types apart, and the byte a
broken proto breaks at, is a walk of the wire format against the declared
field numbers (`pipeline.reading.wire`), hand-written here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError

from passes.errors import ChainError
from passes.hlo import schema
from pipeline.reading import wire
from pipeline.reading.parsed import decode_proto

__all__ = ["BadBinary", "BinaryModule", "read_binary", "sniff"]

# The parts of XLA's schema (`passes.hlo.schema`) read here: {message: [field]}, None for all declared.
# The module stays bytes (`as_bytes`): the chain reads it as passes.hlo.proto's HloModuleProto, as XLA wrote it.
_READS = {
    "LayoutProto": None,
    "ShapeProto": None,
    "LiteralProto": ["shape", "preds", "u8s", "s32s", "s64s", "u32s", "u64s", "f32s", "f64s", "tuple_literals",
                     "f16s", "c64s", "bf16s", "s8s", "u16s", "s16s", "c128s"],
    "HloProto": None,
    "HloSnapshot": None,
}
_CLASSES = schema.message_classes("hlo2penguin/xla_dumps.proto", _READS, "hlo2penguin.xla_dumps",
                                  as_bytes=("HloProto.hlo_module", "HloProto.buffer_assignment"))
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
    (`wire.starts_as_module`) and reads as none: text with a stray control
    character, for XLA's parser to say where."""
    if isinstance(data, str) or _CONTROL_CHARACTER.search(data) is None:
        return "text"
    if _looks_like_flatbuffer(data) and _jax_export(data) is not None:
        return "jax.export"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "proto"
    if wire.starts_as_module(data) or _read(data) is not None:
        return "proto"
    return "text"


# What no text has (tab, line breaks and form feed aside), searched for in the whole input.
_CONTROL_CHARACTER = re.compile(b"[\x00-\x08\x0e-\x1f]")


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
        if module is not None and not _other_fields(data, set(wire.OUTER["HloProto"])):
            return BinaryModule("HloProto", hlo.hlo_module, module)
    try:
        snapshot = HloSnapshot.FromString(data)
    except DecodeError:
        snapshot = None
    if snapshot is not None and snapshot.hlo.hlo_module:
        module = _as_module(snapshot.hlo.hlo_module)
        if module is not None and not _other_fields(data, set(wire.OUTER["HloSnapshot"])):
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


def _undecodable(data: bytes) -> bool:
    try:
        decode_proto(data)
    except DecodeError:
        return True
    return False


def _other_fields(data: bytes, numbers: set[int]) -> bool:
    try:
        return any(number not in numbers for number, _, _, _ in wire.scan(data, 0, len(data)))
    except wire.Broken:
        return True


# --------------------------------------------------------------------------
# Why the bytes are not a module
# --------------------------------------------------------------------------


_SNAPSHOT_ARGUMENTS = schema.number("HloSnapshot", "arguments")
_SNAPSHOT_PLATFORM = schema.number("HloSnapshot", "execution_platform")
_BUFFER_ASSIGNMENT = schema.number("HloProto", "buffer_assignment")  # an HloProto's other field than its module
_BUFFERS = {schema.number("BufferAssignmentProto", "logical_buffers"),  # buffers and their allocations
            schema.number("BufferAssignmentProto", "buffer_allocations")}


_PROTOBUF_DEPTH = 100  # how deep protobuf (upb, and XLA's C++ reader) decodes nested messages


def _diagnosis(data: bytes, where: str) -> BadBinary:
    size = f"{len(data)} bytes"
    followed = wire.module_end(data, _read)
    if followed is not None:
        kind, at, why = followed
        return BadBinary(f"a truncated or corrupted {kind}: a whole module ends at byte {at} of {size}, and the "
                         f"{len(data) - at} bytes after it do not read as its fields: {why}; dump it again, or "
                         f"{WHAT_TO_GIVE}", where)
    try:
        fields = wire.scan(data, 0, len(data))
    except wire.Broken as broken:
        # A module, a module's HloProto and an HloSnapshot all start with their field 1, a message (byte 0x0a).
        return BadBinary(f"a truncated or corrupted proto (and no jax.export artifact): protobuf decoding fails at "
                         f"byte {broken.offset} of {size}: {broken.why}; dump it again, or {WHAT_TO_GIVE}", where,
                         broken=data[:1] == b"\n")
    numbers = sorted({number for number, *_ in fields})
    if wire.conforms(data, "HloSnapshot") and {_SNAPSHOT_PLATFORM, _SNAPSHOT_ARGUMENTS} & set(numbers):
        return BadBinary("an HloSnapshot without a module (its hlo.hlo_module is empty): give a snapshot "
                         "that holds its module, or the module's *.hlo.pb dump", where)
    if numbers == [_BUFFER_ASSIGNMENT] and wire.conforms(data, "HloProto"):
        return BadBinary("an HloProto without a module (its hlo_module is empty): give a dump that holds "
                         "its module", where)
    if _BUFFERS <= set(numbers) and wire.conforms(data, "BufferAssignmentProto"):
        return BadBinary(f"a BufferAssignmentProto (XLA's buffer assignment), not an HLO module: {WHAT_TO_GIVE}",
                         where, broken=False)
    # The outer messages read, as a module's wrappers, but the module inside does not: where does it break?
    for kind, outers in (("HloModuleProto", ()), ("HloProto", ("HloProto",)),
                         ("HloSnapshot", ("HloSnapshot", "HloProto"))):
        broken = wire.broken_inside(data, outers)
        if broken is not None:
            return BadBinary(f"a truncated or corrupted {kind}: decoding its module fails at byte {broken.offset} "
                             f"of {size}: {broken.why}; dump it again, or {WHAT_TO_GIVE}", where)
    depth = wire.nesting(data, "HloModuleProto", wire.MODULE_FORMS)
    if depth is not None and depth > _PROTOBUF_DEPTH and _undecodable(data):
        return BadBinary(f"an HloModuleProto whose messages nest {depth} deep, past the {_PROTOBUF_DEPTH} levels "
                         f"protobuf decodes (XLA reads back none that deep): {WHAT_TO_GIVE}", where)
    listed = ", ".join(map(str, numbers[:8])) + (", …" if len(numbers) > 8 else "")
    return BadBinary(f"a protobuf message of another type (fields {listed}), not an HLO module: XLA writes "
                     f"memory-usage reports and options beside its modules, as *.pb too; {WHAT_TO_GIVE}", where,
                     broken=False)
