"""The whole chain, HLO → Penguin, as a list of steps, and the check that
proves it: the control edges of the HLO equal the dep edges of the executed
Penguin program.

    result = pipeline.run("module.txt", dialect="stablehlo")
    result.penguin_source        # the emitted program
    result.module()              # runs it: the Penguin Module
    result.report.lost           # HLO edges missing from the program, with the link to blame

The chain is a list of steps with one shape: a `name`, a `run` whose
parameters name what it takes (`source`, `options` and `importer`, or what
an earlier step gave) and a `gives`, the named tuple it returns. `run_step`
hands each step what it takes and keeps what it gives (on the runner's
`Work`); `unmet(chain)` names what a step needs that no earlier step gives.
`steps(options)` is that list; `run(..., stop_after=NAME)` stops after a step
(`hlo2penguin --emit hlo` stops after link #1); `timings` gets each step's
seconds under its name (the benchmark's stages). Between steps,
`link_checks.handed_on` checks what a link hands on (with `verify_each`),
as XLA's pass pipeline runs its invariant checkers.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import time
from dataclasses import dataclass
from typing import NamedTuple

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
from pipeline.chain.blame import as_read, blamed_report
from pipeline.chain.link_checks import handed_on, run_link3
from pipeline.reading.hints import parser_hint, with_hint
from pipeline.chain.options import Options, resolve, takes_options
from pipeline.chain.result import ChainResult, Reimported, Snapshot, build_graph, program_filename
from pipeline.reading.source import identify, load
from pipeline.verifier.inputs import HloRead
from pipeline.verifier.program import AsPrinted
from pipeline.verifier.report import Report
from pipeline.xla import worker as xla_child
from pipeline.xla.importer import HloNames, ImportFailed, import_keyed
from pipeline.xla.isolated import XlaRejected, XlaWorker, own_proto_verdict, print_module, with_module_config
from printer import print_penguin
from printer.penguin import Module as PenguinModule


@dataclass
class Work:
    """What the steps have handed on so far: the runner's record (`run_step`
    reads a step's inputs from it and writes what the step gives). A step
    never sees it: its `run` names what it takes, its `gives` what it gives."""

    source: object
    options: Options
    importer: XlaWorker | None = None  # XLA's child, with isolate (this process's warm one)
    parsed: Parsed | None = None       # XLA's parse (link #1 edits its proto)
    name: str = ""                     # the module's name in the program
    where: str = ""                    # the input's name in errors
    read_proto: bytes = b""            # XLA's parse as read (before link #1), serialized
    elided: tuple = ()                 # constants the text writes as `constant({...})` (pipeline.reading.elided)
    module: Module | None = None       # link #1's view of the proto
    link1: PreserveResult | None = None
    renamed: dict | None = None        # link #1's send-done/recv-done → their send/recv (blame reads it)
    hlo_proto: bytes = b""             # link #1's output, serialized
    hlo: str = ""                      # link #1's output as XLA prints it (when the chain stops there)
    mlir: ir.Module | None = None      # at its key locations (`names` reads them)
    names: HloNames | None = None
    imported: Snapshot | Reimported | None = None  # after link #2
    hlo_read: HloRead | None = None    # the proof's reading of the module as read (made during link #2)
    flattened: Snapshot | None = None  # after link #3
    penguin_source: str = ""
    as_printed: AsPrinted | None = None  # what XLA's child compiled of the program as link #4 printed it
    program: PenguinModule | None = None
    report: Report | None = None

    def result(self) -> ChainResult:
        return ChainResult(self.name, self.options.dialect, self.hlo or self.hlo_proto, self.imported, self.flattened,
                           self.penguin_source, self.report, self.program, self.link1,
                           self.parsed.text if self.parsed is not None else None, read_proto=self.read_proto)


def takes(step) -> tuple[str, ...]:
    """The names of what `step.run` takes (the fields of `Work` it reads)."""
    return tuple(_parameters(type(step).run))


def needs(step) -> tuple[str, ...]:
    """What `step.run` takes without a default: what some step before it
    must give (a default, None, is for what a skipped step did not give)."""
    return tuple(name for name, p in _parameters(type(step).run).items() if p.default is p.empty)


@functools.lru_cache(maxsize=64)  # once a step class's method: a round trip on a small module costs milliseconds
def _parameters(run) -> dict:
    """The parameters of a step class's `run`, past `self`."""
    return dict(list(inspect.signature(run).parameters.items())[1:])


# What the runner holds before the first step.
GIVEN = ("source", "options", "importer")
# What the result does not keep, each dropped once the last step that takes
# it has run (and `link_checks.handed_on` has checked that step's output):
# the input text, link #1's view, the MLIR module and its names, the proof's
# reading of the HLO, the program's compiled pieces. At 300k instructions
# they are half of what the process holds.
RELEASED = ("source", "module", "mlir", "names", "hlo_read", "as_printed")


