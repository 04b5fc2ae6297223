"""The whole chain, HLO → Penguin, and the check that proves it: the control
edges of the HLO equal the dep edges of the executed Penguin program.

    result = pipeline.run("module.txt", dialect="stablehlo")
    result.penguin_source        # the emitted program
    result.module()              # runs it: the Penguin Module
    result.report.lost           # HLO edges missing from the program, with the link to blame
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass

from jaxlib.mlir import ir

from passes.control_dep import ControlDepError, is_control_dep
from passes.hlo import Module, read_module, write_module
from passes.hlo.preserve_control_deps import Fate, PreserveControlDeps
from passes.mlir import DIALECTS as DIALECT_OPS
from passes.mlir import FlattenControlDepTupleOperands
from printer import hlo_name, print_penguin
from printer.penguin import Module as PenguinModule
from pipeline.importer import DIALECTS, UnknownDialect, import_hlo
from pipeline.report import Report
from pipeline.verify import verify
from pipeline.xla import XlaRejected, check_original
from pipeline.xla import check as xla_check
from pipeline.xla import shape_inference

LINKS = {1: "link #1 (preserve-control-deps)", 2: "link #2 (XLA's importer)",
         3: "link #3 (flatten-control-dep-tuple-operands)", 4: "link #4 (printer)"}
_TUPLE_OPS = frozenset({"stablehlo.tuple", "mhlo.tuple"})


@dataclass
class ChainResult:
    source: str
    dialect: str
    hlo: str                 # after link #1
    mlir: str                # after link #2
    flat_mlir: str | None    # after link #3 (None with flatten=False)
    penguin_source: str      # link #4
    report: Report | None    # None with check=False
    _module: PenguinModule | None = None

    def module(self) -> PenguinModule:
        """Run the emitted program; its module-level `module`."""
        if self._module is None:
            self._module = execute(self.penguin_source, self.source)
        return self._module


def execute(penguin_source: str, source: str = "<penguin>") -> PenguinModule:
    namespace: dict = {"__name__": "penguin_program"}
    exec(compile(penguin_source, f"<penguin program from {source}>", "exec"), namespace)
    return namespace["module"]


class UnreadableInput(OSError):
    """`run` was given a path it cannot read: `cannot read input 'PATH': REASON`
    (errno, strerror and filename as the OSError behind it)."""

    def __init__(self, path: str, reason: OSError):
        super().__init__(reason.errno, reason.strerror, path)

    def __str__(self) -> str:
        return f"cannot read input '{self.filename}': {self.strerror}"


def read_path(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise UnreadableInput(path, err) from None


def load_source(source, source_name: str | None = None, *,
                isolate: bool = True) -> tuple[Module, str, str, str | bytes | None]:
    """A path, HLO text (str or bytes), or our HLO `Module` → the module, its
    name, the name of the input in error messages (`source_name` if given),
    and the text read (None for a `Module`). A str is a path unless it reads
    as HLO (a line break, or a `{`: every module has a computation body).
    Where the text leaves shapes out, XLA infers them (in a child process
    with `isolate`)."""
    if isinstance(source, Module):
        return source, source.name, source_name or source.name, None
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                           and "{" not in source and source.strip()):
        path = os.fspath(source)
        data = read_path(path)
        where = source_name or path
        return read_module(data, where, shapes_of=shape_inference(where, isolate=isolate)), path, where, data
    if isinstance(source, (str, bytes)):
        where = source_name or "<hlo text>"
        module = read_module(source, where, shapes_of=shape_inference(where, isolate=isolate))
        return module, module.name, where, source
    text = getattr(source, "hlo_text", None)  # a captured module
    if isinstance(text, str):
        name = getattr(source, "name", "<captured>")
        where = source_name or name
        return read_module(text, where, shapes_of=shape_inference(where, isolate=isolate)), name, where, text
    raise TypeError(f"cannot read HLO from {type(source).__name__}: give a path, HLO text or a passes.hlo.Module")


def run(source, dialect: str = "stablehlo", bundle: bool = False, flatten: bool = True, scope: str = "all",
        keep_attributes: bool = False, *, reify: bool = True, isolate: bool = True,
        debug_info: bool = True, check: bool = True, timings: dict | None = None,
        source_name: str | None = None) -> ChainResult:
    """Run links #1-#4 on `source` and check the invariant on the executed program.
    `reify=False` skips link #1 and `flatten=False` skips link #3, to show what each prevents.
    `scope` is the functions link #3 walks; the chain walks "all" of them, which
    after link #2's symbol-dce are `main` and the functions it calls (a GPU
    command buffer, XLA CPU's outlined loops): with "main", the pass's own
    default, a tuple-shaped predecessor in a called function stays bundled.
    `debug_info` prints locations (the HLO names) in the MLIR artifacts.
    `check=False` stops at the Penguin source (no execution, no report: the benchmarks' P3).
    `timings`, if given, receives the seconds each stage took.
    `source_name` names the input in error messages (default: the path, `<hlo text>`,
    or the module's name). Bad input raises one of HloSyntaxError, XlaRejected,
    ImportFailed, ControlDepError, UnreadableInput, UnknownDialect, FlattenError
    (bad scope): each a one-line message that names the place."""
    if dialect not in DIALECTS:  # before any work
        raise UnknownDialect(f"unknown dialect {dialect!r}: choose 'stablehlo' or 'mhlo'")
    flatten_pass = (FlattenControlDepTupleOperands(DIALECT_OPS[dialect], scope, keep_attributes)
                    if flatten else None)  # FlattenError on an unknown scope
    clock = _Clock(timings)
    module, name, where, text = load_source(source, source_name, isolate=isolate)
    clock.lap("read")
    original_text = text if text is not None else write_module(module)  # for the verifier, before link #1
    fates = {}
    if reify:
        for edge in PreserveControlDeps(bundle=bundle).run(module).edges:
            fates[(edge.computation, edge.predecessor, edge.successor)] = edge
    clock.lap("link #1")
    hlo = write_module(module)
    try:
        if not isolate:  # with isolate, XLA's parser sees the module in link #2's child process
            xla_check(hlo, f"{where} after link #1")
        clock.lap("write + XLA check")
        mlir = import_hlo(module, dialect, isolate=isolate, source_name=where)
    except XlaRejected:
        _explain_rejection(hlo, where, text, isolate)
        raise
    clock.lap("link #2")
    mlir_text = mlir.operation.get_asm(enable_debug_info=debug_info) if check else ""
    after_import = visible_edges(mlir) if check else set()
    flat_text = None
    if flatten:
        # The pass flattens one level, like the binary; with --bundle a
        # tuple-shaped predecessor sits one level deeper, so repeat until
        # nothing changes (at most the nesting depth).
        while flatten_pass.run(mlir).changed:
            pass
        flat_text = mlir.operation.get_asm(enable_debug_info=debug_info) if check else None
    clock.lap("link #3")
    try:
        penguin_source = print_penguin(mlir, name, dialect)
    except ControlDepError as err:  # a control-dep call with no operand
        raise _in_hlo(err, module, where) from None
    clock.lap("link #4")
    if not check:
        return ChainResult(name, dialect, hlo, mlir_text, flat_text, penguin_source, None)
    after_flatten = visible_edges(mlir, through_tuples=False)
    program = execute(penguin_source, name)
    report = _report(original_text, where, module, fates if reify else None, after_import, after_flatten,
                     program, flatten, scope)
    clock.lap("check")
    return ChainResult(name, dialect, hlo, mlir_text, flat_text, penguin_source, report, program)


def _explain_rejection(hlo: str, where: str, text: str | bytes | None, isolate: bool) -> None:
    """XLA refused a text derived from the user's (link #1's output, or link
    #2's keyed copy of it), whose line numbers are not the user's: raise its
    complaint about the user's own text if it has one, else about link #1's
    output. Only on the error path."""
    if text is not None:
        check_original(text, where, isolate=isolate)
    xla_check(hlo, f"{where} after link #1", isolate=isolate)


def _in_hlo(err: ControlDepError, module: Module, where: str) -> ControlDepError:
    """The same error, placed at the HLO instruction's line (`file:line`)."""
    name, computation = hlo_name(err.location) if err.location is not None else (None, None)
    try:
        line = module.computation(computation).instruction(name).line
    except (KeyError, TypeError):
        return err
    return ControlDepError(f"{where}:{line}", f"%{name}: {err.message}", err.location) if line else err


class _Clock:
    def __init__(self, timings: dict | None):
        self.timings, self.last = timings, time.perf_counter()

    def lap(self, stage: str) -> None:
        if self.timings is not None:
            now = time.perf_counter()
            self.timings[stage] = now - self.last
            self.last = now


def visible_edges(mlir: ir.Module, through_tuples: bool = True) -> set[tuple[str | None, str, str]]:
    """(computation, predecessor, successor) that the control-dep calls of a
    module carry. Reading one level into tuple operands gives what link #2
    delivered; reading none gives what the printer will see."""
    edges = set()

    def visit(op):
        if is_control_dep(op) and len(op.operands) > 1:
            preds = set()
            for value in list(op.operands)[:-1]:
                owner = value.owner
                if isinstance(owner, ir.Block):
                    preds.add(hlo_name(ir.BlockArgument(value).location)[0])
                    continue
                owner = owner.operation
                inner = [value]
                if owner.name in _TUPLE_OPS:
                    if not through_tuples:
                        # Still bundled: the printer takes the tuple op for the
                        # predecessor, whatever HLO name its location carries.
                        continue
                    inner = list(owner.operands)
                for v in inner:
                    o = v.owner
                    loc = ir.BlockArgument(v).location if isinstance(o, ir.Block) else o.operation.location
                    preds.add(hlo_name(loc)[0])
            for succ in _users(op.results[0]):
                name, comp = hlo_name(succ.location)
                edges.update((comp, p, name) for p in preds)
        return ir.WalkResult.ADVANCE

    mlir.operation.walk(visit)
    return edges


def _users(value) -> list:
    found = []
    for use in value.uses:
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if is_control_dep(user) and use.operand_number != len(user.operands) - 1:
            continue  # a predecessor use orders, it does not feed
        if is_control_dep(user) or user.name in ("stablehlo.get_tuple_element", "mhlo.get_tuple_element") \
                or user.name in _TUPLE_OPS:
            for result in user.results:
                found += _users(result)
        else:
            found.append(user)
    return found


def _report(original_text, where: str, module: Module, fates: dict | None, after_import: set,
            after_flatten: set, program: PenguinModule, flatten: bool, scope: str) -> Report:
    """The verifier's report (`pipeline.verify`: from the original HLO and the
    executed program alone), with the link to blame for each lost edge: the
    one after which link #1's dep edges are no longer all there."""
    report = verify(original_text, program, source=where, link1=fates)
    program_edges = program.dep_edges()
    renamed = {(c.name, i.name): i.operands[0].name for c, i in module.instructions()
               if i.opcode in ("send-done", "recv-done")}
    for index, edge in enumerate(report.edges):
        if edge.fate != "lost":
            continue
        key = (edge.computation, edge.predecessor, edge.successor)
        link1 = fates.get(key) if fates is not None else None
        if link1 is None:  # link #1 skipped: the importer drops control-predecessors
            at, why = LINKS[2], "control-predecessors are not data"
        elif link1.fate is Fate.DROPPED:
            at, why = LINKS[1], f"link #1 dropped it: {link1.reason}"
        else:
            comp = edge.computation
            expected = [(comp, renamed.get((comp, p), p), s) for p, s in link1.emitted]
            missing = [e for e in expected if e not in program_edges]
            missing_text = ", ".join(f"%{p} -> %{s}" for _, p, s in missing)
            if not missing:
                at, why = LINKS[1], "link #1's dep edges do not order them"
            elif any(e not in after_import for e in missing):
                at, why = LINKS[2], f"the imported module does not carry it: {missing_text}"
            elif not flatten:
                at, why = LINKS[3], f"the predecessor stayed bundled in a tuple operand (link #3 skipped): {missing_text}"
            elif any(e not in after_flatten for e in missing):
                at, why = LINKS[3], (f"the predecessor is still bundled in a tuple operand after link #3 "
                                     f"(scope={scope}; a function outside it keeps its tuples: try scope=all): "
                                     f"{missing_text}")
            else:
                at, why = LINKS[4], f"the importer delivered it but the program has no such dep edge: {missing_text}"
        report.edges[index] = dataclasses.replace(edge, lost_at=at, reason=f"{why}; {edge.reason}" if edge.reason else why)
    report.spurious = [dataclasses.replace(e, at=LINKS[3]) if "never flattened" in e.reason else e
                       for e in report.spurious]
    return report
