"""Link #3 against jaxlib's own C++ tuple flattener, `mhlo-flatten-tuple`.

`mhlo-flatten-tuple` is a `func.func` pass (anchored on the module it says
"restricted to 'func.func' … did you intend to nest?"), so it runs as
`builtin.module(func.func(mhlo-flatten-tuple))` once
`jaxlib.mlir.dialects.mhlo.register_mhlo_passes()` has run. It is a greedy
pattern rewrite keyed on *types*: every custom_call operand of tuple type is
split into get_tuple_element ops, recursively, a tuple-typed custom_call
result is split into several results, and the greedy driver folds whatever
it can (GTE(tuple) → the element, dead ops, constants) in every function.
Link #3 is keyed on *ops*: it looks only at control-dep calls, only at
operands defined by a tuple or get_tuple_element op, one level, in main.

Where the two must agree, the flattened operand lists of the control-dep
calls are compared. Where they differ, each test says how (measured with
jaxlib 0.10.2) and pins both sides. jaxlib ships no StableHLO tuple
flattener (`stablehlo-ext-flatten-tuple` is not registered), so the
StableHLO twin is compared through `stablehlo-legalize-to-hlo`.
"""

from __future__ import annotations

import pytest
from jaxlib.mlir import ir, passmanager

from mlir_ops import function, ops
from passes.control_dep import is_control_dep
from pipeline.reading.parsed import Parsed
from passes.hlo.preserve_control_deps import PreserveControlDeps
from passes.hlo.view import view_of
from passes.mlir import MHLO, STABLEHLO, FlattenControlDepTupleOperands
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.xla.importer import import_hlo, run_pipeline
from pipeline.xla.mlir_context import make_context, register_passes
from pipeline.xla import native

FLATTEN_TUPLE = "builtin.module(func.func(mhlo-flatten-tuple))"
T2 = "tuple<tensor<f32>, tensor<i32>>"


def parse(text: str, dialect: str = "mhlo", context=None) -> ir.Module:
    module = ir.Module.parse(text.replace("{d}", dialect), context=context or make_context())
    assert module.operation.verify()
    return module


def clone(module: ir.Module) -> ir.Module:
    return ir.Module.parse(module.operation.get_asm(enable_debug_info=True), context=module.context)


def theirs(module: ir.Module) -> ir.Module:
    register_passes()
    with module.context:
        passmanager.PassManager.parse(FLATTEN_TUPLE).run(module.operation)
    assert module.operation.verify()
    return module


def ours(module: ir.Module, dialect=MHLO, **options) -> ir.Module:
    FlattenControlDepTupleOperands(dialect, **options).run(module)
    assert module.operation.verify()
    return module


def both(text: str) -> tuple[ir.Module, ir.Module]:
    return ours(parse(text)), theirs(parse(text))


