"""Rules for the elementwise, shape and control-flow ops.

Semantics follow the StableHLO specification where numpy differs: integer
division truncates toward zero (x / 0 = -1, x % 0 = x), shifts by the bit
width or more give 0 (or the sign), float → int conversion saturates (NaN → 0).
Integer arithmetic wraps as numpy's does.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from printer.penguin.graph import Block
from printer.penguin.registry import (
    UnsupportedOp, as_results, attr, is_float, op_suffix, rule, shape_dtype)


# -- elementwise -------------------------------------------------------------------


def _is_int(x) -> bool:
    return np.issubdtype(x.dtype, np.integer)


def _all_ones(x):
    return ~np.zeros_like(x)  # -1 signed, the maximum unsigned


def _divide(a, b):
    if not _is_int(a):
        return np.divide(a, b)
    safe = np.where(b == 0, 1, b).astype(a.dtype)
    q = a // safe  # floor; move toward zero where the signs differ and it is not exact
    q = q + ((q < 0) & (q * safe != a)).astype(a.dtype)
    return np.where(b == 0, _all_ones(q), q)


def _remainder(a, b):
    if not _is_int(a):
        return np.fmod(a, b)
    return np.where(b == 0, a, a - _divide(a, b) * b)  # sign of the dividend; INT_MIN % -1 = 0


def _power(a, b):
    if not _is_int(a):
        return np.power(a, b)
    # a negative exponent truncates 1 / a**n: 0, except 1 for a = 1 and ±1 for a = -1
    p = np.power(a, np.where(b < 0, 0, b).astype(b.dtype))
    one_over = np.where(a == 1, 1, 0)
    if a.dtype.kind == "i":
        one_over = np.where(a == -1, np.where(b % 2 == 0, 1, -1), one_over)
    return np.where(b < 0, one_over.astype(a.dtype), p)


def _bits(x) -> int:
    return x.dtype.itemsize * 8


def _shift_left(a, b):
    out_of_range = (b.astype(np.uint64) >= _bits(a))
    return np.where(out_of_range, 0, np.left_shift(a, np.where(out_of_range, 0, b).astype(a.dtype)))


def _shift_right_arithmetic(a, b):
    out_of_range = (b.astype(np.uint64) >= _bits(a))
    shift = np.where(out_of_range, _bits(a) - 1, b).astype(a.dtype)
    signed = a.view(np.dtype(f"i{a.dtype.itemsize}")) if a.dtype.kind == "u" else a
    return np.right_shift(signed, shift.astype(signed.dtype)).view(a.dtype)


def _shift_right_logical(a, b):
    out_of_range = (b.astype(np.uint64) >= _bits(a))
    unsigned = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    shifted = np.right_shift(unsigned, np.where(out_of_range, 0, b).astype(unsigned.dtype))
    return np.where(out_of_range, 0, shifted).astype(unsigned.dtype).view(a.dtype)


def _round_afz(x):
    return np.copysign(np.floor(np.abs(x) + x.dtype.type(0.5)), x)


def _logistic(x):
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


def _sign(x):
    return np.sign(x) if _is_int(x) else np.where(np.isnan(x), x, np.sign(x))


UNARY: dict[str, Callable] = {
    "negate": np.negative, "abs": np.abs, "exponential": np.exp, "exponential_minus_one": np.expm1,
    "log": np.log, "log_plus_one": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: np.reciprocal(np.sqrt(x)),
    "cbrt": np.cbrt, "tanh": np.tanh, "logistic": _logistic, "sine": np.sin, "cosine": np.cos, "tan": np.tan,
    "floor": np.floor, "ceil": np.ceil, "sign": _sign, "round_nearest_even": np.rint,
    "round_nearest_afz": _round_afz, "not": np.invert, "copy": lambda x: x,
}

BINARY: dict[str, Callable] = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": _divide,
    "remainder": _remainder, "maximum": np.maximum, "minimum": np.minimum, "power": _power,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "atan2": np.arctan2,
    "shift_left": _shift_left, "shift_right_arithmetic": _shift_right_arithmetic,
    "shift_right_logical": _shift_right_logical,
}


@rule(*UNARY)
def _unary(frame, instr, xs):
    return UNARY[op_suffix(instr)](*xs)


@rule(*BINARY)
def _binary(frame, instr, xs):
    a, b = xs
    return BINARY[op_suffix(instr)](a, b)


@rule("is_finite")
def _is_finite(frame, instr, xs):
    return np.isfinite(xs[0])


_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
            "GT": np.greater, "GE": np.greater_equal}


def total_order(x):
    """Floats as integers ordered like IEEE totalOrder: -NaN < -Inf < … < -0 < +0 < … < NaN."""
    i = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    return i ^ ((i >> (_bits(i) - 1)) & np.iinfo(i.dtype).max)


def comparable(x, compare_type: str | None):
    """x as values that numpy orders the way `compare_type` orders x."""
    if compare_type == "TOTALORDER" and is_float(x):
        return total_order(x)
    if compare_type == "UNSIGNED" and x.dtype.kind == "i":
        return x.view(np.dtype(f"u{x.dtype.itemsize}"))
    if compare_type == "SIGNED" and x.dtype.kind == "u":
        return x.view(np.dtype(f"i{x.dtype.itemsize}"))
    return x


@rule("compare")
def _compare(frame, instr, xs):
    kind = instr.attributes.get("compare_type")
    a, b = (comparable(x, kind) for x in xs)
    return _COMPARE[attr(instr, "comparison_direction")](a, b)


@rule("select")
def _select(frame, instr, xs):
    pred, on_true, on_false = xs
    return np.where(pred, on_true, on_false)


@rule("clamp")
def _clamp(frame, instr, xs):
    low, x, high = xs
    return np.minimum(np.maximum(x, low), high)


@rule("convert")
def _convert(frame, instr, xs):
    (x,) = xs
    _, dtype = shape_dtype(instr)
    if dtype == np.bool_:
        return x != 0
    if dtype.kind in "iu" and is_float(x):
        # saturate, NaN → 0, as XLA does; decide in f64, where every bound is exact
        info, wide = np.iinfo(dtype), np.trunc(x.astype(np.float64))
        low, high = wide < info.min, wide >= 2.0 ** (info.bits - (dtype.kind == "i"))
        inside = np.where(low | high | np.isnan(wide), 0, wide).astype(dtype)
        return np.where(high, info.max, np.where(low, info.min, inside)).astype(dtype)
    return x.astype(dtype)


@rule("bitcast_convert")
def _bitcast_convert(frame, instr, xs):
    shape, dtype = shape_dtype(instr)
    x = np.ascontiguousarray(xs[0])
    if x.dtype.itemsize > dtype.itemsize:
        x = x[..., None]  # one element becomes several: a new minor dimension
    x = x.view(dtype)
    return x.reshape(shape) if frame.exact_shapes else x  # a vectorized scalar region: elementwise


# Ops that compute each element from the same element of their operands: a region of
# these, run on whole arrays (`Frame.vectorized`), computes every position at once.
ELEMENTWISE = frozenset(UNARY) | frozenset(BINARY) | {"compare", "select", "clamp", "convert", "constant",
                                                      "is_finite", "return"}
_SCALAR_BITCASTS = frozenset({"bitcast", "bitcast_convert"})


def vectorizable(block: Block) -> bool:
    """Every op of `block` (nested blocks included) is elementwise, or a bitcast of a scalar."""
    return all(op_suffix(i) in ELEMENTWISE
               or (op_suffix(i) in _SCALAR_BITCASTS and [t.shape for t in i.result_types] == [()])
               for i in block.walk())


# -- values without operands ---------------------------------------------------------


@rule("constant")
def _constant(frame, instr, xs):
    value = attr(instr, "value")
    if not isinstance(value, np.ndarray):
        raise UnsupportedOp(f"{instr.opcode} %{instr.name}: constant {value} has no numpy form")
    return value


@rule("iota")
def _iota(frame, instr, xs):
    shape, dtype = shape_dtype(instr)
    dim = attr(instr, "iota_dimension")
    index = np.arange(shape[dim], dtype=dtype).reshape([-1 if d == dim else 1 for d in range(len(shape))])
    return np.broadcast_to(index, shape)


# -- shapes ----------------------------------------------------------------------------


@rule("broadcast_in_dim")
def _broadcast_in_dim(frame, instr, xs):
    (x,) = xs
    shape, _ = shape_dtype(instr)
    dims = tuple(attr(instr, "broadcast_dimensions"))
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    x = np.transpose(x, order)  # operand dims in result order
    aligned = [1] * len(shape)
    for i, d in enumerate(sorted(dims)):
        aligned[d] = x.shape[i]
    return np.broadcast_to(x.reshape(aligned), shape)


@rule("broadcast")
def _broadcast(frame, instr, xs):
    (x,) = xs
    return np.broadcast_to(x, tuple(attr(instr, "broadcast_sizes")) + x.shape)


@rule("reshape")
def _reshape(frame, instr, xs):
    return np.reshape(xs[0], shape_dtype(instr)[0])


@rule("bitcast")
def _bitcast(frame, instr, xs):
    """MHLO's bitcast keeps the bytes: with layouts (minor-to-major), go through
    the physical order; without, a reshape."""
    (x,) = xs
    shape, dtype = shape_dtype(instr)
    if x.dtype != dtype:  # a bitcast_convert XLA folded in: same element width
        x = x.view(dtype)
    if not frame.exact_shapes and shape == ():
        return x  # a vectorized scalar region: elementwise
    source = instr.attributes.get("source_layout")
    target = instr.attributes.get("result_layout")
    if not source and not target:
        return np.reshape(x, shape)
    source = source or tuple(reversed(range(x.ndim)))
    target = target or tuple(reversed(range(len(shape))))
    physical = np.transpose(x, tuple(reversed(source))).reshape(-1)
    major_to_minor = tuple(reversed(target))
    return np.transpose(physical.reshape([shape[d] for d in major_to_minor]), np.argsort(major_to_minor))


@rule("transpose")
def _transpose(frame, instr, xs):
    return np.transpose(xs[0], attr(instr, "permutation"))


@rule("reverse")
def _reverse(frame, instr, xs):
    return np.flip(xs[0], tuple(attr(instr, "dimensions")))


@rule("slice")
def _slice(frame, instr, xs):
    starts, limits = attr(instr, "start_indices"), attr(instr, "limit_indices")
    strides = instr.attributes.get("strides") or (1,) * len(starts)
    return xs[0][tuple(slice(s, l, st) for s, l, st in zip(starts, limits, strides))]


def _clamped_starts(x, starts, sizes) -> list[int]:
    """Start indices clamped so the window fits, as dynamic_slice requires."""
    return [int(min(max(int(s), 0), d - n)) for s, d, n in zip(starts, x.shape, sizes)]


@rule("dynamic_slice")
def _dynamic_slice(frame, instr, xs):
    x, *starts = xs
    sizes = attr(instr, "slice_sizes")
    begin = _clamped_starts(x, starts, sizes)
    return x[tuple(slice(b, b + n) for b, n in zip(begin, sizes))]


@rule("dynamic_update_slice")
def _dynamic_update_slice(frame, instr, xs):
    x, update, *starts = xs
    begin = _clamped_starts(x, starts, update.shape)
    out = np.array(x)
    out[tuple(slice(b, b + n) for b, n in zip(begin, update.shape))] = update
    return out


@rule("concatenate")
def _concatenate(frame, instr, xs):
    return np.concatenate(xs, axis=attr(instr, "dimension"))


@rule("pad")
def _pad(frame, instr, xs):
    x, value = xs
    edges = tuple(zip(attr(instr, "edge_padding_low"), attr(instr, "edge_padding_high")))
    return pad(x, value, edges, instr.attributes.get("interior_padding") or (0,) * x.ndim)


def pad(x, value, edges, interior):
    """x with `interior[d]` values between elements along d, then `edges[d]` = (low, high)
    values at its ends; a negative edge crops."""
    # interior padding first, into a grid; then the edges
    grid = [(n - 1) * (i + 1) + 1 if n else 0 for n, i in zip(x.shape, interior)]
    out = np.full(grid, value, x.dtype)
    out[tuple(slice(None, None, i + 1) for i in interior)] = x
    out = np.pad(out, [(max(lo, 0), max(hi, 0)) for lo, hi in edges], constant_values=value)
    return out[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(out.shape, edges))]


# -- control flow and calls ----------------------------------------------------------------


# Each runs its regions as steps (`execute.Frame.region`): it yields them and
# gets their results back, so nested control flow takes no Python stack.


@rule("while")
def _while(frame, instr, xs):
    state = list(xs)
    while bool((yield frame.region(instr, 0, state))[0]):
        state = yield frame.region(instr, 1, state)
    return as_results(state)


@rule("case")
def _case(frame, instr, xs):
    index = int(xs[0])
    if not 0 <= index < len(instr.blocks):
        index = len(instr.blocks) - 1  # out of range runs the last branch
    return as_results((yield frame.region(instr, index, [])))


@rule("if")
def _if(frame, instr, xs):
    return as_results((yield frame.region(instr, 0 if bool(xs[0]) else 1, [])))


@rule("fusion")
def _fusion(frame, instr, xs):
    return as_results((yield frame.region(instr, 0, list(xs))))


@rule("call")
def _call(frame, instr, xs):
    return as_results((yield frame.call(attr(instr, "callee"), list(xs))))


@rule("optimization_barrier")
def _optimization_barrier(frame, instr, xs):
    return tuple(xs) if len(xs) > 1 else xs[0]


@rule("tuple")
def _tuple(frame, instr, xs):
    return tuple(xs)


@rule("get_tuple_element")
def _get_tuple_element(frame, instr, xs):
    return xs[0][attr(instr, "index")]
