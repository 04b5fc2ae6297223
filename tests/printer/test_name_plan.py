"""Link #4's name plan (`printer.naming`) on modules XLA's importer makes:
two instances of one computation each keep their names, a helper op of an
instruction gets `name:kind` and sends its edges to the op with the name, an
op with no HLO name gets `kind#N`. Through the importer's table of keys and
through restored locations alike. And `emitter()` with no op name refuses
to register nothing."""

from __future__ import annotations

import pytest
from jaxlib.mlir import ir

from pipeline.xla import importer, native
from pipeline.xla.isolated import readable_text
from pipeline.xla.mlir_context import make_context
from printer import python_printer
from printer.naming import NamePlan, plan_names

DIALECTS = ["stablehlo", "mhlo"]

# %add is inlined into both reduces' regions: two instances of %sum.
# %rng0 comes with a shape constant at its location.
HLO = """HloModule two_reducers

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p: f32[8], lo: f32[], hi: f32[]) -> (f32[], f32[], f32[4]) {
  %p = f32[8] parameter(0)
  %lo = f32[] parameter(1)
  %hi = f32[] parameter(2)
  %zero = f32[] constant(0)
  %r1 = f32[] reduce(f32[8] %p, f32[] %zero), dimensions={0}, to_apply=%add
  %r2 = f32[] reduce(f32[8] %p, f32[] %zero), dimensions={0}, to_apply=%add
  %rng0 = f32[4] rng(f32[] %lo, f32[] %hi), distribution=rng_uniform
  ROOT %t = (f32[], f32[], f32[4]) tuple(f32[] %r1, f32[] %r2, f32[4] %rng0)
}
"""


def _walk(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation
                yield from _walk(child.operation)


def _plans(dialect: str):
    """The plan through the importer's table, and from the same module with its locations restored."""
    context = make_context()
    keyed, names = importer.import_keyed(native.read(readable_text(HLO), "two_reducers.hlo"), dialect,
                                         context=context, isolate=False)
    restored = keyed.operation.clone()
    names.restore(restored)
    with context:
        yield "table", keyed.operation, plan_names(keyed, names)
        yield "locations", restored, plan_names(restored.opview)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_two_instances_of_one_computation_each_keep_their_names(dialect):
    for how, module, plan in _plans(dialect):
        assert isinstance(plan, NamePlan)
        planned = [(op.name.rsplit(".", 1)[-1], plan.names.get(op)) for op in _walk(module)]
        adds = [p for kind, p in planned if kind == "add"]
        assert adds == [("sum", "add"), ("sum", "add")], how
        assert ("reduce", ("r1", "main")) in planned and ("reduce", ("r2", "main")) in planned, how
        assert not any(p is not None and p[0].startswith("sum:") for _, p in planned), how


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_helper_op_gets_name_kind_and_its_edges_go_to_the_op_with_the_name(dialect):
    for how, module, plan in _plans(dialect):
        by_name = {plan.names[op][0]: op for op in _walk(module) if op in plan.names}
        assert plan.names[by_name["rng0"]] == ("rng0", "main"), how
        assert by_name["rng0:constant"].name.endswith(".constant"), how
        assert plan.dep_target == {by_name["rng0:constant"]: by_name["rng0"]}, how


def test_an_op_with_no_hlo_name_gets_kind_and_a_number():
    text = """func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.add %a, %a : tensor<f32>
      %1 = stablehlo.multiply %0, %0 : tensor<f32>
      %2 = stablehlo.add %1, %1 : tensor<f32>
      return %2 : tensor<f32>
    }"""
    with make_context():
        module = ir.Module.parse(text)
        plan = plan_names(module)
        assert [plan.names.get(op) for op in _walk(module.operation)] == [
            None,  # the function: not an op the printer names
            ("add#1", None), ("multiply#2", None), ("add#3", None),
            None,  # the return
        ]
        assert plan.dep_target == {}


def test_an_emitter_needs_an_op_name_and_the_fallback_is_not_registered():
    with pytest.raises(TypeError, match="at least one op name"):
        python_printer.emitter()
    assert python_printer._generic not in python_printer.EMITTERS.values()
