"""Numerics of the executor's largest rules on hand-written modules, against
JAX or numpy: sort (by key, descending, in total order, with payloads,
lexicographic), reduce_window (strides, padding, dilations, regions),
convolution (layouts, groups, dilations, reversal) and top_k (the custom
call and the op, ties broken toward the lower index)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from printer.penguin import reduction_rules
from execute_helpers import DIALECTS, assert_same, hlo, run


# -- sort, reduce_window, convolution, top_k: hand-written, against JAX or numpy ------------

SORTS = hlo("""\
HloModule sorts

%lt (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}

%gt_total (e: f32[], f: f32[]) -> pred[] {
  %e = f32[] parameter(0)
  %f = f32[] parameter(1)
  ROOT %gt = pred[] compare(%e, %f), direction=GT, type=TOTALORDER
}

%payload_rhs_lt_lhs (g: f32[], h: f32[], i: s32[], j: s32[]) -> pred[] {
  %g = f32[] parameter(0)
  %h = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %lt.1 = pred[] compare(%j, %i), direction=LT
}

%lexicographic (k: f32[], l: f32[], m: s32[], n: s32[]) -> pred[] {
  %k = f32[] parameter(0)
  %l = f32[] parameter(1)
  %m = s32[] parameter(2)
  %n = s32[] parameter(3)
  %less = pred[] compare(%k, %l), direction=LT
  %same = pred[] compare(%k, %l), direction=EQ
  %greater = pred[] compare(%m, %n), direction=GT
  %then = pred[] and(%same, %greater)
  ROOT %either = pred[] or(%less, %then)
}

ENTRY %main (x: f32[3,6], y: s32[3,6]) -> (f32[3,6], s32[3,6], f32[3,6], f32[3,6], s32[3,6], f32[3,6], s32[3,6]) {
  %x = f32[3,6]{1,0} parameter(0)
  %y = s32[3,6]{1,0} parameter(1)
  %by_x = (f32[3,6]{1,0}, s32[3,6]{1,0}) sort(%x, %y), dimensions={1}, is_stable=true, to_apply=%lt
  %by_x.x = f32[3,6]{1,0} get-tuple-element(%by_x), index=0
  %by_x.y = s32[3,6]{1,0} get-tuple-element(%by_x), index=1
  %descending = f32[3,6]{1,0} sort(%x), dimensions={0}, to_apply=%gt_total
  %by_y = (f32[3,6]{1,0}, s32[3,6]{1,0}) sort(%x, %y), dimensions={1}, is_stable=true, to_apply=%payload_rhs_lt_lhs
  %by_y.x = f32[3,6]{1,0} get-tuple-element(%by_y), index=0
  %by_y.y = s32[3,6]{1,0} get-tuple-element(%by_y), index=1
  %lex = (f32[3,6]{1,0}, s32[3,6]{1,0}) sort(%x, %y), dimensions={1}, is_stable=true, to_apply=%lexicographic
  %lex.x = f32[3,6]{1,0} get-tuple-element(%lex), index=0
  %lex.y = s32[3,6]{1,0} get-tuple-element(%lex), index=1
  ROOT %t = (f32[3,6]{1,0}, s32[3,6]{1,0}, f32[3,6]{1,0}, f32[3,6]{1,0}, s32[3,6]{1,0}, f32[3,6]{1,0}, s32[3,6]{1,0}) tuple(%by_x.x, %by_x.y, %descending, %by_y.x, %by_y.y, %lex.x, %lex.y)
}
""")


def total_order_keys(x):
    """f32 as int64 in IEEE totalOrder, computed apart from the executor's."""
    bits = x.view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)


