"""The whole chain, HLO → Penguin, as a list of steps, and the check that
proves it: the control edges of the HLO equal the dep edges of the executed
Penguin program.

    result = pipeline.run("module.txt", dialect="stablehlo")
    result.penguin_source        # the emitted program
    result.module()              # runs it: the Penguin Module
    result.report.lost           # HLO edges missing from the program, with the link to blame

Like XLA's HloPassPipeline, the chain is a list of steps with one shape: a
`name` and a `run(work)` that says whether it changed the program under work.
`steps(options)` is that list; `run(..., stop_after=NAME)` stops after a step
(`hlo2penguin --emit hlo` stops after link #1); `timings` gets each step's
seconds under its name (the benchmark's stages).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from jaxlib.mlir import ir

from passes.control_dep import ControlDepError, Fate, is_control_dep, ordered_ops
from passes.dialects import TUPLE_OPS, dialect
from passes.hlo import Module, Parsed
from passes.hlo import proto as hlo_proto
from passes.hlo.ir import no_cyclic_gc
from passes.hlo.preserve_control_deps import PreserveControlDeps, PreserveResult
from passes.hlo.view import view_of, write_back
from passes.locations import hlo_name
from passes.mlir import SCOPES, FlattenControlDepTupleOperands, FlattenError
from printer import print_penguin
from printer.penguin import Module as PenguinModule
from pipeline.importer import HloNames, ImportFailed, import_keyed
from pipeline.program import run_program
from pipeline.report import Report
from pipeline.sources import load
from pipeline.verify import verify
from pipeline.xla import XlaRejected, XlaWorker, parse, print_module, with_module_config
from pipeline.xla_child import take_early

LINKS = {1: "link #1 (preserve-control-deps)", 2: "link #2 (XLA's importer)",
         3: "link #3 (flatten-control-dep-tuple-operands)", 4: "link #4 (printer)"}


@dataclass(frozen=True)
class Options:
    """How the chain runs.

    `reify=False` skips link #1 and `flatten=False` skips link #3, to show
    what each prevents. `scope` is the functions link #3 walks: the chain
    walks "all" of them, which after link #2's symbol-dce are `main` and the
    functions it calls (a GPU command buffer, XLA CPU's outlined loops); with
    "main", the pass's own default, a tuple-shaped predecessor in a called
    function stays bundled. `keep_attributes`: link #3 keeps the rebuilt
    calls' attributes. `isolate`: XLA's parser and importer run in a child
    process (XLA aborts the process on some input). `debug_info` prints
    locations (the HLO names) in the MLIR artifacts. `check=False` stops at
    the Penguin source: no execution, no report (the benchmarks' P3).
    `source_name` names the input in errors (default: the path, `<hlo
    text>`, or the module's name)."""

    dialect: str = "stablehlo"
    bundle: bool = False
    flatten: bool = True
    scope: str = "all"
    keep_attributes: bool = False
    reify: bool = True
    isolate: bool = True
    debug_info: bool = True
    check: bool = True
    source_name: str | None = None

    def __post_init__(self):  # before any work: UnknownDialect, FlattenError
        dialect(self.dialect)
        if self.flatten and self.scope not in SCOPES:
            raise FlattenError(f"unknown scope {self.scope!r}: choose one of {', '.join(SCOPES)}")


class Snapshot:
    """An MLIR module as it stood after a link, printed on first use: a
    30k-instruction module takes 0.03 s to clone and 0.6 s to print, and most
    runs never look. Edges it carries (`visible_edges`) are read on demand too."""

    def __init__(self, operation: ir.Operation, debug_info: bool, names: HloNames | None = None):
        self.operation, self.debug_info = operation, debug_info
        self._names = names  # the module is at its key locations: restored on first use
        self._text: str | None = None

    def _restored(self) -> ir.Operation:
        if self._names is not None:
            self._names.restore(self.operation)
            self._names = None
        return self.operation

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self._restored().get_asm(enable_debug_info=self.debug_info)
        return self._text

    def edges(self, through_tuples: bool) -> set[tuple[str | None, str, str]]:
        return visible_edges(self._restored(), through_tuples)


@dataclass
class ChainResult:
    source: str
    dialect: str
    _hlo: bytes | str        # after link #1: XLA's serialized module, printed on first use
    _imported: Snapshot | None
    _flattened: Snapshot | None
    penguin_source: str      # link #4
    report: Report | None    # None with check=False
    _module: PenguinModule | None = None
    link1: PreserveResult | None = None  # link #1's own account (None with reify=False)
    _text: str | None = None             # the HLO text read

    @property
    def hlo(self) -> str:
        """The module after link #1, as XLA prints it (XLA's names)."""
        if isinstance(self._hlo, bytes):
            self._hlo = with_module_config(print_module(self._hlo, self.source), self._text) if self._hlo else ""
        return self._hlo

    @property
    def mlir(self) -> str:
        """The module after link #2 ("" with check=False)."""
        return self._imported.text if self._imported is not None else ""

    @property
    def flat_mlir(self) -> str | None:
        """The module after link #3 (None with flatten=False or check=False)."""
        return self._flattened.text if self._flattened is not None else None

    def module(self) -> PenguinModule:
        """Run the emitted program; its module-level `module`."""
        if self._module is None:
            self._module = execute(self.penguin_source, self.source)
        return self._module

    def _repr_html_(self) -> str:
        """Jupyter's view: the input and dialect, the report's table of edges
        and fates, and the Penguin program, collapsed."""
        import html

        verdict = "" if self.report is None else (" · ok" if self.report.ok else " · <strong>not ok</strong>")
        head = (f"<p><strong>hlo2penguin</strong> <code>{html.escape(self.source)}</code>, "
                f"dialect <code>{html.escape(self.dialect)}</code>{verdict}</p>")
        report = (self.report._repr_html_() if self.report is not None
                  else "<p><em>No report: the program was not run (check=False, or the chain stopped "
                       "early).</em></p>")
        return f"<div>{head}{report}{_source_details(self.penguin_source)}</div>"


_DETAILS_LINES = 2_000  # a program can run to 490k lines (see `execute`): a notebook keeps its start


def _source_details(source: str) -> str:
    """The Penguin program in a collapsed <details>, cut after _DETAILS_LINES
    lines; nothing before link #4 wrote one."""
    import html

    if not source:
        return ""
    lines = source.splitlines(keepends=True)
    if len(lines) > _DETAILS_LINES:
        source = ("".join(lines[:_DETAILS_LINES])
                  + f"… {len(lines) - _DETAILS_LINES} more line(s): see result.penguin_source")
    return (f"<details><summary>Penguin program ({len(lines)} lines)</summary>"
            f"<pre>{html.escape(source)}</pre></details>")


def execute(penguin_source: str, source: str = "<penguin>", helper: XlaWorker | None = None) -> PenguinModule:
    """Run a Penguin program (`pipeline.program`, the verifier's loader too):
    its module-level `module`. `helper`: XLA's child, which compiles half of a long program meanwhile."""
    return run_program(penguin_source, f"<penguin program from {source}>", helper)["module"]


@dataclass
class Work:
    """What the steps hand on to each other."""

    source: object
    options: Options
    parsed: Parsed | None = None       # XLA's parse (link #1 edits its proto)
    module: Module | None = None       # link #1's view of it
    name: str = ""                     # the module's name in the program
    where: str = ""                    # the input's name in errors
    read_proto: bytes = b""            # XLA's parse as read (before link #1), serialized
    link1: PreserveResult | None = None
    hlo_proto: bytes = b""             # link #1's output, serialized
    hlo: str = ""                      # link #1's output as XLA prints it (when the chain stops there)
    importer: XlaWorker | None = None  # XLA's child, with isolate
    mlir: ir.Module | None = None      # at its key locations (`names` reads them)
    names: HloNames | None = None
    imported: Snapshot | None = None   # after link #2 (with check)
    flattened: Snapshot | None = None  # after link #3 (with check)
    penguin_source: str = ""
    program: PenguinModule | None = None
    report: Report | None = None

    def result(self) -> ChainResult:
        return ChainResult(self.name, self.options.dialect, self.hlo or self.hlo_proto, self.imported, self.flattened,
                           self.penguin_source, self.report, self.program, self.link1,
                           self.parsed.text if self.parsed is not None else None)


class Read:
    name = "read"

    def run(self, work: Work) -> bool:
        o = work.options
        loaded = load(work.source, o.source_name, isolate=o.isolate, worker=work.importer)
        work.parsed, work.name, work.where = loaded.parsed, loaded.name, loaded.where
        if o.check:  # the verifier judges the module as read, before link #1 edits it
            work.read_proto = loaded.parsed.serialized()
        return True


class Reify:
    """Link #1."""

    name = "link #1"

    def run(self, work: Work) -> bool:
        with no_cyclic_gc():  # the view is many small objects and no cycles worth a collection
            work.module = view_of(work.parsed)
            work.link1 = PreserveControlDeps(bundle=work.options.bundle).run(work.module)
            write_back(work.module)
        return work.link1.changed


class Write:
    """Link #1's output, serialized (XLA prints it when asked: `ChainResult.hlo`)."""

    name = "write"

    def run(self, work: Work) -> bool:
        work.hlo_proto = work.parsed.serialized()
        return False


class XlaCheck:
    """XLA reads link #1's output back and prints it, where the chain stops
    after link #1 (otherwise link #2's reading of it is the verdict)."""

    name = "XLA check"

    def run(self, work: Work) -> bool:
        isolate, worker = work.options.isolate, work.importer
        try:
            work.hlo = with_module_config(print_module(work.hlo_proto, f"{work.where} after link #1",
                                                       isolate=isolate, worker=worker), work.parsed.text)
        except XlaRejected:
            _refuse_if_xla_cannot_read_its_own_proto(work)
            raise
        return False


def _refuse_if_xla_cannot_read_its_own_proto(work: Work) -> None:
    """On an error reading link #1's output back: if XLA refuses its own
    proto of the input, unedited, that is the input's problem, not link
    #1's, and the one line says so (XLA's text parser checks less than its
    proto reader: a pipelined recv-done, a shape nested past 100 levels)."""
    data = work.read_proto
    try:
        if not data:  # not kept (no check): XLA reads the text again, on this error path only
            data = parse(work.parsed.text, work.where, isolate=work.options.isolate).serialized()
        print_module(data, work.where, isolate=work.options.isolate)  # a fresh child: the last may have died
    except XlaRejected as own:
        raise XlaRejected(f"{work.where}: XLA's parser reads the text, but XLA refuses its own proto of it "
                          f"(the form link #1 edits and link #2 imports): {getattr(own, 'reason', own)}") from None


class Import:
    """Link #2."""

    name = "link #2"

    def run(self, work: Work) -> bool:
        o = work.options
        try:
            # At its key locations: links #3 and #4 read the names through the table.
            work.mlir, work.names = import_keyed(work.parsed, o.dialect, isolate=o.isolate,
                                                 source_name=work.where, worker=work.importer, consume=True)
        except ImportFailed:
            _refuse_if_xla_cannot_read_its_own_proto(work)
            raise
        if o.check:  # link #3 rewrites the module in place
            work.imported = Snapshot(work.mlir.operation.clone(), o.debug_info, work.names)
        return True


class Flatten:
    """Link #3, until nothing changes (the pass flattens one level a run, and
    --bundle puts a tuple-shaped predecessor one level deeper)."""

    name = "link #3"

    def run(self, work: Work) -> bool:
        o = work.options
        flatten = FlattenControlDepTupleOperands(dialect(o.dialect), o.scope, o.keep_attributes,
                                                 until_unchanged=True)
        changed = flatten.run(work.mlir).changed
        if o.check:  # nothing rewrites it after link #3
            work.flattened = Snapshot(work.mlir.operation, o.debug_info, work.names)
        return changed


class Print:
    """Link #4."""

    name = "link #4"

    def run(self, work: Work) -> bool:
        try:
            work.penguin_source = print_penguin(work.mlir, work.name, work.options.dialect, names=work.names)
        except ControlDepError as err:  # a control-dep call with no operand
            raise _in_hlo(err, work.parsed, work.where, work.names) from None
        return False


class Check:
    """Run the program and account for every HLO control edge."""

    name = "check"

    def run(self, work: Work) -> bool:
        work.program = execute(work.penguin_source, work.name, helper=work.importer)
        work.report = _report(work)
        return False


def steps(options: Options, stop_after: str | None = None) -> list:
    """The chain's steps for `options`, up to the step named `stop_after`.
    Stopping after link #1 includes writing its output and XLA's check of it."""
    last = XlaCheck.name if stop_after == Reify.name else stop_after
    # Link #2 has XLA's parser read link #1's output (in its child process
    # with `isolate`): only a chain that stops before it checks it apart.
    chain = [Read(), *([Reify()] if options.reify else []), Write(),
             *([XlaCheck()] if last == XlaCheck.name else []),
             Import(), *([Flatten()] if options.flatten else []), Print(), *([Check()] if options.check else [])]
    if last is None:
        return chain
    names = [step.name for step in chain]
    if last not in names:
        raise ValueError(f"no step {stop_after!r} in this chain: {', '.join(names)}")
    return chain[:names.index(last) + 1]


def run(source, options: Options | None = None, *, stop_after: str | None = None,
        timings: dict | None = None, **overrides) -> ChainResult:
    """Run the chain on `source` (a path, HLO text or a captured module) and
    check the invariant on the executed program.
    Options come as an `Options`, as keywords (`dialect="mhlo"`), or both.
    `stop_after` names the last step (link #1's output is always written).
    `timings`, if given, receives the seconds each step took. Bad input raises
    a `passes.errors.ChainError` (HloSyntaxError, XlaRejected, ImportFailed,
    ControlDepError, UnreadableInput, UnknownDialect, FlattenError): one line
    that names the place."""
    options = dataclasses.replace(options or Options(), **overrides) if overrides else (options or Options())
    work = Work(source, options)
    chain = steps(options, stop_after)
    if options.isolate:  # loads XLA on the other core while the input is read (or took the one the CLI started)
        work.importer = take_early() or XlaWorker()
    try:
        for step in chain:
            start = time.perf_counter()
            step.run(work)
            if timings is not None:
                timings[step.name] = time.perf_counter() - start
    finally:
        if work.importer is not None:
            work.importer.close()
    return work.result()


def _in_hlo(err: ControlDepError, parsed: Parsed, where: str, names: HloNames | None = None) -> ControlDepError:
    """The same error, placed at the HLO instruction's line (`file:line`)."""
    of = names.of_location if names is not None else hlo_name
    name, computation = of(err.location) if err.location is not None else (None, None)
    line = parsed.line_as_written(computation, name) if name and computation else None
    return ControlDepError(f"%{name}: {err.message}", f"{where}:{line}", err.location) if line else err


def visible_edges(mlir: ir.Module | ir.Operation, through_tuples: bool = True) -> set[tuple[str | None, str, str]]:
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
                if owner.name in TUPLE_OPS:
                    if not through_tuples:
                        # Still bundled: the printer takes the tuple op for the
                        # predecessor, whatever HLO name its location carries.
                        continue
                    inner = list(owner.operands)
                for v in inner:
                    o = v.owner
                    loc = ir.BlockArgument(v).location if isinstance(o, ir.Block) else o.operation.location
                    preds.add(hlo_name(loc)[0])
            for succ in ordered_ops(op):
                name, comp = hlo_name(succ.location)
                edges.update((comp, p, name) for p in preds)
        return ir.WalkResult.ADVANCE

    mlir.operation.walk(visit)
    return edges


def _report(work: Work) -> Report:
    """The verifier's report (`pipeline.verify`: from the original HLO and the
    executed program alone), with the link to blame for each lost edge: the
    one after which link #1's dep edges are no longer all there."""
    o, program = work.options, work.program
    fates = ({(e.computation, e.predecessor, e.successor): e for e in work.link1.edges}
             if work.link1 is not None else None)
    p = work.parsed  # judged against the module as read (the names as written are the same)
    report = verify(Parsed(hlo_proto.decode(work.read_proto), p.names, p.text, p.source), program,
                    source=work.where, link1=fates)
    if not any(edge.fate == Fate.LOST for edge in report.edges):
        return _placed_spurious(report)
    program_edges = program.dep_edges()
    renamed = {(c.name, i.name): i.operands[0].name for c, i in work.module.instructions()
               if i.opcode in ("send-done", "recv-done")} if work.module is not None else {}
    after_import = work.imported.edges(through_tuples=True)  # what link #2 delivered
    work.names.restore(work.mlir)  # the run is over: the live module may take its HLO locations
    after_flatten = visible_edges(work.mlir, through_tuples=False)  # what the printer saw
    for index, edge in enumerate(report.edges):
        if edge.fate != Fate.LOST:
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
            elif not o.flatten:
                at, why = LINKS[3], f"the predecessor stayed bundled in a tuple operand (link #3 skipped): {missing_text}"
            elif any(e not in after_flatten for e in missing):
                at, why = LINKS[3], (f"the predecessor is still bundled in a tuple operand after link #3 "
                                     f"(scope={o.scope}; a function outside it keeps its tuples: try scope=all): "
                                     f"{missing_text}")
            else:
                at, why = LINKS[4], f"the importer delivered it but the program has no such dep edge: {missing_text}"
        report.edges[index] = dataclasses.replace(edge, lost_at=at, reason=f"{why}; {edge.reason}" if edge.reason else why)
    return _placed_spurious(report)


def _placed_spurious(report: Report) -> Report:
    report.spurious = [dataclasses.replace(e, at=LINKS[3]) if "never flattened" in e.reason else e
                       for e in report.spurious]
    return report
