"""The proof, without taking the chain's word for it: an independent verifier.

    report = pipeline.verifier.verify("module.hlo", "program.py")
    report.lost, report.spurious

From the original HLO alone, read by XLA's parser (not by link #1, whose
records are shown beside and never trusted), and from the Penguin program
alone, after running it, each HLO control edge `p -> S` of a computation C
gets a fate:

- preserved: the program has the dep edge `p -> S` in C;
- rerouted: it has no such dep edge, but its order implies the HLO's: S (or,
  where S has no op of its own, every op that reads S) comes after p (or,
  where p has no op of its own, after every op p forwards) along the
  program's data and dep edges;
- dropped: the program does not order them and need not, because the HLO
  itself implies the order: S ends C (its ROOT), or p is a parameter (ready
  before every instruction), or S has no op and no reader (nothing to order);
- lost: anything else.

And every dep edge of the program that no HLO edge accounts for is
**spurious**: a dep edge `u -> v` in C is accounted for by an HLO edge
`p -> S` of C when u is p, an op p forwards (tuple, get-tuple-element) or p's
`*-done` (which stands in for a start with no value), and v is S or an op
that reads S (through tuples), or, for a pinned S (`*-done`, `async-update`)
that no op but pinned ones reads, S's start (S waits for it).

What the verifier needs to know of the importer is kept to two facts: a
`tuple`/`get-tuple-element` may have no op of its own, and a `send-done` /
`recv-done` goes by its `send` / `recv` (the importer makes the pair one op).
"""

from __future__ import annotations

import functools
import os
from collections import defaultdict
from dataclasses import dataclass, field

from passes.control_dep import Fate
from passes.errors import ChainError
from passes.hlo.text import names_a_file
from pipeline.verifier.report import EdgeReport, Report, Spurious, SpuriousEdge

_FORWARDING = frozenset({"tuple", "get-tuple-element"})
_PAIRED_DONES = frozenset({"send-done", "recv-done"})  # the importer folds them into their send/recv
_READ_THROUGH = _FORWARDING | _PAIRED_DONES  # a reader of these reads what they stand for
# Values made from nothing, with no effect: unread, when they run is unobservable.
_PURE_SOURCES = frozenset({"constant", "iota", "partition-id", "replica-id", "after-all", "parameter"})


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
    `passes.hlo.Parsed`: the chain hands its own, as read)."""
    from passes.hlo import proto as hlo_proto
    from passes.hlo.parsed import Parsed
    from pipeline.xla.native import XlaRejected
    from pipeline.xla.isolated import parse

    if isinstance(hlo, Parsed):
        parsed = hlo
    else:
        try:
            parsed = parse(hlo, source, isolate=isolate)
        except XlaRejected as err:
            raise VerifyError(str(err)) from None
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


# -- the program, as it runs ---------------------------------------------------


class _Program:
    """The executed Penguin module: its ops by (computation, name), and the
    order its data and dep edges impose within each block.

    The dep edges are sorted by block up front; each block's edges are
    gathered once, the first time a judgement asks about the block; and a
    topological order of them, made on the first search that needs it,
    bounds every search after (a path to v runs only through ops ranked
    before v)."""

    def __init__(self, module, hlo_names: dict[str, set[str]]):
        from printer.penguin.graph import Argument, Value

        self.module, self._Value, self._Argument = module, Value, Argument
        self.nodes: dict[tuple[str, str], list] = defaultdict(list)   # (computation, name) → ops
        self.arguments: dict[tuple[str, str], list] = defaultdict(list)
        self.block_of: dict[int, object] = {}     # id(op or argument) → its block
        self.blocks: list = []
        for fn in module.functions:
            self._index_block(fn)
        self._after: dict[int, dict[int, set[int]]] = {}   # id(block) → anchor → anchors right after it
        self._rank: dict[int, dict[int, int] | None] = {}  # id(block) → anchor → place in a topological order
        # A dep edge orders only ops that stand for HLO instructions of its
        # computation (or an argument): one from an importer-made tuple a
        # control-dep call kept bundled, or from a name no instruction has, is
        # spurious and orders nothing here.
        self.dependencies = [d for d in module.dependencies if _stands_for_hlo(d, hlo_names, Argument)]
        self.deps_into: dict[tuple, set[str]] = defaultdict(set)  # (computation, succ name) → pred names
        # Each dep edge, between its ends' anchors in every block that holds both.
        self._dep_edges: dict[int, list[tuple[int, int]]] = defaultdict(list)  # id(block) → (anchor, anchor)
        for dep in self.dependencies:
            self.deps_into[(dep.successor.computation, dep.successor.name)].add(_name(dep.predecessor))
            u, v = self._anchors(dep.predecessor), self._anchors(dep.successor)
            for block in u.keys() & v.keys():
                if u[block] is not v[block]:
                    self._dep_edges[block].append((id(u[block]), id(v[block])))

    def _index_block(self, block) -> None:
        self.blocks.append(block)
        computation = _block_computation(block)
        for arg in block.arguments:
            self.block_of[id(arg)] = block
            if computation is not None:
                self.arguments[(computation, arg.name)].append(arg)
        for instr in block.instructions:
            self.block_of[id(instr)] = block
            if instr.computation is not None:
                self.nodes[(instr.computation, instr.name)].append(instr)
            for inner in instr.blocks:
                self._index_block(inner)

    def anchor(self, node, block):
        """`node`'s ancestor among `block`'s instructions (or `node` itself, an
        argument of `block`); None where `node` lies outside `block`."""
        if isinstance(node, self._Value):
            node = node.instruction
        while node is not None:
            if self.block_of.get(id(node)) is block:
                return node
            node = self._owner(node)
        return None

    def _anchors(self, node) -> dict[int, object]:
        """id(block) → `node`'s anchor there (see `anchor`), for every block
        that holds `node` or an op around it."""
        if isinstance(node, self._Value):
            node = node.instruction
        found: dict[int, object] = {}
        while node is not None:
            block = self.block_of.get(id(node))
            if block is not None:
                found.setdefault(id(block), node)  # the innermost, as `anchor` finds it
            node = self._owner(node)
        return found

    def _owner(self, node):
        """The op whose region holds `node`; None at a function's top."""
        if isinstance(node, self._Argument):
            return node.block.parent
        return node.parent.parent if node.parent is not None else None

    def successors(self, block) -> dict[int, set[int]]:
        after = self._after.get(id(block))
        if after is not None:
            return after
        after = defaultdict(set)
        for top in block.instructions:
            for instr in _walk(top):
                for operand in instr.operands:
                    source = self.anchor(operand, block)
                    if source is not None and source is not top:
                        after[id(source)].add(id(top))
        for u, v in self._dep_edges.get(id(block), ()):
            after[u].add(v)
        self._after[id(block)] = after
        return after

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


