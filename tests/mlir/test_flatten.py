"""Link #3 through its Python API: `FlattenControlDepTupleOperands` on small
MLIR modules, in both dialects (the MHLO pass and its StableHLO twin).

Every module is written in text with `{d}` standing for the dialect, so each
case runs once per twin. Some tests exist to crash: the MLIR bindings
segfault when an erased op is touched, so a pass that erased an op twice, or
kept a handle to one, takes the whole pytest process down (loudly).
"""

from __future__ import annotations

import pytest
from jaxlib.mlir import ir, passmanager

from mlir_ops import function, ops, stablehlo_only_context
from passes.control_dep import CONTROL_DEP_TARGET, is_control_dep
from passes.mlir import (MHLO, STABLEHLO, FlattenControlDepTupleOperands, FlattenError,
                         FlattenResult)
from pipeline.xla.mlir_context import make_context, register_passes

TWINS = pytest.mark.parametrize("dialect", [STABLEHLO, MHLO], ids=lambda d: d.name)

T2 = "tuple<tensor<f32>, tensor<i32>>"


def parse(text: str, dialect, context: ir.Context | None = None) -> ir.Module:
    module = ir.Module.parse(text.replace("{d}", dialect.name), context=context or make_context())
    assert module.operation.verify()
    return module


def run(module: ir.Module, dialect, **options) -> FlattenResult:
    result = FlattenControlDepTupleOperands(dialect, **options).run(module)
    assert module.operation.verify()
    return result


def control_deps(root) -> list:
    return [op for op in ops(root) if is_control_dep(op)]


