"""XLA's protobuf schema, as far as the chain knows it: the one place that
writes the field numbers of XLA's `xla/xla_data.proto` and
`xla/service/hlo.proto` (they are XLA's wire format).

jaxlib ships neither XLA's `.proto` files nor Python classes for them, so
the chain declares the messages it reads here, each field as XLA declares
it (name, number, type), and derives from this one declaration

- Python classes for a chosen part of it (`message_classes`), built with
  protobuf's descriptor API: `passes.hlo.proto`'s module classes, their
  runnable variant, and the binary reader's classes for XLA's dumps;
- the tables of the binary reader's walk of the wire format
  (`pipeline.reading.wire`): each field's wire type (`wire_types`) and
  how a nested message is checked (`wire_forms`).

A message type named here but not declared (`ProgramShapeProto`, …) is
known by its field's number and wire type only: the chain never reads it.
Python's protobuf keeps what a class does not declare as unknown fields and
writes them back as they came.

    classes = message_classes("x.proto", {"ShapeProto": ["element_type", "dimensions"]}, "pkg")
    number("HloSnapshot", "arguments")   # 2
    wire_types("HloProto")               # {1: 2, 3: 2}: number → wire type
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

# message → [(field, number, type)]; a type is "[repeated ]<scalar or message>" or "map<key, value>".
XLA: dict[str, list[tuple[str, int, str]]] = {
    # xla/xla_data.proto
    "LayoutProto": [("minor_to_major", 1, "repeated int64")],
    "ShapeProto": [
        ("element_type", 2, "int32"),  # xla.PrimitiveType
        ("dimensions", 3, "repeated int64"),
        ("tuple_shapes", 4, "repeated ShapeProto"),
        ("layout", 5, "LayoutProto"),
    ],
    "OpMetadata": [
        ("op_type", 1, "string"),
        ("op_name", 2, "string"),
        ("source_file", 3, "string"),
        ("source_line", 4, "int32"),
        ("stack_frame_id", 15, "int32"),
        ("source_column", 18, "int32"),
    ],
    "FrontendAttributes": [("map", 1, "map<string, string>")],
    "LiteralProto": [
        ("shape", 1, "ShapeProto"),
        ("preds", 2, "repeated bool"),
        ("u8s", 3, "bytes"),
        ("s32s", 4, "repeated int32"),
        ("s64s", 5, "repeated int64"),
        ("u32s", 6, "repeated uint32"),
        ("u64s", 7, "repeated uint64"),
        ("f32s", 8, "repeated float"),
        ("f64s", 9, "repeated double"),
        ("tuple_literals", 10, "repeated LiteralProto"),
        ("f16s", 11, "bytes"),
        ("c64s", 12, "repeated float"),  # interleaved real, imaginary
        ("bf16s", 13, "bytes"),
        ("sparse_indices", 14, "repeated int64"),
        ("s8s", 15, "bytes"),
        ("u16s", 16, "bytes"),
        ("s16s", 17, "bytes"),
        ("c128s", 18, "repeated double"),  # interleaved real, imaginary
        ("f8e5m2s", 19, "bytes"),
        ("f8e4m3fns", 20, "bytes"),
        ("s4s", 21, "bytes"),
        ("u4s", 22, "bytes"),
        ("f8e4m3b11fnuzs", 23, "bytes"),
        ("f8e5m2fnuzs", 24, "bytes"),
        ("f8e4m3fnuzs", 25, "bytes"),
        ("s2s", 26, "bytes"),
        ("u2s", 27, "bytes"),
        ("f8e4m3s", 28, "bytes"),
        ("f8e3m4s", 29, "bytes"),
        ("s1s", 30, "bytes"),
        ("u1s", 31, "bytes"),
        ("f4e2m1fns", 32, "bytes"),
        ("f8e8m0fnus", 33, "bytes"),
    ],
    # xla/service/hlo.proto
    "HloInstructionProto": [
        ("name", 1, "string"),
        ("opcode", 2, "string"),
        ("shape", 3, "ShapeProto"),
        ("metadata", 7, "OpMetadata"),
        ("parameter_number", 9, "int64"),
        ("fusion_kind", 11, "string"),
        ("tuple_index", 13, "int64"),
        ("dimensions", 14, "repeated int64"),
        ("custom_call_target", 28, "string"),
        ("id", 35, "int64"),
        ("operand_ids", 36, "repeated int64"),
        ("control_predecessor_ids", 37, "repeated int64"),
        ("called_computation_ids", 38, "repeated int64"),
        ("backend_config", 43, "bytes"),
        ("custom_call_has_side_effect", 65, "bool"),
        ("custom_call_api_version", 77, "int32"),  # xla.CustomCallApiVersion
    ],
    "HloComputationProto": [
        ("name", 1, "string"),
        ("instructions", 2, "repeated HloInstructionProto"),
        ("id", 5, "int64"),
        ("root_id", 6, "int64"),
        ("is_fusion_computation", 7, "bool"),
    ],
    "HloScheduleProto": [("sequences", 1, "map<int64, HloScheduleProto.InstructionSequence>")],
    "HloScheduleProto.InstructionSequence": [("instruction_ids", 1, "repeated int64")],
    "StackFrameIndexProto": [  # the FileNames / FileLocations / StackFrames sections; ids count from 1
        ("file_names", 1, "repeated string"),
        ("function_names", 2, "repeated string"),
        ("file_locations", 3, "repeated StackFrameIndexProto.FileLocation"),
        ("stack_frames", 4, "repeated StackFrameIndexProto.StackFrame"),
    ],
    "StackFrameIndexProto.FileLocation": [
        ("file_name_id", 1, "int32"),
        ("function_name_id", 2, "int32"),
        ("line", 3, "int32"),
        ("column", 4, "int32"),
    ],
    "StackFrameIndexProto.StackFrame": [("file_location_id", 1, "int32"), ("parent_frame_id", 2, "int32")],
    "HloModuleProto": [
        ("name", 1, "string"),
        ("entry_computation_name", 2, "string"),
        ("computations", 3, "repeated HloComputationProto"),
        ("host_program_shape", 4, "ProgramShapeProto"),
        ("id", 5, "int64"),  # XLA's count of the modules made in its process
        ("entry_computation_id", 6, "int64"),
        ("schedule", 7, "HloScheduleProto"),
        ("input_output_alias", 8, "HloInputOutputAliasProto"),
        ("cross_program_prefetches", 10, "repeated CrossProgramPrefetch"),
        ("is_dynamic", 11, "bool"),
        ("spmd_output_sharding", 12, "OpSharding"),
        ("profile_info", 13, "repeated HloModuleProto.ProfileInfo"),
        ("spmd_parameters_shardings", 14, "repeated OpSharding"),
        ("device_assignment", 15, "DeviceAssignmentProto"),
        ("use_auto_spmd_partitioning", 16, "bool"),
        ("stack_frame_index", 17, "StackFrameIndexProto"),
        ("buffer_donor", 18, "HloBufferDonorProto"),
        ("frontend_attributes", 19, "FrontendAttributes"),
    ],
    "LogicalBufferProto": [
        ("id", 1, "int64"),
        ("size", 2, "int64"),
        ("defined_at", 3, "LogicalBufferProto.Location"),
        ("color", 4, "int64"),
    ],
    "LogicalBufferProto.Location": [
        ("instruction_name", 2, "string"),
        ("shape_index", 3, "repeated int64"),
        ("instruction_id", 4, "int64"),
    ],
    "BufferAllocationProto": [
        ("index", 1, "int64"),
        ("size", 2, "int64"),
        ("is_thread_local", 3, "bool"),
        ("is_entry_computation_parameter", 5, "bool"),
        ("parameter_number", 6, "int64"),
        ("maybe_live_out", 7, "bool"),
        ("color", 8, "int64"),
        ("assigned", 9, "repeated BufferAllocationProto.Assigned"),
        ("parameter_shape_index", 10, "repeated int64"),
        ("is_tuple", 11, "bool"),
        ("is_constant", 12, "bool"),
    ],
    "BufferAllocationProto.Assigned": [("logical_buffer_id", 1, "int64"), ("offset", 2, "int64"),
                                       ("size", 3, "int64")],
    "HeapSimulatorTrace": [
        ("events", 1, "repeated HeapSimulatorTrace.Event"),
        ("whole_module_simulation", 2, "bool"),
        ("buffer_allocation_index", 3, "int64"),
    ],
    "HeapSimulatorTrace.Event": [
        ("kind", 1, "int32"),  # HeapSimulatorTrace.Event.Kind
        ("buffer_id", 2, "int64"),
        ("computation_name", 3, "string"),
        ("instruction_name", 4, "string"),
        ("share_with_canonical_id", 5, "int64"),
    ],
    "BufferAssignmentProto": [
        ("logical_buffers", 1, "repeated LogicalBufferProto"),
        ("buffer_aliases", 2, "repeated BufferAssignmentProto.BufferAlias"),
        ("buffer_allocations", 3, "repeated BufferAllocationProto"),
        ("heap_simulator_traces", 4, "repeated HeapSimulatorTrace"),
    ],
    "BufferAssignmentProto.BufferAlias": [("source_buffer_id", 1, "int64"),
                                          ("location", 2, "LogicalBufferProto.Location")],
    "HloProto": [("hlo_module", 1, "HloModuleProto"), ("buffer_assignment", 3, "BufferAssignmentProto")],
    "HloSnapshot": [
        ("hlo", 1, "HloProto"),
        ("arguments", 2, "repeated LiteralProto"),
        ("result", 3, "LiteralProto"),
        ("execution_platform", 4, "string"),
    ],
}

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"int32": _F.TYPE_INT32, "int64": _F.TYPE_INT64, "uint32": _F.TYPE_UINT32, "uint64": _F.TYPE_UINT64,
            "bool": _F.TYPE_BOOL, "float": _F.TYPE_FLOAT, "double": _F.TYPE_DOUBLE, "string": _F.TYPE_STRING,
            "bytes": _F.TYPE_BYTES}

# Wire types (protobuf's encoding): a varint, 8 bytes, length-delimited, 4 bytes.
VARINT, I64, LEN, I32 = 0, 1, 2, 5
_WIRE = {"float": I32, "double": I64, "string": LEN, "bytes": LEN}


def _parts(kind: str) -> tuple[bool, str]:
    """(repeated, element type) of a declared type; a map is a repeated entry message."""
    if kind.startswith("map<"):
        return True, kind
    repeated = kind.startswith("repeated ")
    return repeated, kind.removeprefix("repeated ")


def fields(message: str) -> dict[str, tuple[int, str]]:
    """{field: (number, type)} of a declared message."""
    return {name: (number, kind) for name, number, kind in XLA[message]}


def number(message: str, field: str) -> int:
    """The number XLA gives `message`'s `field`."""
    return fields(message)[field][0]


