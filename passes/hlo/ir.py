"""A small mutable HLO IR: just enough structure to rewire operands and
control edges, with every attribute we do not interpret kept verbatim.

XLA's own HLO IR is not mutable from Python, so this is ours; XLA's parser
(`jaxlib._hlo.hlo_module_from_text`) is the oracle every written module is
checked against.
"""

from __future__ import annotations

import contextlib
import gc
import re
from dataclasses import dataclass, field
from typing import Iterator

# A /* comment */, which XLA reads as whitespace (the reader and the IR share it).
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)

# Opcodes whose parenthesised part is a literal, not a list of operands.
PAYLOAD_OPCODES = frozenset({"constant", "parameter"})

# Attributes whose value names other computations.
COMPUTATION_ATTRIBUTES = (
    "calls", "to_apply", "condition", "body", "branch_computations",
    "true_computation", "false_computation",
    "select", "scatter",        # select-and-scatter
    "called_computations",      # custom-call
)


@contextlib.contextmanager
def no_cyclic_gc():
    """The IR is a large graph of small objects and holds no garbage cycles
    worth chasing; the cyclic collector would rescan it again and again while
    a pass allocates (measured: half the time of link #1 at 100k instructions)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class Shape:
    """An HLO shape. `text` is exactly as written (layouts, tiling and
    memory spaces included); `elements` is set for tuples only."""

    text: str
    elements: tuple[Shape, ...] | None = None

    @property
    def is_tuple(self) -> bool:
        return self.elements is not None

    @property
    def is_token(self) -> bool:
        return self.text.startswith("token[")

    @staticmethod
    def tuple_of(shapes: list[Shape]) -> Shape:
        return Shape("(" + ", ".join(s.text for s in shapes) + ")", tuple(shapes))


@dataclass(eq=False, slots=True)
class Instruction:
    """One HLO instruction. Identity is object identity: names are only
    unique within a computation, and passes rewire objects, not names."""

    name: str
    shape: Shape
    opcode: str
    operands: list[Instruction] = field(default_factory=list)
    attributes: list[tuple[str, str]] = field(default_factory=list)
    control_predecessors: list[Instruction] = field(default_factory=list)
    # The literal inside `constant(...)` / `parameter(...)`, verbatim.
    payload: str | None = None
    # Where the instruction was read from, for error messages; None if made.
    line: int | None = None

    def attribute(self, key: str) -> str | None:
        for k, v in self.attributes:
            if k == key:
                return v
        return None

    def called_computation_names(self) -> list[str]:
        names = []
        for key in COMPUTATION_ATTRIBUTES:
            value = self.attribute(key)
            if value is not None:
                value = BLOCK_COMMENT.sub(" ", value)  # XLA reads a /* comment */ as whitespace
                names.extend(n.strip().lstrip("%") for n in value.strip().strip("{}").split(",") if n.strip())
        return names

    def __repr__(self) -> str:
        return f"<Instruction %{self.name} = {self.opcode}>"


@dataclass(eq=False)
class Computation:
    name: str
    instructions: list[Instruction]
    root: Instruction
    is_entry: bool = False
    # `(p: f32[]) -> f32[]` as written, or None for the short `%name {` form.
    signature: str | None = None
    # Trailing `, execution_thread="..."` and the like, verbatim.
    trailing_attributes: list[tuple[str, str]] = field(default_factory=list)
    line: int | None = None

    def instruction(self, name: str) -> Instruction:
        for instr in self.instructions:
            if instr.name == name:
                return instr
        raise KeyError(f"no instruction %{name} in computation %{self.name}")

    def users(self) -> dict[Instruction, list[Instruction]]:
        """Data users of every instruction, in program order, each user once."""
        users: dict[Instruction, list[Instruction]] = {i: [] for i in self.instructions}
        for instr in self.instructions:
            for operand in dict.fromkeys(instr.operands):
                users[operand].append(instr)
        return users

    def insert_before(self, anchor: Instruction, new: Instruction) -> None:
        self.instructions.insert(self.instructions.index(anchor), new)

    def __repr__(self) -> str:
        return f"<Computation %{self.name}: {len(self.instructions)} instructions>"


@dataclass(eq=False)
class Module:
    name: str
    # Header attributes after the name (`entry_computation_layout`,
    # `is_scheduled`, `frontend_attributes`, ...), verbatim, in order.
    attributes: list[tuple[str, str]] = field(default_factory=list)
    # The FileNames / FunctionNames / FileLocations / StackFrames sections
    # that newer XLA prints between the header and the computations.
    stack_frame_text: str = ""
    computations: list[Computation] = field(default_factory=list)

    @property
    def entry(self) -> Computation:
        for comp in self.computations:
            if comp.is_entry:
                return comp
        return self.computations[-1]  # XLA's rule when no ENTRY is marked

    def computation(self, name: str) -> Computation:
        for comp in self.computations:
            if comp.name == name:
                return comp
        raise KeyError(f"no computation %{name}")

    def attribute(self, key: str) -> str | None:
        for k, v in self.attributes:
            if k == key:
                return v
        return None

    def set_attribute(self, key: str, value: str) -> None:
        for i, (k, _) in enumerate(self.attributes):
            if k == key:
                self.attributes[i] = (key, value)
                return
        self.attributes.append((key, value))

    def instructions(self) -> Iterator[tuple[Computation, Instruction]]:
        for comp in self.computations:
            for instr in comp.instructions:
                yield comp, instr

    def control_edges(self) -> list[tuple[str, str, str]]:
        """Every control edge as (computation, predecessor, successor) names."""
        return [
            (comp.name, pred.name, instr.name)
            for comp, instr in self.instructions()
            for pred in instr.control_predecessors
        ]

    def instruction_names(self) -> set[str]:
        return {instr.name for _, instr in self.instructions()}

    def __repr__(self) -> str:
        return f"<Module {self.name}: {len(self.computations)} computations>"