def describe(value) -> str:
    """'%argN' for a function argument, 'op#i' for a result: enough to compare
    operand lists structurally."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return f"arg{ir.BlockArgument(value).arg_number}"
    op = owner.operation
    return f"{op.name}#{ir.OpResult(value).result_number}"


def operands(call) -> list[str]:
    return [describe(v) for v in call.operands]


def count(root, name: str) -> int:
    return sum(1 for op in ops(root) if op.name == name)


# --------------------------------------------------------------------------
# Modules
# --------------------------------------------------------------------------

TUPLE_OPERAND = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c = {{d}}.custom_call @AwsNeuronControlDep(%t, %d) {{backend_config = "", has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""

TUPLE_AMONG_PLAIN = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %p: tensor<2xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c = {{d}}.custom_call @AwsNeuronControlDep(%p, %t, %d) {{has_side_effect = true}} : (tensor<2xf32>, {T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""

GTE_OF_TUPLE = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %g = {{d}}.get_tuple_element %t[1] : ({T2}) -> tensor<i32>
  %c = {{d}}.custom_call @AwsNeuronControlDep(%g, %d) {{has_side_effect = true}} : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""

GTE_OF_OTHER_OP = f"""
func.func @main(%d: tensor<4xf32>) -> tensor<4xf32> {{
  %x = {{d}}.custom_call @producer() : () -> {T2}
  %g = {{d}}.get_tuple_element %x[0] : ({T2}) -> tensor<f32>
  %c = {{d}}.custom_call @AwsNeuronControlDep(%g, %d) {{has_side_effect = true}} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""

GTE_OF_ARGUMENT = f"""
func.func @main(%x: {T2}, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %g = {{d}}.get_tuple_element %x[1] : ({T2}) -> tensor<i32>
  %c = {{d}}.custom_call @AwsNeuronControlDep(%g, %d) {{has_side_effect = true}} : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""

SHARED_TUPLE = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c1 = {{d}}.custom_call @AwsNeuronControlDep(%t, %d) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  %c2 = {{d}}.custom_call @AwsNeuronControlDep(%t, %c1) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c2 : tensor<4xf32>
}}
"""

# One tuple reached three ways: directly, and through two GTEs, by two calls.
SHARED_EVERY_WAY = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %g0 = {{d}}.get_tuple_element %t[0] : ({T2}) -> tensor<f32>
  %g1 = {{d}}.get_tuple_element %t[1] : ({T2}) -> tensor<i32>
  %c1 = {{d}}.custom_call @AwsNeuronControlDep(%t, %g0, %d) {{has_side_effect = true}} : ({T2}, tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %c2 = {{d}}.custom_call @AwsNeuronControlDep(%g1, %g0, %c1) {{has_side_effect = true}} : (tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %c2 : tensor<4xf32>
}}
"""

TUPLE_ALSO_RETURNED = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> (tensor<4xf32>, {T2}) {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c = {{d}}.custom_call @AwsNeuronControlDep(%t, %d) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c, %t : tensor<4xf32>, {T2}
}}
"""

ALREADY_FLAT = """
func.func @main(%a: tensor<f32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %c = {d}.custom_call @AwsNeuronControlDep(%a, %d) {has_side_effect = true} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
"""

NOT_A_CONTROL_DEP = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c = {{d}}.custom_call @SomethingElse(%t, %d) : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""

NESTED_TUPLE = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %e: tensor<i8>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %u = {{d}}.tuple %t, %e : tuple<{T2}, tensor<i8>>
  %c = {{d}}.custom_call @AwsNeuronControlDep(%u, %d) {{has_side_effect = true}} : (tuple<{T2}, tensor<i8>>, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""

# A control-dep call inside a while body, predecessors from the outer scope.
IN_A_WHILE_BODY = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %w:2 = {{d}}.while(%i = %b, %v = %d) : tensor<i32>, tensor<4xf32>
  cond {{
    %p = {{d}}.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    {{d}}.return %p : tensor<i1>
  }} do {{
    %c = {{d}}.custom_call @AwsNeuronControlDep(%t, %v) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
    %n = {{d}}.negate %c : tensor<4xf32>
    {{d}}.return %i, %n : tensor<i32>, tensor<4xf32>
  }}
  return %w#1 : tensor<4xf32>
}}
"""

# A private function first (as XLA's importer often leaves it), then main.
HELPER_FIRST = f"""
func.func private @helper(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c = {{d}}.custom_call @AwsNeuronControlDep(%t, %d) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c = {{d}}.custom_call @AwsNeuronControlDep(%t, %d) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  %r = func.call @helper(%a, %b, %c) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}}
func.func private @last(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c = {{d}}.custom_call @AwsNeuronControlDep(%t, %d) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""

NO_MAIN = TUPLE_OPERAND.replace("@main", "@entry")


# --------------------------------------------------------------------------
# The rewrite
# --------------------------------------------------------------------------


@TWINS
def test_tuple_operand_is_replaced_by_its_elements(dialect):
    module = parse(TUPLE_OPERAND, dialect)
    result = run(module, dialect)
    assert result == FlattenResult(changed=True, rewritten=1, erased=1)
    [call] = control_deps(module)
    assert call.name == dialect.custom_call
    assert operands(call) == ["arg0", "arg1", "arg2"]  # predecessors in order, data last
    assert count(module, dialect.tuple) == 0
    # The result keeps its type and replaces the old one where it was used.
    assert str(call.results[0].type) == "tensor<4xf32>"
    [ret] = [op for op in ops(module) if op.name == "func.return"]
    assert ret.operands[0] == call.results[0]


@TWINS
def test_operand_order_is_kept_around_an_inlined_tuple(dialect):
    module = parse(TUPLE_AMONG_PLAIN, dialect)
    assert run(module, dialect).rewritten == 1
    [call] = control_deps(module)
    assert operands(call) == ["arg2", "arg0", "arg1", "arg3"]


@TWINS
def test_rebuilt_call_carries_only_call_target_name_by_default(dialect):
    module = parse(TUPLE_OPERAND, dialect)
    run(module, dialect)
    [call] = control_deps(module)
    assert list(call.attributes) == ["call_target_name"]
    assert ir.StringAttr(call.attributes["call_target_name"]).value == CONTROL_DEP_TARGET


@TWINS
def test_keep_attributes_keeps_the_original_attributes(dialect):
    module = parse(TUPLE_OPERAND, dialect)
    run(module, dialect, keep_attributes=True)
    [call] = control_deps(module)
    names = set(call.attributes)
    assert {"call_target_name", "has_side_effect", "backend_config"} <= names
    assert ir.BoolAttr(call.attributes["has_side_effect"]).value is True
    assert operands(call) == ["arg0", "arg1", "arg2"]


@TWINS
def test_location_of_the_call_is_kept(dialect):
    text = TUPLE_OPERAND.replace("-> tensor<4xf32>\n  return", '-> tensor<4xf32> loc("succ.control-dep")\n  return')
    module = parse(text, dialect)
    run(module, dialect)
    [call] = control_deps(module)
    assert str(call.location) == 'loc("succ.control-dep")'


@TWINS
def test_gte_of_a_tuple_brings_every_element_not_only_the_indexed_one(dialect):
    module = parse(GTE_OF_TUPLE, dialect)
    result = run(module, dialect)
    assert (result.rewritten, result.erased) == (1, 2)  # the GTE, then the tuple it freed
    [call] = control_deps(module)
    assert operands(call) == ["arg0", "arg1", "arg2"]
    assert count(module, dialect.tuple) == count(module, dialect.get_tuple_element) == 0


@TWINS
def test_gte_of_another_op_brings_every_result_of_that_op(dialect):
    module = parse(GTE_OF_OTHER_OP, dialect)
    result = run(module, dialect)
    assert (result.rewritten, result.erased) == (1, 1)
    [call] = control_deps(module)
    # The producer has one (tuple-typed) result: it is what the call reads now.
    assert operands(call) == [f"{dialect.custom_call}#0", "arg0"]
    producer = call.operands[0].owner.operation
    assert ir.StringAttr(producer.attributes["call_target_name"]).value == "producer"
    assert count(module, dialect.get_tuple_element) == 0


@TWINS
def test_gte_of_a_block_argument_passes_the_argument_through(dialect):
    """The binary dereferences the missing defining op here; we must not crash."""
    module = parse(GTE_OF_ARGUMENT, dialect)
    result = run(module, dialect)
    assert (result.rewritten, result.erased) == (1, 1)
    [call] = control_deps(module)
    assert operands(call) == ["arg0", "arg1"]


@TWINS
def test_nested_tuple_is_flattened_one_level_per_run(dialect):
    """Spec: `tuple(...)` → its elements, one level. The inner tuple becomes an
    operand; the next run flattens it (so a second run is a no-op only when
    the first left no tuple operand)."""
    module = parse(NESTED_TUPLE, dialect)
    assert run(module, dialect) == FlattenResult(True, 1, 1)
    [call] = control_deps(module)
    assert operands(call) == [f"{dialect.tuple}#0", "arg2", "arg3"]
    assert run(module, dialect) == FlattenResult(True, 1, 1)
    [call] = control_deps(module)
    assert operands(call) == ["arg0", "arg1", "arg2", "arg3"]
    assert run(module, dialect) == FlattenResult(False, 0, 0)


@TWINS
def test_call_inside_a_nested_region_is_flattened(dialect):
    module = parse(IN_A_WHILE_BODY, dialect)
    assert run(module, dialect) == FlattenResult(True, 1, 1)
    [call] = control_deps(module)
    assert operands(call)[:2] == ["arg0", "arg1"]
    assert call.operands[2].owner.owner.name == f"{dialect.name}.while"  # the body's iter arg
    assert count(module, dialect.tuple) == 0


TUPLE_DATA_OPERAND = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %x: tensor<i32>, %y: tensor<4xf32>) -> tensor<4xf32> {{
  %p = {{d}}.tuple %a, %b : {T2}
  %t = {{d}}.tuple %x, %y : tuple<tensor<i32>, tensor<4xf32>>
  %c = {{d}}.custom_call @AwsNeuronControlDep(%p, %t) {{has_side_effect = true}} : ({T2}, tuple<tensor<i32>, tensor<4xf32>>) -> tuple<tensor<i32>, tensor<4xf32>>
  %g = {{d}}.get_tuple_element %c[1] : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}}
