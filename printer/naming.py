"""Link #4's names: the Penguin name and computation each MLIR op prints
with, and for each helper op of an instruction the op its dependency edges go
to (`plan_names`, which returns a `NamePlan`).

HLO names are unique per computation, not per MLIR function: the importer
inlines conditional branches, while conditions and bodies, reducers… into
regions of their caller's function. So an op is identified by (computation,
name) and by the region instance it sits in (a computation inlined twice,
a reducer shared by two reduces, is two instances of the same
instructions: both keep their names). That identity is an `InstructionKey`.

Where the importer turns one HLO instruction into several ops (a shape
constant beside `rng`, a concatenate beside `dynamic_reshape`, the op an
async start wraps in its region or in a function of its own, the
get_tuple_elements it makes at a tuple-shaped op's location), the op that
yields the instruction's value takes the HLO name: the outermost, not a
tuple/get_tuple_element, whose result is used outside the instruction (the
last such). The others get `name:kind` (`rng0:constant`), which no HLO
name can be: HLO names are `[A-Za-z0-9_][A-Za-z0-9_.-]*`. An op with no
HLO name gets `kind#N`, which none can be either.

The plan is made in three steps (`_Planner`): group every op under the key
of its instruction instance, block by block; fold a function made for one
instruction (copy-start's `@copy_`) into the group of the op that refers to
it; then, in each group, pick the op that takes the HLO name and derive the
others' names and edge targets.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import NamedTuple

from jaxlib.mlir import ir

from passes.control_dep import is_control_dep
from passes.dialects import CUSTOM_CALL_OPS, FUNC_FUNC, RETURN_OPS, STRUCTURAL_OPS
from passes.locations import hlo_name


class InstructionKey(NamedTuple):
    """One instance of one HLO instruction: the ops that carry it share a key.

    `instance` tells two instances of one computation apart: a token per
    block the computation was inlined into, or `("function", symbol)` where
    the function stands in for the computation (a plain `loc("name")`) or
    was made for the one instruction."""

    name: str
    computation: str | None
    instance: object

    @property
    def instruction(self) -> tuple[str, str | None]:
        """(name, computation): the HLO instruction, whichever its instance."""
        return self.name, self.computation


@dataclass
class NamePlan:
    """Link #4's names for one module.

    names: every op the printer names → (Penguin name, computation): the HLO
        name, `name:kind` or `kind#N`, and the HLO computation (None where the
        op's location names none). Not the returns, nor the control-dep calls,
        which are no Penguin instructions. Plain tuples, not a NamedTuple:
        there is one per op, alive the whole print, and the garbage collector
        stops tracking a tuple of strings but not a NamedTuple (one made the
        planning of a 30k-op module about a fifth slower).
    dep_target: each helper op of an instruction (one that does not take the
        HLO name, and is not a tuple/get_tuple_element) → the op that takes
        it, where the helper's dependency edges go. Empty for most modules."""

    names: dict[ir.Operation, tuple[str, str | None]]
    dep_target: dict[ir.Operation, ir.Operation]


def plan_names(module: ir.Module, hlo_names=None) -> NamePlan:
    """The names of every op of `module` (see the module's docstring).

    `hlo_names` is the importer's table of keys (`pipeline.xla.importer.HloNames`)
    for a module still at its key locations; None reads the locations themselves."""
    planner = _Planner(hlo_names)
    planner.group(module)
    planner.fold_wrappers()
    return planner.plan()


class _Planner:
    def __init__(self, hlo_names=None):
        self.name_of = hlo_names.of if hlo_names is not None else (lambda op: hlo_name(op.location))
        self.names: dict[ir.Operation, tuple[str, str | None]] = {}
        self.groups: dict[InstructionKey, list] = {}     # key → its ops, in printing order
        self.inner: set = set()          # ops nested in an op (or function) of their own instruction
        self.wrappers: dict[str, InstructionKey] = {}    # function symbol → key, for a function made for one instruction
        self.calls: set = set()          # the control-dep calls, which are no Penguin instructions
        self.unnamed = itertools.count(1)  # N of the next `kind#N`
        self.instances = itertools.count()  # a fresh token per block: one instance of a computation

    # -- 1. group ops by instruction instance ----------------------------------

    def group(self, module: ir.Module) -> None:
        for fn in module.body.operations:
            fn = fn.operation
            if fn.name != FUNC_FUNC:
                continue
            symbol = ir.StringAttr(fn.attributes["sym_name"]).value
            name, computation = self.name_of(fn)
            key = None
            if name is not None and computation is not None:  # made for one instruction (copy-start's @copy_)
                key = self.wrappers[symbol] = InstructionKey(name, computation, ("function", symbol))
            self.visit(fn.regions[0].blocks[0], symbol, key)

    def visit(self, block: ir.Block, fn_name: str, enclosing: InstructionKey | None) -> None:
        """Group the ops of `block` (of function `fn_name`) and of the blocks
        nested in them, in program order; `enclosing` is the key of the op
        (or function) whose region this is. Each block is one instance (its
        own count, taken when the block is reached). On an explicit stack of
        what is left (a block's ops; an op's blocks): regions nest as deep
        as the module makes them."""
        name_of, names, groups, calls, inner = self.name_of, self.names, self.groups, self.calls, self.inner
        # (ops left, the key of the op whose region it is, the block's instance) or (blocks left, their op's key, None)
        work = [(iter(block.operations), enclosing, next(self.instances))]
        while work:
            items, enclosing, instance = work[-1]
            op = next(items, None)
            if op is None:
                work.pop()
                continue
            if instance is None:  # a nested block: its ops next, a new instance
                work.append((iter(op.operations), enclosing, next(self.instances)))
                continue
            op = op.operation
            op_name = op.name
            if op_name in RETURN_OPS:
                continue
            if op_name in CUSTOM_CALL_OPS and is_control_dep(op):  # the recognizer reads attributes: calls only
                calls.add(op)
            name, computation = name_of(op)
            key = None
            if name is None:
                if op not in calls:
                    names[op] = (f"{_kind(op)}#{next(self.unnamed)}", None)
            else:
                if enclosing is not None and enclosing.instruction == (name, computation):
                    key = enclosing
                    inner.add(op)
                elif computation is None:  # a plain loc("name"): the function stands in for the computation
                    key = InstructionKey(name, None, ("function", fn_name))
                else:
                    key = InstructionKey(name, computation, instance)
                groups.setdefault(key, []).append(op)
            if len(op.regions):
                work.append((iter([child for region in op.regions for child in region.blocks]), key, None))

    # -- 2. a function made for one instruction joins the op that refers to it --

    def fold_wrappers(self) -> None:
        wrappers, groups = self.wrappers, self.groups
        wrapped_instructions = {key.instruction for key in wrappers.values()}
        for key in [k for k in groups if k.instruction in wrapped_instructions]:
            ops = groups.get(key)
            for op in list(ops or ()):
                for attr_name in op.attributes:
                    attr = op.attributes[attr_name]  # downcast by the bindings
                    if not isinstance(attr, ir.FlatSymbolRefAttr):
                        continue
                    wrapped = wrappers.get(attr.value)
                    if (wrapped is not None and wrapped.instruction == key.instruction and wrapped in groups
                            and wrapped != key):
                        moved = groups.pop(wrapped)
                        self.inner.update(moved)
                        ops.extend(moved)

    # -- 3. in each group, the op that takes the HLO name, and the others' -------

    def plan(self) -> NamePlan:
        names, calls = self.names, self.calls
        dep_target: dict = {}
        for key, ops in self.groups.items():
            name, computation = key.name, key.computation
            if len(ops) == 1:  # most instructions: one op, which takes the name
                if ops[0] not in calls:
                    names[ops[0]] = (name, computation)
                continue
            primary = _value_op(ops, self.inner, calls)
            taken: dict[str, int] = {}
            for op in ops:
                if op in calls:
                    continue
                if primary is not None and op == primary:
                    names[op] = (name, computation)
                    continue
                derived = f"{name}:{_kind(op)}"
                uses = taken[derived] = taken.get(derived, 0) + 1
                names[op] = (derived + (f".{uses}" if uses > 1 else ""), computation)
                if primary is not None and op.name not in STRUCTURAL_OPS:
                    # A tuple/get_tuple_element is looked through, not redirected: a
                    # predecessor still bundled in a tuple stays the tuple (link #3's case).
                    dep_target[op] = primary
        return NamePlan(names, dep_target)


def _kind(op: ir.Operation) -> str:
    """The last part of the op's name, for the names of an instruction's helper ops."""
    return op.name.rsplit(".", 1)[-1]


def _value_op(ops: list, inner: set, calls: set):
    """Among the ops carrying one instruction's name, the one that yields its
    value (None if only importer-made tuples/get_tuple_elements beside a
    control-dep call carry it). `calls` holds the control-dep calls."""
    printable = [op for op in ops if op not in calls]
    outer = [op for op in printable if op not in inner] or printable
    if len(printable) < len(ops) or any(op.name not in STRUCTURAL_OPS for op in printable):
        candidates = [op for op in outer if op.name not in STRUCTURAL_OPS]  # tuples/gtes are the importer's
    else:
        candidates = outer  # the HLO instruction is itself a tuple or get-tuple-element
    if not candidates:
        return None
    members = set(ops)

    def escapes(op) -> bool:
        for result in op.results:
            for use in result.uses:
                user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
                if user not in members:
                    return True
        return False

    escaping = [op for op in candidates if escapes(op)]
    return (escaping or candidates)[-1]
