"""What a control-dep custom-call is, shared by link #1, link #3 and the
printer (spec: "isControlDep — the shared dual-dialect recognizer")."""

from __future__ import annotations

# The custom-call target that carries a reified control edge.
CONTROL_DEP_TARGET = "AwsNeuronControlDep"

# Module frontend attribute that marks a module whose edges were reified.
HAS_CONTROL_DEPS = "has_control_deps"

# The custom-call op of each dialect the recognizer accepts.
CUSTOM_CALL_OPS = frozenset({"stablehlo.custom_call", "mhlo.custom_call"})


def is_control_dep(op) -> bool:
    """True for a `stablehlo.custom_call` or `mhlo.custom_call` (an
    `ir.Operation` or OpView) whose call_target_name is AwsNeuronControlDep."""
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


class ControlDepError(ValueError):
    """A control-dep custom-call that cannot be one: with no operand it has
    no data operand for its result to stand for. The printer refuses it (link
    #3 leaves it alone, as the spec's walk filter does). One line:
    `where: message`; `location` is the op's."""

    def __init__(self, where: str, message: str, location=None):
        self.where, self.message, self.location = where, message, location
        super().__init__(f"{where}: {message}")


def check_operands(op) -> None:
    """Raise ControlDepError for a control-dep call with no operands. A call
    with only the data operand is fine: it carries no edge and aliases D."""
    op = op.operation
    if len(op.operands) == 0:
        raise ControlDepError(
            describe_location(op.location),
            f"an {CONTROL_DEP_TARGET} custom-call with no operands is not a control dependency: "
            "it needs at least the data operand its result stands for", op.location)


def describe_location(location) -> str:
    """`file:line:col` (`line:col` for MLIR parsed from a string), `%name in
    %computation` for a location link #2 made, else MLIR's own printing."""
    from jaxlib.mlir import ir

    if isinstance(location, ir.FileLineColLoc):
        where = f"{location.start_line}:{location.start_col}"
        return where if location.filename == "-" else f"{location.filename}:{where}"
    if isinstance(location, ir.FusedLoc) and location.locations:
        name = getattr(location.locations[0], "name_str", None)
        try:
            computation = ir.StringAttr(location.metadata).value  # handed back as a plain Attribute
        except (TypeError, ValueError):
            computation = None
        if name is not None:
            return f"%{name}" + (f" in %{computation}" if computation else "")
    name = getattr(location, "name_str", None)
    return f"%{name}" if name is not None else str(location)
