"""What link #1 (`passes.hlo.preserve_control_deps`) asks of an instruction
and says of an edge. An instruction here is XLA's `HloInstructionProto`
(`passes.hlo.proto`): the tests read its `opcode`, `shape` and, for an
`async-start`, `called_computation_ids`; the walks of a computation
(`structural_sources`, `depends_on`) go by id, over an index id → proto,
with an explicit stack."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from passes.control_dep import Fate
from passes.hlo import proto as hlo_proto


class EdgeFate(NamedTuple):
    """Link #1's own account of one control edge: preserved, rerouted or dropped."""

    computation: str
    predecessor: str
    successor: str
    fate: Fate
    # The (predecessor, successor) edges actually emitted for this one.
    emitted: tuple[tuple[str, str], ...] = ()
    reason: str = ""

    def __str__(self) -> str:
        edge = f"%{self.computation}: %{self.predecessor} -> %{self.successor}"
        if self.fate is Fate.PRESERVED:
            return f"{edge}: preserved"
        if self.fate is Fate.REROUTED:
            via = ", ".join(f"%{p} -> %{s}" for p, s in self.emitted)
            return f"{edge}: rerouted to {via} ({self.reason})"
        return f"{edge}: dropped ({self.reason})"


@dataclass
class PreserveResult:
    changed: bool = False
    edges: list[EdgeFate] = field(default_factory=list)

    def count(self, fate: Fate) -> int:
        return sum(1 for e in self.edges if e.fate is fate)

    def summary(self) -> str:
        return (f"{len(self.edges)} control edge(s): {self.count(Fate.PRESERVED)} preserved, "
                f"{self.count(Fate.REROUTED)} rerouted, {self.count(Fate.DROPPED)} dropped")


# Starts that import as `!stablehlo.future`, a legal custom-call operand
# (measured with jaxlib 0.10.2): the collective start opcodes, and an async
# wrapper (`async-start, calls=`, or XLA's `reduce-scatter-start`-style
# spelling of one) around these collectives. An async-start around anything
# else, all-reduce and all-gather included, imports as `!mhlo.async_bundle`.
_FUTURE_STARTS = frozenset({"all-reduce-start", "all-gather-start", "collective-permute-start"})
_FUTURE_WRAPPED = frozenset({"reduce-scatter", "all-to-all", "collective-broadcast"})


def begins_async_pair(instr) -> bool:
    """A `*-start` (or async-update, send, recv): only its `*-done` may read it."""
    return opens_async_pair(instr.opcode)


def opens_async_pair(opcode: str) -> bool:
    """`begins_async_pair`, by opcode."""
    return opcode.endswith("-start") or opcode in ("async-update", "send", "recv")


def has_no_value_after_import(instr, module=None) -> bool:
    """Measured with jaxlib 0.10.2: async-start, async-update, copy-start and
    the other generic `*-start` ops import as `!mhlo.async_bundle`, which the
    custom-call verifier rejects; send/recv hold a u32[] context with no MLIR
    value (a tuple view of it makes the importer abort the process). The
    exceptions import as a future (see `imports_as_future`)."""
    return begins_async_pair(instr) and not imports_as_future(instr, module)


def imports_as_future(instr, module=None) -> bool:
    """Whether `instr` imports as `!stablehlo.future`: an operand a custom-call
    takes, but no tuple holds. `module` finds what an `async-start` calls;
    without it such a start counts as no future."""
    if instr.opcode in _FUTURE_STARTS:
        return True
    if instr.opcode.endswith("-start") and instr.opcode[:-len("-start")] in _FUTURE_WRAPPED:
        return True
    if instr.opcode != "async-start" or module is None or not instr.called_computation_ids:
        return False
    return module.root_opcode(instr.called_computation_ids[0]) in _FUTURE_WRAPPED


def is_structural(instr) -> bool:
    """Tuples and get-tuple-elements: XLA's importer folds them into the
    values they pack or unpack, so they have no op of their own after import."""
    return instr.opcode in ("tuple", "get-tuple-element")


def is_buffer(instr) -> bool:
    """A buffer value (`b(f32[16])`): a control-dep call cannot stand for one
    (measured with jaxlib 0.10.2: the imported custom_call does not verify,
    "buffer output is not used in output_operand_alias")."""
    return instr.shape.element_type == hlo_proto.BUFFER


# Predecessors that may not stand for themselves: a value made of others, or ready before all.
NOT_PLAIN = frozenset({"tuple", "get-tuple-element", "parameter"})


def looked_through(p, values: list, computation: str, name) -> tuple[list, list[str], str]:
    """A predecessor `p` that is a parameter, or a tuple / get-tuple-element
    made of `values` (its structural sources): the values that stand in for
    it, the reasons, and why it is dropped ("" if it is not). `name` gives
    an instruction's name as written."""
    reasons: list[str] = []
    params = [v for v in values if v.opcode == "parameter"]
    if params:
        # A parameter is ready before any instruction of its computation
        # runs: the decompiled pass skips such a predecessor (phase 1), in
        # every computation. In a while body/condition or a branch it has
        # no value of its own after import either, and in a reducer its
        # value is the enclosing op's block argument.
        implied = (f"implied: {', '.join('%' + name(v) for v in params)} is a parameter of "
                   f"%{computation}, ready before every instruction in it")
        values = [v for v in values if v.opcode != "parameter"]
        if not values:
            return [], [], implied
        reasons.append(implied)
    if p.opcode in ("tuple", "get-tuple-element"):  # not its own source
        if not values:
            return [], [], f"%{name(p)} is an empty tuple: it orders nothing"
        reasons.append(f"%{name(p)} ({p.opcode}) is no op after import; "
                       f"{', '.join('%' + name(v) for v in values)} stand(s) in")
    return values, reasons, ""


def pins_its_operands(instr) -> bool:
    """XLA requires `*-done`/`*-update` to read their `*-start` directly."""
    return instr.opcode.endswith("-done") or instr.opcode == "async-update"


def structural_sources(index: dict, p: int) -> list[int]:
    """The ops behind a tuple / get-tuple-element `p` (ids; `index`: id → proto), in order, once."""
    found: dict[int, None] = {}
    seen: set[int] = set()  # a value met again adds nothing: its sources are in `found` already
    stack = [iter((p,))]
    while stack:
        for v in stack[-1]:
            if v in seen:
                continue
            seen.add(v)
            instr = index[v]
            if instr.opcode == "get-tuple-element":
                stack.append(iter(instr.operand_ids[:1]))
                break
            if instr.opcode == "tuple":
                stack.append(iter(instr.operand_ids))
                break
            found[v] = None
        else:
            stack.pop()
    return list(found)


def depends_on(index: dict, instr: int, ancestor: int) -> bool:
    """Whether `instr` transitively reads or waits for `ancestor`."""
    seen, stack = set(), [instr]
    while stack:
        node = index[stack.pop()]
        for dep in (*node.operand_ids, *node.control_predecessor_ids):
            if dep == ancestor:
                return True
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return False
