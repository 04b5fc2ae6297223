"""Numerics on hand-written modules, one per semantic point: integer
division and bits, dot_general, reduce, while, conditional, dynamic slices,
comparisons, bitcasts across layouts, constants and attributes as the printer
writes them; and what `Module.execute` refuses (an op it has no rule for,
wrong arguments). Each module is checked to be real HLO by XLA's parser, and
its numbers against numpy's or JAX's (tests/runtime/test_execute.py has the
corpus and the reference interpreter)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jaxlib.mlir import ir

from pipeline.xla.mlir_context import make_context
from pipeline.xla.isolated import canonical_text
from printer.attributes import attribute_source
from printer.penguin import ExecutionError, UnsupportedOp, dense
from execute_helpers import DIALECTS, hlo, run


# -- hand-written modules: one per semantic point ------------------------------------------

INTEGER_DIVISION = """\
HloModule integer_division

ENTRY %main (a: s32[8], b: s32[8], c: u32[3], d: u32[3]) -> (s32[8], s32[8], u32[3], u32[3]) {
  %a = s32[8]{0} parameter(0)
  %b = s32[8]{0} parameter(1)
  %c = u32[3]{0} parameter(2)
  %d = u32[3]{0} parameter(3)
  %q = s32[8]{0} divide(%a, %b)
  %r = s32[8]{0} remainder(%a, %b)
  %uq = u32[3]{0} divide(%c, %d)
  %ur = u32[3]{0} remainder(%c, %d)
  ROOT %t = (s32[8]{0}, s32[8]{0}, u32[3]{0}, u32[3]{0}) tuple(%q, %r, %uq, %ur)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_integer_division_truncates_toward_zero(dialect):
    int_min = np.iinfo(np.int32).min
    a = np.array([7, -7, 7, -7, 5, int_min, 0, -3], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1, 3, 0], np.int32)
    c, d = np.array([7, 5, 0], np.uint32), np.array([2, 0, 0], np.uint32)
    q, r, uq, ur = run(INTEGER_DIVISION, dialect).module().execute(a, b, c, d)
    # StableHLO: truncation (numpy's // floors), x / 0 = -1, INT_MIN / -1 = INT_MIN, x % 0 = x
    np.testing.assert_array_equal(q, [3, -3, -3, 3, -1, int_min, 0, -1])
    np.testing.assert_array_equal(r, [1, -1, 1, -1, 5, 0, 0, -3])
    np.testing.assert_array_equal(uq, [3, 0xFFFFFFFF, 0xFFFFFFFF])
    np.testing.assert_array_equal(ur, [1, 5, 0])
    # and XLA agrees
    for got, want in ((q, jax.lax.div(a, b)), (r, jax.lax.rem(a, b)), (uq, jax.lax.div(c, d)),
                      (ur, jax.lax.rem(c, d))):
        np.testing.assert_array_equal(got, np.asarray(want))


INTEGER_BITS = """\
HloModule integer_bits

ENTRY %main (a: s32[6], s: s32[6]) -> (s32[6], s32[6], s32[6], s32[6], s32[6]) {
  %a = s32[6]{0} parameter(0)
  %s = s32[6]{0} parameter(1)
  %add = s32[6]{0} add(%a, %a)
  %mul = s32[6]{0} multiply(%a, %a)
  %shl = s32[6]{0} shift-left(%a, %s)
  %sra = s32[6]{0} shift-right-arithmetic(%a, %s)
  %srl = s32[6]{0} shift-right-logical(%a, %s)
  ROOT %t = (s32[6]{0}, s32[6]{0}, s32[6]{0}, s32[6]{0}, s32[6]{0}) tuple(%add, %mul, %shl, %sra, %srl)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_integer_arithmetic_wraps_and_shifts_saturate_like_xla(dialect):
    a = np.array([2**31 - 1, -(2**31), -5, 12345, 7, -1], np.int32)
    s = np.array([1, 31, 1, 32, -1, 40], np.int32)  # 32, 40 and -1: out of range
    got = run(INTEGER_BITS, dialect).module().execute(a, s)
    lax = jax.lax
    want = [a + a, a * a, lax.shift_left(a, s), lax.shift_right_arithmetic(a, s), lax.shift_right_logical(a, s)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, np.asarray(w))


DOT_BATCH = """\
HloModule dot_batch

