"""The control edges an MLIR module's control-dep calls carry: what link
#2 delivered, or what the printer will see after link #3 (the blame reads
both)."""

from __future__ import annotations

from jaxlib.mlir import ir

from passes.control_dep import is_control_dep, ordered_ops
from passes.dialects import TUPLE_OPS
from passes.locations import hlo_name


def visible_edges(mlir: ir.Module | ir.Operation, through_tuples: bool = True) -> set[tuple[str | None, str, str]]:
    """(computation, predecessor, successor) that the control-dep calls of a
    module carry. Reading one level into tuple operands gives what link #2
    delivered; reading none gives what the printer will see."""
    edges = set()

    def visit(op):
        if is_control_dep(op) and len(op.operands) > 1:
            preds = set()
            for value in list(op.operands)[:-1]:
                owner = value.owner
                if isinstance(owner, ir.Block):
                    preds.add(hlo_name(ir.BlockArgument(value).location)[0])
                    continue
                owner = owner.operation
                inner = [value]
                if owner.name in TUPLE_OPS:
                    if not through_tuples:
                        # Still bundled: the printer takes the tuple op for the
                        # predecessor, whatever HLO name its location carries.
                        continue
                    inner = list(owner.operands)
                for v in inner:
                    o = v.owner
                    loc = ir.BlockArgument(v).location if isinstance(o, ir.Block) else o.operation.location
                    preds.add(hlo_name(loc)[0])
            for succ in ordered_ops(op):
                name, comp = hlo_name(succ.location)
                edges.update((comp, p, name) for p in preds)
        return ir.WalkResult.ADVANCE

    mlir.operation.walk(visit)
    return edges
