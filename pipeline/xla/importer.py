"""Link #2: XLA's real HLO→StableHLO importer, then MHLO on request.

Two things the importer does not do on its own, and the chain needs:
- Names. The importer names an op after its HLO instruction only when the
  instruction has no `metadata={op_name=…}`; real dumps always have one, and
  XLA's names are not always the input's (`a` → `a.1`). We give every
  instruction of XLA's proto a key as its op_name, import, and replace each
  key location by `fused<"computation">["instruction", original metadata…]`:
  both the HLO name as written (which Penguin names come from) and the
  source location survive, and the computation rides along as the fused
  location's metadata.
- Dead copies. The importer inlines while bodies, conditional branches,
  fusions and reducers into their op's regions and also leaves a private
  function for each. We run MLIR's `symbol-dce`, so what remains is the
  live program: each instruction once (a computation reached by `call` stays
  a function, since the call uses it). `keep_dead_copies=True` keeps them.

XLA can abort the whole process on some inputs. Known cases are refused
before import; with `isolate=True` (the default) XLA's parser and importer
also run in a child process, so an unknown one becomes an error
(`XlaRejected` from the parser, `ImportFailed` from the importer), not a crash.
The child is this process's warm one (`pipeline.xla.worker.shared`), reused
by every call: it parses the text and imports link #1's output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jaxlib.mlir import ir, passmanager

from passes.dialects import ASYNC_DONE_OPS, DIALECTS, UnknownDialect, dialect as dialect_row
from passes.errors import ChainError
from pipeline.reading.parsed import Parsed, decode_proto
from pipeline.reading.text import decode
from passes.hlo.kinds import opens_async_pair
from passes.locations import hlo_location, hlo_name, key_name, key_of
from pipeline.xla.mlir_context import module_context, register_passes
from pipeline.xla import worker as xla_child
from pipeline.xla.isolated import XlaWorker, abort_reason, ask, first_said, parse

__all__ = ["DIALECTS", "HloNames", "ImportFailed", "UnknownDialect", "XlaWorker", "import_hlo", "import_keyed",
           "refuse_known_aborts",
           "run_pipeline"]


class ImportFailed(ChainError):
    """Link #2 could not import the module; the message names the cause."""


@dataclass(frozen=True)
class _Origin:
    computation: str
    instruction: str   # as written
    # (op_name, source_file, source_line, source_column, stack_frame_id), None without metadata
    metadata: tuple | None


def import_hlo(source: Parsed | str, dialect: str = "stablehlo", *, context: ir.Context | None = None,
               isolate: bool = True, keep_dead_copies: bool = False,
               source_name: str | None = None, worker: XlaWorker | None = None,
               consume: bool = False) -> ir.Module:
    """HLO (XLA's parse, or text XLA parses here) → a verified MLIR module in
    `dialect`, each op at its HLO location. With `isolate`, XLA runs in a child
    (`worker`, or this process's warm child). `consume`: the parse may be keyed in place
    (the chain's own, done with)."""
    mlir, names = import_keyed(source, dialect, context=context, isolate=isolate,
                               keep_dead_copies=keep_dead_copies, source_name=source_name, worker=worker,
                               consume=consume)
    names.restore(mlir)
    return mlir


def import_keyed(source: Parsed | str, dialect: str = "stablehlo", *, context: ir.Context | None = None,
                 isolate: bool = True, keep_dead_copies: bool = False,
                 source_name: str | None = None, worker: XlaWorker | None = None,
                 consume: bool = False, meanwhile=None) -> tuple[ir.Module, HloNames]:
    """`import_hlo`, with each op left at its key location (`loc("h2p.N")`)
    and the table that names it (`HloNames`): the chain reads names through
    the table and restores locations only where MLIR text is printed.
    `meanwhile`, a callable that raises nothing, runs while XLA's child
    imports (before the import, without a child)."""
    row = dialect_row(dialect)  # UnknownDialect, before any work
    parsed = source if isinstance(source, Parsed) else parse(
        decode(source, source_name), source_name, isolate=isolate, worker=worker)
    source_name = source_name or parsed.source
    module = parsed.proto if consume else decode_proto(parsed.serialized())
    keyed = _Keyed(module, parsed)
    refuse_known_aborts(keyed, source_name)
    bytecode = _run_importer(module.SerializeToString(), source_name,
                             (worker or xla_child.shared()) if isolate else None, meanwhile)
    context = context or module_context(len(bytecode))
    try:  # MLIR's parser verifies what it reads, and the PassManager below what each pass leaves
        mlir = ir.Module.parse(bytecode, context=context)
    except ir.MLIRError as err:  # the importer does not verify what it writes
        raise ImportFailed(f"{source_name or 'module'}: link #2 (XLA's importer) produced a module "
                           f"that does not verify: {_mlir_error(err, keyed.origins)}") from None
    pipeline = ([] if keep_dead_copies else ["symbol-dce"]) + list(row.from_stablehlo)
    if pipeline:
        try:
            run_pipeline(mlir, ",".join(pipeline))
        except ir.MLIRError as err:
            hint = (f"; --dialect {next(iter(DIALECTS))} keeps the module as imported"
                    if row.from_stablehlo else "")
            raise ImportFailed(f"{source_name or 'module'}: link #2 ({', '.join(pipeline)}) failed: "
                               f"{_mlir_error(err, keyed.origins)}{hint}") from None
    return mlir, HloNames(keyed, mlir)


