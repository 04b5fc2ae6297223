"""XLA's `HloModuleProto`, as far as the chain reads and edits it.

`jaxlib._hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto()`
is XLA's own parse of a module; `HloModule.from_serialized_hlo_module_proto`
and the importer (`jaxlib._jax.mlir.hlo_to_stablehlo`) read such bytes
back. jaxlib ships no Python classes for the proto, so the schema here is
ours: `passes.hlo.schema` declares XLA's messages once, with XLA's field
numbers, and the classes here read the part of it the chain touches.
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

from passes.hlo import schema

_PACKAGE = "hlo2penguin.xla"

# The fields of XLA's schema (`passes.hlo.schema`) link #1 reads and edits: {message: [field]}, None for all
# the fields declared there.
_READS = {
    "ShapeProto": ["element_type", "dimensions", "tuple_shapes"],
    "OpMetadata": None,
    "StackFrameIndexProto": None,
    "StackFrameIndexProto.FileLocation": None,
    "StackFrameIndexProto.StackFrame": None,
    "HloScheduleProto": None,
    "HloScheduleProto.InstructionSequence": None,
    "FrontendAttributes": None,
    "HloInstructionProto": ["name", "opcode", "shape", "metadata", "parameter_number", "tuple_index",
                            "custom_call_target", "id", "operand_ids", "control_predecessor_ids",
                            "called_computation_ids", "custom_call_has_side_effect", "custom_call_api_version"],
    "HloComputationProto": ["name", "instructions", "id", "root_id"],
    "HloModuleProto": ["name", "entry_computation_name", "computations", "entry_computation_id", "schedule",
                       "stack_frame_index", "frontend_attributes"],
}

# xla.PrimitiveType values the chain asks about.
TUPLE = 13
TOKEN = 17
BUFFER = 34  # `b(f32[16])`: a buffer (copy insertion's Pin/Unpin tests), its element in tuple_shapes
# xla.CustomCallApiVersion: API_VERSION_ORIGINAL, what the decompiled
# PreserveControlDeps gives its calls.
API_VERSION_ORIGINAL = 1


_CLASSES = schema.message_classes("hlo2penguin/xla_hlo.proto", _READS, _PACKAGE)
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
# stay exactly as `_READS` declares them.
_RUNNABLE_READS = {
    "LayoutProto": ["minor_to_major"],
    "ShapeProto": ["layout"],
    "HloInstructionProto": ["fusion_kind", "dimensions", "backend_config"],
    "HloComputationProto": ["is_fusion_computation"],
    "HloModuleProto": ["id"],  # XLA's count of modules made in its process
}


def runnable_classes() -> dict[str, type]:
    """`_READS` plus `_RUNNABLE_READS`, in a pool of their own."""
    reads = {m: None if f is None else list(f) for m, f in _READS.items()}
    for message, extra in _RUNNABLE_READS.items():
        reads[message] = reads[message] + extra if message in reads else extra
    return schema.message_classes("hlo2penguin/xla_hlo_runnable.proto", reads, _PACKAGE + ".runnable")
