"""The verifier's two inputs, each read on its own terms: the HLO as XLA's
parser reads it (`read_hlo`: computations of `HloInstruction`s), and the
Penguin program as it runs (`program_module`, then `Program`: its ops by
HLO name and the order its data and dep edges impose in each block).
Nothing here judges an edge: `pipeline.verifier.verify` does, from these.

Every walk here follows the input's structure (nested blocks, owners up to
a function's top) on an explicit stack or a loop, never by recursion: a
while nested in a while as deep as XLA accepts is read like a flat one.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field

from passes.errors import ChainError
from passes.hlo.text import names_a_file


class VerifyError(ChainError):
    """The verifier could not read its inputs: `where: message`, one line."""




@dataclass(eq=False, slots=True)
class HloInstruction:
    computation: str
    name: str                      # as the input names it
    opcode: str
    operands: list["HloInstruction"] = field(default_factory=list)
    users: list["HloInstruction"] = field(default_factory=list)
    predecessors: list["HloInstruction"] = field(default_factory=list)
    is_root: bool = False
    index: int | None = None       # a get-tuple-element's
    is_buffer: bool = False        # a buffer value (`b(f32[16])`)

    def __repr__(self) -> str:
        return f"<%{self.name} = {self.opcode} in %{self.computation}>"


def read_hlo(hlo, source: str | None = None, *, isolate: bool = False) -> dict[str, list[HloInstruction]]:
    """Computation → its instructions, from XLA's parser alone (its
    HloModuleProto): opcodes, operands, users, control predecessors, roots
    and tuple indices are XLA's, in XLA's order (the text's, with what XLA
    made itself where it made it). Names are the input's: XLA renames a name
    reused across computations (`a` → `a.1`), `Parsed.name` gives it back.
    A computation XLA's parser made (the one a sugared async start wraps)
    holds no control edge of the input: its instructions are kept, with none.

    `hlo`: HLO text, parsed here (in a child process with `isolate`: XLA
    aborts on some bad input), or XLA's parse of it already made (a
    `passes.hlo.Parsed`: the chain hands its own, as read)."""
    from passes.hlo import proto as hlo_proto
    from passes.hlo.parsed import Parsed

    parsed = hlo if isinstance(hlo, Parsed) else parse_hlo(hlo, source, isolate=isolate)
    found: dict[str, list[HloInstruction]] = {}
    for computation in parsed.proto.computations:
        # Local ids count in the order XLA made the instructions (its `instructions()`); the proto lists them in post order.
        protos = sorted(computation.instructions, key=lambda i: i.id & 0xFFFFFFFF)
        by_id = {p.id: HloInstruction(computation.name, parsed.name(computation.name, p.name), p.opcode,
                                      is_buffer=p.shape.element_type == hlo_proto.BUFFER)
                 for p in protos}
        for p in protos:
            instr = by_id[p.id]
            instr.operands = [by_id[o] for o in p.operand_ids]
            for operand in dict.fromkeys(instr.operands):  # XLA's users: each once, in the order they came
                operand.users.append(instr)
            instr.predecessors = [by_id[c] for c in p.control_predecessor_ids]
            instr.is_root = p.id == computation.root_id
            if p.opcode == "get-tuple-element":
                instr.index = p.tuple_index
        found[computation.name] = list(by_id.values())
    return found


def parse_hlo(text: str, where: str, *, isolate: bool = False):
    """XLA's parse of HLO text (a `passes.hlo.Parsed`); what XLA refuses, a VerifyError."""
    from pipeline.xla.native import XlaRejected
    from pipeline.xla.isolated import parse

    try:
        return parse(text, where, isolate=isolate)
    except XlaRejected as err:
        raise VerifyError(str(err)) from None




# -- the program, as it runs ---------------------------------------------------