def wire_types(message: str) -> dict[int, int]:
    """{number: wire type} of a declared message's fields, as XLA writes
    them (proto3 packs a repeated number: one length-delimited run)."""
    out = {}
    for _, num, kind in XLA[message]:
        repeated, element = _parts(kind)
        out[num] = LEN if repeated else _WIRE.get(element, VARINT if element in _SCALARS else LEN)
    return out


def wire_forms(roots, opaque=(), leave_out=()) -> dict[str, dict[int, str]]:
    """How the wire walk checks `roots` and the declared messages inside
    them: {message: {number: form}}, a form being "varint", "len" (bytes, a
    string, a map or a message not walked), "packed" (repeated varints, one
    at a time or packed), "packed32", "packed64", "i32", "i64", or the name
    of a message walked in turn. `opaque` names messages, or fields as
    `Message.field`, that are not walked; `leave_out` names fields
    (`Message.field`) not checked at all (any wire type passes)."""
    out: dict[str, dict[int, str]] = {}
    todo = list(roots)
    while todo:
        message = todo.pop()
        if message in out:
            continue
        forms = out[message] = {}
        for name, num, kind in XLA[message]:
            if f"{message}.{name}" in leave_out:
                continue
            repeated, element = _parts(kind)
            if element in XLA and element not in opaque and f"{message}.{name}" not in opaque:
                forms[num] = element
                todo.append(element)
            elif repeated and element in _SCALARS and element not in ("string", "bytes"):
                forms[num] = {"float": "packed32", "double": "packed64"}.get(element, "packed")
            elif element in ("float", "double"):
                forms[num] = {"float": "i32", "double": "i64"}[element]
            elif element in _SCALARS and element not in ("string", "bytes"):
                forms[num] = "varint"
            else:
                forms[num] = "len"
    return out


