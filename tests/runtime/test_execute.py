"""Numerics: the Penguin program computes what JAX computes.

`Module.execute` runs the emitted program with numpy, in schedule order, the
control-dep custom-calls elided (their result aliases the data operand). Three
opinions are compared: JAX itself, our executor on the chain's output (both
dialects, before and after copy insertion), and StableHLO's reference
interpreter (`stablehlo.eval_module`) where the module is pure StableHLO.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import jaxlib._hlo as xla_hlo
import numpy as np
import pytest
from jax import lax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

import pipeline
from jax_programs import PROGRAMS, capture_dumps, corpus
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.xla.mlir_context import make_context
from pipeline.reading.capture import from_export
from pipeline.xla.versions import REFERENCE_SCATTER_WRITES_ITS_OPERAND
from pipeline.xla.isolated import canonical_text
from printer.attributes import attribute_source
from printer.penguin import ExecutionError, UnsupportedOp, dense, reduction_rules
from paths import CORPUS

DIALECTS = ["stablehlo", "mhlo"]
# Before the passes; the copy-insertion stage holding the most control edges
# (every program has some there); and the module copy insertion hands on.
STAGES = {"before": "before_optimizations", "interference": "after_adding_copies_to_resolve_interference",
          "after": "after_copy-insertion"}
BY_NAME = {name: (fn, args) for name, fn, args in PROGRAMS}


def run(text: str, dialect: str, **options):
    return pipeline.run(text, dialect=dialect, isolate=False, **options)


@functools.lru_cache(maxsize=None)
def chain(program: str, stage: str, dialect: str):
    (text,) = [t for n, t in corpus() if n.startswith(program + "/") and STAGES[stage] in n]
    return run(text, dialect)


def expected(fn, args) -> list[np.ndarray]:
    """JAX's answer, compiled as the dumps were (numpy inputs to an eager
    function would get numpy's semantics for `//`, `astype`, …)."""
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(jax.jit(fn)(*args))]


def assert_same(got, want, what=""):
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (what, g, w)
        if np.issubdtype(w.dtype, np.inexact) or w.dtype.name == "bfloat16":
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-5, atol=1e-6, err_msg=what)
        else:
            np.testing.assert_array_equal(g, w, err_msg=what)


def hlo(text: str) -> str:
    """A hand-written module, checked to be real HLO by XLA's own parser."""
    xla_hlo.hlo_module_from_text(text)
    return text


def other_args(args):
    """Same shapes, other values: arange inputs make some programs all zeros."""
    return tuple(np.asarray(a) * 1.5 + 1 for a in args)


# -- the corpus ----------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("stage", list(STAGES))
@pytest.mark.parametrize("program", list(BY_NAME))
def test_program_computes_what_jax_computes(program, stage, dialect):
    fn, args = BY_NAME[program]
    result = chain(program, stage, dialect)
    assert result.report.lost == []
    if stage == "interference":  # the numerics hold with the control deps elided
        assert result.report.dep_edges > 0
    module = result.module()
    for inputs in (args, other_args(args)):
        assert_same(module.execute(*inputs), expected(fn, inputs), f"{program} {stage} {dialect}")


@functools.lru_cache(maxsize=None)
def exported(program: str):
    return from_export(str(CORPUS / f"{program}.jaxexport"))


def arrays(folder: str, program: str) -> list[np.ndarray]:
    """inputs/<program>.npz or expected/<program>.npz, in argument (result) order."""
    with np.load(CORPUS / folder / f"{program}.npz") as data:
        return [data[k] for k in sorted(data.files, key=lambda k: int(k.rsplit("_", 1)[1]))]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("program", ["conv_in_loop", "cumsum_in_loop", "sort_in_loop", "top_k_in_loop"])
def test_corpus_convolution_reduce_window_sort_and_top_k(program, dialect):
    inputs, want = arrays("inputs", program), arrays("expected", program)
    modules = exported(program).modules
    assert modules
    for captured in modules:
        result = run(captured, dialect)
        assert result.report.lost == []
        assert_same(result.module().execute(*inputs), want, f"{captured.name} {dialect}")


