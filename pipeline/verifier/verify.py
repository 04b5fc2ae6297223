"""The proof, without taking the chain's word for it: an independent verifier.

    report = pipeline.verify("module.hlo", "program.py")   # = pipeline.verifier.verify.verify
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

This module judges; reading the two inputs (XLA's parse of the HLO, the
program's ops and order) is `pipeline.verifier.inputs`, whose `read_hlo`,
`HloInstruction` and `VerifyError` are importable from here too. The work
of an edge is that of the names standing in for its two ends, looked up in
an index of the dep edges by (computation, predecessor, successor): a
successor with 50,000 predecessors costs 50,000 lookups, not their square.
"""

from __future__ import annotations

import functools
import os

from passes.control_dep import Fate
from pipeline.verifier.inputs import (  # noqa: F401  (HloInstruction, VerifyError, read_hlo: importable here too)
    HloInstruction, HloRead, Program, VerifyError, node_name as _name, read_hlo)
from pipeline.verifier.report import EdgeReport, Report, Spurious, SpuriousEdge
from pipeline.verifier.sandbox import DEFAULT_MEMORY_MIB, DEFAULT_TIMEOUT, Sandboxed, start_program

_FORWARDING = frozenset({"tuple", "get-tuple-element"})
_PAIRED_DONES = frozenset({"send-done", "recv-done"})  # the importer folds them into their send/recv
_READ_THROUGH = _FORWARDING | _PAIRED_DONES  # a reader of these reads what they stand for
# Values made from nothing, with no effect: unread, when they run is unobservable.
_PURE_SOURCES = frozenset({"constant", "iota", "partition-id", "replica-id", "after-all", "parameter"})


# -- the verdict ------------------------------------------------------------------


def verify(hlo, program, *, source: str | None = None, link1: dict | None = None,
           isolate: bool = False, timeout: float = DEFAULT_TIMEOUT, memory_mib: int = DEFAULT_MEMORY_MIB) -> Report:
    """Check a Penguin program against the HLO it came from, from these two
    alone: each control edge of the HLO (read by XLA's parser) and its fate
    in the executed program, and each dep edge no HLO edge accounts for.

        report = pipeline.verify("module.txt", "program.py")
        report.ok                 # no edge lost, no spurious dep edge
        print(report.summary())   # 3 HLO control edge(s): 3 preserved, ...

    A program made from another module is a VerifyError that says so.
    `hlo`: HLO text, bytes, a path (text, or a binary module:
    `pipeline.reading.binary`), read as the chain reads its input
    (`pipeline.reading.source.load`), or XLA's parse of it (a
    `pipeline.reading.parsed.Parsed`), or what the verifier reads of that
    parse, read already (a `pipeline.verifier.inputs.HloRead`). `program`: a Penguin `Module` (judged
    as it is: the chain hands its own), or the source or the path of a `.py`
    program: that runs in a child process, stopped after `timeout` seconds,
    its address space limited to `memory_mib` MiB
    (`pipeline.verifier.sandbox`); whatever becomes of it is a VerifyError,
    one line. `link1`: link #1's own account,
    {(computation, pred, succ): edge}, shown beside each edge and never used
    to judge it. `isolate`: XLA parses in a child process."""
    from printer.penguin import Module

    # The program runs in its child while XLA reads the module (one started
    # already, `inputs.start_program`'s, is its caller's to close).
    running = None if isinstance(program, (Module, Sandboxed)) else start_program(program, timeout=timeout,
                                                                                  memory_mib=memory_mib)
    try:
        return _verify(hlo, program if running is None else running, source, link1, isolate)
    finally:
        if running is not None:
            running.close()


def _verify(hlo, program, source: str | None, link1: dict | None, isolate: bool) -> Report:
    from passes.collector import no_cyclic_gc
    from pipeline.reading.parsed import Parsed
    from printer.penguin import Module

    read = hlo if isinstance(hlo, HloRead) else None
    if read is not None:
        where = source or read.source or "<hlo>"
    elif isinstance(hlo, Parsed):
        text, where = hlo, source or hlo.source or "<hlo>"
    else:  # read as the chain reads its input (`pipeline.reading.source`): text, a proto, a jax.export artifact
        text, where = _read(hlo, source, isolate)
    module = program if isinstance(program, Module) else program.module()
    # The verdict builds large graphs and keeps them to the end: the cyclic
    # collector would walk them (and the caller's heap) again and again for
    # nothing (measured: about a third of the time at 30k instructions).
    with no_cyclic_gc():
        try:
            read = read or HloRead.of(text)
            report = _verdict(read.computations, module, link1, read.module_name, where)
            report.elided = list(read.elided)  # its numbers are placeholders; its edges are judged
            report.notes += read.notes
            return report
        finally:  # the memos hold this module's instructions: let them go with it
            _standing_in.cache_clear()
            _reading.cache_clear()
            _completing.cache_clear()


def _read(hlo, source: str | None, isolate: bool):
    """(XLA's parse, the input's name in errors) of a path, HLO text or a
    binary module, through the reading room's one entry; what it refuses, a
    VerifyError (one line; XLA's refusal of text with the main command's hint)."""
    from passes.errors import ChainError
    from pipeline.reading.hints import parser_hint, with_hint
    from pipeline.reading.source import identify, load
    from pipeline.xla.native import XlaRejected

    try:
        loaded = load(hlo, source, isolate=isolate)
    except XlaRejected as err:
        found = identify(hlo, source) if isinstance(hlo, (str, bytes, os.PathLike)) else None
        text = found.data if found is not None and found.kind == "text" else None
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        raise with_hint(VerifyError(str(err)), parser_hint(text, str(err)) if text else None) from None
    except (ChainError, OSError) as err:
        raise VerifyError(str(err)) from None
    return loaded.parsed, loaded.where


