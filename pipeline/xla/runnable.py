"""The closest module XLA:CPU can compile and run that computes what a
dumped module computes: the other side of numbers at every stage.

From layout assignment on, XLA dumps a module it has already laid out
(every shape carries its minor-to-major order) and, at the end, fused for
its CPU backend. Compiled again from the start (jaxlib compiles a module
only through its importer and the whole HLO pipeline), such a module fails:
a `bitcast` is a reinterpretation of a laid-out buffer, which the importer
cannot express (`layout minor_to_major field contains 2 elements, but shape
has 1 dimensions`) and layout assignment refuses (`Unexpected bitcast
operation seen during layout assignment`); a CPU fusion has lost the
backend config its emitter needs (`Fusion must have backend config`). So
the module is rewritten, on XLA's proto, into the same computation without
them:

- a `bitcast` becomes what it means logically: the operand's elements in
  physical (major-to-minor) order, reshaped to the result's physical shape,
  put back in the result's logical order: transpose, reshape, transpose,
  each left out where it is the identity;
- a `fusion` becomes a `call` of its fused computation (XLA inlines it);
- the schedule is dropped (the rewrite adds instructions; XLA schedules again).

Every other instruction, name and id stays as dumped. `Rewrites` says what
was changed, for the line that tells the user what XLA:CPU ran.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from passes.hlo.proto import local_id, runnable_classes

_CLASSES = runnable_classes()
_Module = _CLASSES["HloModuleProto"]
_Instruction = _CLASSES["HloInstructionProto"]


@dataclass
class Rewrites:
    """What `runnable` changed: counts by kind (`bitcast`, `fusion`, `schedule`)."""

    counts: Counter = field(default_factory=Counter)

    def __bool__(self) -> bool:
        return bool(self.counts)

    def __str__(self) -> str:
        said = {"bitcast": "{} bitcast(s) as transpose/reshape", "fusion": "{} fusion(s) as call(s)",
                "schedule": "its schedule dropped"}
        return ", ".join(said[kind].format(n) for kind, n in sorted(self.counts.items())) or "as dumped"


def runnable(data: bytes) -> tuple[bytes, Rewrites]:
    """(a serialized HloModuleProto XLA:CPU can compile and run, what was
    rewritten) for the serialized HloModuleProto `data`. The module's `id`
    (XLA counts the modules it makes: two parses of one text differ there)
    is cleared, so that the same module gives the same bytes, which the warm
    child compiles once."""
    module = _Module.FromString(data)
    module.ClearField("id")
    rewrites = Rewrites()
    if b"bitcast" in data or b"fusion" in data:  # opcodes are strings in the proto: a cheap test first
        for computation in module.computations:
            _rewrite_computation(computation, rewrites.counts)
    if rewrites and module.HasField("schedule"):
        module.ClearField("schedule")
        rewrites.counts["schedule"] += 1
    return module.SerializeToString(), rewrites


def _rewrite_computation(computation, counts: Counter) -> None:
    if computation.is_fusion_computation:
        computation.ClearField("is_fusion_computation")
    if not any(i.opcode in ("bitcast", "fusion") for i in computation.instructions):
        return
    by_id = {i.id: i for i in computation.instructions}
    next_local = max(local_id(i.id) for i in computation.instructions) + 1
    ordered = []
    for instruction in computation.instructions:
        if instruction.opcode == "fusion":
            instruction.opcode = "call"
            instruction.ClearField("fusion_kind")
            instruction.ClearField("backend_config")
            counts["fusion"] += 1
        elif instruction.opcode == "bitcast" and len(instruction.operand_ids) == 1:
            steps = _logical_steps(by_id[instruction.operand_ids[0]].shape, instruction.shape)
            if steps is not None:
                operand = instruction.operand_ids[0]
                for k, (opcode, dimensions, shape, element_type) in enumerate(steps[:-1]):
                    step = _Instruction(name=f"{instruction.name}.logical.{k}", opcode=opcode, operand_ids=[operand],
                                        id=(instruction.id & ~0xFFFFFFFF) | next_local)
                    step.shape.element_type = element_type
                    step.shape.dimensions.extend(shape)
                    step.shape.layout.minor_to_major.extend(reversed(range(len(shape))))
                    step.dimensions.extend(dimensions)
                    next_local += 1
                    ordered.append(step)
                    operand = step.id
                opcode, dimensions, _, _ = steps[-1]  # the bitcast itself is the last step: its id, name and users stay
                instruction.opcode = opcode
                instruction.ClearField("dimensions")
                instruction.dimensions.extend(dimensions)
                del instruction.operand_ids[:]
                instruction.operand_ids.append(operand)
                counts["bitcast"] += 1
        ordered.append(instruction)
    del computation.instructions[:]
    computation.instructions.extend(ordered)


def _logical_steps(source, result) -> list[tuple[str, list[int], list[int], int]] | None:
    """[(opcode, dimensions, shape, element type)] that compute a bitcast of a
    `source`-shaped value to `result` on logical values. Where the element
    types differ (XLA folds a `bitcast-convert` of the same width into a
    bitcast), the last step converts the bits; None where the element counts
    differ too (widths that differ: left to XLA as dumped)."""
    source_dims, result_dims = list(source.dimensions), list(result.dimensions)
    converts = source.element_type != result.element_type
    if converts and math.prod(source_dims) != math.prod(result_dims):
        return None
    source_order, result_order = _major_to_minor(source), _major_to_minor(result)
    physical = [source_dims[d] for d in source_order]
    result_physical = [result_dims[d] for d in result_order]
    steps = []
    if source_order != sorted(source_order):
        steps.append(("transpose", source_order, physical))
    if result_physical != physical:
        steps.append(("reshape", [], result_physical))
    if result_order != sorted(result_order):
        back = sorted(range(len(result_order)), key=result_order.__getitem__)  # argsort
        steps.append(("transpose", back, result_dims))
    typed = [(opcode, dims, shape, source.element_type) for opcode, dims, shape in steps]
    if converts:
        typed.append(("bitcast-convert", [], result_dims, result.element_type))
    return typed or [("reshape", [], result_dims, result.element_type)]


def _major_to_minor(shape) -> list[int]:
    """The dimensions of `shape` from the most major (XLA's default layout where none is given)."""
    order = list(shape.layout.minor_to_major)
    if len(order) != len(shape.dimensions):
        order = list(reversed(range(len(shape.dimensions))))
    return list(reversed(order))
