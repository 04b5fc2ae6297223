"""Link #1's view of a module XLA parsed: just enough structure to rewire
operands and control edges, over XLA's own `HloModuleProto`.

XLA's HLO IR is not mutable from Python, so this is ours. It holds no copy
of the module: an instruction is made from its proto when the pass first
reaches it, and its operands when it first asks for them (a 30k-instruction
computation with a few hundred edges makes a few thousand objects, not 30k).
What the pass changes goes back into the proto (`passes.hlo.view.write_back`);
everything else of the module stays XLA's, byte for byte.
"""

from __future__ import annotations

from typing import Iterator

from passes.hlo.proto import local_id

_UNREAD = object()  # a field not yet read from the proto


class Instruction:
    """One HLO instruction. Identity is object identity: names are only
    unique within a computation, and passes rewire objects, not names.

    `name` is the name as the input wrote it; `shape` is XLA's `ShapeProto`;
    `id` is XLA's instruction id (None for one the pass made until it is
    written back); `called` the names of the computations it calls, in
    XLA's order; `target` a custom-call's target. Of an instruction read
    from the proto, everything but its name and opcode is read on first use."""

    __slots__ = ("name", "opcode", "id", "_proto", "_computation", "_operands", "_predecessors",
                 "_shape", "_called", "_target")

    def __init__(self, name: str, shape, opcode: str, operands: list[Instruction] | None = None, *,
                 control_predecessors: list[Instruction] | None = None, target: str | None = None):
        """A made instruction (`Computation.get` makes the read ones)."""
        self.name, self.opcode, self.id = name, opcode, None
        self._proto = self._computation = None
        self._operands = [] if operands is None else operands
        self._predecessors = [] if control_predecessors is None else control_predecessors
        self._shape, self._called, self._target = shape, (), target

    @classmethod
    def read(cls, proto, name: str, computation: Computation) -> Instruction:
        instr = cls.__new__(cls)
        instr.name, instr.opcode, instr.id = name, proto.opcode, proto.id
        instr._proto, instr._computation = proto, computation
        instr._operands = instr._predecessors = None
        instr._shape = instr._called = instr._target = _UNREAD
        return instr

    @property
    def operands(self) -> list[Instruction]:
        if self._operands is None:
            self._operands = self._computation.resolve(self._proto.operand_ids)
        return self._operands

    @operands.setter
    def operands(self, value: list[Instruction]) -> None:
        self._operands = value

    @property
    def control_predecessors(self) -> list[Instruction]:
        if self._predecessors is None:
            self._predecessors = self._computation.resolve(self._proto.control_predecessor_ids)
        return self._predecessors

    @control_predecessors.setter
    def control_predecessors(self, value: list[Instruction]) -> None:
        self._predecessors = value

    @property
    def shape(self):
        if self._shape is _UNREAD:
            self._shape = self._proto.shape
        return self._shape

    @shape.setter
    def shape(self, value) -> None:
        self._shape = value

    @property
    def called(self) -> tuple[str, ...]:
        if self._called is _UNREAD:
            self._called = self._computation.computation_names(self._proto.called_computation_ids)
        return self._called

    @property
    def target(self) -> str | None:
        if self._target is _UNREAD:
            self._target = self._proto.custom_call_target or None
        return self._target

    def __repr__(self) -> str:
        return f"<Instruction %{self.name} = {self.opcode}>"


