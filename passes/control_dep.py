"""What a control-dep custom-call is, shared by link #1, link #3 and the
printer (spec: "isControlDep — the shared dual-dialect recognizer")."""

# The custom-call target that carries a reified control edge.
CONTROL_DEP_TARGET = "AwsNeuronControlDep"

# Module frontend attribute that marks a module whose edges were reified.
HAS_CONTROL_DEPS = "has_control_deps"
