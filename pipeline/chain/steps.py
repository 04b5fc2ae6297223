"""The whole chain, HLO → Penguin, as a list of steps, and the check that
proves it: the control edges of the HLO equal the dep edges of the executed
Penguin program.

    result = pipeline.run("module.txt", dialect="stablehlo")
    result.penguin_source        # the emitted program
    result.module()              # runs it: the Penguin Module
    result.report.lost           # HLO edges missing from the program, with the link to blame

The chain is a list of steps with one shape: a `name` and a `run(work)`
that reads what earlier steps left on the `Work` and leaves its own there.
`steps(options)` is that list; `run(..., stop_after=NAME)` stops after a step
(`hlo2penguin --emit hlo` stops after link #1); `timings` gets each step's
seconds under its name (the benchmark's stages).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from jaxlib.mlir import ir

from passes.control_dep import ControlDepError
from passes.dialects import dialect
from passes.hlo import Module
from pipeline.reading.elided import elided_constants
from pipeline.reading.parsed import Parsed
from passes.collector import no_cyclic_gc
from passes.hlo.preserve_control_deps import PreserveControlDeps, PreserveResult
from passes.hlo.view import view_of
from passes.locations import hlo_name
from passes.mlir import FlattenControlDepTupleOperands
from passes.options import pass_values
from pipeline.chain.blame import blamed_report
from pipeline.chain.link_checks import handed_on, refuse_if_xla_refuses_the_input, run_link3
from pipeline.reading.hints import parser_hint, with_hint
from pipeline.chain.options import Options, resolve, takes_options
from pipeline.chain.result import ChainResult, Reimported, Snapshot, build_graph
from pipeline.reading.source import identify, load
from pipeline.verifier.report import Report
from pipeline.xla import worker as xla_child
from pipeline.xla.importer import HloNames, ImportFailed, import_keyed
from pipeline.xla.isolated import XlaRejected, XlaWorker, print_module, with_module_config
from printer import print_penguin
from printer.penguin import Module as PenguinModule


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
    elided: tuple = ()                 # constants the text writes as `constant({...})` (pipeline.reading.elided)
    link1: PreserveResult | None = None
    hlo_proto: bytes = b""             # link #1's output, serialized
    hlo: str = ""                      # link #1's output as XLA prints it (when the chain stops there)
    importer: XlaWorker | None = None  # XLA's child, with isolate (this process's warm one)
    mlir: ir.Module | None = None      # at its key locations (`names` reads them)
    names: HloNames | None = None
    imported: Snapshot | Reimported | None = None  # after link #2
    flattened: Snapshot | None = None  # after link #3
    penguin_source: str = ""
    program: PenguinModule | None = None
    report: Report | None = None

    def result(self) -> ChainResult:
        return ChainResult(self.name, self.options.dialect, self.hlo or self.hlo_proto, self.imported, self.flattened,
                           self.penguin_source, self.report, self.program, self.link1,
                           self.parsed.text if self.parsed is not None else None, read_proto=self.read_proto)


def _parser_hint(source, source_name: str | None, message: str) -> str | None:
    """The hint for XLA parser's refusal of a text input (a binary one has
    none: its text would be XLA's printing, read in this process)."""
    found = identify(source, source_name)
    if found.kind != "text":
        return None
    data = found.data
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    return parser_hint(data, message)


class Read:
    name = "read"

    def run(self, work: Work) -> None:
        o = work.options
        try:
            loaded = load(work.source, o.source_name, isolate=o.isolate, worker=work.importer)
        except XlaRejected as err:  # the text read again, on this error path only: what to do next
            raise with_hint(err, _parser_hint(work.source, o.source_name, str(err))) from None
        work.parsed, work.name, work.where = loaded.parsed, loaded.name, loaded.where
        work.elided = elided_constants(loaded.parsed)  # before link #1 edits the proto the inline ones are named in
        if o.check or loaded.text is None:  # the verifier judges the module as read, before link #1 edits it
            work.read_proto = loaded.parsed.serialized()  # (a proto given has no text to read again)


class Reify:
    """Link #1."""

    name = "link #1"

    def run(self, work: Work) -> None:
        with no_cyclic_gc():  # XLA's protos as Python objects: many small ones, no cycles worth a collection
            work.module = view_of(work.parsed)
            work.link1 = PreserveControlDeps(**pass_values(work.options, PreserveControlDeps)).run(work.module)


class Write:
    """Link #1's output, serialized (XLA prints it when asked: `ChainResult.hlo`)."""

    name = "write"

    def run(self, work: Work) -> None:
        work.hlo_proto = work.parsed.serialized()