class Program:
    """The executed Penguin module: its ops by (computation, name), and the
    order its data and dep edges impose within each block.

    An edge between two nodes orders, in the innermost block that holds
    both, the ops there that hold them (their anchors; an argument is its
    own): blocks further out see one op holding both, blocks further in hold
    neither. So each data and dep edge lands in one block, found by lifting
    the deeper end by its block's depth until both ends share a block: the
    work of an edge is the nesting it crosses, not the module's depth. The
    data edges of every block are gathered in one pass, the first time a
    judgement asks about a block; a topological order of a block's edges,
    made on the first search that needs it, bounds every search after (a
    path to v runs only through ops ranked before v)."""

    def __init__(self, module, hlo_names: dict[str, set[str]]):
        from printer.penguin.graph import Argument, Value

        self.module, self._Value, self._Argument = module, Value, Argument
        self.nodes: dict[tuple[str, str], list] = defaultdict(list)   # (computation, name) → ops
        self.arguments: dict[tuple[str, str], list] = defaultdict(list)
        self.block_of: dict[int, object] = {}     # id(op or argument) → its block
        self.depth: dict[int, int] = {}           # id(block) → how many ops' regions hold it (a function's: 0)
        self.blocks: list = []
        blocks = [(fn, 0) for fn in reversed(module.functions)]  # depth first, in program order, on an explicit stack
        while blocks:
            block, depth = blocks.pop()
            blocks += [(inner, depth + 1) for inner in reversed(self._index_block(block, depth))]
        self._after: dict[int, dict[int, set[int]]] | None = None  # id(block) → anchor → anchors right after it
        self._rank: dict[int, dict[int, int] | None] = {}  # id(block) → anchor → place in a topological order
        # A dep edge orders only ops that stand for HLO instructions of its
        # computation (or an argument): one from an importer-made tuple a
        # control-dep call kept bundled, or from a name no instruction has, is
        # spurious and orders nothing here.
        self.dependencies = [d for d in module.dependencies if stands_for_hlo(d, hlo_names, Argument)]
        self.dep_keys: set[tuple[str, str, str]] = set()  # (computation, pred name, succ name), one per dep edge
        self._dep_edges: list[tuple[int, int, int]] = []  # (id(block), anchor, anchor)
        for dep in self.dependencies:
            self.dep_keys.add((dep.successor.computation, node_name(dep.predecessor), dep.successor.name))
            joined = self._joined(dep.predecessor, dep.successor)
            if joined is not None:
                self._dep_edges.append(joined)

    def _index_block(self, block, depth: int) -> list:
        """Index `block`'s arguments and instructions; the blocks nested in it."""
        self.blocks.append(block)
        self.depth[id(block)] = depth
        nested = []
        computation = block_computation(block)
        for arg in block.arguments:
            self.block_of[id(arg)] = block
            if computation is not None:
                self.arguments[(computation, arg.name)].append(arg)
        for instr in block.instructions:
            self.block_of[id(instr)] = block
            if instr.computation is not None:
                self.nodes[(instr.computation, instr.name)].append(instr)
            nested += instr.blocks
        return nested

    def _depth_of(self, node) -> int | None:
        block = self.block_of.get(id(node))
        return self.depth[id(block)] if block is not None else None

    def anchor(self, node, block):
        """`node`'s ancestor among `block`'s instructions (or `node` itself, an
        argument of `block`); None where `node` lies outside `block`."""
        if isinstance(node, self._Value):
            node = node.instruction
        depth, target = self._depth_of(node), self.depth.get(id(block))
        if depth is None or target is None or depth < target:
            return None
        for _ in range(depth - target):
            node = self._owner(node)
        return node if self.block_of.get(id(node)) is block else None

    def _joined(self, a, b) -> tuple[int, int, int] | None:
        """(id(block), id(a's anchor), id(b's anchor)) in the innermost block
        that holds both, where they differ; None where one op holds both, or
        no block does (another function, a node outside the module)."""
        if isinstance(a, self._Value):
            a = a.instruction
        if isinstance(b, self._Value):
            b = b.instruction
        da, db = self._depth_of(a), self._depth_of(b)
        if da is None or db is None:
            return None
        for _ in range(da - db):
            a = self._owner(a)
        for _ in range(db - da):
            b = self._owner(b)
        while (block := self.block_of[id(a)]) is not self.block_of[id(b)]:
            a, b = self._owner(a), self._owner(b)
            if a is None or b is None:  # two functions' tops
                return None
        return None if a is b else (id(block), id(a), id(b))

    def _owner(self, node):
        """The op whose region holds `node`; None at a function's top."""
        if isinstance(node, self._Argument):
            return node.block.parent
        return node.parent.parent if node.parent is not None else None

    def successors(self, block) -> dict[int, set[int]]:
        """Anchor → the anchors right after it in `block`, by data and dep edges."""
        if self._after is None:  # every block's, in one pass over every op
            self._after = defaultdict(lambda: defaultdict(set))
            for each in self.blocks:
                for instr in each.instructions:
                    for operand in instr.operands:
                        joined = self._joined(operand, instr)
                        if joined is not None:
                            self._after[joined[0]][joined[1]].add(joined[2])
            for at, u, v in self._dep_edges:
                self._after[at][u].add(v)
        return self._after[id(block)]

    def rank(self, block) -> dict[int, int] | None:
        """Each anchor's place in a topological order of `block`'s edges
        (Kahn's); None where they form a cycle, which no order bounds."""
        if id(block) in self._rank:
            return self._rank[id(block)]
        after = self.successors(block)
        waiting: dict[int, int] = dict.fromkeys(after, 0)
        for targets in after.values():
            for v in targets:
                waiting[v] = waiting.get(v, 0) + 1
        ready = [u for u, n in waiting.items() if not n]
        rank: dict[int, int] | None = {}
        while ready:
            u = ready.pop()
            rank[u] = len(rank)
            for v in after.get(u, ()):
                waiting[v] -= 1
                if not waiting[v]:
                    ready.append(v)
        if len(rank) < len(waiting):
            rank = None
        self._rank[id(block)] = rank
        return rank

    def reaches(self, a, b, block) -> bool:
        """b comes after a in `block`'s order, a and b anchors there (an
        argument comes before all)."""
        if isinstance(a, self._Argument) or a is b:
            return True
        after, target = self.successors(block), id(b)
        if target in after.get(id(a), ()):  # most often an edge joins them
            return True
        rank = self.rank(block)
        # In a topological order every op on a path to b ranks before b: the
        # search need not go past it (nor start, from an op ranked after b).
        limit = rank.get(target, -1) if rank is not None else None
        if limit is not None and rank.get(id(a), limit) >= limit:
            return False
        seen, stack = {id(a)}, [id(a)]
        while stack:
            for nxt in after.get(stack.pop(), ()):
                if nxt == target:
                    return True
                if nxt not in seen and (limit is None or rank[nxt] < limit):
                    seen.add(nxt)
                    stack.append(nxt)
        return False


