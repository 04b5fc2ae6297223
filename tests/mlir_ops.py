"""Test support for MLIR modules: every op nested in one, the functions of a
module by name, and a context that lacks MHLO."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from pipeline.xla.native import register_upstream_dialects


def _inside(op) -> list:
    return [inner for region in op.operation.regions for block in region.blocks for inner in block.operations]


def ops(root) -> list:
    """Every op nested in `root` (an op or a module), pre-order: an op, then
    the ops in its regions, then the next op. A stack, not recursion: the
    nesting depth is the input's."""
    found, todo = [], [iter(_inside(root))]
    while todo:
        op = next(todo[-1], None)
        if op is None:
            todo.pop()
            continue
        found.append(op.operation)
        todo.append(iter(_inside(op)))
    return found


def functions(module: ir.Module) -> dict[str, ir.Operation]:
    """The module's `func.func`s by name."""
    return {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in module.body.operations if op.operation.name == "func.func"}


def function(module: ir.Module, name: str) -> ir.Operation:
    """The module's `func.func` named `name` (KeyError if it has none)."""
    return functions(module)[name]


def stablehlo_only_context() -> ir.Context:
    """func and the upstream dialects, StableHLO, and no MHLO."""
    registry = ir.DialectRegistry()
    register_upstream_dialects(registry)
    context = ir.Context()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    assert not context.is_registered_operation("mhlo.custom_call")
    return context
