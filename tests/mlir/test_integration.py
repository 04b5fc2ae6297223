"""Links #1 → #2 → #3 together, on real XLA: PreserveControlDeps on HLO,
XLA's importer (StableHLO, or MHLO through stablehlo-legalize-to-hlo), then
the flatten pass of the same dialect.

The hand-written module has a `while` as the control predecessor: XLA's
importer turns that tuple-shaped value into a real tuple op feeding the
control-dep call (the artifact link #3 exists for). The JAX corpus then runs
the chain over every captured dump that has control edges. Corpus imports
run in-process (`isolate=False`): one child process per import would make
this file take minutes.
"""

from __future__ import annotations

import textwrap

import jaxlib._hlo as xla_hlo
import pytest
from jaxlib.mlir import ir

from imported_edges import control_dep_edges
from jax_programs import corpus
from mlir_ops import function, ops
from passes.control_dep import is_control_dep
from passes.hlo.preserve_control_deps import Fate, PreserveControlDeps
from passes.hlo.view import view_of
from passes.mlir import DIALECTS as FLATTEN
from passes.mlir import FlattenControlDepTupleOperands, FlattenResult
from pipeline.xla.importer import DIALECTS, import_hlo
from pipeline.xla.isolated import parse

BOTH = pytest.mark.parametrize("dialect", DIALECTS)
BUNDLE = pytest.mark.parametrize("bundle", [False, True], ids=["flat", "bundle"])

WHILE_PREDECESSOR = textwrap.dedent("""\
    HloModule while_pred, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

    %body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
      %s = (s32[], f32[4]{0}) parameter(0)
      %i = s32[] get-tuple-element(%s), index=0
      %one = s32[] constant(1)
      %n = s32[] add(%i, %one)
      %v = f32[4]{0} get-tuple-element(%s), index=1
      %v2 = f32[4]{0} add(%v, %v)
      ROOT %t = (s32[], f32[4]{0}) tuple(%n, %v2)
    }

    %cond (c: (s32[], f32[4])) -> pred[] {
      %c = (s32[], f32[4]{0}) parameter(0)
      %ci = s32[] get-tuple-element(%c), index=0
      %lim = s32[] constant(3)
      ROOT %lt = pred[] compare(%ci, %lim), direction=LT
    }

    ENTRY %main (x: f32[4]) -> f32[4] {
      %x = f32[4]{0} parameter(0)
      %zero = s32[] constant(0)
      %init = (s32[], f32[4]{0}) tuple(%zero, %x)
      %loop = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
      %res = f32[4]{0} get-tuple-element(%loop), index=1
      %neg = f32[4]{0} negate(%x), control-predecessors={%loop}
      ROOT %out = f32[4]{0} add(%res, %neg)
    }
""")


def defining(value):
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def is_tupleish(value) -> bool:
    op = defining(value)
    return op is not None and op.name.rsplit(".", 1)[-1] in ("tuple", "get_tuple_element")


def link_1(text: str, source: str, bundle: bool):
    """XLA's parse of `text` with link #1's edits made in its proto, and link #1's result."""
    parsed = parse(text, source)
    module = view_of(parsed)
    result = PreserveControlDeps(bundle=bundle).run(module)
    return parsed, result


def links_1_and_2(text: str, dialect: str, bundle: bool, **import_options):
    parsed, result = link_1(text, "test.hlo", bundle)
    mlir = import_hlo(parsed, dialect, **import_options)
    assert mlir.operation.verify()
    return mlir, result


def the_call(module: ir.Module):
    [call] = [op for op in ops(module) if is_control_dep(op)]
    return call


def test_the_module_is_real_hlo():
    xla_hlo.hlo_module_from_text(WHILE_PREDECESSOR)


@BOTH
@BUNDLE
def test_the_while_comes_back_from_import_as_a_tuple_op(dialect, bundle):
    mlir, result = links_1_and_2(WHILE_PREDECESSOR, dialect, bundle)
    assert [e.fate for e in result.edges] == [Fate.PRESERVED]
    call = the_call(mlir)
    assert call.name == f"{dialect}.custom_call"
    *preds, data = call.operands
    [pred] = preds
    tuple_op = defining(pred)
    assert tuple_op.name == f"{dialect}.tuple"
    loop = next(op for op in ops(mlir) if op.name == f"{dialect}.while")
    if bundle:  # the bundle tuple holds the while's tuple: two levels
        [inner] = tuple_op.operands
        tuple_op = defining(inner)
        assert tuple_op.name == f"{dialect}.tuple"
    assert list(tuple_op.operands) == list(loop.results)
    assert data == function(mlir, "main").regions[0].blocks[0].arguments[0]  # %x
    # The edge reads loop → neg, by HLO name, through the artifact.
    assert control_dep_edges(mlir) == {("loop", "neg")}