@pytest.mark.parametrize("flatten", [True, False], ids=["flat", "unflattened"])
@pytest.mark.parametrize("bundle", [False, True], ids=["plain", "bundle"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_example_numerics_do_not_depend_on_how_edges_travel(dialect, bundle, flatten):
    x = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    module = run(EXAMPLE_HLO, dialect, bundle=bundle, flatten=flatten).module()
    scaled, copy = module.execute(x)
    np.testing.assert_array_equal(scaled, x * 8 * 2)  # three doublings in the loop, then * 2
    np.testing.assert_array_equal(copy, x)


# -- op coverage: small JAX programs beyond the corpus ------------------------------------


def floats(x, y):
    a = jnp.exp(x) + jnp.log(jnp.abs(y) + 1) * jnp.sqrt(jnp.abs(x)) - lax.rsqrt(jnp.abs(y) + 1)
    b = jnp.tanh(x) * lax.logistic(y) / (jnp.maximum(x, y) + 10) + jnp.minimum(x, y) ** 2 + lax.cbrt(y)
    c = jnp.where(x < y, jnp.floor(x), jnp.ceil(y)) + jnp.round(x * 3) + jnp.sign(y) + jnp.power(jnp.abs(x) + 1, y)
    d = jnp.clip(x, -0.5, 0.5) + jnp.expm1(x) - jnp.log1p(jnp.abs(y)) + jnp.sin(x) * jnp.cos(y) + jnp.arctan2(x, y)
    e = lax.round(x * 2, lax.RoundingMethod.AWAY_FROM_ZERO) + lax.tan(y / 4)
    return a, b, c, d, e, jnp.isfinite(x / y), x % y, lax.rem(x, y), lax.bitcast_convert_type(x, jnp.int32)


def ints(i, j):
    return (i // j, i % j, lax.div(i, j), lax.rem(i, j), i << (j & 7), i >> (j & 3),
            lax.shift_right_logical(i, j & 31), i & j, i | j, i ^ j, ~i, i * 65537 * 65537, -i, jnp.abs(i),
            jnp.maximum(i, j), i ** 3, i < j, (i == j) | (i > 0), i.astype(jnp.uint8), i.astype(jnp.float32) / 3)


def conversions(x):
    # out of range and NaN: XLA saturates, NaN → 0 (StableHLO leaves it to the implementation)
    return (x.astype(jnp.int32), x.astype(jnp.uint8), x.astype(jnp.int8), x.astype(jnp.uint32),
            x.astype(jnp.bool_), x.astype(jnp.bfloat16), x.astype(jnp.float16))


def shapes(m):
    padded = lax.pad(m, jnp.float32(-1), [(1, -1, 1), (0, 2, 0)])
    iota = lax.broadcasted_iota(jnp.int32, (3, 4), 1) + jnp.arange(3)[:, None]
    return (m.T, jnp.concatenate([m, m * 2], axis=1), padded, m[::-1, ::2], lax.slice(m, (0, 1), (3, 4), (2, 2)),
            jnp.broadcast_to(m[:, None, :], (3, 2, 4)), m.reshape(4, 3), iota, m[1],
            lax.dynamic_slice(m, (1, 2), (2, 2)))


def linalg(a, b, v):
    batched = jnp.einsum("bij,bjk->bik", a[None].repeat(2, 0), b[None].repeat(2, 0))
    return a @ b, batched, jnp.dot(v, v), jnp.outer(v, v), jnp.tensordot(a, b.T, axes=([1], [1]))


def reductions(m, k):
    return (m.sum(), m.sum(0), m.max(1), m.min(), m.prod(1), jnp.argmax(m, 1), jnp.argmin(m, 0), (m > 0).any(1),
            (m > 0).all(), k.sum(1), k.max(), jnp.mean(m, 1), jnp.var(m), jax.nn.softmax(m, axis=1),
            jax.nn.logsumexp(m))


def sorting(x, k):
    values, indices = lax.top_k(x, 3)  # HLO topk before optimizations, XLA CPU's "TopK" custom call after
    keys, payload = lax.sort((k, x), dimension=1, num_keys=2)  # a two-key comparator: run pair by pair
    return (jnp.sort(x, axis=1), jnp.argsort(x, axis=0), jnp.sort(x, axis=0, descending=True), keys, payload,
            values, indices)


def windows(x, img, kernel):
    def grouped(k):
        return lax.conv_general_dilated(img, k, (1, 2), ((1, 1), (2, 0)), rhs_dilation=(2, 1),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2)

    pool = lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (2, 1), ((1, 0), (0, 2)), window_dilation=(1, 2))
    total = lax.reduce_window(x, 0.0, lax.add, (3, 2), (1, 2), "SAME", base_dilation=(2, 1))
    depthwise = lax.conv_general_dilated(img, kernel[:, :, :1, :4], (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=4)
    kernel_grad = jax.grad(lambda k: (grouped(k) ** 2).sum())(kernel)  # batch_group_count=2 before optimizations
    return jnp.cumsum(x, axis=1), lax.cummax(x, axis=0), pool, total, grouped(kernel), depthwise, kernel_grad


_F = jnp.array([-1.5, 0.25, 2.0, -0.0, 3.7, -2.2], jnp.float32)
_G = jnp.array([0.5, -3.0, 2.0, 1.0, -0.7, 4.4], jnp.float32)
_M = jnp.arange(12, dtype=jnp.float32).reshape(3, 4) - 5.5
_RNG = np.random.RandomState(1)
OPS_PROGRAMS = {
    "floats": (floats, (_F, _G)),
    "ints": (ints, (jnp.array([7, -7, 2**31 - 1, -(2**31), 0, 13], jnp.int32),
                    jnp.array([2, -2, 3, -1, 5, 0], jnp.int32))),
    "conversions": (conversions, (jnp.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 300.7, -1.5, 0.4, 255.9],
                                            jnp.float32),)),
    "shapes": (shapes, (_M,)),
    "linalg": (linalg, (jnp.arange(12, dtype=jnp.float32).reshape(3, 4) / 7,
                        jnp.arange(20, dtype=jnp.float32).reshape(4, 5) / 3, jnp.arange(4, dtype=jnp.float32))),
    "reductions": (reductions, (_M, jnp.arange(12, dtype=jnp.int32).reshape(3, 4) * 100_000_000)),
    "sorting": (sorting, (jnp.array([[1.5, -0.0, 0.0, 1.5, -2.0, np.nan], [3.0, 3.0, -1.0, np.inf, -np.inf, 2.0],
                                     [0.5, -0.5, 0.5, -0.5, 7.0, -7.0], [0.0, np.nan, 2.5, 2.5, -0.0, 1.0]],
                                    jnp.float32),
                          jnp.array([[2, 1, 2, 1, 2, 1], [0, 0, 1, 1, 0, 0], [5, 4, 5, 4, 5, 4], [1] * 6], jnp.int32))),
    "windows": (windows, tuple(jnp.asarray(_RNG.standard_normal(shape), jnp.float32)
                               for shape in ((4, 6), (2, 5, 6, 4), (3, 2, 2, 6)))),
}