def _stands_for_hlo(dep, hlo_names: dict[str, set[str]], argument_type) -> bool:
    names = hlo_names.get(dep.successor.computation, set())
    pred = dep.predecessor.instruction if hasattr(dep.predecessor, "instruction") else dep.predecessor
    pred_ok = isinstance(pred, argument_type) or (pred.computation == dep.successor.computation
                                                  and pred.name in names)
    return pred_ok and dep.successor.name in names


def _walk(instr):
    yield instr
    for block in instr.blocks:
        for inner in block.instructions:
            yield from _walk(inner)


def _block_computation(block) -> str | None:
    counts: dict[str, int] = defaultdict(int)
    for instr in block.instructions:
        if instr.computation is not None:
            counts[instr.computation] += 1
    return max(counts, key=counts.get) if counts else None


# -- the verdict ------------------------------------------------------------------


def verify(hlo, program, *, source: str | None = None, link1: dict | None = None,
           isolate: bool = False) -> Report:
    """Check a Penguin program against the HLO it came from, from these two
    alone: each control edge of the HLO (read by XLA's parser) and its fate
    in the executed program, and each dep edge no HLO edge accounts for.

        report = pipeline.verify("module.txt", "program.py")
        report.ok                 # no edge lost, no spurious dep edge
        print(report.summary())   # 3 HLO control edge(s): 3 preserved, ...

    A program made from another module is a VerifyError that says so.
    `hlo`: HLO text, bytes, a path, or XLA's parse of it (a
    `passes.hlo.Parsed`). `program`: a Penguin `Module`, the source of a
    program, or the path of a `.py` program (it is run). `link1`: link #1's
    own account, {(computation, pred, succ): edge}, shown beside each edge
    and never used to judge it. `isolate`: XLA parses in a child process."""
    from passes.collector import no_cyclic_gc
    from passes.hlo.parsed import Parsed

    text, where = (hlo, source or hlo.source or "<hlo>") if isinstance(hlo, Parsed) else _hlo_text(hlo, source)
    module = _program_module(program)
    # The verdict builds large graphs and keeps them to the end: the cyclic
    # collector would walk them (and the caller's heap) again and again for
    # nothing (measured: about a third of the time at 30k instructions).
    if not isinstance(text, Parsed):
        from pipeline.xla.native import XlaRejected
        from pipeline.xla.isolated import parse

        try:
            text = parse(text, where, isolate=isolate)
        except XlaRejected as err:
            raise VerifyError(str(err)) from None
    with no_cyclic_gc():
        try:
            report = _verdict(read_hlo(text, where), module, link1, text.proto.name, where)
            report.notes += [f"%{c}: the names are XLA's, not as written (its definitions could not be matched "
                             f"with XLA's instructions: two on one line?)" for c in text.names.unaligned]
            with_edges = {e[0] for e in text.control_edges()} if text.names.made_by_xla else set()
            report.notes += [f"%{c}: the names are XLA's (a computation the text writes inline, which XLA names)"
                             for c in sorted(text.names.made_by_xla & with_edges)]
            return report
        finally:  # the memos hold this module's instructions: let them go with it
            _standing_in.cache_clear()
            _reading.cache_clear()