ENTRY %main (a: f32[2,3,4], b: f32[2,4,5], c: s32[3,2,4], d: s32[4,2,5]) -> (f32[2,3,5], s32[2,3,5]) {
  %a = f32[2,3,4]{2,1,0} parameter(0)
  %b = f32[2,4,5]{2,1,0} parameter(1)
  %c = s32[3,2,4]{2,1,0} parameter(2)
  %d = s32[4,2,5]{2,1,0} parameter(3)
  %leading = f32[2,3,5]{2,1,0} dot(%a, %b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  %inner = s32[2,3,5]{2,1,0} dot(%c, %d), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (f32[2,3,5]{2,1,0}, s32[2,3,5]{2,1,0}) tuple(%leading, %inner)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_dot_general_with_batch_dimensions(dialect):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4), np.float32), rng.standard_normal((2, 4, 5), np.float32)
    c, d = rng.integers(-9, 9, (3, 2, 4), np.int32), rng.integers(-9, 9, (4, 2, 5), np.int32)
    leading, inner = run(DOT_BATCH, dialect).module().execute(a, b, c, d)
    np.testing.assert_allclose(leading, np.einsum("bij,bjk->bik", a, b), rtol=1e-5)
    np.testing.assert_array_equal(inner, np.einsum("ibj,jbk->bik", c, d))  # batch first, then free dims


REDUCE = """\
HloModule reduce

%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}

%max_by_select (x.1: f32[], y.1: f32[]) -> f32[] {
  %x.1 = f32[] parameter(0)
  %y.1 = f32[] parameter(1)
  %gt = pred[] compare(%x.1, %y.1), direction=GT
  ROOT %pick = f32[] select(%gt, %x.1, %y.1)
}

%argmax (v0: f32[], i0: s32[], v1: f32[], i1: s32[]) -> (f32[], s32[]) {
  %v0 = f32[] parameter(0)
  %i0 = s32[] parameter(1)
  %v1 = f32[] parameter(2)
  %i1 = s32[] parameter(3)
  %keep = pred[] compare(%v0, %v1), direction=GE
  %v = f32[] select(%keep, %v0, %v1)
  %i = s32[] select(%keep, %i0, %i1)
  ROOT %vi = (f32[], s32[]) tuple(%v, %i)
}

ENTRY %main (a: f32[3,4]) -> (f32[3], f32[4], f32[4], s32[3]) {
  %a = f32[3,4]{1,0} parameter(0)
  %ninf = f32[] constant(-inf)
  %rows = f32[3]{0} reduce(%a, %ninf), dimensions={1}, to_apply=%max
  %cols = f32[4]{0} reduce(%a, %ninf), dimensions={0}, to_apply=%max
  %cols.select = f32[4]{0} reduce(%a, %ninf), dimensions={0}, to_apply=%max_by_select
  %iota = s32[3,4]{1,0} iota(), iota_dimension=1
  %zero = s32[] constant(0)
  %am = (f32[3]{0}, s32[3]{0}) reduce(%a, %iota, %ninf, %zero), dimensions={1}, to_apply=%argmax
  %am.v = f32[3]{0} get-tuple-element(%am), index=0
  %am.i = s32[3]{0} get-tuple-element(%am), index=1
  ROOT %t = (f32[3]{0}, f32[4]{0}, f32[4]{0}, s32[3]{0}) tuple(%rows, %cols, %cols.select, %am.i)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_reduce_with_a_max_reducer_a_general_region_and_two_operands(dialect):
    a = np.array([[1, 9, -3, 4], [-7, -2, -8, -1], [5, 5, 0, 6]], np.float32)
    rows, cols, cols_select, argmax = run(REDUCE, dialect).module().execute(a)
    np.testing.assert_array_equal(rows, a.max(axis=1))  # the ufunc path
    np.testing.assert_array_equal(cols, a.max(axis=0))
    np.testing.assert_array_equal(cols_select, a.max(axis=0))  # the general fold
    np.testing.assert_array_equal(argmax, a.argmax(axis=1))  # variadic: a fold over pairs


WHILE = """\
HloModule loop

%cond (s: (s32[], s32[])) -> pred[] {
  %s = (s32[], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s.1: (s32[], s32[])) -> (s32[], s32[]) {
  %s.1 = (s32[], s32[]) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %acc = s32[] get-tuple-element(%s.1), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i.1, %one)
  %sum = s32[] add(%acc, %i.1)
  ROOT %out = (s32[], s32[]) tuple(%next, %sum)
}

ENTRY %main (start: s32[]) -> s32[] {
  %start = s32[] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], s32[]) tuple(%start, %zero)
  %loop = (s32[], s32[]) while(%init), condition=%cond, body=%body
  ROOT %total = s32[] get-tuple-element(%loop), index=1
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_while_loop(dialect):
    module = run(WHILE, dialect).module()
    assert module.execute(np.int32(0)) == (np.int32(45),)
    assert module.execute(np.int32(7)) == (np.int32(7 + 8 + 9),)
    assert module.execute(np.int32(99)) == (np.int32(0),)  # the body never runs