def released_after(chain) -> dict[int, list[str]]:
    """Step index → the `RELEASED` fields no step after it takes."""
    last: dict[str, int] = {}
    for index, step in enumerate(chain):
        for name in (*takes(step), *step.gives._fields):  # a field nothing takes goes after the step that gives it
            last[name] = index
    after: dict[int, list[str]] = {}
    for name in RELEASED:
        after.setdefault(last.get(name, -1), []).append(name)
    return after


def unmet(chain) -> list[str]:
    """`step: name` for each input a step of `chain` takes that neither the
    runner (`GIVEN`) nor an earlier step gives."""
    given, missing = set(GIVEN), []
    for step in chain:
        missing += [f"{step.name}: {name}" for name in needs(step) if name not in given]
        given.update(step.gives._fields)
    return missing


def run_step(step, work: Work) -> None:
    """`step.run` on what it takes from `work`; what it gives set on `work`."""
    given = step.run(**{name: getattr(work, name) for name in takes(step)})
    for name, value in zip(step.gives._fields, given):
        setattr(work, name, value)


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


class AsRead(NamedTuple):
    parsed: Parsed
    name: str
    where: str
    elided: tuple
    read_proto: bytes


class Read:
    """XLA reads the input (`pipeline.reading.source.load`)."""

    name = "read"
    gives = AsRead

    def run(self, source, options: Options, importer: XlaWorker | None) -> AsRead:
        o = options
        try:
            loaded = load(source, o.source_name, isolate=o.isolate, worker=importer)
        except XlaRejected as err:  # the text read again, on this error path only: what to do next
            raise with_hint(err, _parser_hint(source, o.source_name, str(err))) from None
        elided = elided_constants(loaded.parsed)  # before link #1 edits the proto the inline ones are named in
        # The verifier judges the module as read, before link #1 edits it (a proto given has no text to read again).
        read_proto = loaded.parsed.serialized() if o.check or loaded.text is None else b""
        return AsRead(loaded.parsed, loaded.name, loaded.where, elided, read_proto)


class Reified(NamedTuple):
    module: Module
    link1: PreserveResult
    renamed: dict


class Reify:
    """Link #1: it edits `parsed`'s proto in place. Besides its account, it
    gives the one fact of its view the proof may need (`renamed`), so that
    the view (an object per instruction) goes with the step."""

    name = "link #1"
    gives = Reified

    def run(self, parsed: Parsed, options: Options) -> Reified:
        with no_cyclic_gc():  # XLA's protos as Python objects: many small ones, no cycles worth a collection
            module = view_of(parsed)
            link1 = PreserveControlDeps(**pass_values(options, PreserveControlDeps)).run(module)
            return Reified(module, link1, _paired_dones(module))


def _paired_dones(module: Module) -> dict[tuple[str, str], str]:
    """(computation, send-done or recv-done) → its send or recv, names as
    written, in the computations link #1 looked into: the importer makes a
    pair one op, named after the send or recv (`pipeline.chain.blame`)."""
    found = {}
    for comp in module.computations:
        for p in comp.proto.instructions:
            if p.opcode in ("send-done", "recv-done") and p.operand_ids:
                done = comp.get(p.id)
                found[(comp.name, done.name)] = done.operands[0].name
    return found


class Written(NamedTuple):
    hlo_proto: bytes


class Write:
    """Link #1's output, serialized (XLA prints it when asked: `ChainResult.hlo`)."""

    name = "write"
    gives = Written

    def run(self, parsed: Parsed) -> Written:
        return Written(parsed.serialized())


class ReadBack(NamedTuple):
    hlo: str


class XlaReadBack:
    """XLA reads link #1's output back and prints it, where the chain stops
    after link #1 (otherwise link #2's reading of it is the verdict)."""

    name = "XLA read-back"
    gives = ReadBack

    def run(self, hlo_proto: bytes, parsed: Parsed, read_proto: bytes, where: str, options: Options,
            importer: XlaWorker | None) -> ReadBack:
        try:
            return ReadBack(with_module_config(print_module(hlo_proto, f"{where} after link #1",
                                                            isolate=options.isolate, worker=importer), parsed.text))
        except XlaRejected:
            own_proto_verdict(read_proto, parsed.text, where, isolate=options.isolate)
            raise


class Imported(NamedTuple):
    mlir: ir.Module
    names: HloNames
    imported: Snapshot | Reimported
    hlo_read: HloRead | None
    parsed: Parsed  # XLA's parse, consumed: the input's names and text alone


class Import:
    """Link #2. While XLA's child imports, this process reads the module as
    read for the proof (with `check`): one parse of XLA's, two readers, on
    two cores."""

    name = "link #2"
    gives = Imported

    def run(self, parsed: Parsed, hlo_proto: bytes, read_proto: bytes, where: str, options: Options,
            importer: XlaWorker | None) -> Imported:
        o = options
        hlo_read: list[HloRead] = []

        def read_for_the_proof() -> None:
            try:
                hlo_read.append(as_read(parsed, read_proto))
            except Exception:  # noqa: BLE001  the proof reads it again, and says what is wrong there
                pass

        try:
            # At its key locations: links #3 and #4 read the names through the table.
            mlir, names = import_keyed(parsed, o.dialect, isolate=o.isolate, source_name=where, worker=importer,
                                       consume=True, meanwhile=read_for_the_proof if o.check else None)
        except ImportFailed:
            own_proto_verdict(read_proto, parsed.text, where, isolate=o.isolate)
            raise
        if not o.flatten:  # nothing rewrites it: the module itself
            imported = Snapshot(mlir.operation, o.debug_info, names)
        else:  # link #3 rewrites it in place: link #2 again on link #1's output, if the result or blame asks
            imported = Reimported(hlo_proto, parsed.text, where, o.dialect, o.isolate, o.debug_info)
        return Imported(mlir, names, imported, hlo_read[0] if hlo_read else None, parsed.without_proto())