def _verdict(computations: dict[str, list[HloInstruction]], module, link1: dict | None,
             hlo_name: str = "", where: str = "<hlo>") -> Report:
    """Each HLO control edge's fate, and the program's spurious dep edges."""
    prog = _Program(module, {c: {i.name for i in instrs} for c, instrs in computations.items()})
    _refuse_another_modules_program(computations, prog, module.name, hlo_name, where)
    report = Report(dep_edges=len(module.dependencies))
    allowed: set[tuple[str, str, str]] = set()
    for computation, instrs in computations.items():
        for succ in instrs:
            for pred in succ.predecessors:
                carried = _carried(computation, pred, succ, prog)
                fate, reason = _judge(computation, pred, succ, prog, carried)
                emitted, said = (), ""
                if link1 is not None and (computation, pred.name, succ.name) in link1:
                    claim = link1[(computation, pred.name, succ.name)]
                    emitted, said = claim.emitted, f"{claim.fate.value}" + (f": {claim.reason}" if claim.reason else "")
                report.edges.append(EdgeReport(computation, pred.name, succ.name, fate, emitted, reason,
                                               carried=tuple(carried), link1=said))
                allowed.update((computation, u, v) for u in _standing_in(pred) for v in _reading(succ))
    for dep in module.dependencies:
        key = (dep.successor.computation, _name(dep.predecessor), dep.successor.name)
        pred = dep.predecessor.instruction if hasattr(dep.predecessor, "instruction") else dep.predecessor
        across = getattr(pred, "computation", key[0]) != key[0]  # same names, another computation
        if key not in allowed or across:
            if getattr(pred, "opcode", "").endswith(".tuple"):
                report.spurious.append(SpuriousEdge(*key, reason=f"%{key[1]} is a tuple op: the predecessors it "
                                                    f"bundles were never flattened", cause=Spurious.BUNDLED_TUPLE))
            else:
                report.spurious.append(SpuriousEdge(*key))
    return report


def _refuse_another_modules_program(computations: dict[str, list[HloInstruction]], prog: _Program,
                                    program_module: str, hlo_module: str, where: str) -> None:
    """A program made from another module builds a module of another name
    and holds none of the instructions this module's control edges join:
    say so, rather than report every edge lost. (A program of this module
    keeps each instruction an edge joins, whatever became of the edge, and
    the module's name.)"""
    if program_module == hlo_module:
        return
    ends = {(c, i.name) for c, instrs in computations.items() for s in instrs if s.predecessors
            for i in (s, *s.predecessors)}
    if not ends or any(end in prog.nodes or end in prog.arguments for end in ends):
        return
    raise VerifyError(f"{where}: the program was not made from this module (it builds module '{program_module}', "
                      f"this is '{hlo_module}'): it has none of the {len(ends)} instructions this module's control "
                      f"edges join; verify it against the module it was made from")


def _name(node) -> str:
    return node.instruction.name if hasattr(node, "instruction") else node.name