class HloNames:
    """The HLO name and computation of each op of a keyed module (`import_keyed`),
    read from the key its location carries through one table (the key's
    instruction as written), as `restore` would write them into locations:
    the op an async start wraps goes by its start's or callee's name, and the
    block arguments of an inlined region by the callee's parameters."""

    def __init__(self, keyed: _Keyed, mlir: ir.Module):
        # Only what names need: the keyed module's per-instruction indexes
        # (~300 bytes an instruction) go with the import.
        self.origins = keyed.origins
        self.wrapped = _wrapped_keys(keyed)
        self.parameters = _CalleeParameters(keyed)
        self.frames = _StackFrames(keyed.module)
        self.done_seen: set[int] = set()  # done keys an async_done op carries
        if self.wrapped:
            wrapped, seen = self.wrapped, self.done_seen

            def visit(op) -> ir.WalkResult:
                if op.name in ASYNC_DONE_OPS:
                    index = key_of(op.location)
                    if index in wrapped:
                        seen.add(index)
                return ir.WalkResult.ADVANCE

            mlir.operation.walk(visit)

    def of(self, op) -> tuple[str | None, str | None]:
        """(instruction as written, computation) of an op; a location that is
        no key (an op the chain made) reads as `passes.locations.hlo_name` reads it."""
        location = op.location
        index = key_of(location)
        if index is None:
            return hlo_name(location)
        if index in self.done_seen and op.name not in ASYNC_DONE_OPS:
            index = self.wrapped[index]  # the wrapped op, not the done itself
        origin = self.origins[index]
        return origin.instruction, origin.computation

    def of_location(self, location) -> tuple[str | None, str | None]:
        index = key_of(location)
        if index is None:
            return hlo_name(location)
        origin = self.origins[index]
        return origin.instruction, origin.computation

    def arguments(self, op, region: int, block) -> list[tuple[str | None, str | None]]:
        """(name, computation) of each argument of `block`, in region #`region` of `op`."""
        index = key_of(op.location)
        named = self.parameters.of(index, region) if index is not None else None
        arguments = block.arguments
        if named is not None and len(arguments) == len(named[1]):
            callee, names = named
            return [(name, callee) for name in names]
        return [self.of_location(arg.location) for arg in arguments]

    def restore(self, mlir: ir.Module | ir.Operation) -> None:
        """Each key location replaced by the instruction's HLO location (where
        MLIR text is printed); a module restored already stays as it is."""
        _restore_locations(mlir, self)


class _Keyed:
    """The module with every instruction's metadata replaced by its key, and
    what one pass over it learns on the way: each key's origin and proto,
    the `*-done`s, the get-tuple-elements that read a start, the stack frames."""

    def __init__(self, module, parsed: Parsed):
        self.module, self.parsed = module, parsed
        self.origins: list[_Origin] = []
        self.protos: list = []                     # key → HloInstructionProto
        self.by_id: dict[int, object] = {}         # instruction id → proto (the module's ids are unique)
        self.key_of_id: dict[int, int] = {}
        self.dones: list[int] = []                 # keys of *-done instructions with an operand
        self.start_readers: list[int] = []         # keys of get-tuple-elements of a start
        self.computations = {c.id: c for c in module.computations}
        name = parsed.name
        self.calls: dict[int, tuple[str, list[int]]] = {}  # key → (opcode, called computation ids)
        origins, protos, by_id, key_of_id, calls = self.origins, self.protos, self.by_id, self.key_of_id, self.calls
        gtes = []
        for comp in module.computations:
            computation = comp.name
            for instr in comp.instructions:
                key = len(origins)
                metadata = None
                if instr.HasField("metadata"):
                    m = instr.metadata
                    metadata = (m.op_name, m.source_file, m.source_line, m.source_column, m.stack_frame_id)
                    m.Clear()
                origins.append(_Origin(computation, name(computation, instr.name), metadata))
                protos.append(instr)
                instr.metadata.op_name = key_name(key)
                by_id[instr.id] = instr
                key_of_id[instr.id] = key
                opcode = instr.opcode
                if instr.called_computation_ids:
                    calls[key] = (opcode, list(instr.called_computation_ids))
                if opcode.endswith("-done") and instr.operand_ids:
                    self.dones.append(key)
                elif opcode == "get-tuple-element":
                    gtes.append(key)
        # Computations XLA made around a sugared async start (`reduce-scatter-start(…)`):
        # the text wrote none of their instructions. (An inline `to_apply={…}` is written.)
        self.async_made: set[str] = set()
        if parsed.names.made_by_xla:
            self.async_made = {self.computations[c].name for p in protos if p.opcode == "async-start"
                               for c in p.called_computation_ids
                               if self.computations[c].name in parsed.names.made_by_xla}
            self._name_made_computations()
        self.start_readers = [k for k in gtes if (op := by_id.get(protos[k].operand_ids[0] if protos[k].operand_ids
                                                                   else -1)) is not None
                              and opens_async_pair(op.opcode)]


    def _name_made_computations(self) -> None:
        """The instructions of a computation XLA made around a sugared start
        (`reduce-scatter-start(…)`) were never written: the wrapped op goes by
        the start, in the start's computation (the printer then names it
        `<start>:<op kind>`); its parameter keeps XLA's name."""
        made = {c.id: c for c in self.module.computations if c.name in self.async_made}
        callers = {}
        for key, instr in enumerate(self.protos):
            for c in instr.called_computation_ids:
                if c in made:
                    callers.setdefault(c, self.origins[key])
        for c, caller in callers.items():
            for instr in made[c].instructions:
                if instr.opcode == "parameter":  # an argument keeps XLA's name (`async_param`)
                    continue
                key = self.key_of_id[instr.id]
                self.origins[key] = _Origin(caller.computation, caller.instruction, self.origins[key].metadata)