"""


@TWINS
def test_the_data_operand_is_never_unpacked(dialect):
    """The last operand is the value the call stands for: a tuple there stays
    (its elements would otherwise read as predecessors)."""
    module = parse(TUPLE_DATA_OPERAND, dialect)
    assert run(module, dialect) == FlattenResult(True, 1, 1)  # only the predecessor tuple
    [call] = control_deps(module)
    assert operands(call) == ["arg0", "arg1", f"{dialect.tuple}#0"]
    data = call.operands[2].owner.operation
    assert [describe(v) for v in data.operands] == ["arg2", "arg3"]
    assert str(call.results[0].type) == "tuple<tensor<i32>, tensor<4xf32>>"
    assert run(module, dialect) == FlattenResult(False, 0, 0)


@TWINS
@pytest.mark.parametrize("data", ["tuple", "gte"])
def test_a_call_whose_only_tuple_is_the_data_operand_is_not_collected(dialect, data):
    if data == "tuple":
        text = TUPLE_DATA_OPERAND.replace("(%p, %t)", "(%a, %t)").replace(f"({T2}, tuple<", "(tensor<f32>, tuple<")
    else:
        text = GTE_OF_TUPLE.replace("(%g, %d)", "(%a, %g)").replace(
            "(tensor<i32>, tensor<4xf32>) -> tensor<4xf32>", "(tensor<f32>, tensor<i32>) -> tensor<i32>").replace(
            "return %c : tensor<4xf32>", "return %d : tensor<4xf32>")
    module = parse(text, dialect)
    before = str(module)
    assert run(module, dialect) == FlattenResult(False, 0, 0)
    assert str(module) == before


# --------------------------------------------------------------------------
# What the pass leaves alone
# --------------------------------------------------------------------------


@TWINS
def test_already_flat_call_is_untouched(dialect):
    module = parse(ALREADY_FLAT, dialect)
    before = str(module)
    assert run(module, dialect) == FlattenResult(False, 0, 0)
    assert str(module) == before  # attributes included: the op was not rebuilt


@TWINS
def test_other_custom_calls_keep_their_tuple_operands(dialect):
    module = parse(NOT_A_CONTROL_DEP, dialect)
    before = str(module)
    assert run(module, dialect) == FlattenResult(False, 0, 0)
    assert str(module) == before


@TWINS
def test_a_call_with_several_results_keeps_them_all(dialect):
    """Link #1 makes one result, but MLIR input may have more (mhlo-flatten-tuple
    splits a tuple result). Erasing the old call while a result is still in
    use segfaulted; every result is now rebuilt and spliced."""
    module = parse(f"""
    func.func @main(%a: tensor<f32>, %b: tensor<i32>, %x: tensor<i32>, %y: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {{
      %p = {{d}}.tuple %a, %b : {T2}
      %c:2 = {{d}}.custom_call @AwsNeuronControlDep(%p, %x, %y) : ({T2}, tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
      return %c#0, %c#1 : tensor<i32>, tensor<4xf32>
    }}""", dialect)
    assert run(module, dialect) == FlattenResult(True, 1, 1)
    [call] = control_deps(module)
    assert operands(call) == ["arg0", "arg1", "arg2", "arg3"]
    assert [str(r.type) for r in call.results] == ["tensor<i32>", "tensor<4xf32>"]
    [ret] = [op for op in ops(module) if op.name == "func.return"]
    assert list(ret.operands) == list(call.results)


@TWINS
def test_a_call_without_operands_is_left_alone(dialect):
    module = parse("""
    func.func @main() -> tensor<f32> {
      %c = {d}.custom_call @AwsNeuronControlDep() {has_side_effect = true} : () -> tensor<f32>
      return %c : tensor<f32>
    }""", dialect)
    before = str(module)
    assert run(module, dialect) == FlattenResult(False, 0, 0)
    assert str(module) == before


@TWINS
def test_a_tuple_still_used_elsewhere_survives(dialect):
    module = parse(TUPLE_ALSO_RETURNED, dialect)
    assert run(module, dialect) == FlattenResult(True, 1, 0)
    [call] = control_deps(module)
    assert operands(call) == ["arg0", "arg1", "arg2"]
    assert count(module, dialect.tuple) == 1


@TWINS
def test_the_other_dialects_calls_are_not_this_twins_business(dialect):
    other = MHLO if dialect is STABLEHLO else STABLEHLO
    module = parse(TUPLE_OPERAND, other)
    before = str(module)
    assert run(module, dialect) == FlattenResult(False, 0, 0)
    assert str(module) == before


# --------------------------------------------------------------------------
# Idempotence, sharing, repeated runs (a crash here is a use of an erased op)
# --------------------------------------------------------------------------


@TWINS
@pytest.mark.parametrize("text", [TUPLE_OPERAND, GTE_OF_TUPLE, GTE_OF_OTHER_OP, GTE_OF_ARGUMENT,
                                  SHARED_TUPLE, SHARED_EVERY_WAY, IN_A_WHILE_BODY],
                         ids=["tuple", "gte-of-tuple", "gte-of-op", "gte-of-arg", "shared",
                              "shared-every-way", "in-while"])
def test_second_run_changes_nothing(dialect, text):
    module = parse(text, dialect)
    assert run(module, dialect).changed
    after_first = str(module)
    assert run(module, dialect) == FlattenResult(False, 0, 0)
    assert str(module) == after_first


@TWINS
def test_a_tuple_shared_by_two_calls_is_erased_once(dialect):
    module = parse(SHARED_TUPLE, dialect)
    assert run(module, dialect) == FlattenResult(True, 2, 1)
    first, second = control_deps(module)
    assert operands(first) == ["arg0", "arg1", "arg2"]
    assert operands(second) == ["arg0", "arg1", f"{dialect.custom_call}#0"]
    assert second.operands[2] == first.results[0]  # chained through the new call
    assert count(module, dialect.tuple) == 0


@TWINS
def test_a_tuple_reached_directly_and_through_gtes_is_erased_once(dialect):
    module = parse(SHARED_EVERY_WAY, dialect)
    # Bypassed: the tuple and both GTEs, each erased exactly once.
    assert run(module, dialect) == FlattenResult(True, 2, 3)
    first, second = control_deps(module)
    assert operands(first) == ["arg0", "arg1", "arg0", "arg1", "arg2"]
    assert operands(second) == ["arg0", "arg1", "arg0", "arg1", f"{dialect.custom_call}#0"]
    assert count(module, dialect.tuple) == count(module, dialect.get_tuple_element) == 0


@TWINS
def test_repeated_runs_on_one_module_object(dialect):
    module = parse(SHARED_EVERY_WAY, dialect)
    flatten = FlattenControlDepTupleOperands(dialect)
    results = [flatten.run(module) for _ in range(5)]
    assert results[0].changed and not any(r.changed for r in results[1:])
    # Touch everything that is left, results and operands included.
    for op in ops(module):
        _ = (op.name, str(op.location), [str(v.type) for v in op.operands], [str(r.type) for r in op.results])
    assert module.operation.verify()
    # A fresh rewrite on the same context after all that.
    again = parse(SHARED_TUPLE, dialect, context=module.context)
    assert flatten.run(again).erased == 1


@TWINS
def test_run_accepts_the_module_or_its_operation(dialect):
    module = parse(TUPLE_OPERAND, dialect)
    assert FlattenControlDepTupleOperands(dialect).run(module.operation).rewritten == 1
    assert FlattenControlDepTupleOperands(dialect).run(module).changed is False


# --------------------------------------------------------------------------
# Scope
# --------------------------------------------------------------------------


def flattened(module, dialect) -> dict[str, bool]:
    """Per function: whether its control-dep call has flat operands."""
    out = {}
    for name in ("helper", "main", "last"):
        [call] = control_deps(function(module, name))
        out[name] = all(
            isinstance(v.owner, ir.Block) or v.owner.operation.name != dialect.tuple for v in call.operands)
    return out


@TWINS
@pytest.mark.parametrize("scope, expected", [
    ("main", {"helper": False, "main": True, "last": False}),
    ("first", {"helper": True, "main": False, "last": False}),  # the binary's reading
    ("all", {"helper": True, "main": True, "last": True}),
])
def test_scope(dialect, scope, expected):
    module = parse(HELPER_FIRST, dialect)
    result = run(module, dialect, scope=scope)
    assert result.rewritten == sum(expected.values())
    assert flattened(module, dialect) == expected


def test_default_scope_is_main():
    assert FlattenControlDepTupleOperands().scope == "main"
    assert FlattenControlDepTupleOperands().dialect is MHLO


def test_unknown_scope_is_refused():
    with pytest.raises(FlattenError, match="unknown scope 'everything'"):
        FlattenControlDepTupleOperands(STABLEHLO, scope="everything")


@TWINS
def test_missing_main_is_an_error_naming_the_functions(dialect):
    module = parse(NO_MAIN, dialect)
    before = str(module)
    with pytest.raises(FlattenError) as info:
        FlattenControlDepTupleOperands(dialect).run(module)
    message = str(info.value)
    assert "no function named 'main'" in message and "entry" in message
    assert "scope=first" in message or "scope=all" in message  # says what to do
    assert "\n" not in message
    assert str(module) == before
    # The other scopes work on the same module.
    assert run(module, dialect, scope="first").rewritten == 1


@TWINS
def test_module_without_functions(dialect):
    module = parse("module {}", dialect)
    with pytest.raises(FlattenError, match="functions: none"):
        FlattenControlDepTupleOperands(dialect).run(module)
    assert run(module, dialect, scope="all") == FlattenResult(False, 0, 0)


# --------------------------------------------------------------------------
# A context without the dialect
# --------------------------------------------------------------------------


def test_mhlo_not_registered_is_an_actionable_error():
    context = stablehlo_only_context()
    module = parse(TUPLE_OPERAND, STABLEHLO, context=context)
    before = str(module)
    with pytest.raises(FlattenError) as info:
        FlattenControlDepTupleOperands(MHLO).run(module)
    message = str(info.value)
    assert message.startswith("flatten-control-dep-tuple-operands: ")
    assert "'mhlo.custom_call' is not registered" in message
    assert "load the MHLO dialect" in message
    assert "stablehlo-flatten" in message  # points at the twin for this module
    assert str(module) == before
    # The StableHLO twin is fine in that context.
    assert run(module, STABLEHLO) == FlattenResult(True, 1, 1)


def test_stablehlo_not_registered_is_an_error_too():
    context = ir.Context()
    context.allow_unregistered_dialects = True
    module = ir.Module.parse("module {}", context=context)
    with pytest.raises(FlattenError, match="'stablehlo.custom_call' is not registered"):
        FlattenControlDepTupleOperands(STABLEHLO).run(module)


# --------------------------------------------------------------------------
# In a real PassManager, among textual passes
# --------------------------------------------------------------------------


@TWINS
def test_in_a_pass_manager_between_textual_passes(dialect):
    register_passes()
    module = parse(SHARED_EVERY_WAY, dialect)
    with module.context:
        pm = passmanager.PassManager.parse("builtin.module(func.func(cse))")
        FlattenControlDepTupleOperands(dialect).add_to(pm)
        pm.add("canonicalize")
        pm.add("symbol-dce")
        pm.run(module.operation)
        # The same pass manager again, on the same module.
        pm.run(module.operation)
    assert module.operation.verify()
    first, second = control_deps(module)
    assert operands(first) == ["arg0", "arg1", "arg0", "arg1", "arg2"]
    assert count(module, dialect.tuple) == count(module, dialect.get_tuple_element) == 0


def test_both_twins_in_one_pipeline_across_legalization():
    """StableHLO twin, then stablehlo-legalize-to-hlo, then the MHLO twin."""
    register_passes()
    module = parse(NESTED_TUPLE, STABLEHLO)
    with module.context:
        pm = passmanager.PassManager("builtin.module")
        FlattenControlDepTupleOperands(STABLEHLO).add_to(pm)
        pm.add("stablehlo-legalize-to-hlo")
        FlattenControlDepTupleOperands(MHLO).add_to(pm)
        pm.run(module.operation)
    [call] = control_deps(module)
    assert call.name == "mhlo.custom_call"
    assert operands(call) == ["arg0", "arg1", "arg2", "arg3"]  # one level per twin
    assert not any(op.name.startswith("stablehlo.") for op in ops(module))


@TWINS
def test_flatten_error_inside_a_pass_manager_propagates_and_leaves_the_module(dialect):
    module = parse(NO_MAIN, dialect)
    before = str(module)
    with module.context:
        pm = passmanager.PassManager("builtin.module")
        FlattenControlDepTupleOperands(dialect).add_to(pm)
        with pytest.raises(FlattenError, match="no function named 'main'"):
            pm.run(module.operation)
    assert str(module) == before


@TWINS
def test_pass_identity(dialect):
    flatten = FlattenControlDepTupleOperands(dialect)
    assert flatten.argument == dialect.flatten_mnemonic
    assert dialect.flatten_mnemonic == {"mhlo": "flatten-control-dep-tuple-operands",
                                "stablehlo": "stablehlo-flatten-control-dep-tuple-operands"}[dialect.name]


# --------------------------------------------------------------------------
# isControlDep
# --------------------------------------------------------------------------


@TWINS
def test_is_control_dep(dialect):
    module = parse(NOT_A_CONTROL_DEP.replace("%c = ", "%k = {d}.custom_call @AwsNeuronControlDep(%d) : "
                                                     "(tensor<4xf32>) -> tensor<4xf32>\n  %c = "), dialect)
    by_target = {}
    for op in ops(module):
        if op.name == dialect.custom_call:
            by_target[ir.StringAttr(op.attributes["call_target_name"]).value] = op
    assert is_control_dep(by_target[CONTROL_DEP_TARGET])
    assert not is_control_dep(by_target["SomethingElse"])
    tuple_op = next(op for op in ops(module) if op.name == dialect.tuple)
    assert not is_control_dep(tuple_op)
    assert not is_control_dep(None)
    # An OpView works as well as an Operation.
    main = module.body.operations[0]
    views = list(main.regions[0].blocks[0].operations)
    assert sum(1 for v in views if is_control_dep(v)) == 1


def test_is_control_dep_needs_the_exact_target_and_a_custom_call_op():
    context = make_context()
    context.allow_unregistered_dialects = True
    module = ir.Module.parse("""
    func.func @main(%d: tensor<4xf32>) -> tensor<4xf32> {
      %a = stablehlo.custom_call @awsneuroncontroldep(%d) : (tensor<4xf32>) -> tensor<4xf32>
      %b = stablehlo.custom_call @AwsNeuronControlDepX(%a) : (tensor<4xf32>) -> tensor<4xf32>
      %c = "other.custom_call"(%b) {call_target_name = "AwsNeuronControlDep"} : (tensor<4xf32>) -> tensor<4xf32>
      return %c : tensor<4xf32>
    }""", context=context)
    assert not any(is_control_dep(op) for op in ops(module))
