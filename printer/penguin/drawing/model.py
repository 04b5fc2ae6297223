"""The graph both pictures draw: a node per argument and instruction (nested
blocks included), a data edge per operand, a dep edge per dependency of the
Module. Nodes are named by their HLO instruction names where those are
unique, else by a qualified id (`_assign_ids`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from printer.penguin.graph import Argument, Block, Instruction, Value
from printer.penguin.titles import short_opcode  # noqa: F401  (importable from here too)

# `Module` (printer.penguin.module) is named in annotations only, never imported:
# a Module draws itself with this package in Jupyter (`_repr_svg_`), and importing
# it here would close an import ring (tests/project/test_imports.py).

# Colours shared by DOT and matplotlib.
DEP_COLOR = "#d62728"
DATA_COLOR = "#555555"
FILL = {"instruction": "#ffffff", "region": "#dbe9f8", "argument": "#e3f4e1", "return": "#eeeeee",
        "ghost": "#ffffff"}


@dataclass(eq=False)
class GNode:
    id: str            # unique in the picture; the HLO name wherever that is unique
    name: str          # the HLO name (or the argument's / op's own name)
    kind: str          # instruction | region | argument | return
    opcode: str        # short: "while", "copy", "argument 0"
    block: Block       # the block that holds it
    obj: object        # the Instruction or Argument


@dataclass
class GEdge:
    source: GNode
    target: GNode
    dep: bool          # a dependency (add_dep_edge), else a data edge
    result: int | None = None  # the result index a data edge reads (Value operand), if any


@dataclass
class Graph:
    """The nodes and edges of one or more functions of a Penguin Module."""

    module: Module
    functions: list[Block]
    nodes: list[GNode] = field(default_factory=list)
    edges: list[GEdge] = field(default_factory=list)
    _by_obj: dict[int, GNode] = field(default_factory=dict)

    def node(self, obj) -> GNode | None:
        if isinstance(obj, Value):
            obj = obj.instruction
        return self._by_obj.get(id(obj))

    @property
    def data_edges(self) -> list[GEdge]:
        return [e for e in self.edges if not e.dep]

    @property
    def dep_edges(self) -> list[GEdge]:
        return [e for e in self.edges if e.dep]


def block_path(block: Block) -> str:
    """`main/loop/body`: the functions, ops and blocks from the top down to `block`."""
    parts = []
    while block.parent is not None:
        parts.append(block.name)
        parts.append(block.parent.name)
        block = block.parent.parent
    parts.append(block.name)
    return "/".join(reversed(parts))


def _select(module: Module, function: str | Sequence[str] | None) -> list[Block]:
    """The functions named (one name or several, in the module's order), or every one if None."""
    if function is None:
        return list(module.functions)
    names = [function] if isinstance(function, str) else list(function)
    for name in names:
        if not any(f.name == name for f in module.functions):
            have = ", ".join(f.name for f in module.functions) or "none"
            raise ValueError(f"module {module.name} has no function {name!r} (functions: {have})")
    return [f for f in module.functions if f.name in names]


def top_function(block: Block) -> Block:
    """The function that holds `block` (itself, for a function)."""
    while block.parent is not None:
        block = block.parent.parent
    return block


def entry_function(module: Module) -> str | None:
    """`main` if the module has it, else its last function (XLA prints ENTRY last); None without functions."""
    names = [f.name for f in module.functions]
    return "main" if "main" in names else (names[-1] if names else None)


def functions_with_deps(module: Module) -> list[str]:
    """The functions, in the module's order, in which a dep edge starts or
    ends (in the function's own block or in one nested in it)."""
    g = graph(module)
    held = {id(top_function(n.block)) for e in g.dep_edges for n in (e.source, e.target)}
    return [f.name for f in module.functions if id(f) in held]


def graph(module: Module, function: str | Sequence[str] | None = None) -> Graph:
    """The nodes (arguments and instructions, nested blocks included) and the
    data and dep edges of `function` (a name, several names, or every
    function if None)."""
    g = Graph(module, _select(module, function))

    # In program order, each op's nested blocks right after it, on an explicit
    # stack (a block to open, or an op to add): blocks nest as deep as the program.
    stack: list = list(reversed(g.functions))
    while stack:
        item = stack.pop()
        if isinstance(item, Block):
            for arg in item.arguments:
                g.nodes.append(GNode("", arg.name, "argument", f"argument {arg.index}", item, arg))
            stack += [(instr, item) for instr in reversed(item.instructions)]
            continue
        instr, block = item
        if instr.blocks:
            kind = "region"
        elif instr.computation is None and short_opcode(instr.opcode) == "return":
            kind = "return"
        else:
            kind = "instruction"
        g.nodes.append(GNode("", instr.name, kind, short_opcode(instr.opcode), block, instr))
        stack += reversed(instr.blocks)
    _assign_ids(g.nodes)
    g._by_obj = {id(n.obj): n for n in g.nodes}
    for n in g.nodes:
        if not isinstance(n.obj, Instruction):
            continue
        for operand in n.obj.operands:
            source = g.node(operand)
            if source is not None:
                g.edges.append(GEdge(source, n, False, operand.index if isinstance(operand, Value) else None))
    for dep in module.dependencies:
        pred, succ = g.node(dep.predecessor), g.node(dep.successor)
        if pred is not None and succ is not None:
            g.edges.append(GEdge(pred, succ, True))
    return g


def _assign_ids(nodes: list[GNode]) -> None:
    """HLO instructions keep their bare names where unique; then any other
    node whose name is still free; the rest get their block path."""
    def is_hlo(n: GNode) -> bool:
        return isinstance(n.obj, Instruction) and n.obj.computation is not None

    hlo_count = Counter(n.name for n in nodes if is_hlo(n))
    all_count = Counter(n.name for n in nodes)
    taken: set[str] = set()
    for n in nodes:
        if is_hlo(n) and hlo_count[n.name] == 1:
            n.id = n.name
            taken.add(n.name)
    for n in nodes:
        if n.id:
            continue
        if all_count[n.name] == 1 and n.name not in taken:
            n.id = n.name
        else:
            suffix = f"#arg{n.obj.index}" if isinstance(n.obj, Argument) else ""
            n.id = f"{block_path(n.block)}/{n.name}{suffix}"
        base, k = n.id, 1
        while n.id in taken:
            k += 1
            n.id = f"{base}~{k}"
        taken.add(n.id)
