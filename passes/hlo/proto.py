"""XLA's `HloModuleProto`, as far as the chain reads and edits it.

`jaxlib._hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto()`
is XLA's own parse of a module; `HloModule.from_serialized_hlo_module_proto`
and the importer (`jaxlib._jax.mlir.hlo_to_stablehlo`) read such bytes
back. jaxlib ships no Python classes for the proto, so the schema here is
ours: only the fields the chain touches, with XLA's field numbers (they are
XLA's wire format: see `xla/service/hlo.proto` and `xla/xla_data.proto`).
Every other field of a message is kept by protobuf as an unknown field and
written back as it came, so an edit changes only what it names.

Facts of XLA's proto the chain relies on (checked by tests/hlo/test_proto.py):
- an instruction id is `computation id << 32 | local id`, and local ids
  count up in the order the text defines the instructions;
- a computation lists its instructions in post order (operands first),
  which is also the order XLA requires when it reads the proto back;
- a while's `called_computation_ids` are its body, then its condition.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_PACKAGE = "hlo2penguin.xla"

# (message, [(field, number, type, label, message type)]): XLA's numbers.
_SCHEMA = [
    ("ShapeProto", [
        ("element_type", 2, _F.TYPE_INT32, _OPTIONAL, None),   # xla.PrimitiveType
        ("dimensions", 3, _F.TYPE_INT64, _REPEATED, None),
        # Serialized ShapeProtos, not parsed here: a tuple shape can nest past
        # protobuf's decoding depth (100, fixed in upb) where XLA's text has none.
        ("tuple_shapes", 4, _F.TYPE_BYTES, _REPEATED, None),
    ]),
    ("OpMetadata", [
        ("op_type", 1, _F.TYPE_STRING, _OPTIONAL, None),
        ("op_name", 2, _F.TYPE_STRING, _OPTIONAL, None),
        ("source_file", 3, _F.TYPE_STRING, _OPTIONAL, None),
        ("source_line", 4, _F.TYPE_INT32, _OPTIONAL, None),
        ("stack_frame_id", 15, _F.TYPE_INT32, _OPTIONAL, None),
        ("source_column", 18, _F.TYPE_INT32, _OPTIONAL, None),
    ]),
    ("StackFrameIndexProto", [  # the FileNames / FileLocations / StackFrames sections; ids count from 1
        ("file_names", 1, _F.TYPE_STRING, _REPEATED, None),
        ("function_names", 2, _F.TYPE_STRING, _REPEATED, None),
        ("file_locations", 3, _F.TYPE_MESSAGE, _REPEATED, "StackFrameIndexProto.FileLocation"),
        ("stack_frames", 4, _F.TYPE_MESSAGE, _REPEATED, "StackFrameIndexProto.StackFrame"),
    ]),
    ("StackFrameIndexProto.FileLocation", [
        ("file_name_id", 1, _F.TYPE_INT32, _OPTIONAL, None),
        ("function_name_id", 2, _F.TYPE_INT32, _OPTIONAL, None),
        ("line", 3, _F.TYPE_INT32, _OPTIONAL, None),
        ("column", 4, _F.TYPE_INT32, _OPTIONAL, None),
    ]),
    ("StackFrameIndexProto.StackFrame", [
        ("file_location_id", 1, _F.TYPE_INT32, _OPTIONAL, None),
        ("parent_frame_id", 2, _F.TYPE_INT32, _OPTIONAL, None),
    ]),
    ("HloScheduleProto", [  # map<int64, InstructionSequence> sequences = 1: computation id → its order
        ("sequences", 1, _F.TYPE_MESSAGE, _REPEATED, "HloScheduleProto.SequencesEntry"),
    ]),
    ("HloScheduleProto.InstructionSequence", [
        ("instruction_ids", 1, _F.TYPE_INT64, _REPEATED, None),
    ]),
    ("FrontendAttributes", [
        ("map", 1, _F.TYPE_MESSAGE, _REPEATED, "FrontendAttributes.MapEntry"),
    ]),
    ("HloInstructionProto", [
        ("name", 1, _F.TYPE_STRING, _OPTIONAL, None),
        ("opcode", 2, _F.TYPE_STRING, _OPTIONAL, None),
        ("shape", 3, _F.TYPE_MESSAGE, _OPTIONAL, "ShapeProto"),
        ("metadata", 7, _F.TYPE_MESSAGE, _OPTIONAL, "OpMetadata"),
        ("parameter_number", 9, _F.TYPE_INT64, _OPTIONAL, None),
        ("tuple_index", 13, _F.TYPE_INT64, _OPTIONAL, None),
        ("custom_call_target", 28, _F.TYPE_STRING, _OPTIONAL, None),
        ("id", 35, _F.TYPE_INT64, _OPTIONAL, None),
        ("operand_ids", 36, _F.TYPE_INT64, _REPEATED, None),
        ("control_predecessor_ids", 37, _F.TYPE_INT64, _REPEATED, None),
        ("called_computation_ids", 38, _F.TYPE_INT64, _REPEATED, None),
        ("custom_call_has_side_effect", 65, _F.TYPE_BOOL, _OPTIONAL, None),
        ("custom_call_api_version", 77, _F.TYPE_INT32, _OPTIONAL, None),  # xla.CustomCallApiVersion
    ]),
    ("HloComputationProto", [
        ("name", 1, _F.TYPE_STRING, _OPTIONAL, None),
        ("instructions", 2, _F.TYPE_MESSAGE, _REPEATED, "HloInstructionProto"),
        ("id", 5, _F.TYPE_INT64, _OPTIONAL, None),
        ("root_id", 6, _F.TYPE_INT64, _OPTIONAL, None),
    ]),
    ("HloModuleProto", [
        ("name", 1, _F.TYPE_STRING, _OPTIONAL, None),
        ("entry_computation_name", 2, _F.TYPE_STRING, _OPTIONAL, None),
        ("computations", 3, _F.TYPE_MESSAGE, _REPEATED, "HloComputationProto"),
        ("entry_computation_id", 6, _F.TYPE_INT64, _OPTIONAL, None),
        ("schedule", 7, _F.TYPE_MESSAGE, _OPTIONAL, "HloScheduleProto"),
        ("stack_frame_index", 17, _F.TYPE_MESSAGE, _OPTIONAL, "StackFrameIndexProto"),
        ("frontend_attributes", 19, _F.TYPE_MESSAGE, _OPTIONAL, "FrontendAttributes"),
    ]),
]

# Map fields, as protoc spells them: (message, entry, key type, value type, value message).
_MAPS = [
    ("FrontendAttributes", "MapEntry", _F.TYPE_STRING, _F.TYPE_STRING, None),
    ("HloScheduleProto", "SequencesEntry", _F.TYPE_INT64, _F.TYPE_MESSAGE, "HloScheduleProto.InstructionSequence"),
]

# xla.PrimitiveType values the chain asks about.
TUPLE = 13
TOKEN = 17
BUFFER = 34  # `b(f32[16])`: a buffer (copy insertion's Pin/Unpin tests), its element in tuple_shapes
# xla.CustomCallApiVersion: API_VERSION_ORIGINAL, what the decompiled
# PreserveControlDeps gives its calls.
API_VERSION_ORIGINAL = 1


def message_classes(file_name: str, schema, maps=(), package: str = None) -> dict[str, type]:
    """Python classes for `schema` ([(message, [(name, number, type, label, type name)])],
    `Outer.Inner` for a nested message) and its map fields (`maps`, as `_MAPS`),
    declared with protobuf's descriptor API in a pool of their own."""
    package = package or _PACKAGE
    file = descriptor_pb2.FileDescriptorProto(name=file_name, package=package, syntax="proto3")
    messages: dict[str, descriptor_pb2.DescriptorProto] = {}
    for message, fields in schema:
        outer, _, inner = message.partition(".")
        m = messages[message] = (messages[outer].nested_type.add(name=inner) if inner
                                 else file.message_type.add(name=message))
        for name, number, kind, label, type_name in fields:
            f = m.field.add(name=name, number=number, type=kind, label=label)
            if type_name:
                f.type_name = f".{package}.{type_name}"
    for message, entry_name, key_type, value_type, value_message in maps:
        entry = messages[message].nested_type.add(name=entry_name)
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=key_type, label=_OPTIONAL)
        value = entry.field.add(name="value", number=2, type=value_type, label=_OPTIONAL)
        if value_message:
            value.type_name = f".{package}.{value_message}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {message: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{message}"))
            for message, _ in schema}


