"""Link #2: XLA's real HLO→StableHLO importer, then MHLO on request.

Two things the importer does not do on its own, and the chain needs:
- Names. The importer names an op after its HLO instruction only when the
  instruction has no `metadata={op_name=…}`; real dumps always have one. We
  give every instruction a key as its op_name, import, and replace each key
  location by `fused<"computation">["instruction", original metadata…]`:
  both the HLO name (which Penguin names come from) and the source location
  survive, and the computation rides along as the fused location's metadata.
- Dead copies. The importer inlines while bodies, conditional branches,
  fusions and reducers into their op's regions and also leaves a private
  function for each. We run MLIR's `symbol-dce`, so what remains is the
  live program: each instruction once (a computation reached by `call` stays
  a function, since the call uses it). `keep_dead_copies=True` keeps them.

XLA can abort the whole process on some inputs. Known cases are refused
before import; with `isolate=True` (the default) XLA's parser and importer
also run in a child process, so an unknown one becomes an error
(`XlaRejected` from the parser, `ImportFailed` from the importer), not a crash.
The child is an `ImportWorker`: the chain starts it before reading, so that
its Python and jaxlib load on the other core while link #1 runs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass

from jaxlib.mlir import ir, passmanager

from passes.dialects import ASYNC_DONE_OPS, DIALECTS, UnknownDialect, dialect as dialect_row
from passes.errors import ChainError
from passes.hlo import Module, read_module, write_module
from passes.hlo.ir import Instruction
from passes.hlo.preserve_control_deps import begins_async_pair
from passes.locations import hlo_location, hlo_name, key_metadata, key_of
from pipeline.mlir_context import make_context, register_passes
from pipeline.xla import shape_inference
from pipeline.xla import (
    XlaRejected, abort_reason, aborted, check_original, first_said, judged_by_xla, parse_with_xla, refusal)
from pipeline._import_worker import ORIGINAL, PARSED, frame

__all__ = ["DIALECTS", "ImportFailed", "ImportWorker", "UnknownDialect", "import_hlo", "refuse_known_aborts", "run_pipeline"]


class ImportFailed(ChainError):
    """Link #2 could not import the module; the message names the cause."""