def permuted(order, axis, *arrays):
    return [np.take_along_axis(a, order, axis) for a in arrays]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_sort_by_key_descending_in_total_order_by_payload_and_lexicographic(dialect, monkeypatch):
    nan = np.float32(np.nan)
    x = np.array([[1.5, -0.0, 0.0, 1.5, -2.0, 0.0], [3.0, 3.0, -1.0, np.inf, -np.inf, 2.0],
                  [0.5, -0.5, 0.5, -0.5, 7.0, -7.0]], np.float32)
    y = np.array([[3, 1, 4, 1, 5, 9], [2, 6, 5, 3, 5, 8], [9, 7, 9, 3, 2, 3]], np.int32)
    with_nans = x.copy()
    with_nans[1, 3], with_nans[2, 1] = nan, -nan
    compared = []  # rows sorted by running the comparator on pairs
    by_pairs = reduction_rules._comparison_sort
    monkeypatch.setattr(reduction_rules, "_comparison_sort", lambda *a: compared.append(a) or by_pairs(*a))
    module = run(SORTS, dialect).module()
    by_x_x, by_x_y, _, by_y_x, by_y_y, lex_x, lex_y = module.execute(x, y)
    # LT on operand 0 (-0.0 == 0.0: ties, kept in order), every operand permuted alike
    assert_same([by_x_x, by_x_y], permuted(np.argsort(x, 1, kind="stable"), 1, x, y))
    # rhs < lhs on operand 1: descending by y, stable
    assert_same([by_y_x, by_y_y], permuted(np.argsort(-y, 1, kind="stable"), 1, x, y))
    # (x ascending, then y descending): no key to sort by; the region decides each pair
    assert_same([lex_x, lex_y], permuted(np.lexsort((-y, x), axis=1), 1, x, y))
    assert len(compared) == 1
    # GT in total order along dimension 0, NaNs included: NaN > inf > … > 0.0 > -0.0 > … > -NaN
    descending = module.execute(with_nans, y)[2]
    want = permuted(np.argsort(-total_order_keys(with_nans), 0, kind="stable"), 0, with_nans)[0]
    np.testing.assert_array_equal(descending.view(np.int32), want.view(np.int32))  # the bits: NaN signs, zeros
    # Pair by pair again: lex, and the LT on operand 0, NaN being unordered there; never a total order
    assert len(compared) == 3


REDUCE_WINDOWS = hlo("""\
HloModule reduce_windows

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}

%add (c: s32[], d: s32[]) -> s32[] {
  %c = s32[] parameter(0)
  %d = s32[] parameter(1)
  ROOT %s = s32[] add(%c, %d)
}

%max_by_select (e: f32[], f: f32[]) -> f32[] {
  %e = f32[] parameter(0)
  %f = f32[] parameter(1)
  %gt = pred[] compare(%e, %f), direction=GT
  ROOT %sel = f32[] select(%gt, %e, %f)
}

%argmax (v: f32[], i: s32[], w: f32[], j: s32[]) -> (f32[], s32[]) {
  %v = f32[] parameter(0)
  %i = s32[] parameter(1)
  %w = f32[] parameter(2)
  %j = s32[] parameter(3)
  %bigger = pred[] compare(%w, %v), direction=GT
  %tie = pred[] compare(%w, %v), direction=EQ
  %earlier = pred[] compare(%j, %i), direction=LT
  %tie.earlier = pred[] and(%tie, %earlier)
  %take = pred[] or(%bigger, %tie.earlier)
  %value = f32[] select(%take, %w, %v)
  %index = s32[] select(%take, %j, %i)
  ROOT %pair = (f32[], s32[]) tuple(%value, %index)
}

ENTRY %main (x: f32[5,6], y: s32[5,6]) -> (f32[3,4], s32[9,3], f32[3,4], s32[3,4], s32[5,6]) {
  %x = f32[5,6]{1,0} parameter(0)
  %y = s32[5,6]{1,0} parameter(1)
  %ninf = f32[] constant(-inf)
  %zero = s32[] constant(0)
  %one = s32[] constant(1)
  %pool = f32[3,4]{1,0} reduce-window(%x, %ninf), window={size=2x3 stride=2x1 pad=1_0x0_2 rhs_dilate=1x2}, to_apply=%max
  %dilated = s32[9,3]{1,0} reduce-window(%y, %zero), window={size=3x2 stride=1x2 pad=1_1x0_1 lhs_dilate=2x1}, to_apply=%add
  %pool.select = f32[3,4]{1,0} reduce-window(%x, %ninf), window={size=2x3 stride=2x1 pad=1_0x0_2 rhs_dilate=1x2}, to_apply=%max_by_select
  %iota = s32[5,6]{1,0} iota(), iota_dimension=1
  %arg = (f32[3,4]{1,0}, s32[3,4]{1,0}) reduce-window(%x, %iota, %ninf, %zero), window={size=2x3 stride=2x1 pad=1_0x0_2 rhs_dilate=1x2}, to_apply=%argmax
  %arg.i = s32[3,4]{1,0} get-tuple-element(%arg), index=1
  %cumsum.plus_one = s32[5,6]{1,0} reduce-window(%y, %one), window={size=1x6 pad=0_0x5_0}, to_apply=%add
  ROOT %t = (f32[3,4]{1,0}, s32[9,3]{1,0}, f32[3,4]{1,0}, s32[3,4]{1,0}, s32[5,6]{1,0}) tuple(%pool, %dilated, %pool.select, %arg.i, %cumsum.plus_one)
}
""")