def _carried(computation: str, pred: HloInstruction, succ: HloInstruction, prog: _Program) -> list:
    """The program's dep edges that stand for `pred -> succ` (by name)."""
    starts = _standing_in(pred)
    return sorted({(u, v) for v in _reading(succ) for u in prog.deps_into.get((computation, v), ()) if u in starts})


def _judge(computation: str, pred: HloInstruction, succ: HloInstruction, prog: _Program,
           carried: list) -> tuple[Fate, str]:
    """The fate of the HLO edge `pred -> succ`, and why."""
    direct = (_program_name(pred), _program_name(succ)) in carried
    if pred.opcode == "parameter" and not direct:
        return (Fate.DROPPED, f"implied: %{pred.name} is a parameter of %{computation}, "
                              "ready before every instruction in it")
    before = _ops_of(pred, prog, computation)
    if before is None:
        return (Fate.DROPPED, f"implied: %{pred.name} only forwards a parameter of %{computation}, "
                              "ready before every instruction in it")
    if not before:
        return _unordered(succ, computation, f"%{pred.name} has no op in the program")
    own = prog.nodes.get((computation, _program_name(succ))) or []
    why = _unordered_pairs(before, own, prog) if own else [f"%{succ.name} has no op in the program"]
    if not why:
        return (Fate.PRESERVED, "") if direct else (Fate.REROUTED, _through(carried))
    if own and not _cannot_carry(succ):
        return _unordered(succ, computation, "; ".join(why))
    # The HLO shows S cannot carry the edge (no operand, an operand XLA pins, no
    # op of its own): every op that reads S must come after p.
    readers, ends = _reader_ops(succ, prog, computation)
    if not readers:
        if ends:
            return (Fate.DROPPED, f"implied: %{succ.name} cannot carry it, and its value is the result of "
                                  f"%{computation}, which ends after every instruction in it")
        if succ.opcode in _PURE_SOURCES and not _observed(succ):
            return (Fate.DROPPED, f"implied: %{succ.name} ({succ.opcode}) has no effect and no reader: "
                                  "nothing observes when it runs")
        return _unordered(succ, computation, f"%{succ.name} cannot carry it and has no reader that can")
    why = _unordered_pairs(before, readers, prog)
    if why:
        return _unordered(succ, computation, "; ".join(why))
    return (Fate.REROUTED, _through(carried))


def _cannot_carry(succ: HloInstruction) -> bool:
    """What the HLO's structure says: S has no operand to take the edge, its
    operand is pinned (a `*-done` / `async-update` reads its start directly)
    or a buffer (`b(f32[16])`, which no op can stand for), or it only
    forwards values (a tuple, a get-tuple-element: ordering it orders
    nothing; its readers are what must wait)."""
    return (not succ.operands or succ.opcode.endswith("-done") or succ.opcode == "async-update"
            or succ.opcode in _FORWARDING or succ.operands[0].is_buffer)


def _unordered_pairs(before: list, after: list, prog: _Program) -> list[str]:
    """For each block `before` lies in, the pairs the program does not order."""
    why = []
    for p in before:
        block = prog.block_of[id(p)]  # p is an op of it: its own anchor there
        targets = [(s, b) for s in after if (b := prog.anchor(s, block)) is not None]
        if not targets:
            why.append(f"nothing after %{_name(p)} in its block")
        why += [f"%{_name(s)} does not come after %{_name(p)}" for s, b in targets
                if not prog.reaches(p, b, block)]
    return list(dict.fromkeys(why))


def _through(carried: list) -> str:
    how = ", ".join(f"%{u} -> %{v}" for u, v in carried)
    return f"the program orders them through {how}" if how else "the program's data edges order them"


def _unordered(succ: HloInstruction, computation: str, why: str) -> tuple[Fate, str]:
    """The program does not order them: dropped where the HLO implies the
    order anyway, else lost."""
    if succ.is_root:
        return (Fate.DROPPED, f"implied: %{succ.name} is the result of %{computation}, "
                              "which ends after every instruction in it")
    if succ.opcode in _FORWARDING and not _observed(succ):
        return (Fate.DROPPED, f"implied: %{succ.name} ({succ.opcode}) has no op and no reader: "
                              "nothing comes after it")
    return (Fate.LOST, why)


def _program_name(instr: HloInstruction) -> str:
    if instr.opcode in _PAIRED_DONES and instr.operands:
        return instr.operands[0].name
    return instr.name


