"""The module link #1 runs on: XLA's own `HloModuleProto` (`parsed.proto`),
and the computations of it that hold a control edge, the only ones link #1
looks into.

Link #1 edits the protos in place (`passes.hlo.preserve_control_deps`);
everything of the module it does not name stays XLA's, byte for byte.
`Computation.instruction(name)` and `Module.instructions()` read a
computation back as `Instruction`s, names as written: read-only, made from
the protos as they stand when first asked for (after link #1, its output).
"""

from __future__ import annotations

from typing import Iterator

from passes.hlo.proto import local_id


class Instruction:
    """One HLO instruction as read from its proto. Identity is object
    identity within a computation (one object per id): names are only
    unique within a computation.

    `name` is the name as the input wrote it; `shape` is XLA's `ShapeProto`;
    `id` is XLA's instruction id; `called` the names of the computations it
    calls, in XLA's order; `target` a custom-call's target."""

    __slots__ = ("name", "opcode", "id", "_proto", "_computation")

    def __init__(self, proto, name: str, computation: Computation):
        self.name, self.opcode, self.id = name, proto.opcode, proto.id
        self._proto, self._computation = proto, computation

    @property
    def operands(self) -> list[Instruction]:
        return self._computation.resolve(self._proto.operand_ids)

    @property
    def control_predecessors(self) -> list[Instruction]:
        return self._computation.resolve(self._proto.control_predecessor_ids)

    @property
    def shape(self):
        return self._proto.shape

    @property
    def called(self) -> tuple[str, ...]:
        return self._computation.computation_names(self._proto.called_computation_ids)

    @property
    def target(self) -> str | None:
        return self._proto.custom_call_target or None

    def __repr__(self) -> str:
        return f"<Instruction %{self.name} = {self.opcode}>"


class Computation:
    """One computation of the proto that holds a control edge.

    `proto` is XLA's `HloComputationProto`; `listed` its instruction protos
    in the proto's order as read (before any edit), and `successor_protos()`
    those with control predecessors: what link #1 starts from."""

    def __init__(self, proto, name_of, computation_names: dict[int, str], is_entry: bool = False,
                 same_names: bool = False, successors: list | None = None, listed: list | None = None):
        self.proto = proto
        self._successors = successors  # the protos with control predecessors, if the caller found them
        self.listed = listed           # the instruction protos in the proto's order, before any edit
        self.name: str = proto.name
        self.is_entry = is_entry
        self._name_of = name_of                # xla name → the name as written
        self._same_names = same_names          # XLA renamed nothing: its names are the names
        self._computation_names = computation_names
        self._index: dict[int, object] | None = None  # id → proto, as read back
        self._made: dict[int, Instruction] = {}  # id → Instruction, as read back

    def successor_protos(self) -> list:
        """The protos of the instructions with control predecessors, in the order the text defined them."""
        found = self._successors
        if found is None:
            found = [i for i in self.proto.instructions if i.control_predecessor_ids]
        return sorted(found, key=lambda i: local_id(i.id))

    # -- reading back ---------------------------------------------------------

    def computation_names(self, ids) -> tuple[str, ...]:
        return tuple(self._computation_names[c] for c in ids)

    def _protos(self, missing: int | None = None) -> dict[int, object]:
        """id → instruction proto (protobuf keeps a message's object through
        a sort): made again if the proto gained `missing` since."""
        if self._index is None or (missing is not None and missing not in self._index):
            self._index = {i.id: i for i in self.proto.instructions}
        return self._index

    def get(self, instruction_id: int) -> Instruction:
        found = self._made.get(instruction_id)
        if found is None:
            p = self._protos(instruction_id)[instruction_id]
            name = p.name if self._same_names else self._name_of(self.name, p.name)
            found = self._made[instruction_id] = Instruction(p, name, self)
        return found

    def resolve(self, ids) -> list[Instruction]:
        return [self.get(i) for i in ids]

    @property
    def instructions(self) -> list[Instruction]:
        """Every instruction, in the order the proto lists them now."""
        return [self.get(i.id) for i in self.proto.instructions]

    def instruction(self, name: str) -> Instruction:
        for instr in self.instructions:
            if instr.name == name:
                return instr
        raise KeyError(f"no instruction %{name} in computation %{self.name}")

    def __repr__(self) -> str:
        return f"<Computation %{self.name}: {len(self.proto.instructions)} instructions>"


class Module:
    """The computations of a parsed module that hold a control edge (the
    only ones link #1 looks into), over `parsed` (a `pipeline.reading.parsed.Parsed`)."""

    def __init__(self, parsed, computations: list[Computation], computation_protos: dict[int, object]):
        self.parsed = parsed
        self.name: str = parsed.proto.name
        self.computations = computations
        self._computation_protos = computation_protos  # every computation of the module, by id

    def computation(self, name: str) -> Computation:
        for comp in self.computations:
            if comp.name == name:
                return comp
        raise KeyError(f"no computation %{name} with control edges")

    def root_opcode(self, computation_id: int) -> str | None:
        """The opcode of a computation's ROOT, for any computation of the module."""
        comp = self._computation_protos.get(computation_id)
        if comp is None:
            return None
        return next((i.opcode for i in comp.instructions if i.id == comp.root_id), None)

    def instructions(self) -> Iterator[tuple[Computation, Instruction]]:
        for comp in self.computations:
            for instr in comp.instructions:
                yield comp, instr

    def __repr__(self) -> str:
        return f"<Module {self.name}: {len(self.computations)} computation(s) with control edges>"


class Readers:
    """Link #1's index of data users of each instruction (ids), in program order (those read
    from the proto in the text's order, then those the pass made, in the
    order made), each as the computation stands when first asked for, kept
    true by the pass's edits after. Only what a search asks for is made: the
    readers of an instruction come from an index of the proto's operand ids,
    built on the first search."""

    def __init__(self, index: dict, listed: list, made: set[int]):
        self.index, self.listed, self.made = index, listed, made
        self.map: dict[int, list[int]] = {}
        self.made_readers: dict[int, list[int]] = {}  # of one not asked for yet
        self._readers: dict[int, list[int]] | None = None

    def readers(self, instr: int) -> list[int]:
        """The instructions XLA read that read `instr`, in the text's order."""
        if self._readers is None:
            readers: dict[int, list[int]] = {}
            for p in sorted(self.listed, key=lambda p: local_id(p.id)):
                for o in set(p.operand_ids):
                    readers.setdefault(o, []).append(p.id)
            self._readers = readers
        return [] if instr in self.made else self._readers.get(instr, [])

    def of(self, instr: int) -> list[int]:
        found = self.map.get(instr)
        if found is None:
            readers = self.readers(instr) + self.made_readers.pop(instr, [])
            index = self.index
            found = self.map[instr] = [u for u in readers if instr in index[u].operand_ids]
        return found

    def set(self, instr: int, users: list[int]) -> None:
        self.map[instr] = users

    def remove(self, operand: int, user: int) -> None:
        """`user` reads `operand` no more."""
        if operand in self.map:
            self.map[operand] = [u for u in self.map[operand] if u != user]

    def add(self, operand: int, user: int) -> None:
        if operand in self.map:
            self.map[operand].append(user)
        else:
            self.made_readers.setdefault(operand, []).append(user)

    def bound(self) -> int:
        return len(self.index)