CONDITIONAL = """\
HloModule conditional

%neg (p0: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p0)
}

%exp (p1: f32[4]) -> f32[4] {
  %p1 = f32[4]{0} parameter(0)
  ROOT %e = f32[4]{0} exponential(%p1)
}

%abs (p2: f32[4]) -> f32[4] {
  %p2 = f32[4]{0} parameter(0)
  ROOT %a = f32[4]{0} abs(%p2)
}

ENTRY %main (p: pred[], k: s32[], x: f32[4]) -> (f32[4], f32[4]) {
  %p = pred[] parameter(0)
  %k = s32[] parameter(1)
  %x = f32[4]{0} parameter(2)
  %if = f32[4]{0} conditional(%p, %x, %x), true_computation=%neg, false_computation=%exp
  %case = f32[4]{0} conditional(%k, %x, %x, %x), branch_computations={%neg, %exp, %abs}
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%if, %case)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_conditional_by_predicate_and_by_index(dialect):
    module = run(CONDITIONAL, dialect).module()
    x = np.array([-1.0, 0.0, 0.5, 2.0], np.float32)
    branches = [-x, np.exp(x), np.abs(x)]
    for p in (True, False):
        got, _ = module.execute(np.bool_(p), np.int32(0), x)
        np.testing.assert_allclose(got, -x if p else np.exp(x), rtol=1e-6)
    for k, branch in ((0, 0), (1, 1), (2, 2), (3, 2), (-1, 2)):  # out of range: the last branch
        _, got = module.execute(np.bool_(True), np.int32(k), x)
        np.testing.assert_allclose(got, branches[branch], rtol=1e-6)


DYNAMIC_UPDATE_SLICE = """\
HloModule dus