def run_pipeline(module: ir.Module, passes: str) -> None:
    """Run registered MLIR passes (textual pipeline, anchored on the module)."""
    register_passes()
    with module.context:
        passmanager.PassManager.parse(f"builtin.module({passes})").run(module.operation)


def refuse_known_aborts(keyed: _Keyed, source_name: str | None = None) -> None:
    """Measured with jaxlib 0.10.2: a get-tuple-element that reads a `*-start`,
    `send` or `recv` directly makes the importer abort the process."""
    for key in keyed.start_readers:
        instr, origin = keyed.protos[key], keyed.origins[key]
        start = keyed.by_id[instr.operand_ids[0]]
        line = keyed.parsed.line(origin.computation, instr.name)
        where = f"{source_name}:{line}" if source_name and line else f"%{origin.computation}"
        start_name = keyed.origins[keyed.key_of_id[start.id]].instruction
        raise ImportFailed(
            f"{where}: %{origin.instruction} reads a tuple element of %{start_name} ({start.opcode}) "
            f"directly; XLA's importer aborts on this. Read it through the matching "
            f"{start.opcode.replace('-start', '')}-done instead")


def _run_importer(proto: bytes, source_name: str | None, worker: XlaWorker | None, meanwhile=None) -> bytes:
    """XLA's importer on a serialized HLO proto: here, or in `worker` while
    this process runs `meanwhile`."""
    stage = f"{source_name}: link #2 (XLA's importer)" if source_name else "link #2 (XLA's importer)"
    if worker is None:
        from pipeline.xla.native import hlo_to_stablehlo

        if meanwhile is not None:
            meanwhile()
        try:
            return hlo_to_stablehlo(proto)
        except Exception as err:
            raise ImportFailed(f"{stage}: {_what_xla_said(str(err))}") from None
    status, answer = ask(worker, "import", proto,
                         lambda died: ImportFailed(f"{stage} aborted ({died}): {abort_reason(died.stderr)}"),
                         meanwhile=meanwhile)
    if status == "ok":
        return answer
    raise ImportFailed(f"{stage}: {_what_xla_said(answer.decode('utf-8', 'replace'))}")


def _mlir_error(err: ir.MLIRError, origins: list[_Origin] = ()) -> str:
    """The first diagnostic, on one line, with the HLO name its location holds
    (`origins` maps a key location, before locations are restored)."""
    details = getattr(err, "error_diagnostics", None) or []
    if details:
        d = details[0]
        message = re.split(r': [%"]', d.message.splitlines()[0])[0]  # drop the op dump
        return f"{_loc_text(d.location, origins)}: {message}"
    return _what_xla_said(str(err))


def _loc_text(location, origins: list[_Origin] = ()) -> str:
    key = key_of(location)
    if key is not None and key < len(origins):  # a key location: the instruction it stands for
        return f"%{origins[key].instruction} in %{origins[key].computation}"
    name, computation = hlo_name(location)
    if name is None:
        return str(location)
    return f"%{name}" + (f" in %{computation}" if computation else "")


def _what_xla_said(text: str) -> str:
    return first_said(text, skip=("***", "@")) or text.strip()[:200] or "no message"