class Flattened(NamedTuple):
    flattened: Snapshot


class Flatten:
    """Link #3, until nothing changes (the pass flattens one level a run, and
    --bundle puts a tuple-shaped predecessor one level deeper): it rewrites
    `mlir` in place, in MLIR's PassManager, verified after it."""

    name = "link #3"
    gives = Flattened

    def run(self, mlir: ir.Module, names: HloNames, where: str, options: Options) -> Flattened:
        o = options
        # The chain's options the pass declares (`pass_option`), and until nothing changes.
        flatten = FlattenControlDepTupleOperands(dialect(o.dialect), **{
            **pass_values(o, FlattenControlDepTupleOperands), "until_unchanged": True})
        run_link3(flatten, mlir, where, names)
        return Flattened(Snapshot(mlir.operation, o.debug_info, names))  # nothing rewrites it after link #3


class Printed(NamedTuple):
    penguin_source: str
    as_printed: AsPrinted | None


class Print:
    """Link #4. With `check`, XLA's child (idle meanwhile) compiles the
    program for the proof as it is printed (`pipeline.verifier.program.AsPrinted`)."""

    name = "link #4"
    gives = Printed

    def run(self, mlir: ir.Module, name: str, names: HloNames, elided: tuple, parsed: Parsed, where: str,
            options: Options, importer: XlaWorker | None) -> Printed:
        as_printed = AsPrinted(importer, program_filename(name)) if options.check else None
        try:
            with as_printed.streaming() if as_printed is not None else contextlib.nullcontext():
                source = print_penguin(mlir, name, options.dialect, names=names, elided=elided,
                                       on_lines=as_printed.feed if as_printed is not None else None)
        except ControlDepError as err:  # a control-dep call with no operand
            raise _in_hlo(err, parsed, where, names) from None
        return Printed(source, as_printed)


class Proven(NamedTuple):
    program: PenguinModule
    report: Report


class Prove:
    """The proof: the program built, and every HLO control edge of the input
    accounted for in it (`pipeline.verifier`), each lost one placed at a link."""

    name = "proof"
    gives = Proven

    def run(self, penguin_source: str, name: str, importer: XlaWorker | None, parsed: Parsed, read_proto: bytes,
            where: str, imported: Snapshot | Reimported, mlir: ir.Module, names: HloNames, options: Options,
            hlo_read: HloRead | None, as_printed: AsPrinted | None, link1: PreserveResult | None = None,
            renamed: dict | None = None) -> Proven:
        """`link1` and `renamed` are link #1's (None where it was skipped);
        `hlo_read`, the module as read, read during link #2 (None: read here);
        `as_printed`, the program compiled as it was printed (the printed text is what runs)."""
        program = build_graph(penguin_source, name, helper=importer, as_printed=as_printed)
        return Proven(program, blamed_report(program, parsed, read_proto, where, link1, renamed or {}, imported, mlir,
                                             names, options, hlo_read))


def steps(options: Options, stop_after: str | None = None) -> list:
    """The chain's steps for `options`, up to the step named `stop_after`.
    Stopping after link #1 includes writing its output and XLA's check of it."""
    last = XlaReadBack.name if stop_after == Reify.name else stop_after
    # Link #2 has XLA's parser read link #1's output (in its child process
    # with `isolate`): only a chain that stops before it checks it apart.
    chain = [Read(), *([Reify()] if options.reify else []), Write(),
             *([XlaReadBack()] if last == XlaReadBack.name else []),
             Import(), *([Flatten()] if options.flatten else []), Print(), *([Prove()] if options.check else [])]
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
    dead = released_after(chain)
    for index, step in enumerate(chain):
        start = time.perf_counter()
        run_step(step, work)
        if timings is not None:
            timings[step.name] = time.perf_counter() - start
        handed_on(step.name, work)  # with verify_each, its output checked (pipeline.chain.link_checks)
        for name in dead.get(index, ()):
            setattr(work, name, None)
    return work.result()


def _in_hlo(err: ControlDepError, parsed: Parsed, where: str, names: HloNames | None = None) -> ControlDepError:
    """The same error, placed at the HLO instruction's line (`file:line`)."""
    of = names.of_location if names is not None else hlo_name
    name, computation = of(err.location) if err.location is not None else (None, None)
    line = parsed.line_as_written(computation, name) if name and computation else None
    return ControlDepError(f"%{name}: {err.message}", f"{where}:{line}", err.location) if line else err
