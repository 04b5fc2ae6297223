"""Link #3, `flatten-control-dep-tuple-operands` (MHLO) and
`stablehlo-flatten-control-dep-tuple-operands` (StableHLO).

XLA's importer hands a tuple-shaped predecessor to a control-dep custom-call
as a tuple op (or a get_tuple_element of one). This pass rewrites each such
call to take the tuple's elements as plain operands, so that the printer sees
one operand per predecessor. One algorithm; the `dialect` field, a row of
`passes.dialects` (the op names it matches and its mnemonic), is all that
differs between the twins (docs/link3-contract.md#mhlo-and-stablehlo-twins).

Its options (`scope`, `keep_attributes`, `until_unchanged`) are declared once,
as fields made by `passes.options.option`: hlo2penguin-opt's flags, its
pipeline syntax (`{scope=all keep-attributes=true}`), the check of a value
and the chain's options all come from those declarations.

Where the pass departs from the binary, and why, is set out in one place,
docs/link3-contract.md#divergences-from-the-binary; each point is pinned by
a lit test.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from passes.control_dep import CONTROL_DEP_TARGET, is_control_dep
from passes.dialects import FUNC_FUNC, MHLO, STABLEHLO, Dialect
from passes.errors import ChainError
from passes.options import check, option

SCOPES = ("main", "first", "all")


def _custom_call_class(dialect: Dialect):
    """The OpView class of the dialect's custom_call: the walk filters on it
    in C++, so Python sees only custom calls, not every op of the module."""
    from jaxlib.mlir.dialects import mhlo, stablehlo

    return {MHLO: mhlo, STABLEHLO: stablehlo}[dialect].CustomCallOp


class FlattenError(ChainError):
    """The pass cannot run on this module; the message says what to do."""


@dataclass
class FlattenResult:
    changed: bool = False
    rewritten: int = 0  # control-dep calls rebuilt with flat operands
    erased: int = 0     # tuple / get_tuple_element ops erased once unused


@dataclass(frozen=True)
class FlattenControlDepTupleOperands:
    """The pass. `run(module)` works on an `ir.Module` or its operation; the
    instance is also a callable for `PassManager.add` (see `add_to`)."""

    dialect: Dialect = MHLO  # not an option: each twin's mnemonic picks its own
    scope: str = option("main", choices=SCOPES,
                        help="functions to walk: main (default: the function named main), first (the binary's "
                             "reading), all (what hlo2penguin's chain walks: after symbol-dce, main and the "
                             "functions it calls)")
    keep_attributes: bool = option(
        False, help="rebuilt calls keep their attributes (default: only call_target_name, as the binary)")
    # Run again until nothing changes: each run flattens one level (the
    # binary's rewrite), and a tuple of tuples (link #1's --bundle of a
    # tuple-shaped predecessor) needs two. The chain always does.
    until_unchanged: bool = option(
        False, help="run link #3 again until nothing changes, as hlo2penguin does (default: once, "
                    "one level of tuples, as the binary)")

    def __post_init__(self):
        check(self, FlattenError)  # "unknown scope 'x': choose one of main, first, all"

    @property
    def argument(self) -> str:
        return self.dialect.flatten_mnemonic

    def add_to(self, pm) -> None:
        """Add to a `PassManager` anchored on builtin.module."""
        pm.add(self, name=type(self).__name__, argument=self.argument,
               description=f"flatten tuple operands of {CONTROL_DEP_TARGET} calls ({self.dialect.name})")

    def __call__(self, op, pass_) -> None:  # PassManager entry point
        self.run(op)

    def run(self, module) -> FlattenResult:
        op = module.operation
        context = op.context
        if not context.is_registered_operation(self.dialect.custom_call):
            raise FlattenError(
                f"{self.argument}: '{self.dialect.custom_call}' is not registered in this MLIR context; "
                f"load the {self.dialect.name.upper()} dialect first (or run the "
                f"{'stablehlo-' if self.dialect is MHLO else ''}flatten twin for the module's dialect)")
        total = FlattenResult()
        calls = [call for fn in self.functions(op) for call in self.collect(fn)]
        while True:
            rebuilt: list = []
            result = self.replace_tuples(calls, context, rebuilt)
            total.changed |= result.changed
            total.rewritten += result.rewritten
            total.erased += result.erased
            if not (self.until_unchanged and result.changed):
                return total
            # The next run's walk would find only calls this run rebuilt (no
            # other call's operands changed), in the same order: look at those.
            calls = [call for call in rebuilt if self.bundled(call)]

    # the binary's getMainFunction, with the scope divergence documented above
    # (docs/link3-contract.md#scope-which-functions-are-walked)
    def functions(self, module_op) -> list:
        funcs = [o.operation for o in module_op.regions[0].blocks[0].operations
                 if o.operation.name == FUNC_FUNC]
        if self.scope == "all":
            return funcs
        if self.scope == "first":
            return funcs[:1]
        main = [f for f in funcs if ir.StringAttr(f.attributes["sym_name"]).value == "main"]
        if not main:
            names = ", ".join(ir.StringAttr(f.attributes["sym_name"]).value for f in funcs) or "none"
            raise FlattenError(f"{self.argument}: the module has no function named 'main' "
                               f"(functions: {names}); use scope=first or scope=all")
        return main

    # the binary's walk filter: control-dep calls that still have a tuple/GTE operand
    # (docs/link3-contract.md#walk-filter-which-calls-are-rebuilt)
    def collect(self, fn) -> list:
        hits = []
        bundled = self.bundled

        def visit(op):
            if is_control_dep(op) and bundled(op):
                hits.append(op.operation)
            return ir.WalkResult.ADVANCE

        fn.walk(visit, ir.WalkOrder.PRE_ORDER, op_class=_custom_call_class(self.dialect))
        return hits

    def bundled(self, call) -> bool:
        """A predecessor operand of `call` is a tuple or get_tuple_element's result."""
        tupleish, block = (self.dialect.tuple, self.dialect.get_tuple_element), ir.Block
        for value in list(call.operands)[:-1]:
            owner = value.owner  # an op (its view) or, for a block argument, the block
            if type(owner) is not block and owner.name in tupleish:
                return True
        return False

    # the binary's replaceTuples (docs/link3-contract.md#operand-rewrite-replacetuples,
    # docs/link3-contract.md#rebuilt-call, docs/link3-contract.md#clean-up)
    def replace_tuples(self, calls: list, context, rebuilt: list | None = None) -> FlattenResult:
        """Each of `calls` rebuilt with flat operands (appended to `rebuilt`)."""
        result = FlattenResult(changed=bool(calls))
        bypassed: dict[ir.Operation, None] = {}  # ordered set, each op once
        for call in calls:
            flat = self.flat_operands(call, bypassed)
            with context, call.location, ir.InsertionPoint(call):
                attributes = ({name: call.attributes[name] for name in call.attributes} if self.keep_attributes
                              else {"call_target_name": ir.StringAttr.get(CONTROL_DEP_TARGET)})
                # Every result type of the original: link #1 makes one, but a call
                # with more (e.g. after mhlo-flatten-tuple split a tuple result)
                # must not be erased while a result is still in use (a crash).
                new = ir.Operation.create(self.dialect.custom_call, results=[r.type for r in call.results],
                                          operands=flat, attributes=attributes)
            for old, replacement in zip(call.results, new.results):
                old.replace_all_uses_with(replacement)
            call.erase()
            if rebuilt is not None:
                rebuilt.append(new)
            result.rewritten += 1
        result.erased = _erase_unused(list(bypassed))
        return result

    def flat_operands(self, call, bypassed: dict) -> list:
        *preds, data = list(call.operands)
        flat = []
        for value in preds:
            op = _defining_op(value)
            name = op.name if op is not None else None
            if name == self.dialect.tuple:
                flat.extend(op.operands)
                bypassed[op] = None
            elif name == self.dialect.get_tuple_element:
                source = _defining_op(op.operands[0])
                bypassed[op] = None
                if source is None:  # a block argument: nothing to look through
                    flat.append(op.operands[0])
                elif source.name == self.dialect.tuple:
                    flat.extend(source.operands)  # all elements, not only the indexed one
                    bypassed[source] = None
                else:
                    flat.extend(source.results)
            else:
                flat.append(value)
        flat.append(data)  # the data operand is not a predecessor: never unpacked
        return flat


def _defining_op(value):
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation


def _erase_unused(ops: list) -> int:
    """Erase each op once it has no use; repeat, since erasing a
    get_tuple_element can free the tuple it read. An erased op is never
    touched again (the bindings crash on that)."""
    erased, pending = 0, ops
    while True:
        still = []
        for op in pending:
            if all(not _has_uses(r) for r in op.results):
                op.erase()
                erased += 1
            else:
                still.append(op)
        if len(still) == len(pending):
            return erased
        pending = still


def _has_uses(value) -> bool:
    for _ in value.uses:
        return True
    return False