@BOTH
def test_link_3_gives_the_while_results_then_the_data_operand(dialect):
    mlir, _ = links_1_and_2(WHILE_PREDECESSOR, dialect, bundle=False)
    result = FlattenControlDepTupleOperands(FLATTEN[dialect]).run(mlir)
    assert result == FlattenResult(changed=True, rewritten=1, erased=1)
    assert mlir.operation.verify()
    call = the_call(mlir)
    loop = next(op for op in ops(mlir) if op.name == f"{dialect}.while")
    x = function(mlir, "main").regions[0].blocks[0].arguments[0]
    assert list(call.operands) == [*loop.results, x]
    assert not any(op.name == f"{dialect}.tuple" for op in ops(mlir))
    # The call's result still feeds the successor, and its name is kept.
    [user] = [u.owner for u in call.results[0].uses]
    assert user.name == f"{dialect}.negate"
    assert str(call.location) == 'loc(fused<"main">["neg.control-dep"])'
    assert control_dep_edges(mlir) == {("loop", "neg")}


@BOTH
def test_link_3_with_bundle(dialect):
    """With bundle=True the while's tuple sits inside the bundle tuple. The
    binary's rewrite is one level per run (docs/link3-contract.md#one-level-per-run-or-until-unchanged):
    the first run leaves the loop's
    tuple as the predecessor operand, a second run reaches the while's
    results, and a third changes nothing."""
    mlir, _ = links_1_and_2(WHILE_PREDECESSOR, dialect, bundle=True)
    flatten = FlattenControlDepTupleOperands(FLATTEN[dialect])
    loop = next(op for op in ops(mlir) if op.name == f"{dialect}.while")
    x = function(mlir, "main").regions[0].blocks[0].arguments[0]

    assert flatten.run(mlir) == FlattenResult(True, 1, 1)
    assert mlir.operation.verify()
    pred, data = the_call(mlir).operands
    assert defining(pred).name == f"{dialect}.tuple" and list(defining(pred).operands) == list(loop.results)
    assert data == x

    assert flatten.run(mlir) == FlattenResult(True, 1, 1)
    assert mlir.operation.verify()
    assert list(the_call(mlir).operands) == [*loop.results, x]
    assert not any(op.name == f"{dialect}.tuple" for op in ops(mlir))
    assert flatten.run(mlir) == FlattenResult(False, 0, 0)
    assert control_dep_edges(mlir) == {("loop", "neg")}


@BOTH
def test_isolated_import_gives_the_same_chain(dialect):
    isolated, _ = links_1_and_2(WHILE_PREDECESSOR, dialect, bundle=False)
    direct, _ = links_1_and_2(WHILE_PREDECESSOR, dialect, bundle=False, isolate=False)
    for module in (isolated, direct):
        FlattenControlDepTupleOperands(FLATTEN[dialect]).run(module)
    assert (isolated.operation.get_asm(enable_debug_info=True)
            == direct.operation.get_asm(enable_debug_info=True))


# --------------------------------------------------------------------------
# The JAX corpus
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def with_edges() -> list[tuple[str, str]]:
    items = [(name, text) for name, text in corpus() if "control-predecessors" in text]
    assert len(items) >= 9  # at least one per program
    return items


def tupleish_operands(root) -> list[str]:
    return [f"{op.location}: operand {i} from {defining(v).name}"
            for op in ops(root) if is_control_dep(op)
            for i, v in enumerate(op.operands) if is_tupleish(v)]


@BOTH
@BUNDLE
def test_corpus_after_links_1_to_3(with_edges, dialect, bundle):
    """Every module verifies after every link; in main, no control-dep call
    keeps a tuple or get_tuple_element operand, and link #3 loses no edge."""
    rewritten = 0
    for name, text in with_edges:
        module, result = link_1(text, name, bundle)
        assert result.edges and result.count(Fate.DROPPED) == 0, name
        mlir = import_hlo(module, dialect, isolate=False, source_name=name)
        assert mlir.operation.verify(), name
        before = control_dep_edges(mlir)
        flat = FlattenControlDepTupleOperands(FLATTEN[dialect]).run(mlir)
        assert mlir.operation.verify(), name
        rewritten += flat.rewritten
        assert tupleish_operands(function(mlir, "main")) == [], name
        assert control_dep_edges(mlir) == before, name
        assert FlattenControlDepTupleOperands(FLATTEN[dialect]).run(mlir).changed is False, name
    # Without bundling XLA's importer makes no tuple here (the predecessors
    # are plain copies); with it, link #3 has work in most modules.
    assert (rewritten > 0) == bundle


@BOTH
def test_corpus_scope_all_leaves_no_tuple_anywhere(with_edges, dialect):
    """XLA CPU wraps loops in `call`ed computations (xla_cpu_small_call), which
    stay functions after link #2. The default scope (main) does not reach
    them; scope=all does."""
    missed_by_main = 0
    for name, text in with_edges:
        module, _ = link_1(text, name, bundle=True)
        mlir = import_hlo(module, dialect, isolate=False, source_name=name)
        again = ir.Module.parse(mlir.operation.get_asm(enable_debug_info=True), context=mlir.context)
        FlattenControlDepTupleOperands(FLATTEN[dialect]).run(mlir)
        missed_by_main += len(tupleish_operands(mlir))
        FlattenControlDepTupleOperands(FLATTEN[dialect], scope="all").run(again)
        assert again.operation.verify(), name
        assert tupleish_operands(again) == [], name
    assert missed_by_main > 0