def _restore_locations(mlir: ir.Module, names: HloNames) -> None:
    """Replace each key location by the instruction's fused location. One
    C++-driven walk; the key is read from the NameLoc, not from printed text."""
    origins = names.origins
    frames = names.frames
    cache: dict[int, ir.Location] = {}
    computations: dict[str, ir.Attribute] = {}
    originals: dict[tuple | None, ir.Location | None] = {}  # metadata → its location
    wrapped = names.wrapped
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
            found = cache[index] = hlo_location(origin.instruction, callee_attr(origin.computation),
                                                originals[origin.metadata])
        return found

    parameters = names.parameters

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
            named = parameters.of(index, r) if index is not None else None
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
    number, with their names as written. The importer gives those block
    arguments the op's own location; the HLO names them."""

    def __init__(self, keyed: _Keyed):
        # Each called computation's parameters, read once now: nothing here
        # holds on to XLA's proto, which goes with the import.
        self.calls = keyed.calls
        name = keyed.parsed.names.name
        self.callees: dict[int, tuple[str, list[str]] | None] = {}
        for c in {c for _, called in keyed.calls.values() for c in called}:
            callee = keyed.computations.get(c)
            if callee is None or callee.name in keyed.async_made:
                self.callees[c] = None  # XLA made it (a sugared start's): its parameters were never written
                continue
            numbered = sorted((i.parameter_number, i.name) for i in callee.instructions if i.opcode == "parameter")
            self.callees[c] = (callee.name, [name(callee.name, n) for _, n in numbered])

    def of(self, key: int, region: int) -> tuple[str, list[str]] | None:
        found = self.calls.get(key)
        if found is None:
            return None
        opcode, called = found
        if opcode == "while":  # XLA lists body, condition; the op's regions are cond, body
            called = called[::-1]
        return self.callees.get(called[region]) if region < len(called) else None


def _wrapped_keys(keyed: _Keyed) -> dict[int, int]:
    """Measured with jaxlib 0.10.2: XLA's importer gives the op an async-start
    wraps (`async-start(...), calls=%c`, `reduce-scatter-start`, `all-to-all-start`)
    the location of the matching done, so that op, printed first, would take the
    done's HLO name and the done a made-up one. Key of each such done → the key
    the wrapped op should carry: the root of `calls=`, else the start (the op
    then reads `<start>:<op kind>`, as the printer names a wrapped all-reduce)."""
    keys: dict[int, int] = {}
    for done_key in keyed.dones:
        start = keyed.by_id.get(keyed.protos[done_key].operand_ids[0])
        while start is not None and start.opcode == "async-update" and start.operand_ids:
            start = keyed.by_id.get(start.operand_ids[0])
        if start is None:
            continue
        target = start.id
        if start.opcode == "async-start" and start.called_computation_ids:
            callee = keyed.computations.get(start.called_computation_ids[0])
            # A computation XLA made around a sugared start (`reduce-scatter-start(…)`) holds
            # no name the input wrote: the wrapped op goes by the start, `<start>:<op kind>`.
            if callee is not None and callee.name not in keyed.async_made:
                target = callee.root_id
        target_key = keyed.key_of_id.get(target)
        if target_key is not None:
            keys[done_key] = target_key
    return keys


def _metadata_location(metadata: tuple | None, frames: "_StackFrames") -> ir.Location | None:
    """What XLA's importer would have made of the metadata: op_name, with the
    source position (from source_file/line or the stack frame) as its child."""
    if metadata is None:
        return None
    op_name, source_file, source_line, source_column, stack_frame_id = metadata
    position = None
    if source_file:
        position = ir.Location.file(source_file, source_line, source_column)
    elif stack_frame_id:
        position = frames.location(stack_frame_id)
    if op_name:
        return ir.Location.name(op_name, childLoc=position)
    return position


class _StackFrames:
    """The module's stack frame index (the FileNames / FileLocations /
    StackFrames sections of the text), enough to turn a stack_frame_id into
    file:line:column (the innermost frame). Ids count from 1."""

    def __init__(self, module):
        self.index = None
        if module.HasField("stack_frame_index"):  # a copy: a part of XLA's proto would hold all of it
            self.index = type(module.stack_frame_index)()
            self.index.CopyFrom(module.stack_frame_index)

    def location(self, frame_id: int) -> ir.Location | None:
        index = self.index
        if index is None or not 0 < frame_id <= len(index.stack_frames):
            return None
        location_id = index.stack_frames[frame_id - 1].file_location_id
        if not 0 < location_id <= len(index.file_locations):
            return None
        where = index.file_locations[location_id - 1]
        names = index.file_names
        file = names[where.file_name_id - 1] if 0 < where.file_name_id <= len(names) else "<unknown>"
        return ir.Location.file(file, where.line, where.column)