def message_classes(file_name: str, reads: dict, package: str, as_bytes=()) -> dict[str, type]:
    """Python classes for the messages of `reads` ({message: [field, …], or
    None for all its declared fields}), in a descriptor pool of their own
    under `package`. A field in `as_bytes` (`Message.field`) is read as its
    serialized message, undecoded."""
    file = descriptor_pb2.FileDescriptorProto(name=file_name, package=package, syntax="proto3")
    built: dict[str, descriptor_pb2.DescriptorProto] = {}
    for message in sorted(reads, key=lambda m: m.count(".")):  # outer messages first
        outer, _, inner = message.rpartition(".")
        m = built[message] = built[outer].nested_type.add(name=inner) if outer else file.message_type.add(name=message)
        declared = fields(message)
        for name in sorted(reads[message] or declared, key=lambda n: declared[n][0]):
            num, kind = declared[name]
            repeated, element = _parts(kind)
            label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
            if f"{message}.{name}" in as_bytes:
                element = "bytes"
            if element.startswith("map<"):
                key, value = (part.strip() for part in element[4:-1].split(","))
                entry = m.nested_type.add(name="".join(p.capitalize() for p in name.split("_")) + "Entry")
                entry.options.map_entry = True
                _add(entry, "key", 1, key, _F.LABEL_OPTIONAL, package)
                _add(entry, "value", 2, value, _F.LABEL_OPTIONAL, package)
                element = f"{message}.{entry.name}"
            _add(m, name, num, element, label, package)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {message: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{message}"))
            for message in reads}


def _add(m, name: str, num: int, element: str, label: int, package: str) -> None:
    if element in _SCALARS:
        m.field.add(name=name, number=num, type=_SCALARS[element], label=label)
    else:
        m.field.add(name=name, number=num, type=_F.TYPE_MESSAGE, label=label, type_name=f".{package}.{element}")
