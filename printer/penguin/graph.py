"""The Penguin graph that the emitted program builds: what link #4 targets.

A function (and every nested block of an op with regions) holds
instructions in program order; `Block.schedule()` orders them by their
data edges and the dependency edges of the module (an ordering without
data, the "BIR" order; `printer.penguin.Dependency` defines them). The
`Module` that holds the functions and records the dependencies is in
printer.penguin.module, which imports this module and the executor;
nothing here imports either.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field

_TENSOR = re.compile(r"^tensor<((?:[0-9?]+x)*)([a-z][a-z0-9]*)>$")


@dataclass(frozen=True)
class T:
    """A result type: the MLIR type text, with shape and dtype for tensors
    (read from the text once, when first asked for). A program names each
    type once and shares the object among the instructions of that type."""

    text: str

    @property
    def shape(self) -> tuple[int, ...] | None:
        return self._parsed()[0]

    @property
    def dtype(self) -> str | None:
        return self._parsed()[1]

    def _parsed(self) -> tuple:
        found = self.__dict__.get("_shape_dtype")
        if found is None:
            m = _TENSOR.match(self.text)
            found = (None, None) if not m else (
                tuple(int(d) if d != "?" else -1 for d in m.group(1).split("x") if d), m.group(2))
            object.__setattr__(self, "_shape_dtype", found)  # a cache, not a field: equality stays the text's
        return found

    def __str__(self) -> str:
        return self.text


class Node:
    """Anything an operand or a dependency can name: an instruction or an argument."""

    name: str


@dataclass(eq=False)
class Argument(Node):
    name: str
    type: T
    block: Block
    index: int

    def __repr__(self) -> str:
        return f"<Argument {self.name}: {self.type}>"


@dataclass(eq=False, frozen=True)
class Value:
    """Result `index` of an instruction with several results."""

    instruction: Instruction
    index: int

    @property
    def name(self) -> str:
        return f"{self.instruction.name}#{self.index}"


@dataclass(eq=False)
class Instruction(Node):
    name: str
    opcode: str
    operands: list = field(default_factory=list)  # Instruction, Value or Argument
    result_types: list[T] = field(default_factory=list)
    attributes: dict[str, object] = field(default_factory=dict)  # structured values (printer.attributes)
    blocks: list[Block] = field(default_factory=list)
    computation: str | None = None  # the HLO computation it came from
    parent: Block | None = None

    def __getitem__(self, index: int) -> Value:
        if not 0 <= index < len(self.result_types):
            raise IndexError(f"{self.name} has {len(self.result_types)} result(s), not #{index}")
        return Value(self, index)

    def add_dep_edge(self, edge):
        """Record `edge` (a `Dependency.DependencyEdge` whose `dst` is this
        instruction) in the module: this runs after `edge.src`. The form the
        real printer emits, on the successor."""
        if getattr(edge, "dst", None) is not self:
            raise ValueError(f"add_dep_edge on {self.name}: the edge's dst must be {self.name}, "
                             f"not {getattr(getattr(edge, 'dst', None), 'name', edge)!r}")
        module = self.parent._module() if self.parent is not None else None
        if module is None:
            raise ValueError(f"add_dep_edge on {self.name}: the instruction is in no module's function")
        module.dependencies.append(edge)
        return edge

    def block(self, name: str, arguments: list[tuple[str, T]] = (), computation: str | None = None) -> Block:
        """A nested block; `computation`: the HLO computation of its instructions unless one says otherwise."""
        block = Block(name, parent=self, computation=computation)
        block.arguments = [Argument(n, t, block, i) for i, (n, t) in enumerate(arguments)]
        self.blocks.append(block)
        return block

    def __repr__(self) -> str:
        return f"<Instruction {self.name} = {self.opcode}>"


class ScheduleError(ValueError):
    """The data and dependency edges of a block form a cycle."""


@dataclass(eq=False)
class Block:
    name: str
    arguments: list[Argument] = field(default_factory=list)
    instructions: list[Instruction] = field(default_factory=list)
    parent: Instruction | None = None
    module: Module | None = None  # printer.penguin.module.Module: a name only, not imported
    computation: str | None = None  # the HLO computation of an instruction that names none

    @property
    def args(self) -> list[Argument]:
        return self.arguments

    def op(self, opcode: str, name: str, operands=(), results=(), attributes=None,
           computation: str | None = ...) -> Instruction:
        """An instruction at the end of this block. Without `computation` it
        is the block's (`computation=None`: none)."""
        instr = Instruction(name, opcode, list(operands), [r if isinstance(r, T) else T(r) for r in results],
                            dict(attributes or {}), computation=self.computation if computation is ... else computation,
                            parent=self)
        self.instructions.append(instr)
        return instr

    def walk(self):
        """Every instruction of this block and its nested blocks, in program order."""
        for instr in self.instructions:
            yield instr
            for block in instr.blocks:
                yield from block.walk()

    def _module(self) -> Module | None:
        block = self
        while block.parent is not None:
            block = block.parent.parent
        return block.module

    def schedule(self) -> list[Instruction]:
        """A topological order of this block's instructions honouring data
        edges (including values captured by nested blocks) and dependencies
        (lifted to this block when they start or end inside a nested block);
        program order breaks ties, so it is deterministic."""
        position = {id(i): n for n, i in enumerate(self.instructions)}
        owner: dict[int, Instruction] = {}  # any instruction inside → its ancestor here
        for top in self.instructions:
            owner[id(top)] = top
            for block in top.blocks:
                for inner in block.walk():
                    owner[id(inner)] = top

        def here(node) -> Instruction | None:
            if isinstance(node, Value):
                node = node.instruction
            return owner.get(id(node)) if isinstance(node, Instruction) else None

        after: dict[int, set[int]] = {id(i): set() for i in self.instructions}
        for top in self.instructions:
            inner = [top] + [i for b in top.blocks for i in b.walk()]
            for instr in inner:
                for operand in instr.operands:
                    source = here(operand)
                    if source is not None and source is not top:
                        after[id(top)].add(id(source))
        module = self._module()
        for dep in (module.dependencies if module else []):
            pred, succ = here(dep.predecessor), here(dep.successor)
            if pred is not None and succ is not None and pred is not succ:
                after[id(succ)].add(id(pred))
        waiting = {k: len(v) for k, v in after.items()}
        users: dict[int, list[int]] = {id(i): [] for i in self.instructions}
        for succ, preds in after.items():
            for pred in preds:
                users[pred].append(succ)
        by_id = {id(i): i for i in self.instructions}
        ready = [position[k] for k, n in waiting.items() if n == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            instr = self.instructions[heapq.heappop(ready)]
            order.append(instr)
            for user in users[id(instr)]:
                waiting[user] -= 1
                if waiting[user] == 0:
                    heapq.heappush(ready, position[user])
        if len(order) < len(self.instructions):
            stuck = [by_id[k].name for k, n in waiting.items() if n > 0]
            raise ScheduleError(f"block {self.name}: data and dependency edges form a cycle through "
                                + ", ".join(stuck[:10]) + (" …" if len(stuck) > 10 else ""))
        return order


class Function(Block):
    """A function: a top-level block with a name."""