class XlaCheck:
    """XLA reads link #1's output back and prints it, where the chain stops
    after link #1 (otherwise link #2's reading of it is the verdict)."""

    name = "XLA check"

    def run(self, work: Work) -> None:
        isolate, worker = work.options.isolate, work.importer
        try:
            work.hlo = with_module_config(print_module(work.hlo_proto, f"{work.where} after link #1",
                                                       isolate=isolate, worker=worker), work.parsed.text)
        except XlaRejected:
            refuse_if_xla_refuses_the_input(work)
            raise


class Import:
    """Link #2."""

    name = "link #2"

    def run(self, work: Work) -> None:
        o = work.options
        try:
            # At its key locations: links #3 and #4 read the names through the table.
            work.mlir, work.names = import_keyed(work.parsed, o.dialect, isolate=o.isolate,
                                                 source_name=work.where, worker=work.importer, consume=True)
        except ImportFailed:
            refuse_if_xla_refuses_the_input(work)
            raise
        if o.check:  # link #3 rewrites the module in place: the verifier reads the copy
            work.imported = Snapshot(work.mlir.operation.clone(), o.debug_info, work.names)
        elif not o.flatten:  # nothing rewrites it: the module itself
            work.imported = Snapshot(work.mlir.operation, o.debug_info, work.names)
        else:  # link #2 again on link #1's output, if the result is asked for it
            work.imported = Reimported(work.hlo_proto, work.parsed.text, work.where, o.dialect, o.isolate,
                                       o.debug_info)


class Flatten:
    """Link #3, until nothing changes (the pass flattens one level a run, and
    --bundle puts a tuple-shaped predecessor one level deeper)."""

    name = "link #3"

    def run(self, work: Work) -> None:
        o = work.options
        # The chain's options the pass declares (`pass_option`), and until nothing changes.
        flatten = FlattenControlDepTupleOperands(dialect(o.dialect), **{
            **pass_values(o, FlattenControlDepTupleOperands), "until_unchanged": True})
        run_link3(flatten, work.mlir, work.where, work.names)  # in MLIR's PassManager, verified after it
        work.flattened = Snapshot(work.mlir.operation, o.debug_info, work.names)  # nothing rewrites it after link #3


class Print:
    """Link #4."""

    name = "link #4"

    def run(self, work: Work) -> None:
        try:
            work.penguin_source = print_penguin(work.mlir, work.name, work.options.dialect, names=work.names,
                                                elided=work.elided)
        except ControlDepError as err:  # a control-dep call with no operand
            raise _in_hlo(err, work.parsed, work.where, work.names) from None


class Check:
    """Run the program and account for every HLO control edge."""

    name = "check"

    def run(self, work: Work) -> None:
        work.program = build_graph(work.penguin_source, work.name, helper=work.importer)
        work.report = blamed_report(work)


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


@takes_options
def run(source, options: Options | None = None, *, stop_after: str | None = None,
        timings: dict | None = None, **overrides) -> ChainResult:
    """Run the chain on `source` (a path, HLO text or a captured module) and
    check the invariant on the executed program: every control edge of the
    HLO is a dep edge of the Penguin program, or ordered by its data.

        result = pipeline.run("module.txt", dialect="mhlo")
        result.report.ok, result.report.lost    # the verdict; each lost edge names the link to blame
        result.penguin_source                   # the program; result.module() runs it

    Options come as an `Options` (or a dict of its fields), as keywords, or
    both (keywords win); a value not of its option's type is an
    OptionTypeError (a TypeError) that names the option.
    `stop_after` names the last step (`steps()`; link #1's output is always
    written). `timings`, if given, receives the seconds each step took. Bad
    input raises a `passes.errors.ChainError` (HloSyntaxError, XlaRejected,
    ImportFailed, ControlDepError, UnreadableInput, UnknownDialect,
    FlattenError, LinkCheckFailed): one line that names the place."""
    options = resolve(options, overrides)  # each held to its declaration; a dict of fields is taken too
    work = Work(source, options)
    chain = steps(options, stop_after)
    if options.isolate:  # the warm child; a new one loads XLA on the other core while the input is read
        work.importer = xla_child.shared()
    for step in chain:
        start = time.perf_counter()
        step.run(work)
        if timings is not None:
            timings[step.name] = time.perf_counter() - start
        handed_on(step.name, work)  # with verify_each, its output checked (pipeline.chain.link_checks)
    return work.result()


def _in_hlo(err: ControlDepError, parsed: Parsed, where: str, names: HloNames | None = None) -> ControlDepError:
    """The same error, placed at the HLO instruction's line (`file:line`)."""
    of = names.of_location if names is not None else hlo_name
    name, computation = of(err.location) if err.location is not None else (None, None)
    line = parsed.line_as_written(computation, name) if name and computation else None
    return ControlDepError(f"%{name}: {err.message}", f"{where}:{line}", err.location) if line else err
