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


class VerifyError(ChainError):
    """The verifier could not read its inputs: `where: message`, one line."""


# -- the HLO, as XLA's parser reads it ---------------------------------------


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
    `pipeline.reading.parsed.Parsed`: the chain hands its own, as read)."""
    from passes.hlo import proto as hlo_proto
    from pipeline.reading.parsed import Parsed

    parsed = hlo if isinstance(hlo, Parsed) else parse_hlo(hlo, source, isolate=isolate)
    found: dict[str, list[HloInstruction]] = {}
    for computation in parsed.proto.computations:
        # Local ids count in the order XLA made the instructions (its `instructions()`); the proto lists them in post order.
        protos = sorted(computation.instructions, key=lambda i: hlo_proto.local_id(i.id))
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


@dataclass(frozen=True, eq=False)
class HloRead:
    """What the verifier reads of XLA's parse of an HLO module (a
    `pipeline.reading.parsed.Parsed`), and nothing else of it: its
    computations as `read_hlo` reads them, the module's name, the constants
    its text elides (`pipeline.reading.elided`) and what the report says of
    its names. The chain makes it while XLA's child imports the module, and
    the parse goes once it is made."""

    computations: dict[str, list[HloInstruction]]
    module_name: str
    elided: tuple
    notes: list[str]
    source: str | None

    @classmethod
    def of(cls, parsed) -> "HloRead":
        from pipeline.reading.elided import elided_constants

        notes = [f"%{c}: the names are XLA's, not as written (its definitions could not be matched "
                 f"with XLA's instructions: two on one line?)" for c in parsed.names.unaligned]
        with_edges = {e[0] for e in parsed.control_edges()} if parsed.names.made_by_xla else set()
        notes += [f"%{c}: the names are XLA's (a computation the text writes inline, which XLA names)"
                  for c in sorted(parsed.names.made_by_xla & with_edges)]
        return cls(read_hlo(parsed), parsed.proto.name, elided_constants(parsed), notes, parsed.source)


def parse_hlo(text: str, where: str, *, isolate: bool = False):
    """XLA's parse of HLO text (a `pipeline.reading.parsed.Parsed`); what XLA
    refuses, a VerifyError, with the main command's hint (MLIR names
    hlo2penguin-opt; a predecessor defined below its successor says so)."""
    from pipeline.reading.hints import parser_hint, with_hint
    from pipeline.xla.native import XlaRejected
    from pipeline.xla.isolated import parse

    try:
        return parse(text, where, isolate=isolate)
    except XlaRejected as err:
        raise with_hint(VerifyError(str(err)), parser_hint(text, str(err))) from None




# -- the program, as it runs ---------------------------------------------------


class Program:
    """The executed Penguin module: its ops by (computation, name), and the
    order its data and dep edges impose within each block.

    Each data and dep edge orders two ops of one block: the innermost that
    holds both ends (`printer.penguin.graph.Nesting.joined`: blocks further
    out see one op holding both, blocks further in hold neither), found in
    as many steps as the edge crosses blocks, whatever the module's depth.
    The data edges of every block are gathered in one pass, the first time
    a judgement asks about a block; a topological order of a block's edges,
    made on the first search that needs it, bounds every search after (a
    path to v runs only through ops ranked before v)."""

    def __init__(self, module, hlo_names: dict[str, set[str]]):
        from printer.penguin.graph import Argument, Nesting

        self.module, self._Argument = module, Argument
        self.nesting = nesting = Nesting(module.functions)
        self.blocks, self.block_of = nesting.blocks, nesting.block_of  # id(op or argument) → its block
        self.nodes: dict[tuple[str, str], list] = defaultdict(list)   # (computation, name) → ops
        self.arguments: dict[tuple[str, str], list] = defaultdict(list)
        for block in self.blocks:
            computation = block_computation(block)
            if computation is not None:
                for arg in block.arguments:
                    self.arguments[(computation, arg.name)].append(arg)
            for instr in block.instructions:
                if instr.computation is not None:
                    self.nodes[(instr.computation, instr.name)].append(instr)
        self._after: dict[int, dict[int, set[int]]] | None = None  # id(block) → anchor → anchors right after it
        self._rank: dict[int, dict[int, int] | None] = {}  # id(block) → anchor → place in a topological order
        # A dep edge orders only ops that stand for HLO instructions of its
        # computation (or an argument): one from an importer-made tuple a
        # control-dep call kept bundled, or from a name no instruction has, is
        # spurious and orders nothing here.
        self.dependencies = [d for d in module.dependencies if stands_for_hlo(d, hlo_names, Argument)]
        self.dep_keys: set[tuple[str, str, str]] = set()  # (computation, pred name, succ name), one per dep edge
        for dep in self.dependencies:
            self.dep_keys.add((dep.successor.computation, node_name(dep.predecessor), dep.successor.name))
        self._titles = None  # printer.penguin.titles.Titles of the program's blocks, made on first use

    # -- what the report calls a computation ---------------------------------

    def title(self, computation: str, *names: str) -> str:
        """What the report calls `computation` where an edge of it lives:
        the block of the program that holds the op (or argument) of the
        first of `names` the program has, as the pictures title that block
        (`printer.penguin.titles.block_title`: `%while.16 (while): body
        [%region_2.10]`, `func @main [%main.5]`). XLA's name of
        `computation` is in brackets; a computation several ops' regions
        stand for is named by the first and how many more. Where none of
        `names` has an op, the first op's region that stands for
        `computation` (else the function that does); where none does, XLA's
        name alone."""
        from printer.penguin.titles import computation_of

        for name in names:
            found = self.nodes.get((computation, name)) or self.arguments.get((computation, name))
            if found:
                block = self.block_of.get(id(found[0]))
                if block is not None:
                    return self.title_in(block, computation)
        callers = self._regions().get(computation)
        if callers:
            return self.title_in(callers[0], computation)
        block = next((b for b in self.blocks if b.parent is None and computation_of(b) == computation), None)
        return self.title_in(block, computation) if block is not None else f"%{computation}"

    def title_in(self, block, computation: str) -> str:
        """The report's name of `computation` for an edge in `block` (see `title`)."""
        return self._block_titles().of(block, computation)

    def _block_titles(self):
        if self._titles is None:
            from printer.penguin.titles import Titles

            self._titles = Titles(self.blocks)
        return self._titles

    def _regions(self) -> dict[str, list]:
        """Computation → the nested blocks that stand for it, in program order."""
        return self._block_titles().regions

    def anchor(self, node, block):
        """`node`'s ancestor among `block`'s instructions (or `node` itself, an
        argument of `block`); None where `node` lies outside `block`."""
        return self.nesting.anchor(node, block)

    def successors(self, block) -> dict[int, set[int]]:
        """Anchor → the anchors right after it in `block`, by data and dep edges."""
        if self._after is None:  # every block's, in one pass over every op
            from printer.penguin.graph import Value

            after: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
            joined, block_of = self.nesting.joined, self.block_of
            for each in self.blocks:  # most data edges join two ops of one block: no lifting to do
                mine = after[id(each)]
                for instr in each.instructions:
                    for operand in instr.operands:
                        a = operand.instruction if isinstance(operand, Value) else operand
                        if block_of.get(id(a)) is each:
                            if a is not instr:
                                mine[id(a)].add(id(instr))
                            continue
                        found = joined(a, instr)
                        if found is not None:
                            after[id(found[0])][id(found[1])].add(id(found[2]))
            for d in self.dependencies:  # likewise most dep edges
                a, b = d.predecessor, d.successor
                a = a.instruction if isinstance(a, Value) else a
                home = block_of.get(id(a))
                if home is not None and block_of.get(id(b)) is home:
                    if a is not b:
                        after[id(home)][id(a)].add(id(b))
                    continue
                found = joined(a, b)
                if found is not None:
                    after[id(found[0])][id(found[1])].add(id(found[2]))
            self._after = after
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


