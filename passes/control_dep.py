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
