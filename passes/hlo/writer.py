"""Write the IR back as HLO text that XLA's parser accepts.

Operands are printed by name only (XLA's `short_parsable` style): their
shapes are implied by their definitions, and XLA re-derives them.
"""

from __future__ import annotations

from typing import Callable

from passes.hlo.ir import Computation, Instruction, Module, no_cyclic_gc

# (computation, instruction) -> the attributes to print in place of its own.
AttributeHook = Callable[[Computation, Instruction], list[tuple[str, str]]]


def write_module(module: Module, attributes: AttributeHook | None = None) -> str:
    """`attributes`, if given, decides each instruction's printed attributes
    (link #2 uses it to key every instruction without copying the module)."""
    with no_cyclic_gc():
        return _write_module(module, attributes)


def _write_module(module: Module, attributes: AttributeHook | None) -> str:
    header = "HloModule " + module.name + "".join(f", {k}={v}" for k, v in module.attributes)
    parts = [header]
    if module.stack_frame_text:
        parts.append(module.stack_frame_text)
    parts.extend(write_computation(comp, attributes) for comp in module.computations)
    return "\n\n".join(parts) + "\n"


def write_computation(comp: Computation, attributes: AttributeHook | None = None) -> str:
    head = ("ENTRY " if comp.is_entry else "") + "%" + comp.name
    if comp.signature:
        head += " " + comp.signature
    lines = [head + " {"]
    for instr in comp.instructions:
        own = attributes(comp, instr) if attributes else None
        lines.append("  " + write_instruction(instr, instr is comp.root, own))
    tail = "}" + "".join(f", {k}={v}" for k, v in comp.trailing_attributes)
    lines.append(tail)
    return "\n".join(lines)


def write_instruction(instr: Instruction, is_root: bool = False,
                      attributes: list[tuple[str, str]] | None = None) -> str:
    if instr.payload is not None:
        inner = instr.payload
    else:
        inner = ", ".join("%" + op.name for op in instr.operands)
    shape = f"{instr.shape.text} " if instr.shape is not None else ""  # None: XLA infers it
    text = f"{'ROOT ' if is_root else ''}%{instr.name} = {shape}{instr.opcode}({inner})"
    attributes = list(instr.attributes if attributes is None else attributes)
    if instr.control_predecessors:
        preds = ", ".join("%" + p.name for p in instr.control_predecessors)
        attributes.append(("control-predecessors", "{" + preds + "}"))
    return text + "".join(f", {k}={v}" for k, v in attributes)