def _verdict(computations: dict[str, list[HloInstruction]], module, link1: dict | None,
             hlo_name: str = "", where: str = "<hlo>") -> Report:
    """Each HLO control edge's fate, and the program's spurious dep edges."""
    prog = Program(module, {c: {i.name for i in instrs} for c, instrs in computations.items()})
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
                block = prog.title(computation, _program_name(succ), succ.name, _program_name(pred), pred.name)
                report.edges.append(EdgeReport(computation, pred.name, succ.name, fate, emitted, reason,
                                               carried=tuple(carried), link1=said, block=block))
                allowed.update((computation, u, v) for u in _standing_in(pred) for v in _reading(succ))
    for dep in module.dependencies:
        key = (dep.successor.computation, _name(dep.predecessor), dep.successor.name)
        pred = dep.predecessor.instruction if hasattr(dep.predecessor, "instruction") else dep.predecessor
        across = getattr(pred, "computation", key[0]) != key[0]  # same names, another computation
        if key not in allowed or across:
            home = prog.block_of.get(id(dep.successor))
            block = (prog.title_in(home, key[0]) if home is not None and key[0] is not None
                     else f"%{key[0]}" if key[0] is not None else "")
            if getattr(pred, "opcode", "").endswith(".tuple"):
                report.spurious.append(SpuriousEdge(*key, reason=f"%{key[1]} is a tuple op: the predecessors it "
                                                    f"bundles were never flattened", cause=Spurious.BUNDLED_TUPLE,
                                                    block=block))
            else:
                report.spurious.append(SpuriousEdge(*key, block=block))
    return report


def _refuse_another_modules_program(computations: dict[str, list[HloInstruction]], prog: Program,
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


def _carried(computation: str, pred: HloInstruction, succ: HloInstruction, prog: Program) -> list:
    """The program's dep edges that stand for `pred -> succ` (by name): each
    pair of a name standing in for pred and one reading succ, looked up, so
    the work is that of the pairs, whatever else comes into succ."""
    keys = prog.dep_keys
    return sorted((u, v) for v in _reading(succ) for u in _standing_in(pred) if (computation, u, v) in keys)


def _judge(computation: str, pred: HloInstruction, succ: HloInstruction, prog: Program,
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


def _unordered_pairs(before: list, after: list, prog: Program) -> list[str]:
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


def _ops_of(instr: HloInstruction, prog: Program, computation: str) -> list | None:
    """The program's ops the successor must wait for: `instr`'s own (every
    instance of its computation); where it only forwards values (tuple,
    get-tuple-element), those of what it forwards, whether or not the importer
    made it an op. A parameter is ready before everything and needs none: None
    if `instr` forwards only parameters. (Depth first, in operand order, on an
    explicit stack: a chain of tuples is as deep as the input makes it; a
    value forwarded twice counts once.)"""
    ops, ready, stack, seen = [], False, [instr], set()
    while stack:
        instr = stack.pop()
        if id(instr) in seen:
            continue
        seen.add(id(instr))
        if instr.opcode == "parameter":
            ready = True
        elif instr.opcode not in _FORWARDING:  # a tuple op orders nothing of its own, op or not
            ops += prog.nodes.get((computation, _program_name(instr))) or []
        elif instr.opcode == "get-tuple-element" and instr.operands and instr.operands[0].opcode == "tuple":
            tuple_ = instr.operands[0]
            stack += [tuple_.operands[instr.index]] if instr.index is not None else reversed(tuple_.operands)
        else:
            stack += reversed(instr.operands)
    return None if ready and not ops else ops


def _reader_ops(succ: HloInstruction, prog: Program, computation: str) -> tuple[list, bool]:
    """The ops of every reader of `succ`, looking through readers that only
    forward values (tuple, get-tuple-element) to theirs; and whether such a
    path ends in the computation's result (its ROOT). (Depth first on an
    explicit stack; a reader reached twice counts once.)"""
    ops, ends, stack, seen = [], False, list(reversed(_readers(succ))), set()
    while stack:
        reader = stack.pop()
        if id(reader) in seen:
            continue
        seen.add(id(reader))
        if reader.opcode in _FORWARDING:
            ends = ends or reader.is_root
            stack += reversed(_readers(reader))
        else:
            ops += prog.nodes.get((computation, _program_name(reader))) or []
    return ops, ends


def _observed(instr: HloInstruction) -> bool:
    """Something reads `instr`'s value: an op that is no tuple/get-tuple-element,
    or the computation's result, through any number of those."""
    stack, seen = list(_readers(instr)), set()
    while stack:
        reader = stack.pop()
        if reader.is_root or reader.opcode not in _FORWARDING:
            return True
        if id(reader) not in seen:
            seen.add(id(reader))
            stack += _readers(reader)
    return False


def _readers(instr: HloInstruction) -> list[HloInstruction]:
    return list(dict.fromkeys(instr.users))


@functools.lru_cache(maxsize=None)
def _standing_in(pred: HloInstruction) -> frozenset[str]:
    """Names a dep edge for `pred` may start from: pred, what it forwards, its
    paired name, and the `*-done`/`async-update` ops that complete it."""
    return _names_reached([pred], lambda i: (i.operands if i.opcode in _FORWARDING else []) + _completing(i))


@functools.lru_cache(maxsize=None)
def _completing(instr: HloInstruction) -> list[HloInstruction]:
    """The `*-done` / `async-update` ops that read `instr`: looked for once an
    instruction (a constant that 6,000 tuples forward has 6,000 users)."""
    return [u for u in instr.users if u.opcode.endswith(("-done", "-update"))]


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