class ImportWorker:
    """A child process (`pipeline._import_worker`) that waits for one HLO
    text or proto on stdin and answers with StableHLO bytecode. Start it
    early; `close()` ends it if it was never used."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, "-m", "pipeline._import_worker"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def run(self, data: bytes) -> tuple[int, bytes, str]:
        """(exit status, stdout, stderr) for `data`; the worker then exits."""
        stdout, stderr = self.process.communicate(data)
        return self.process.returncode, stdout, stderr.decode("utf-8", "replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


@dataclass(frozen=True)
class _Origin:
    computation: str
    instruction: str
    metadata: str | None


def import_hlo(source: Module | str, dialect: str = "stablehlo", *, context: ir.Context | None = None,
               isolate: bool = True, keep_dead_copies: bool = False,
               source_name: str | None = None, worker: ImportWorker | None = None,
               original: str | bytes | None = None) -> ir.Module:
    """HLO (our IR or text) → a verified MLIR module in `dialect`. With
    `isolate`, `worker` is the child to use (one is started if None).
    `original`: the user's text, when `source` is our IR read from it: XLA's
    parser reads it first, and refuses it (XlaRejected, the user's line and
    column) where XLA would, whatever our reader made of it."""
    row = dialect_row(dialect)  # UnknownDialect, before any work
    if not isinstance(source, Module):
        original = source
    module = source if isinstance(source, Module) else read_module(
        source, source_name, shapes_of=shape_inference(source_name, isolate=isolate))
    refuse_known_aborts(module, source_name)
    origins: list[_Origin] = []
    text = write_module(module, attributes=lambda comp, instr: _keyed(comp, instr, origins))
    if isinstance(original, str):
        original = original.encode("utf-8")
    if original is not None and not judged_by_xla(original.decode("utf-8", "replace")):
        original = None
    try:
        if isolate:  # XLA's parser runs in the child too: it aborts the process on some bad input
            data = text.encode("utf-8")
            bytecode = _run_importer(frame(original, data) if original is not None else data, True,
                                     source_name, worker)
        else:
            if original is not None:
                parse_with_xla(original.decode("utf-8", "replace"), source_name)
            proto = parse_with_xla(text, source_name).as_serialized_hlo_module_proto()
            bytecode = _run_importer(proto, False, source_name)
    except XlaRejected:  # its line numbers are the keyed text's: XLA on the user's own text names theirs
        if not isinstance(source, Module):
            check_original(source, source_name, isolate=isolate)
        raise
    context = context or make_context()
    try:
        mlir = ir.Module.parse(bytecode, context=context)
    except ir.MLIRError as err:  # the importer does not verify what it writes
        raise ImportFailed(f"{source_name or 'module'}: link #2 (XLA's importer) produced a module "
                           f"that does not verify: {_mlir_error(err, origins)}") from None
    _restore_locations(mlir, origins, module)
    pipeline = ([] if keep_dead_copies else ["symbol-dce"]) + list(row.from_stablehlo)
    if pipeline:
        try:
            run_pipeline(mlir, ",".join(pipeline))
        except ir.MLIRError as err:
            hint = (f"; --dialect {next(iter(DIALECTS))} keeps the module as imported"
                    if row.from_stablehlo else "")
            raise ImportFailed(f"{source_name or 'module'}: link #2 ({', '.join(pipeline)}) failed: "
                               f"{_mlir_error(err)}{hint}") from None
    if not mlir.operation.verify():
        raise ImportFailed(f"{source_name or 'module'}: the imported module does not verify")
    return mlir


def run_pipeline(module: ir.Module, passes: str) -> None:
    """Run registered MLIR passes (textual pipeline, anchored on the module)."""
    register_passes()
    with module.context:
        passmanager.PassManager.parse(f"builtin.module({passes})").run(module.operation)


def refuse_known_aborts(module: Module, source_name: str | None = None) -> None:
    """Measured with jaxlib 0.10.2: a get-tuple-element that reads a `*-start`,
    `send` or `recv` directly makes the importer abort the process."""
    for comp, instr in module.instructions():
        if instr.opcode == "get-tuple-element" and instr.operands and begins_async_pair(instr.operands[0]):
            start = instr.operands[0]
            where = f"{source_name}:{instr.line}" if source_name and instr.line else f"%{comp.name}"
            raise ImportFailed(
                f"{where}: %{instr.name} reads a tuple element of %{start.name} ({start.opcode}) "
                f"directly; XLA's importer aborts on this. Read it through the matching "
                f"{start.opcode.replace('-start', '')}-done instead")


def _keyed(comp, instr: Instruction, origins: list[_Origin]) -> list[tuple[str, str]]:
    metadata = instr.attribute("metadata")
    origins.append(_Origin(comp.name, instr.name, metadata))
    return [(k, v) for k, v in instr.attributes if k != "metadata"] + [("metadata", key_metadata(len(origins) - 1))]


def _run_importer(proto: bytes, isolate: bool, source_name: str | None,
                  worker: ImportWorker | None = None) -> bytes:
    """`proto`: a serialized HLO proto, or HLO text (isolated only: the child parses it;
    XlaRejected if XLA's parser refuses it or aborts)."""
    stage = f"{source_name}: link #2 (XLA's importer)" if source_name else "link #2 (XLA's importer)"
    if not isolate:
        import jaxlib._jax as xla_ext
        try:
            return xla_ext.mlir.hlo_to_stablehlo(proto)
        except Exception as err:
            raise ImportFailed(f"{stage}: {_first_line(str(err))}") from None
    returncode, stdout, stderr = (worker or ImportWorker()).run(proto)
    if returncode == 0:
        return stdout
    if returncode in (4, 5):  # the child's XLA parser refused the text (5: the user's own)
        raise refusal(stderr, source_name)
    if returncode < 0:
        if proto.startswith((b"HloModule", ORIGINAL)) and PARSED not in stderr:
            raise aborted("XLA's parser", returncode, stderr, source_name)
        raise ImportFailed(f"{stage} aborted (signal {-returncode}): {abort_reason(stderr)}")
    raise ImportFailed(f"{stage}: {_first_line(stderr.replace(PARSED, ''))}")


def _mlir_error(err: ir.MLIRError, origins: list[_Origin] = ()) -> str:
    """The first diagnostic, on one line, with the HLO name its location holds
    (`origins` maps a key location, before locations are restored)."""
    details = getattr(err, "error_diagnostics", None) or []
    if details:
        d = details[0]
        message = re.split(r': [%"]', d.message.splitlines()[0])[0]  # drop the op dump
        return f"{_loc_text(d.location, origins)}: {message}"
    return _first_line(str(err))


def _loc_text(location, origins: list[_Origin] = ()) -> str:
    key = key_of(location)
    if key is not None and key < len(origins):  # a key location: the instruction it stands for
        return f"%{origins[key].instruction} in %{origins[key].computation}"
    name, computation = hlo_name(location)
    if name is None:
        return str(location)
    return f"%{name}" + (f" in %{computation}" if computation else "")


def _first_line(text: str) -> str:
    return first_said(text, skip=("***", "@")) or text.strip()[:200] or "no message"


def _restore_locations(mlir: ir.Module, origins: list[_Origin], module: Module) -> None:
    """Replace each key location by the instruction's fused location. One
    C++-driven walk; the key is read from the NameLoc, not from printed text."""
    frames = _StackFrames(module.stack_frame_text)
    cache: dict[int, ir.Location] = {}
    computations: dict[str, ir.Attribute] = {}
    originals: dict[str | None, ir.Location | None] = {}  # metadata text → its location
    wrapped = _wrapped_keys(module, origins)
    # (op, key) of ops that carry a done's key but are no async_done: settled after the walk
    carrying_done_key: list[tuple[ir.Operation, int]] = []
    done_seen: set[int] = set()  # done keys an async_done op carries

    def location_for(loc) -> ir.Location | None:
        index = key_of(loc)
        return None if index is None else location_at(index)

    def location_at(index: int) -> ir.Location:
        found = cache.get(index)
        if found is None:
            origin = origins[index]
            if origin.metadata not in originals:
                originals[origin.metadata] = _metadata_location(origin.metadata, frames)
            computation = computations.get(origin.computation)
            if computation is None:
                computation = computations[origin.computation] = ir.StringAttr.get(origin.computation)
            found = cache[index] = hlo_location(origin.instruction, computation, originals[origin.metadata])
        return found

    parameters = _CalleeParameters(module)

    def visit(op) -> ir.WalkResult:
        index = key_of(op.location)
        if index in wrapped:
            if op.name in ASYNC_DONE_OPS:
                done_seen.add(index)
            else:
                carrying_done_key.append((op, index))
        if index is not None:
            op.location = location_at(index)
        for r, region in enumerate(op.regions):
            named = parameters.of(origins[index], r) if index is not None else None
            for block in region.blocks:
                arguments = block.arguments
                if named is not None and len(arguments) == len(named[1]):
                    # An inlined reducer, comparator, loop…: its parameters, by number.
                    callee, names = named
                    for arg, name in zip(arguments, names):
                        arg.set_location(hlo_location(name, callee_attr(callee), None))
                    continue
                for arg in arguments:
                    new = location_for(arg.location)
                    if new is not None:
                        arg.set_location(new)
        return ir.WalkResult.ADVANCE

    def callee_attr(name: str) -> ir.Attribute:
        found = computations.get(name)
        if found is None:
            found = computations[name] = ir.StringAttr.get(name)
        return found

    with mlir.context:
        mlir.operation.walk(visit)
        for op, index in carrying_done_key:
            if index in done_seen:  # the wrapped op, not the done itself
                op.location = location_at(wrapped[index])


class _CalleeParameters:
    """For an op made from an instruction that calls computations (a reduce's
    `to_apply`, a while's `condition` and `body`, a sort's comparator…): the
    parameters of the computation inlined as its region #r, by parameter
    number. The importer gives those block arguments the op's own location;
    the HLO names them. The index is built on first use."""

    def __init__(self, module: Module):
        self.module = module
        self.instructions: dict[tuple[str, str], Instruction] | None = None
        self.computations: dict[str, object] = {}

    def of(self, origin: _Origin, region: int) -> tuple[str, list[str]] | None:
        if self.instructions is None:
            self.instructions = {(c.name, i.name): i for c, i in self.module.instructions()}
            self.computations = {c.name: c for c in self.module.computations}
        instr = self.instructions.get((origin.computation, origin.instruction))
        callees = instr.called_computation_names() if instr is not None else []
        callee = self.computations.get(callees[region]) if region < len(callees) else None
        if callee is None:
            return None
        numbered = [(int(i.payload), i.name) for i in callee.instructions
                    if i.opcode == "parameter" and (i.payload or "").strip().isdigit()]
        return callee.name, [name for _, name in sorted(numbered)]


def _wrapped_keys(module: Module, origins: list[_Origin]) -> dict[int, int]:
    """Measured with jaxlib 0.10.2: XLA's importer gives the op an async-start
    wraps (`async-start(...), calls=%c`, `reduce-scatter-start`, `all-to-all-start`)
    the location of the matching done, so that op, printed first, would take the
    done's HLO name and the done a made-up one. Key of each such done → the key
    the wrapped op should carry: the root of `calls=`, else the start (the op
    then reads `<start>:<op kind>`, as the printer names a wrapped all-reduce)."""
    dones = [(c, i) for c, i in module.instructions() if i.opcode.endswith("-done") and i.operands]
    if not dones:
        return {}
    index_of = {(o.computation, o.instruction): i for i, o in enumerate(origins)}
    computations = {c.name: c for c in module.computations}
    keys: dict[int, int] = {}
    for comp, done in dones:
        start = done.operands[0]
        while start.opcode == "async-update" and start.operands:
            start = start.operands[0]
        target = (comp.name, start.name)
        callee = computations.get((start.attribute("calls") or "").strip().lstrip("%"))
        if callee is not None:
            target = (callee.name, callee.root.name)
        done_key, target_key = index_of.get((comp.name, done.name)), index_of.get(target)
        if done_key is not None and target_key is not None:
            keys[done_key] = target_key
    return keys


_METADATA_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s}]+)')