@functools.lru_cache(maxsize=None)
def ops_dumps(program: str) -> tuple[tuple[str, str], ...]:
    fn, args = OPS_PROGRAMS[program]
    return tuple(capture_dumps(fn, args, pass_re="none"))  # before_optimizations and after optimizations


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("stage", ["before_optimizations", "cpu_after_optimizations"])
@pytest.mark.parametrize("program", list(OPS_PROGRAMS))
def test_op_families_compute_what_jax_computes(program, stage, dialect):
    fn, args = OPS_PROGRAMS[program]
    (text,) = [t for n, t in ops_dumps(program) if n.endswith(stage + ".txt")]
    got = run(text, dialect).module().execute(*args)
    assert_same(got, expected(fn, args), f"{program} {stage} {dialect}")


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


# -- a third opinion: StableHLO's reference interpreter -------------------------------------
#
# eval_module runs pure StableHLO only, and an op it does not know (mhlo.copy,
# mhlo.fusion, mhlo.bitcast: every module from copy insertion on) aborts the
# whole process ("LLVM ERROR: Unsupported op"), so it is only ever given
# modules checked to be pure. Its scatter writes into its operand (jaxlib
# 0.10.2): a program that reads a buffer after scattering into it gets the
# wrong answer there. Those programs are strict xfails below.

SCATTER_ALIASES = {"scan_swap_inplace", "while_two_inplace"}


def pure_stablehlo(module: ir.Module) -> bool:
    names = set()

    def visit(op):
        names.add(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return all(n.split(".")[0] in ("stablehlo", "func", "builtin") for n in names)


def eval_module(module: ir.Module, args) -> list[np.ndarray]:
    assert pure_stablehlo(module)
    with module.context:
        inputs = [ir.DenseElementsAttr.get(np.asarray(a)) for a in args]
        return [np.array(ir.DenseElementsAttr(r)) for r in stablehlo.eval_module(module, inputs)]


@pytest.mark.parametrize("program", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="eval_module's scatter writes into its operand"))
    if p in SCATTER_ALIASES and REFERENCE_SCATTER_WRITES_ITS_OPERAND else p for p in BY_NAME])
def test_reference_interpreter_agrees(program):
    fn, args = BY_NAME[program]
    want = expected(fn, args)
    lowered = jax.jit(fn).lower(*args).compiler_ir("stablehlo")  # JAX's own StableHLO
    assert_same(eval_module(lowered, args), want, "eval_module on JAX's lowering")
    with make_context():  # the chain's StableHLO, before optimizations (no control deps yet)
        ours = ir.Module.parse(chain(program, "before", "stablehlo").flat_mlir)
        assert_same(eval_module(ours, args), want, "eval_module on the chain's StableHLO")


def test_modules_after_copy_insertion_are_not_pure_stablehlo():
    with make_context():
        module = ir.Module.parse(chain("while_swap_buffers", "after", "stablehlo").flat_mlir)
        assert not pure_stablehlo(module)  # mhlo.copy and friends: eval_module would abort


@pytest.mark.xfail(REFERENCE_SCATTER_WRITES_ITS_OPERAND, strict=True,
                   reason="eval_module's scatter writes into its operand (jaxlib 0.10.2; fixed in 0.12)")
def test_reference_interpreter_scatter_leaves_its_operand_alone():
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse("""
          func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
            %i = stablehlo.constant dense<[1]> : tensor<1xi32>
            %u = stablehlo.constant dense<9.0> : tensor<f32>
            %s = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
                inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>}> ({
              ^bb0(%old: tensor<f32>, %new: tensor<f32>):
                stablehlo.return %new : tensor<f32>
            }) : (tensor<4xf32>, tensor<1xi32>, tensor<f32>) -> tensor<4xf32>
            return %x, %s : tensor<4xf32>, tensor<4xf32>
          }""")
        x, s = eval_module(module, [np.arange(4, dtype=np.float32)])
    np.testing.assert_array_equal(s, [0, 9, 2, 3])
    np.testing.assert_array_equal(x, [0, 1, 2, 3])  # fails: x reads [0, 9, 2, 3]