def _ops_of(instr: HloInstruction, prog: _Program, computation: str) -> list | None:
    """The program's ops the successor must wait for: `instr`'s own (every
    instance of its computation); where it only forwards values (tuple,
    get-tuple-element), those of what it forwards, whether or not the importer
    made it an op. A parameter is ready before everything and needs none: None
    if `instr` forwards only parameters."""
    if instr.opcode == "parameter":
        return None
    if instr.opcode not in _FORWARDING:  # a tuple op orders nothing of its own, op or not
        return list(prog.nodes.get((computation, _program_name(instr))) or [])
    sources = instr.operands
    if instr.opcode == "get-tuple-element" and instr.operands and instr.operands[0].opcode == "tuple":
        tuple_ = instr.operands[0]
        sources = [tuple_.operands[instr.index]] if instr.index is not None else tuple_.operands
    ops, ready = [], False
    for source in sources:
        more = _ops_of(source, prog, computation)
        if more is None:
            ready = True
        else:
            ops += more
    return None if ready and not ops else ops


def _reader_ops(succ: HloInstruction, prog: _Program, computation: str) -> tuple[list, bool]:
    """The ops of every reader of `succ`, looking through readers that only
    forward values (tuple, get-tuple-element) to theirs; and whether such a
    path ends in the computation's result (its ROOT)."""
    ops, ends = [], False
    for reader in _readers(succ):
        if reader.opcode in _FORWARDING:
            more, more_ends = _reader_ops(reader, prog, computation)
            ops += more
            ends = ends or more_ends or reader.is_root
        else:
            ops += prog.nodes.get((computation, _program_name(reader))) or []
    return ops, ends


def _observed(instr: HloInstruction) -> bool:
    """Something reads `instr`'s value: an op that is no tuple/get-tuple-element,
    or the computation's result, through any number of those."""
    return any(r.is_root or r.opcode not in _FORWARDING or _observed(r) for r in _readers(instr))


def _readers(instr: HloInstruction) -> list[HloInstruction]:
    return list(dict.fromkeys(instr.users))


@functools.lru_cache(maxsize=None)
def _standing_in(pred: HloInstruction) -> frozenset[str]:
    """Names a dep edge for `pred` may start from: pred, what it forwards, its
    paired name, and the `*-done`/`async-update` ops that complete it."""
    return _names_reached([pred], lambda i: (i.operands if i.opcode in _FORWARDING else [])
                          + [u for u in i.users if u.opcode.endswith(("-done", "-update"))])


@functools.lru_cache(maxsize=None)
def _reading(succ: HloInstruction) -> frozenset[str]:
    """Names a dep edge for `succ` may end at: succ (or its paired name) and
    the ops that read it, through tuples and get-tuple-elements; for a
    pinned S that no op can carry the edge for, its start too (ordering the
    start after p orders S after p)."""
    names = _names_reached([succ], lambda i: i.users if i is succ or i.opcode in _READ_THROUGH
                           else [])
    start = _start_carrying(succ)
    return names | {start.name, _program_name(start)} if start is not None else names


def _pinned(instr: HloInstruction) -> bool:
    return instr.opcode.endswith("-done") or instr.opcode == "async-update"


def _start_carrying(succ: HloInstruction) -> HloInstruction | None:
    """The start of a pinned S (a `*-done` or `async-update`, which must read
    it) when nothing but pinned ops reads S, through tuples and
    get-tuple-elements, and S is not the computation's result."""
    if not _pinned(succ) or succ.is_root or not succ.operands:
        return None
    stack, seen = [succ], {id(succ)}
    while stack:
        for reader in _readers(stack.pop()):
            if reader.is_root or not (_pinned(reader) or reader.opcode in _FORWARDING):
                return None
            if reader.opcode in _FORWARDING and id(reader) not in seen:
                seen.add(id(reader))
                stack.append(reader)
    start = succ.operands[0]
    while _pinned(start) and start.operands:  # through `async-update`s
        start = start.operands[0]
    return start


def _names_reached(starts: list[HloInstruction], follow) -> frozenset[str]:
    """The program names of `starts` and of every instruction `follow` leads to."""
    names, stack, seen = set(), list(starts), set()
    while stack:
        instr = stack.pop()
        if id(instr) in seen:
            continue
        seen.add(id(instr))
        names.update((instr.name, _program_name(instr)))
        stack += follow(instr)
    return frozenset(names)


def _hlo_text(hlo, source: str | None) -> tuple[str, str]:
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


def _program_module(program):
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