def _argmax_pair(a, b):
    (v, i), (w, j) = a, b
    take = (w > v) | ((w == v) & (j < i))
    return jnp.where(take, w, v), jnp.where(take, j, i)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_reduce_window_strides_padding_dilations_and_regions(dialect):
    rng = np.random.RandomState(0)
    x, y = rng.standard_normal((5, 6)).astype(np.float32), rng.randint(-50, 50, (5, 6)).astype(np.int32)
    pool, dilated, pool_select, argmax, cumsum = run(REDUCE_WINDOWS, dialect).module().execute(x, y)
    window = dict(window_dimensions=(2, 3), window_strides=(2, 1), padding=((1, 0), (0, 2)), window_dilation=(1, 2))
    want_pool = lax.reduce_window(x, -np.inf, lax.max, **window)
    assert_same([pool, pool_select], [np.asarray(want_pool)] * 2)  # the ufunc; an elementwise region
    want_dilated = lax.reduce_window(y, np.int32(0), lax.add, (3, 2), (1, 2), ((1, 1), (0, 1)), base_dilation=(2, 1))
    assert_same([dilated], [np.asarray(want_dilated)])
    iota = np.broadcast_to(np.arange(6, dtype=np.int32), (5, 6))
    _, want_argmax = lax.reduce_window((x, iota), (np.float32(-np.inf), np.int32(0)), _argmax_pair, **window)
    assert_same([argmax], [np.asarray(want_argmax)])  # two operands through a two-pair region
    # An init that is not the reducer's identity: the StableHLO spec pads with it, so each
    # padded position adds 1 (XLA CPU skips padding instead: jax.lax.reduce_window gives
    # cumsum + 1; stablehlo.eval_module gives this).
    padded = np.concatenate([np.ones((5, 5), np.int32), y], axis=1)
    want = np.stack([padded[:, j:j + 6].sum(1) for j in range(6)], axis=1) + 1
    np.testing.assert_array_equal(cumsum, want)