def program_source(program) -> tuple[bytes, str]:
    """(the program's UTF-8 source, its name in errors) from a program's
    source or the path of a `.py` program; a VerifyError, one line, for a
    file that cannot be read, is not UTF-8 text, or is HLO (the two swapped)."""
    from pipeline.reading.hints import looks_like_hlo_text

    if isinstance(program, os.PathLike) or (isinstance(program, str) and program.endswith(".py")
                                            and "\n" not in program):
        path = os.fspath(program)
        try:
            with open(path, "rb") as f:
                data, where = f.read(), path
        except OSError as err:
            raise VerifyError(f"cannot read program '{path}': {err.strerror}") from None
    elif isinstance(program, str):
        data, where = program.encode("utf-8", "surrogatepass"), "<penguin program>"
    else:
        raise VerifyError(f"a program is a printer.penguin.Module, its source or a .py path, "
                          f"not {type(program).__name__}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise VerifyError(f"{where}: the program is not UTF-8 text (byte 0x{data[err.start]:02x} at offset "
                          f"{err.start}): a Penguin program is Python source, as hlo2penguin writes it") from None
    if looks_like_hlo_text(text):
        raise VerifyError(f"{where}: this is an HLO module, not a Penguin program: the module comes first, "
                          "then the program")
    return data, where
