"""Read control edges back out of a module imported by XLA's importer.

Test support only: a deliberately plain reading (instruction names from
locations) so that tests check link #1 against the real importer without
depending on links #3 and #4.
"""

from __future__ import annotations

import re

from jaxlib.mlir import ir

from passes.control_dep import CONTROL_DEP_TARGET

# loc("name") from a plain import, or loc(fused<"computation">["name", ...])
# from link #2, which keeps the instruction name first.
_NAME = re.compile(r'loc\((?:fused<"[^"]*">\[)?"([^"]+)"')


def value_names(value: ir.Value) -> list[str]:
    """The HLO instruction name(s) behind an MLIR value: a tuple op (the
    import artifact) stands for its elements."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        arg = ir.BlockArgument(value)
        return _names_of(arg.location)
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name in ("stablehlo.tuple", "mhlo.tuple"):
        return [n for operand in op.operands for n in value_names(operand)]
    return _names_of(op.location)


def _names_of(location) -> list[str]:
    m = _NAME.search(str(location))
    return [m.group(1)] if m else []


def is_control_dep_call(op) -> bool:
    if op.name not in ("stablehlo.custom_call", "mhlo.custom_call"):
        return False
    target = op.attributes["call_target_name"]
    return ir.StringAttr(target).value == CONTROL_DEP_TARGET


def control_dep_edges(module: ir.Module) -> set[tuple[str, str]]:
    """(predecessor, successor) for every control-dep call: predecessors are
    all operands but the last; successors are the users of its result,
    looking through chained control-dep calls."""
    edges: set[tuple[str, str]] = set()
    for op in walk(module.operation):
        if not is_control_dep_call(op):
            continue
        preds = [n for v in list(op.operands)[:-1] for n in value_names(v)]
        for succ in _successors(op):
            edges.update((p, succ) for p in preds)
    return edges


def _successors(op) -> list[str]:
    return _successors_of(op.results[0])


def _successors_of(value) -> list[str]:
    names = []
    for use in value.uses:
        user = use.owner
        user = user.operation if hasattr(user, "operation") else user
        if is_control_dep_call(user):
            names.extend(_successors(user))
        elif user.name.endswith((".tuple", ".get_tuple_element")):
            # The importer unpacks a tuple-shaped result before the op that reads it.
            for result in user.results:
                names.extend(_successors_of(result))
        else:
            names.extend(_names_of(user.location))
    return names


def walk(op):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                yield child
                yield from walk(child)