CONVOLUTIONS = hlo("""\
HloModule convolutions

ENTRY %main (x: f32[2,5,4,4], k: f32[2,3,2,6], d: f32[1,3,4,6], dk: f32[3,1,3,3], b: f32[4,5,3], bk: f32[2,3,4]) -> (f32[2,6,3,6], f32[1,3,4,6], f32[2,4,4]) {
  %x = f32[2,5,4,4]{3,2,1,0} parameter(0)
  %k = f32[2,3,2,6]{3,2,1,0} parameter(1)
  %d = f32[1,3,4,6]{3,2,1,0} parameter(2)
  %dk = f32[3,1,3,3]{3,2,1,0} parameter(3)
  %b = f32[4,5,3]{2,1,0} parameter(4)
  %bk = f32[2,3,4]{2,1,0} parameter(5)
  %grouped = f32[2,6,3,6]{3,2,1,0} convolution(%x, %k), window={size=2x3 stride=2x1 pad=1_2x0_1 lhs_dilate=1x2 rhs_dilate=2x1}, dim_labels=b01f_01io->bf01, feature_group_count=2
  %depthwise = f32[1,3,4,6]{3,2,1,0} convolution(%d, %dk), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x0}, dim_labels=bf01_oi01->bf01, feature_group_count=3
  %batch_grouped = f32[2,4,4]{2,1,0} convolution(%b, %bk), window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2
  ROOT %t = (f32[2,6,3,6]{3,2,1,0}, f32[1,3,4,6]{3,2,1,0}, f32[2,4,4]{2,1,0}) tuple(%grouped, %depthwise, %batch_grouped)
}
""")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_convolution_layouts_groups_dilations_and_reversal(dialect):
    rng = np.random.RandomState(0)
    shapes = [(2, 5, 4, 4), (2, 3, 2, 6), (1, 3, 4, 6), (3, 1, 3, 3), (4, 5, 3), (2, 3, 4)]
    x, k, d, dk, b, bk = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    result = run(CONVOLUTIONS, dialect)
    assert run(CONVOLUTIONS, dialect).penguin_source == result.penguin_source  # byte-identical on reruns
    grouped, depthwise, batch_grouped = result.module().execute(x, k, d, dk, b, bk)
    want = [
        # NHWC input, HWIO kernel, NCHW output; strides, padding, both dilations, 2 feature groups
        lax.conv_general_dilated(x, k, (2, 1), ((1, 2), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                                 dimension_numbers=("NHWC", "HWIO", "NCHW"), feature_group_count=2),
        # depthwise, the kernel reversed along H (JAX has no reversal: flip it)
        lax.conv_general_dilated(d, np.flip(dk, 2), (1, 1), ((1, 1), (1, 1)),
                                 dimension_numbers=("NCHW", "OIHW", "NCHW"), feature_group_count=3),
        lax.conv_general_dilated(b, bk, (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC"), batch_group_count=2),
    ]
    assert_same([grouped, depthwise, batch_grouped], [np.asarray(w) for w in want])


TOP_K = hlo("""\
HloModule top_k

%greater (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %gt = pred[] compare(%a, %b), direction=GT, type=TOTALORDER
}

ENTRY %main (x: f32[3,8]) -> (f32[3,3], s32[3,3], f32[3,2], s32[3,2]) {
  %x = f32[3,8]{1,0} parameter(0)
  %top = (f32[3,3]{1,0}, s32[3,3]{1,0}) custom-call(%x), custom_call_target="TopK", called_computations={%greater}
  %top.v = f32[3,3]{1,0} get-tuple-element(%top), index=0
  %top.i = s32[3,3]{1,0} get-tuple-element(%top), index=1
  %low = (f32[3,2]{1,0}, s32[3,2]{1,0}) topk(%x), k=2, largest=false
  %low.v = f32[3,2]{1,0} get-tuple-element(%low), index=0
  %low.i = s32[3,2]{1,0} get-tuple-element(%low), index=1
  ROOT %t = (f32[3,3]{1,0}, s32[3,3]{1,0}, f32[3,2]{1,0}, s32[3,2]{1,0}) tuple(%top.v, %top.i, %low.v, %low.i)
}
""")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_top_k_custom_call_and_topk_break_ties_toward_the_lower_index(dialect):
    x = np.array([[1.0, 3.0, 3.0, -0.0, 0.0, np.nan, -np.inf, 2.0],
                  [0.0, -0.0, 0.0, -0.0, 1.0, 1.0, -1.0, -1.0],
                  [5, 4, 3, 2, 1, 0, -1, -2]], np.float32)
    values, indices, low_values, low_indices = run(TOP_K, dialect).module().execute(x)
    want_values, want_indices = jax.jit(lambda x: lax.top_k(x, 3))(x)  # XLA CPU runs its TopK
    np.testing.assert_array_equal(values.view(np.int32), np.asarray(want_values).view(np.int32))  # NaN, ±0
    assert_same([indices], [np.asarray(want_indices)])
    assert indices.tolist() == [[5, 1, 2], [4, 5, 0], [0, 1, 2]]  # NaN first; 0.0 above -0.0; ties: lower index
    smallest = np.argsort(total_order_keys(x), 1, kind="stable")[:, :2]
    assert_same([low_indices, low_values], [smallest.astype(np.int32), np.take_along_axis(x, smallest, 1)])