def stands_for_hlo(dep, hlo_names: dict[str, set[str]], argument_type) -> bool:
    names = hlo_names.get(dep.successor.computation, set())
    pred = dep.predecessor.instruction if hasattr(dep.predecessor, "instruction") else dep.predecessor
    pred_ok = isinstance(pred, argument_type) or (pred.computation == dep.successor.computation
                                                  and pred.name in names)
    return pred_ok and dep.successor.name in names


def node_name(node) -> str:
    """A dep edge end's name: an op's, an argument's, or a result's op's."""
    return node.instruction.name if hasattr(node, "instruction") else node.name


def block_computation(block) -> str | None:
    counts: dict[str, int] = defaultdict(int)
    for instr in block.instructions:
        if instr.computation is not None:
            counts[instr.computation] += 1
    return max(counts, key=counts.get) if counts else None


# -- where the inputs come from -------------------------------------------------


def hlo_text(hlo, source: str | None) -> tuple[str, str]:
    """(HLO text, its name in errors) from text, bytes or a path."""
    if isinstance(hlo, bytes):
        try:
            return hlo.decode("utf-8"), source or "<hlo text>"
        except UnicodeDecodeError as err:
            raise VerifyError(f"{source or '<hlo text>'}: input is not UTF-8 text (byte 0x{hlo[err.start]:02x}); "
                              "HLO modules are text: pass the .txt that XLA dumped, not a binary proto") from None
    if names_a_file(hlo):  # the same rule as the chain's input (`pipeline.chain.sources.text_of`)
        path = os.fspath(hlo)
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(), source or path
        except (OSError, UnicodeDecodeError) as err:
            raise VerifyError(f"cannot read HLO '{path}': {getattr(err, 'strerror', None) or err}") from None
    return hlo, source or "<hlo text>"


def program_module(program):
    """The Penguin `Module` of `program`: a Module, a program's source, or
    the path of a `.py` program (run here, in pieces if long)."""
    from printer.penguin import Module

    if isinstance(program, Module):
        return program
    if isinstance(program, os.PathLike) or (isinstance(program, str) and program.endswith(".py")
                                            and "\n" not in program):
        path = os.fspath(program)
        try:
            with open(path, encoding="utf-8") as f:
                program_source, where = f.read(), path
        except OSError as err:
            raise VerifyError(f"cannot read program '{path}': {err.strerror}") from None
    else:
        program_source, where = program, "<penguin program>"
    from pipeline.verifier.program import run_program  # the chain's loader: a long program runs in pieces

    try:
        namespace = run_program(program_source, where)
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # the user's file (a sys.exit too): say where it failed, in one line
        raise VerifyError(f"{where}: the program fails to run: {type(err).__name__}: {err}") from None
    module = namespace.get("module")
    if not isinstance(module, Module):
        raise VerifyError(f"{where}: the program leaves no Penguin `module` (a printer.penguin.Module)")
    return module