def describe(value) -> str:
    """A value by what it is, stable across the two passes' rewrites: a
    function argument by number, an op result by op name, result number and
    location (which carries the HLO name after link #2)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner.operation.name
        prefix = "arg" if parent == "func.func" else f"{parent}.arg"
        return f"{prefix}{ir.BlockArgument(value).arg_number}"
    op = owner.operation
    where = str(op.location)
    return f"{op.name}#{ir.OpResult(value).result_number}" + (f"@{where}" if where.startswith("loc(fused") else "")


def control_dep_operands(root) -> list[list[str]]:
    return [[describe(v) for v in op.operands] for op in ops(root) if is_control_dep(op)]


def calls_by_name(root) -> dict[str, list[str]]:
    """Control-dep calls of an imported module by the HLO name in their location."""
    return {str(op.location).split('"')[3]: [describe(v) for v in op.operands]
            for op in ops(root) if is_control_dep(op)}


def count(root, name: str) -> int:
    return sum(1 for op in ops(root) if op.name == name)


# --------------------------------------------------------------------------
# Where the two agree
# --------------------------------------------------------------------------

TUPLE_OF_ARGUMENTS = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %p: tensor<2xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c = {{d}}.custom_call @AwsNeuronControlDep(%p, %t, %d) {{has_side_effect = true}} : (tensor<2xf32>, {T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""

# What the importer makes of a `while` predecessor: a tuple of its results.
TUPLE_OF_WHILE_RESULTS = """
func.func @main(%a: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %w:2 = {d}.while(%i = %a, %v = %d) : tensor<i32>, tensor<4xf32>
  cond {
    %p = {d}.compare LT, %i, %a : (tensor<i32>, tensor<i32>) -> tensor<i1>
    {d}.return %p : tensor<i1>
  } do {
    %n = {d}.add %i, %i : tensor<i32>
    %u = {d}.add %v, %v : tensor<4xf32>
    {d}.return %n, %u : tensor<i32>, tensor<4xf32>
  }
  %t = {d}.tuple %w#0, %w#1 : tuple<tensor<i32>, tensor<4xf32>>
  %c = {d}.custom_call @AwsNeuronControlDep(%t, %d) {has_side_effect = true} : (tuple<tensor<i32>, tensor<4xf32>>, tensor<4xf32>) -> tensor<4xf32>
  %r = {d}.add %c, %w#1 : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

SHARED_TUPLE = f"""
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = {{d}}.tuple %a, %b : {T2}
  %c1 = {{d}}.custom_call @AwsNeuronControlDep(%t, %d) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  %c2 = {{d}}.custom_call @AwsNeuronControlDep(%t, %c1) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c2 : tensor<4xf32>
}}
"""


@pytest.mark.parametrize("text, expected", [
    (TUPLE_OF_ARGUMENTS, [["arg2", "arg0", "arg1", "arg3"]]),
    (TUPLE_OF_WHILE_RESULTS, [["mhlo.while#0", "mhlo.while#1", "arg1"]]),
    (SHARED_TUPLE, [["arg0", "arg1", "arg2"], ["arg0", "arg1", "mhlo.custom_call#0"]]),
], ids=["tuple-of-arguments", "tuple-of-while-results", "shared-tuple"])
def test_a_tuple_of_plain_values_flattens_the_same(text, expected):
    mine, reference = both(text)
    assert control_dep_operands(mine) == control_dep_operands(reference) == expected
    # Both leave no tuple behind.
    assert count(mine, "mhlo.tuple") == count(reference, "mhlo.tuple") == 0


def test_the_stablehlo_twin_agrees_through_legalization():
    """StableHLO: our twin then legalize, against legalize then mhlo-flatten-tuple."""
    for text in (TUPLE_OF_ARGUMENTS, TUPLE_OF_WHILE_RESULTS, SHARED_TUPLE):
        mine = ours(parse(text, "stablehlo"), STABLEHLO)
        run_pipeline(mine, "stablehlo-legalize-to-hlo")
        reference = parse(text, "stablehlo")
        run_pipeline(reference, "stablehlo-legalize-to-hlo")
        theirs(reference)
        assert control_dep_operands(mine) == control_dep_operands(reference)


def imported_example(dialect: str, bundle: bool) -> ir.Module:
    parsed = native.read(EXAMPLE_HLO)
    module = view_of(parsed)
    PreserveControlDeps(bundle=bundle).run(module)
    return import_hlo(parsed, dialect, isolate=False)


def test_the_imported_example_flattens_the_same():
    """The real artifact: the built-in example's `while` predecessor comes back
    from XLA's importer as a tuple of the loop's results."""
    imported = imported_example("mhlo", bundle=False)
    assert count(imported, "mhlo.tuple") == 1
    mine, reference = ours(clone(imported)), theirs(clone(imported))
    got = calls_by_name(mine)
    assert got == calls_by_name(reference)
    loop = 'mhlo.while#{}@loc(fused<"main">["loop"])'
    # `scaled`: the loop's results, then copy.x, then the data operand.
    assert got["scaled.control-dep"][:3] == [loop.format(0), loop.format(1),
                                             'mhlo.copy#0@loc(fused<"main">["copy.x"])']


def test_the_imported_stablehlo_example_agrees_through_legalization():
    imported = imported_example("stablehlo", bundle=False)
    mine = ours(clone(imported), STABLEHLO)
    run_pipeline(mine, "stablehlo-legalize-to-hlo")
    reference = clone(imported)
    run_pipeline(reference, "stablehlo-legalize-to-hlo")
    theirs(reference)
    assert control_dep_operands(function(mine, "main")) == control_dep_operands(function(reference, "main"))


# --------------------------------------------------------------------------
# Where they differ
# --------------------------------------------------------------------------


def test_gte_of_a_tuple():
    """Ours: GTE(tuple(a, b)) brings *every* element of the tuple (the binary's
    replaceTuples: docs/link3-contract.md#operand-rewrite-replacetuples).
    Theirs: the GTE result is not a tuple, so the operand is left alone and
    the greedy driver folds GTE(tuple)[1] to `b` only."""
    text = f"""
    func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
      %t = mhlo.tuple %a, %b : {T2}
      %g = mhlo.get_tuple_element %t[1] : ({T2}) -> tensor<i32>
      %c = mhlo.custom_call @AwsNeuronControlDep(%g, %d) : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
      return %c : tensor<4xf32>
    }}"""
    mine, reference = both(text)
    assert control_dep_operands(mine) == [["arg0", "arg1", "arg2"]]
    assert control_dep_operands(reference) == [["arg1", "arg2"]]


def test_gte_of_an_op_with_a_tuple_result():
    """Ours: GTE(x) with x not a tuple op brings every result of x; x has one
    tuple-typed result, so the call now reads that tuple value. Theirs:
    splits x's tuple result into two results and the call reads the
    indexed one."""
    text = f"""
    func.func @main(%d: tensor<4xf32>) -> tensor<4xf32> {{
      %x = mhlo.custom_call @producer() : () -> {T2}
      %g = mhlo.get_tuple_element %x[1] : ({T2}) -> tensor<i32>
      %c = mhlo.custom_call @AwsNeuronControlDep(%g, %d) : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
      return %c : tensor<4xf32>
    }}"""
    mine, reference = both(text)
    assert control_dep_operands(mine) == [["mhlo.custom_call#0", "arg0"]]
    [call] = [op for op in ops(mine) if is_control_dep(op)]
    assert str(call.operands[0].type) == T2
    assert control_dep_operands(reference) == [["mhlo.custom_call#1", "arg0"]]
    producer = next(op for op in ops(reference) if op.name == "mhlo.custom_call" and not is_control_dep(op))
    assert [str(r.type) for r in producer.results] == ["tensor<f32>", "tensor<i32>"]


def test_a_tuple_typed_value_that_is_not_a_tuple_op():
    """Ours: an operand of tuple *type* with no tuple/GTE op behind it (an
    argument, or an op's tuple result) is not collected: nothing to look
    through. Theirs: splits it with one GTE per element (argument) or by
    splitting the producer's results."""
    text = f"""
    func.func @main(%x: {T2}, %d: tensor<4xf32>) -> tensor<4xf32> {{
      %y = mhlo.custom_call @producer() : () -> {T2}
      %c = mhlo.custom_call @AwsNeuronControlDep(%x, %y, %d) : ({T2}, {T2}, tensor<4xf32>) -> tensor<4xf32>
      return %c : tensor<4xf32>
    }}"""
    module = parse(text)
    before = str(module)
    assert FlattenControlDepTupleOperands(MHLO).run(module).changed is False
    assert str(module) == before
    reference = theirs(parse(text))
    assert control_dep_operands(reference) == [
        ["mhlo.get_tuple_element#0", "mhlo.get_tuple_element#0", "mhlo.custom_call#0", "mhlo.custom_call#1",
         "arg1"]]


def test_gte_of_a_block_argument():
    """Ours: the tuple argument itself (the GTE is bypassed and erased).
    Theirs: the GTE stays (its result is no tuple)."""
    text = f"""
    func.func @main(%x: {T2}, %d: tensor<4xf32>) -> tensor<4xf32> {{
      %g = mhlo.get_tuple_element %x[1] : ({T2}) -> tensor<i32>
      %c = mhlo.custom_call @AwsNeuronControlDep(%g, %d) : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
      return %c : tensor<4xf32>
    }}"""
    mine, reference = both(text)
    assert control_dep_operands(mine) == [["arg0", "arg1"]]
    assert count(mine, "mhlo.get_tuple_element") == 0
    assert control_dep_operands(reference) == [["mhlo.get_tuple_element#0", "arg1"]]


def test_nested_tuples():
    """Ours: one level per run (the binary's loop:
    docs/link3-contract.md#one-level-per-run-or-until-unchanged), so the inner tuple is an
    operand after the first run. Theirs: recursive, fully flat at once."""
    text = f"""
    func.func @main(%a: tensor<f32>, %b: tensor<i32>, %e: tensor<i8>, %d: tensor<4xf32>) -> tensor<4xf32> {{
      %t = mhlo.tuple %a, %b : {T2}
      %u = mhlo.tuple %t, %e : tuple<{T2}, tensor<i8>>
      %c = mhlo.custom_call @AwsNeuronControlDep(%u, %d) : (tuple<{T2}, tensor<i8>>, tensor<4xf32>) -> tensor<4xf32>
      return %c : tensor<4xf32>
    }}"""
    mine, reference = both(text)
    assert control_dep_operands(mine) == [["mhlo.tuple#0", "arg2", "arg3"]]
    assert control_dep_operands(reference) == [["arg0", "arg1", "arg2", "arg3"]]
    # A second run of ours reaches the same list.
    assert control_dep_operands(ours(mine)) == control_dep_operands(reference)


def test_bundled_while_predecessor_is_a_nested_tuple():
    """The same difference on real importer output: with link #1's bundle
    mode, the example's `while` predecessor is a tuple inside the bundle
    tuple. One run of ours leaves the loop's tuple as an operand of
    `scaled`'s call; theirs flattens to the loop's results."""
    imported = imported_example("mhlo", bundle=True)
    mine, reference = ours(clone(imported)), theirs(clone(imported))
    loop = 'loc(fused<"main">["loop"])'
    scaled = "scaled.control-dep"
    assert calls_by_name(mine)[scaled][:2] == [f"mhlo.tuple#0@{loop}", 'mhlo.copy#0@loc(fused<"main">["copy.x"])']
    assert calls_by_name(reference)[scaled][:3] == [
        f"mhlo.while#0@{loop}", f"mhlo.while#1@{loop}", 'mhlo.copy#0@loc(fused<"main">["copy.x"])']
    assert control_dep_operands(function(ours(mine), "main")) == control_dep_operands(function(reference, "main"))


def test_tuple_shaped_data_operand():
    """Ours: the last operand is the data operand D, never unpacked (its
    elements are not predecessors), and the call keeps its one tuple-typed
    result. Theirs: D is split like any tuple operand (its first element
    now reads as a predecessor) and the call's tuple result is split into
    two results."""
    text = f"""
    func.func @main(%a: tensor<f32>, %b: tensor<i32>, %x: tensor<i32>, %y: tensor<4xf32>) -> tensor<4xf32> {{
      %p = mhlo.tuple %a, %b : {T2}
      %t = mhlo.tuple %x, %y : tuple<tensor<i32>, tensor<4xf32>>
      %c = mhlo.custom_call @AwsNeuronControlDep(%p, %t) : ({T2}, tuple<tensor<i32>, tensor<4xf32>>) -> tuple<tensor<i32>, tensor<4xf32>>
      %g = mhlo.get_tuple_element %c[1] : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32>
      return %g : tensor<4xf32>
    }}"""
    mine, reference = both(text)
    assert control_dep_operands(mine) == [["arg0", "arg1", "mhlo.tuple#0"]]
    [a] = [op for op in ops(mine) if is_control_dep(op)]
    assert [str(r.type) for r in a.results] == ["tuple<tensor<i32>, tensor<4xf32>>"]
    assert control_dep_operands(reference) == [["arg0", "arg1", "arg2", "arg3"]]
    [b] = [op for op in ops(reference) if is_control_dep(op)]
    assert [str(r.type) for r in b.results] == ["tensor<i32>", "tensor<4xf32>"]


def test_attributes_of_the_rebuilt_call():
    """Ours (default, as the binary): only call_target_name survives the
    rebuild. Theirs: every attribute is kept."""
    mine, reference = both(TUPLE_OF_ARGUMENTS)
    [a] = [op for op in ops(mine) if is_control_dep(op)]
    [b] = [op for op in ops(reference) if is_control_dep(op)]
    assert set(a.attributes) == {"call_target_name"}
    assert {"call_target_name", "has_side_effect"} <= set(b.attributes)
    # keep_attributes=True matches theirs.
    kept = ours(parse(TUPLE_OF_ARGUMENTS), keep_attributes=True)
    [k] = [op for op in ops(kept) if is_control_dep(op)]
    assert {n: str(k.attributes[n]) for n in k.attributes} == {n: str(b.attributes[n]) for n in b.attributes}


def test_other_custom_calls():
    """Ours: only AwsNeuronControlDep calls. Theirs: any custom_call."""
    text = TUPLE_OF_ARGUMENTS.replace("@AwsNeuronControlDep", "@SomethingElse")
    mine, reference = both(text)
    [a] = [op for op in ops(mine) if op.name == "mhlo.custom_call"]
    [b] = [op for op in ops(reference) if op.name == "mhlo.custom_call"]
    assert [describe(v) for v in a.operands] == ["arg2", "mhlo.tuple#0", "arg3"]
    assert [describe(v) for v in b.operands] == ["arg2", "arg0", "arg1", "arg3"]


def test_which_functions():
    """Ours (default): main only. Theirs: every func.func, private ones too."""
    body = TUPLE_OF_ARGUMENTS.split("\n", 2)[2]
    text = (TUPLE_OF_ARGUMENTS.replace("@main", "private @helper")
            + TUPLE_OF_ARGUMENTS.split("\n", 2)[1] + "\n" + body)
    mine, reference = both(text)
    assert control_dep_operands(function(mine, "helper")) == [["arg2", "mhlo.tuple#0", "arg3"]]
    assert control_dep_operands(function(reference, "helper")) == [["arg2", "arg0", "arg1", "arg3"]]
    assert control_dep_operands(function(mine, "main")) == control_dep_operands(function(reference, "main"))
    # scope=all matches theirs.
    every = ours(parse(text), scope="all")
    assert control_dep_operands(every) == control_dep_operands(reference)


def test_unrelated_ops():
    """Ours touches nothing but control-dep calls and the tuple/GTE ops they
    bypassed. Theirs runs a greedy rewrite that also folds unrelated ops: a
    constant expression is folded, and constants are hoisted out of a while
    region (losing the location that carries their HLO name)."""
    imported = imported_example("mhlo", bundle=False)
    mine, reference = ours(clone(imported)), theirs(clone(imported))
    mine_ops = [(op.name, str(op.location)) for op in ops(mine) if op.name != "mhlo.custom_call"
                and op.name != "mhlo.tuple"]
    before = [(op.name, str(op.location)) for op in ops(imported) if op.name != "mhlo.custom_call"
              and op.name != "mhlo.tuple"]
    assert mine_ops == before
    one = [op for op in ops(reference) if op.name == "mhlo.constant" and "dense<1>" in str(op)]
    assert [str(op.location) for op in one] == ["loc(unknown)"]  # was fused<"body">["one"]
    assert [str(op.location) for op in ops(imported) if op.name == "mhlo.constant" and "dense<1>" in str(op)] == [
        'loc(fused<"body">["one"])']

    folded = parse("""
    func.func @main(%d: tensor<4xf32>) -> tensor<4xf32> {
      %c = mhlo.constant dense<1.0> : tensor<4xf32>
      %s = mhlo.add %c, %c : tensor<4xf32>
      %r = mhlo.add %s, %d : tensor<4xf32>
      return %r : tensor<4xf32>
    }""")
    before = str(folded)
    assert not FlattenControlDepTupleOperands(MHLO).run(folded).changed
    assert str(folded) == before
    theirs(folded)
    assert count(folded, "mhlo.add") == 1 and "dense<2.000000e+00>" in str(folded)


def test_no_stablehlo_flatten_tuple_in_jaxlib():
    """Why the StableHLO side goes through legalization."""
    register_passes()
    with make_context():
        for name in ("stablehlo-ext-flatten-tuple", "stablehlo-flatten-tuple"):
            with pytest.raises(ValueError, match="does not refer to a registered pass"):
                passmanager.PassManager.parse(f"builtin.module(func.func({name}))")
        with pytest.raises(ValueError, match="restricted to 'func.func'"):
            passmanager.PassManager.parse("builtin.module(mhlo-flatten-tuple)")