class Computation:
    """One computation of the proto, its instructions made on demand.

    `instructions` (every instruction, in the order the text defined them)
    and `users()` make the whole computation: the pass asks for them only
    where an edge needs a search (a successor with no operand to carry it,
    a start's matching done)."""

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
        self._protos: dict[int, object] | None = None   # id → HloInstructionProto
        self._made: dict[int, Instruction] = {}         # id → Instruction, as reached
        self._readers: dict[int, list[int]] | None = None  # id → ids that read it (made on demand)
        self.added: list[Instruction] = []              # made by a pass, in order
        # Set by link #1 for the write-back: made instructions by the one each
        # goes before, and whether a stand-in moved (definitions then reordered).
        self.inserted: dict[Instruction, list[Instruction]] = {}
        self.reordered = False
        self.cleared: list[Instruction] = []     # control predecessors taken off
        self.rewired: set[Instruction] = set()   # operands changed

    # -- reading ------------------------------------------------------------

    def _index(self) -> dict[int, object]:
        if self._protos is None:
            self._protos = {i.id: i for i in self.proto.instructions}
        return self._protos

    def proto_of(self, instr: Instruction):
        return instr._proto

    def computation_names(self, ids) -> tuple[str, ...]:
        return tuple(self._computation_names[c] for c in ids)

    def get(self, instruction_id: int) -> Instruction:
        found = self._made.get(instruction_id)
        if found is None:
            p = self._index()[instruction_id]
            name = p.name if self._same_names else self._name_of(self.name, p.name)
            found = self._made[instruction_id] = Instruction.read(p, name, self)
        return found

    def readers(self, instruction_id: int) -> list[int]:
        """Ids of the instructions that read it in the proto as XLA wrote it, in the text's order."""
        if self._readers is None:
            readers: dict[int, list[int]] = {}
            for p in sorted(self.proto.instructions, key=lambda p: local_id(p.id)):
                for o in set(p.operand_ids):
                    readers.setdefault(o, []).append(p.id)
            self._readers = readers
        return self._readers.get(instruction_id, [])

    def resolve(self, ids) -> list[Instruction]:
        return [self.get(i) for i in ids]

    def successor_protos(self) -> list:
        """The protos of the instructions with control predecessors, in the order the text defined them."""
        found = self._successors
        if found is None:
            found = [i for i in self.proto.instructions if i.control_predecessor_ids]
        return sorted(found, key=lambda i: local_id(i.id))

    def successors(self) -> list[Instruction]:
        """Instructions with control predecessors, in the order the text defined them."""
        return [self.get(i.id) for i in self.successor_protos()]

    @property
    def root(self) -> Instruction:
        return self.get(self.proto.root_id)

    @property
    def instructions(self) -> list[Instruction]:
        """Every instruction as read, in the text's order, then those a pass made."""
        ordered = sorted(self._index(), key=local_id)
        return [self.get(i) for i in ordered] + self.added

    def instruction(self, name: str) -> Instruction:
        for instr in self.instructions:
            if instr.name == name:
                return instr
        raise KeyError(f"no instruction %{name} in computation %{self.name}")

    def users(self) -> dict[Instruction, list[Instruction]]:
        """Data users of every instruction, in program order, each user once."""
        instructions = self.instructions
        users: dict[Instruction, list[Instruction]] = {i: [] for i in instructions}
        for instr in instructions:
            for operand in dict.fromkeys(instr.operands):
                users.setdefault(operand, []).append(instr)
        return users

    def __repr__(self) -> str:
        return f"<Computation %{self.name}: {len(self.proto.instructions)} instructions>"


class Module:
    """The computations of a parsed module that hold a control edge (the
    only ones link #1 looks into), over `parsed` (a `pipeline.reading.parsed.Parsed`)."""

    def __init__(self, parsed, computations: list[Computation], computation_protos: dict[str, object]):
        self.parsed = parsed
        self.name: str = parsed.proto.name
        self.computations = computations
        self._computation_protos = computation_protos

    def computation(self, name: str) -> Computation:
        for comp in self.computations:
            if comp.name == name:
                return comp
        raise KeyError(f"no computation %{name} with control edges")

    def root_opcode(self, computation: str) -> str | None:
        """The opcode of a computation's ROOT, for any computation of the module."""
        comp = self._computation_protos.get(computation)
        if comp is None:
            return None
        return next((i.opcode for i in comp.instructions if i.id == comp.root_id), None)

    def instructions(self) -> Iterator[tuple[Computation, Instruction]]:
        for comp in self.computations:
            for instr in comp.instructions:
                yield comp, instr

    def __repr__(self) -> str:
        return f"<Module {self.name}: {len(self.computations)} computation(s) with control edges>"