ENTRY %main (x: f32[4,5], u: f32[2,3], i: s32[], j: s32[]) -> (f32[4,5], f32[2,3]) {
  %x = f32[4,5]{1,0} parameter(0)
  %u = f32[2,3]{1,0} parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  %dus = f32[4,5]{1,0} dynamic-update-slice(%x, %u, %i, %j)
  %ds = f32[2,3]{1,0} dynamic-slice(%x, %i, %j), dynamic_slice_sizes={2,3}
  ROOT %t = (f32[4,5]{1,0}, f32[2,3]{1,0}) tuple(%dus, %ds)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_dynamic_update_slice_clamps_its_start(dialect):
    module = run(DYNAMIC_UPDATE_SLICE, dialect).module()
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    u = -np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    for (i, j), (ci, cj) in (((1, 1), (1, 1)), ((3, 4), (2, 2)), ((-1, -5), (0, 0))):
        dus, ds = module.execute(x, u, np.int32(i), np.int32(j))
        want = x.copy()
        want[ci:ci + 2, cj:cj + 3] = u
        np.testing.assert_array_equal(dus, want)
        np.testing.assert_array_equal(ds, x[ci:ci + 2, cj:cj + 3])
    np.testing.assert_array_equal(x, np.arange(20, dtype=np.float32).reshape(4, 5))  # operand untouched


UNSUPPORTED = hlo("""\
HloModule unsupported

ENTRY %main (x: f32[2,2]) -> f32[2,2] {
  %x = f32[2,2]{1,0} parameter(0)
  ROOT %factor = f32[2,2]{1,0} cholesky(%x), lower=true
}
""")

UNKNOWN_CUSTOM_CALL = hlo("""\
HloModule unknown_custom_call

ENTRY %main (x: f32[2,2]) -> f32[2,2] {
  %x = f32[2,2]{1,0} parameter(0)
  ROOT %mystery = f32[2,2]{1,0} custom-call(%x), custom_call_target="Mystery"
}
""")


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("text,op,why", [
    (UNSUPPORTED, r"cholesky \(instruction %factor", "the executor has no rule for it"),
    (UNKNOWN_CUSTOM_CALL, r"custom_call \(instruction %mystery", "no rule for custom call target 'Mystery'"),
], ids=["op", "custom_call"])
def test_an_unsupported_op_is_named_with_its_instruction(dialect, text, op, why):
    module = run(text, dialect).module()
    with pytest.raises(UnsupportedOp, match=rf"unsupported op {dialect}\.{op} in computation main\): {why}"):
        module.execute(np.eye(2, dtype=np.float32))


def test_wrong_arguments_are_refused_by_name():
    module = run(WHILE, "stablehlo").module()
    with pytest.raises(ExecutionError, match="takes 1 argument"):
        module.execute()
    with pytest.raises(ExecutionError, match=r"argument start of main: shape \(2,\)"):
        module.execute(np.zeros(2, np.int32))
    with pytest.raises(ExecutionError, match=r"float64 does not convert safely to tensor<i32>"):
        module.execute(np.float64(1.5))
    with pytest.raises(ExecutionError, match="no function 'nope'"):
        module.execute(np.int32(0), function="nope")


COMPARE_TYPES = """\
HloModule compare_types

ENTRY %main (a: f32[6], b: f32[6], c: s32[3], d: s32[3]) -> (pred[6], pred[6], pred[3]) {
  %a = f32[6]{0} parameter(0)
  %b = f32[6]{0} parameter(1)
  %c = s32[3]{0} parameter(2)
  %d = s32[3]{0} parameter(3)
  %total = pred[6]{0} compare(%a, %b), direction=LT, type=TOTALORDER
  %partial = pred[6]{0} compare(%a, %b), direction=LT
  %unsigned = pred[3]{0} compare(%c, %d), direction=LT, type=UNSIGNED
  ROOT %t = (pred[6]{0}, pred[6]{0}, pred[3]{0}) tuple(%total, %partial, %unsigned)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_compare_types(dialect):
    minus_nan = np.copysign(np.float32(np.nan), np.float32(-1))
    a = np.array([minus_nan, -np.inf, -0.0, 0.0, 1.0, np.nan], np.float32)
    b = np.array([-np.inf, -0.0, 0.0, np.nan, np.nan, np.nan], np.float32)
    c, d = np.array([-1, 1, 5], np.int32), np.array([1, -1, 6], np.int32)
    total, partial, unsigned = run(COMPARE_TYPES, dialect).module().execute(a, b, c, d)
    np.testing.assert_array_equal(total, [True, True, True, True, True, False])  # -NaN < -Inf < -0 < +0 < NaN
    np.testing.assert_array_equal(partial, [False, True, False, False, False, False])
    if "type=UNSIGNED" in canonical_text(COMPARE_TYPES):  # XLA 0.10.2 keeps the type ...
        np.testing.assert_array_equal(unsigned, [False, True, True])  # -1 is 0xFFFFFFFF
    else:  # ... 0.12's parser drops it: s32 compares signed (pipeline.xla.versions)
        np.testing.assert_array_equal(unsigned, [True, False, True])


BITCAST_LAYOUTS = """\
HloModule bitcast_layouts

ENTRY %main (x: f32[3,4]) -> (f32[4,3], f32[12]) {
  %x = f32[3,4]{1,0} parameter(0)
  %columns = f32[4,3]{0,1} bitcast(%x)
  %flat = f32[12]{0} bitcast(%x)
  ROOT %t = (f32[4,3]{0,1}, f32[12]{0}) tuple(%columns, %flat)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_bitcast_keeps_the_bytes_across_layouts(dialect):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    columns, flat = run(BITCAST_LAYOUTS, dialect).module().execute(x)
    np.testing.assert_array_equal(columns, x.T)  # column-major [4,3] over row-major [3,4] bytes
    np.testing.assert_array_equal(flat, x.reshape(-1))


# -- constants and attributes as the printer writes them -----------------------------------


def _constants_module() -> str:
    big = ", ".join(str(i * 0.25) for i in range(2000))
    splat = "{" + ", ".join(["{" + ", ".join(["0.5"] * 64) + "}"] * 64) + "}"
    return f"""\
HloModule constants

ENTRY %main (x: f32[64,64]) -> (f32[64,64], f32[2000], bf16[3], s32[2,2]) {{
  %x = f32[64,64]{{1,0}} parameter(0)
  %half = f32[64,64]{{1,0}} constant({splat})
  %sum = f32[64,64]{{1,0}} add(%x, %half)
  %big = f32[2000]{{0}} constant({{{big}}})
  %bf = bf16[3]{{0}} constant({{1.5, -0.1, 3}})
  %small = s32[2,2]{{1,0}} constant({{ {{1, -2}}, {{2147483647, 0}} }})
  ROOT %t = (f32[64,64]{{1,0}}, f32[2000]{{0}}, bf16[3]{{0}}, s32[2,2]{{1,0}}) tuple(%sum, %big, %bf, %small)
}}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_splat_large_bf16_and_integer_constants(dialect):
    result = run(_constants_module(), dialect)
    source = result.penguin_source
    assert "dense(0.5, 'f32', (64, 64))" in source  # a splat stays one value
    assert "dense(bytes.fromhex('" in source  # a large constant: raw bytes, not 2000 literals
    assert "dense([[1, -2], [2147483647, 0]], 'i32', (2, 2))" in source
    assert run(_constants_module(), dialect).penguin_source == source  # byte-identical on reruns
    x = np.ones((64, 64), np.float32)
    total, big, bf, small = result.module().execute(x)
    np.testing.assert_array_equal(total, np.full((64, 64), 1.5, np.float32))
    np.testing.assert_array_equal(big, np.arange(2000, dtype=np.float32) * 0.25)
    assert str(bf.dtype) == "bfloat16" and bf.astype(np.float32).tolist() == [1.5, -0.10009765625, 3.0]
    np.testing.assert_array_equal(small, [[1, -2], [2**31 - 1, 0]])


@pytest.mark.parametrize("name,text,source", [
    ("value", "dense<[0x7FC00000, 0xFF800000]> : tensor<2xf32>", "dense([float('nan'), float('-inf')], 'f32', (2,))"),
    ("value", "dense<[0.1, -0.0]> : tensor<2xf32>", "dense([0.1, -0.0], 'f32', (2,))"),  # shortest f32 literal
    ("value", "dense<true> : tensor<3xi1>", "dense(True, 'i1', (3,))"),  # a splat stays one value
    ("value", "dense<255> : tensor<ui8>", "dense(255, 'ui8', ())"),
    ("value", "dense<[1, 2]> : tensor<2xi64>", "dense([1, 2], 'i64', (2,))"),
    ("slice_sizes", "dense<[1, 4]> : tensor<2xi64>", "(1, 4)"),  # MHLO's dimension lists and layouts
    ("source_layout", "dense<> : tensor<0xindex>", "()"),
    ("slice_sizes", "array<i64: 1, 4>", "(1, 4)"),
    ("broadcast_dimensions", "array<i64>", "()"),
    ("comparison_direction", "#mhlo<comparison_direction GE>", "'GE'"),
    ("compare_type", "#stablehlo<comparison_type TOTALORDER>", "'TOTALORDER'"),
    ("dot_dimension_numbers", "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], "
     "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>",
     "{'lhs_batching_dimensions': (0,), 'lhs_contracting_dimensions': (2,), "
     "'rhs_batching_dimensions': (1,), 'rhs_contracting_dimensions': (0,)}"),
    ("dimension_numbers", "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, f, 0, 1]>",
     "{'input_batch_dimension': 0, 'input_feature_dimension': 3, 'input_spatial_dimensions': (1, 2), "
     "'kernel_input_feature_dimension': 2, 'kernel_output_feature_dimension': 3, 'kernel_spatial_dimensions': (0, 1), "
     "'output_batch_dimension': 0, 'output_feature_dimension': 1, 'output_spatial_dimensions': (2, 3)}"),
    ("dimension_numbers", "#mhlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>",
     "{'input_batch_dimension': 0, 'input_feature_dimension': 1, 'input_spatial_dimensions': (2,), "
     "'kernel_input_feature_dimension': 1, 'kernel_output_feature_dimension': 0, 'kernel_spatial_dimensions': (2,), "
     "'output_batch_dimension': 0, 'output_feature_dimension': 1, 'output_spatial_dimensions': (2,)}"),
    ("padding", "dense<[[4, 0], [0, 1]]> : tensor<2x2xi64>", "((4, 0), (0, 1))"),  # MHLO's window attributes
    ("window_reversal", "dense<[true, false]> : tensor<2xi1>", "(True, False)"),
    ("window_reversal", "array<i1: false, true>", "(False, True)"),  # StableHLO's
    ("callee", "@closed_call.2", "'closed_call.2'"),
    ("iota_dimension", "1 : i64", "1"),
    ("fusion_kind", "#mhlo<fusion_kind kLoop>", "'#mhlo<fusion_kind kLoop>'"),  # not needed to run: its text
])
def test_attribute_source(name, text, source):
    with make_context():
        assert attribute_source(name, ir.Attribute.parse(text)) == source


def test_dense_is_read_only_and_exact():
    nan = dense([float("nan"), 1.0], "f32", (2,))
    assert nan.dtype == np.float32 and np.isnan(nan[0]) and not nan.flags.writeable
    raw = np.arange(3, dtype="<i4").tobytes()
    np.testing.assert_array_equal(dense(raw, "i32", (3,)), [0, 1, 2])
    np.testing.assert_array_equal(dense(7, "ui8", (2, 2)), np.full((2, 2), 7, np.uint8))