def _metadata_location(metadata: str | None, frames: "_StackFrames") -> ir.Location | None:
    """What XLA's importer would have made of the metadata: op_name, with the
    source position (from source_file/line or the stack frame) as its child."""
    if not metadata:
        return None
    fields = {k: v.strip('"') for k, v in _METADATA_FIELD.findall(metadata)}
    position = None
    if "source_file" in fields:
        position = ir.Location.file(fields["source_file"], int(fields.get("source_line", 0)),
                                    int(fields.get("source_column", 0)))
    elif "stack_frame_id" in fields:
        position = frames.location(int(fields["stack_frame_id"]))
    if "op_name" in fields:
        return ir.Location.name(fields["op_name"], childLoc=position)
    return position


class _StackFrames:
    """The FileNames/FileLocations/StackFrames sections, enough to turn a
    stack_frame_id into file:line:column (the innermost frame)."""

    def __init__(self, text: str):
        self.files: dict[int, str] = {}
        self.locations: dict[int, dict[str, str]] = {}
        self.frames: dict[int, int] = {}
        section = None
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            if not line[0].isdigit():
                section = line
                continue
            ident, _, rest = line.partition(" ")
            if section == "FileNames":
                self.files[int(ident)] = rest.strip().strip('"')
            elif section == "FileLocations":
                self.locations[int(ident)] = dict(_METADATA_FIELD.findall(rest))
            elif section == "StackFrames":
                fields = dict(_METADATA_FIELD.findall(rest))
                if "file_location_id" in fields:
                    self.frames[int(ident)] = int(fields["file_location_id"])

    def location(self, frame_id: int) -> ir.Location | None:
        where = self.locations.get(self.frames.get(frame_id, -1))
        if not where:
            return None
        file = self.files.get(int(where.get("file_name_id", -1)), "<unknown>")
        return ir.Location.file(file, int(where.get("line", 0)), int(where.get("column", 0)))
