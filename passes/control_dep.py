"""What a control-dep custom-call is and what it orders, shared by link #1,
link #3, link #4 and the chain's accounting, as the binary's one recognizer
`isControlDep` is (docs/link3-contract.md#recognizer-what-a-control-dep-call-is)."""

from __future__ import annotations

import enum

from passes.dialects import CUSTOM_CALL_OPS, STRUCTURAL_OPS
from passes.errors import ChainError

# The custom-call target that carries a reified control edge.
CONTROL_DEP_TARGET = "AwsNeuronControlDep"

# Module frontend attribute that marks a module whose edges were reified, and
# its value: "1", as the decompiled PreserveControlDeps writes it (phase 3),
# only when at least one edge was reified.
HAS_CONTROL_DEPS = "has_control_deps"
HAS_CONTROL_DEPS_VALUE = "1"


class Fate(enum.StrEnum):
    """What became of an HLO control edge: the one vocabulary of link #1's
    account, the verifier's verdict and the report."""

    PRESERVED = "preserved"  # p -> S is a custom-call operand feeding S
    REROUTED = "rerouted"    # carried by other dep edges (listed beside it)
    DROPPED = "dropped"      # not carried, and `reason` says why that loses nothing or is reported
    LOST = "lost"            # not carried: the chain failed it (the verifier's verdict only)


def is_control_dep(op) -> bool:
    """True for a custom_call of any dialect of the table (an `ir.Operation`
    or OpView) whose call_target_name is AwsNeuronControlDep."""
    if op is None:
        return False
    op = op.operation
    if op.name not in CUSTOM_CALL_OPS:
        return False
    try:
        target = op.attributes["call_target_name"]
    except KeyError:
        return False
    return _string_value(target) == CONTROL_DEP_TARGET


def _string_value(attr) -> str | None:
    from jaxlib.mlir import ir

    return attr.value if isinstance(attr, ir.StringAttr) else None


def ordered_ops(call) -> list:
    """The ops a control-dep call orders (printControlDeps' successors): every
    op that reads its result, looking through control-dep calls that take it
    as their data operand and through tuple/get_tuple_element ops, which only
    re-pack it. A call that takes it as a predecessor is ordered by it, not fed."""
    return _readers(call.operation.results[0])


def _readers(value) -> list:
    """The ops that read `value`, through the ops that only pass it on, in
    use order, each once. Depth first on an explicit stack of the values
    whose uses are still to see: chains of tuples are as deep as the input
    makes them."""
    found: dict = {}
    stack, seen = [iter(value.uses)], {value}
    while stack:
        use = next(stack[-1], None)
        if use is None:
            stack.pop()
            continue
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if is_control_dep(user):
            if use.operand_number == len(user.operands) - 1:  # the data operand flows on
                _follow(user.results[0], stack, seen)
        elif user.name in STRUCTURAL_OPS:
            for result in reversed(list(user.results)):  # the first result's readers first
                _follow(result, stack, seen)
        else:
            found.setdefault(user, None)
    return list(found)


def _follow(value, stack: list, seen: set) -> None:
    if value not in seen:
        seen.add(value)
        stack.append(iter(value.uses))


class ControlDepError(ChainError):
    """A control-dep custom-call that cannot be one: with no operand it has
    no data operand for its result to stand for. The printer refuses it (link
    #3 leaves it alone, as the binary's walk filter does:
    docs/link3-contract.md#walk-filter-which-calls-are-rebuilt). `location` is the op's."""

    def __init__(self, message: str, where: str | None = None, location=None):
        super().__init__(message, where)
        self.location = location


def check_operands(op) -> None:
    """Raise ControlDepError for a control-dep call with no operands. A call
    with only the data operand is fine: it carries no edge and aliases D."""
    from passes.locations import describe

    op = op.operation
    if len(op.operands) == 0:
        raise ControlDepError(
            f"an {CONTROL_DEP_TARGET} custom-call with no operands is not a control dependency: "
            "it needs at least the data operand its result stands for", describe(op.location), op.location)