_CLASSES = message_classes("hlo2penguin/xla_hlo.proto", _SCHEMA, _MAPS)
HloModuleProto = _CLASSES["HloModuleProto"]
HloComputationProto = _CLASSES["HloComputationProto"]
HloInstructionProto = _CLASSES["HloInstructionProto"]
ShapeProto = _CLASSES["ShapeProto"]
OpMetadata = _CLASSES["OpMetadata"]


def local_id(instruction_id: int) -> int:
    """The instruction's number within its computation: the order the text defines it in."""
    return instruction_id & 0xFFFFFFFF


# Fields that only the runnable form of a module (pipeline.xla.runnable)
# reads and edits: a shape's layout, a fusion's kind and its backend config,
# an instruction's `dimensions` (a transpose's permutation). They live in
# classes of their own, so that link #1's classes (and the bytes it writes)
# stay exactly as the schema above declares them.
_RUNNABLE_FIELDS = {
    "ShapeProto": [("layout", 5, _F.TYPE_MESSAGE, _OPTIONAL, "LayoutProto")],
    "HloInstructionProto": [
        ("fusion_kind", 11, _F.TYPE_STRING, _OPTIONAL, None),
        ("dimensions", 14, _F.TYPE_INT64, _REPEATED, None),
        ("backend_config", 43, _F.TYPE_BYTES, _OPTIONAL, None),
    ],
    "HloComputationProto": [("is_fusion_computation", 7, _F.TYPE_BOOL, _OPTIONAL, None)],
    "HloModuleProto": [("id", 5, _F.TYPE_INT64, _OPTIONAL, None)],  # XLA's count of modules made in its process
}


def runnable_classes() -> dict[str, type]:
    """The schema above plus `_RUNNABLE_FIELDS` (and XLA's LayoutProto), in a pool of their own."""
    schema = [("LayoutProto", [("minor_to_major", 1, _F.TYPE_INT64, _REPEATED, None)])]
    schema += [(message, fields + _RUNNABLE_FIELDS.get(message, [])) for message, fields in _SCHEMA]
    return message_classes("hlo2penguin/xla_hlo_runnable.proto", schema, _MAPS, package=_PACKAGE + ".runnable")
