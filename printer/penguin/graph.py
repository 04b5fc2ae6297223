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
from collections import defaultdict
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
        """Every instruction of this block and its nested blocks, in program
        order (an explicit stack: blocks nest as deep as the program makes them)."""
        stack = list(reversed(self.instructions))
        while stack:
            instr = stack.pop()
            yield instr
            for block in reversed(instr.blocks):
                stack += reversed(block.instructions)

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
        module = self._module()
        return _topological(self, _waits(Nesting([self]), module.dependencies if module else ())[id(self)])


class Nesting:
    """Where every instruction and argument of some blocks and the blocks
    nested in them sits: its block, and how deep that block is (`roots` 0).

    An edge between two nodes (an operand and its reader, a dependency's
    ends) orders, in the innermost block that holds both, the two ops there
    that hold them (`joined`): blocks further out see one op holding both,
    blocks further in hold neither. Lifting the deeper end by the depths
    finds that block in as many steps as the edge crosses blocks, whatever
    the program's depth. Everything is indexed on an explicit stack."""

    def __init__(self, roots):
        self.blocks: list[Block] = []         # depth first, in program order
        self.block_of: dict[int, Block] = {}  # id(instruction or argument) → its block
        self.depth: dict[int, int] = {}       # id(block) → how many ops' regions hold it, below the roots
        stack = [(block, 0) for block in reversed(list(roots))]
        while stack:
            block, depth = stack.pop()
            self.blocks.append(block)
            self.depth[id(block)] = depth
            for arg in block.arguments:
                self.block_of[id(arg)] = block
            nested = []
            for instr in block.instructions:
                self.block_of[id(instr)] = block
                nested += instr.blocks
            stack += [(inner, depth + 1) for inner in reversed(nested)]

    @staticmethod
    def owner(node):
        """The op whose region holds `node` (an instruction or an argument); None at a top."""
        if isinstance(node, Argument):
            return node.block.parent
        return node.parent.parent if node.parent is not None else None

    def depth_of(self, node) -> int | None:
        block = self.block_of.get(id(node))
        return self.depth[id(block)] if block is not None else None

    def anchor(self, node, block):
        """`node`'s ancestor among `block`'s instructions (or `node` itself, an
        argument of `block`); None where `node` lies outside `block`."""
        if isinstance(node, Value):
            node = node.instruction
        depth, target = self.depth_of(node), self.depth.get(id(block))
        if depth is None or target is None or depth < target:
            return None
        for _ in range(depth - target):
            node = self.owner(node)
        return node if self.block_of.get(id(node)) is block else None

    def joined(self, a, b) -> tuple[Block, Node, Node] | None:
        """(block, a's anchor, b's anchor) in the innermost block that holds
        both, where the anchors differ; None where one op holds both, or no
        block does (two functions, a node outside these blocks)."""
        if isinstance(a, Value):
            a = a.instruction
        if isinstance(b, Value):
            b = b.instruction
        da, db = self.depth_of(a), self.depth_of(b)
        if da is None or db is None:
            return None
        for _ in range(da - db):
            a = self.owner(a)
        for _ in range(db - da):
            b = self.owner(b)
        while (block := self.block_of.get(id(a))) is not self.block_of.get(id(b)):
            a, b = self.owner(a), self.owner(b)
            if a is None or b is None:
                return None
        return None if a is b or block is None else (block, a, b)


class Schedules:
    """`Block.schedule()` of the blocks of `module`, each made when first
    asked for, from one pass over all its ops and dependencies: the
    executor's, which schedules every block it runs."""

    def __init__(self, module):
        self._waits = _waits(Nesting(module.functions), module.dependencies)
        self._orders: dict[int, list[Instruction]] = {}

    def __call__(self, block: Block) -> list[Instruction]:
        order = self._orders.get(id(block))
        if order is None:
            order = self._orders[id(block)] = _topological(block, self._waits.get(id(block), {}))
        return order


def _waits(nesting: Nesting, dependencies) -> dict[int, dict[int, set[int]]]:
    """id(block) → id(instruction) → the ids of the instructions of the same
    block it must come after, by data (an argument waits for nothing) and by
    `dependencies`, each edge in the one block where its ends' ops differ."""
    waits: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))

    def order(before, after) -> None:
        joined = nesting.joined(before, after)
        if joined is not None and isinstance(joined[1], Instruction):
            waits[id(joined[0])][id(joined[2])].add(id(joined[1]))

    for block in nesting.blocks:
        for instr in block.instructions:
            for operand in instr.operands:
                order(operand, instr)
    for dep in dependencies:
        order(dep.predecessor, dep.successor)
    return waits


def _topological(block: Block, waits: dict[int, set[int]]) -> list[Instruction]:
    """`block`'s instructions in an order where each comes after what it
    waits for; program order breaks ties."""
    position = {id(i): n for n, i in enumerate(block.instructions)}
    waiting = {id(i): len(waits.get(id(i), ())) for i in block.instructions}
    users: dict[int, list[int]] = {id(i): [] for i in block.instructions}
    for succ, preds in waits.items():
        for pred in preds:
            users[pred].append(succ)
    ready = [position[k] for k, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        instr = block.instructions[heapq.heappop(ready)]
        order.append(instr)
        for user in users[id(instr)]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, position[user])
    if len(order) < len(block.instructions):
        stuck = [i.name for i in block.instructions if waiting[id(i)] > 0]
        raise ScheduleError(f"block {block.name}: data and dependency edges form a cycle through "
                            + ", ".join(stuck[:10]) + (" …" if len(stuck) > 10 else ""))
    return order


class Function(Block):
    """A function: a top-level block with a name."""
