"""Numerics: run a Penguin module on numpy arrays, in `schedule()` order.

    module.execute(x, y)                     # the results of @main, a tuple of arrays
    module.execute(x, function="body.3")

One small rule per op family, registered by the op's suffix (`add` serves
`stablehlo.add` and `mhlo.add`), as JAX's lowering registry does. A rule gets
the interpreter (for regions and calls), the instruction, and its operands'
values; it returns the value, or a tuple for several results. An op without a
rule is refused by name. A control-dep custom-call is not here at all: the
printer made its result alias its data operand.

Semantics follow the StableHLO specification where numpy differs: integer
division truncates toward zero (x / 0 = -1, x % 0 = x), shifts by the bit
width or more give 0 (or the sign), float → int conversion saturates (NaN → 0).
Integer arithmetic wraps as numpy's does.
"""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from printer.penguin.graph import Block, Instruction, Module, T, Value

DIALECTS = ("stablehlo", "mhlo", "func")


class ExecutionError(ValueError):
    """The module cannot be run on these arrays."""


class UnsupportedOp(ExecutionError, NotImplementedError):
    """An op the executor has no rule for."""


# -- element types -----------------------------------------------------------------

_DTYPES = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64, "index": np.int64,
           "f16": np.float16, "f32": np.float32, "f64": np.float64}


def numpy_dtype(element: str) -> np.dtype:
    """The numpy dtype of an MLIR element type ('f32', 'i1', 'bf16', …)."""
    if element in _DTYPES:
        return np.dtype(_DTYPES[element])
    if element == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    raise ExecutionError(f"no numpy dtype for element type {element!r}")


def dense(values, dtype: str, shape=()) -> np.ndarray:
    """A constant as the emitted program writes it: one value (a splat), a nested
    list, or raw little-endian bytes (a large constant). Read-only."""
    dt = numpy_dtype(dtype)
    if isinstance(values, bytes):
        array = np.frombuffer(values, dt.newbyteorder("<")).astype(dt).reshape(shape)
    elif isinstance(values, list):
        array = np.array(values, dtype=dt).reshape(shape)
    else:
        array = np.full(shape, values, dtype=dt)
    array.flags.writeable = False
    return array


# -- the interpreter ---------------------------------------------------------------

Rule = Callable[["Frame", Instruction, list], object]
RULES: dict[str, Rule] = {}


def rule(*suffixes: str):
    def register(fn: Rule) -> Rule:
        for suffix in suffixes:
            RULES[suffix] = fn
        return fn
    return register


def execute(module: Module, *arrays, function: str = "main") -> tuple:
    with np.errstate(all="ignore"):  # wraparound and inf/nan are the semantics, not accidents
        results = Interpreter(module).call(function, list(arrays), check=True)
    return tuple(_leaves(results))


class Interpreter:
    def __init__(self, module: Module):
        self.module = module
        self.functions = {fn.name: fn for fn in module.functions}
        self.schedules: dict[int, list[Instruction]] = {}

    def call(self, name: str, args: list, check: bool = False) -> list:
        fn = self.functions.get(name)
        if fn is None:
            raise ExecutionError(f"module {self.module.name} has no function {name!r} "
                                 f"(it has {', '.join(self.functions) or 'none'})")
        if check:
            args = _arguments(fn, args)
        return Frame(self, {}).block(fn, args)

    def schedule(self, block: Block) -> list[Instruction]:
        if id(block) not in self.schedules:
            self.schedules[id(block)] = block.schedule()
        return self.schedules[id(block)]


class Frame:
    """One function activation: the values of its instructions and arguments,
    nested blocks included (a region may read what its enclosing blocks defined)."""

    def __init__(self, interpreter: Interpreter, env: dict, exact_shapes: bool = True):
        self.interpreter, self.env, self.exact_shapes = interpreter, env, exact_shapes

    def block(self, block: Block, args: list) -> list:
        """Run `block` on `args` in schedule order; the values its return op returns."""
        if len(args) != len(block.arguments):
            raise ExecutionError(f"block {block.name} takes {len(block.arguments)} argument(s), got {len(args)}")
        for argument, value in zip(block.arguments, args):
            self.env[id(argument)] = value
        results = []
        for instr in self.interpreter.schedule(block):
            operands = [self.value(o, instr) for o in instr.operands]
            if _suffix(instr) == "return":
                results = operands
            else:
                self.env[id(instr)] = self.run(instr, operands)
        return results

    def region(self, instr: Instruction, index: int, args: list) -> list:
        return self.block(instr.blocks[index], args)

    def call(self, name: str, args: list) -> list:
        return self.interpreter.call(name, args)

    def value(self, node, user: Instruction):
        try:
            if isinstance(node, Value):
                return self.env[id(node.instruction)][node.index]
            return self.env[id(node)]
        except KeyError:
            raise ExecutionError(f"%{user.name}: operand %{node.name} has no value yet") from None

    def run(self, instr: Instruction, operands: list):
        dialect, _, suffix = instr.opcode.partition(".")
        fn = RULES.get(suffix) if dialect in DIALECTS else None
        if fn is None:
            where = f" in computation {instr.computation}" if instr.computation else ""
            raise UnsupportedOp(f"unsupported op {instr.opcode} (instruction %{instr.name}{where}): "
                                f"the executor has no rule for it")
        try:
            result = fn(self, instr, operands)
        except ExecutionError:
            raise
        except Exception as e:
            raise ExecutionError(f"{instr.opcode} %{instr.name}: {type(e).__name__}: {e}") from e
        if len(instr.result_types) > 1:
            return tuple(self.typed(r, t, instr) for r, t in zip(result, instr.result_types))
        return self.typed(result, instr.result_types[0], instr) if instr.result_types else result

    def typed(self, value, t: T, instr: Instruction):
        """An array of the result type; a wrong dtype or shape is a bug in a rule."""
        if t.dtype is None:
            return value  # a tuple or a token
        value = np.asarray(value)
        if value.dtype != numpy_dtype(t.dtype) or (self.exact_shapes and value.shape != t.shape):
            raise ExecutionError(f"{instr.opcode} %{instr.name}: computed {value.dtype}{list(value.shape)}, "
                                 f"the result type is {t}")
        return value


def _suffix(instr: Instruction) -> str:
    return instr.opcode.partition(".")[2]


def _arguments(fn: Block, args: list) -> list:
    if len(args) != len(fn.arguments):
        raise ExecutionError(f"function {fn.name} takes {len(fn.arguments)} argument(s), got {len(args)}")
    out = []
    for arg, value in zip(fn.arguments, args):
        value = np.asarray(value)
        if arg.type.dtype is not None:
            dtype = numpy_dtype(arg.type.dtype)
            if not np.can_cast(value.dtype, dtype, "same_kind"):
                raise ExecutionError(f"argument {arg.name} of {fn.name}: {value.dtype} does not convert "
                                     f"safely to {arg.type}")
            value = value.astype(dtype, copy=False)
            if value.shape != arg.type.shape:
                raise ExecutionError(f"argument {arg.name} of {fn.name}: shape {value.shape}, "
                                     f"expected {arg.type.shape} ({arg.type})")
        out.append(value)
    return out


def _leaves(values) -> list:
    out = []
    for v in values:
        out += _leaves(v) if isinstance(v, tuple) else [v]
    return out


def _result(instr: Instruction, index: int = 0) -> tuple[tuple[int, ...], np.dtype]:
    t = instr.result_types[index]
    return t.shape, numpy_dtype(t.dtype)


def _attr(instr: Instruction, name: str, default=None):
    value = instr.attributes.get(name, default)
    if value is None:
        raise ExecutionError(f"{instr.opcode} %{instr.name} has no attribute {name!r}")
    return value


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
    return UNARY[_suffix(instr)](*xs)


@rule(*BINARY)
def _binary(frame, instr, xs):
    a, b = xs
    return BINARY[_suffix(instr)](a, b)


@rule("is_finite")
def _is_finite(frame, instr, xs):
    return np.isfinite(xs[0])


_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
            "GT": np.greater, "GE": np.greater_equal}


def _total_order(x):
    """Floats as integers ordered like IEEE totalOrder: -NaN < -Inf < … < -0 < +0 < … < NaN."""
    i = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    return i ^ ((i >> (_bits(i) - 1)) & np.iinfo(i.dtype).max)


@rule("compare")
def _compare(frame, instr, xs):
    a, b = xs
    kind = instr.attributes.get("compare_type")
    if kind == "TOTALORDER" and not _is_int(a) and a.dtype != np.bool_:
        a, b = _total_order(a), _total_order(b)
    elif kind == "UNSIGNED" and a.dtype.kind == "i":
        unsigned = np.dtype(f"u{a.dtype.itemsize}")
        a, b = a.view(unsigned), b.view(unsigned)
    elif kind == "SIGNED" and a.dtype.kind == "u":
        signed = np.dtype(f"i{a.dtype.itemsize}")
        a, b = a.view(signed), b.view(signed)
    return _COMPARE[_attr(instr, "comparison_direction")](a, b)


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
    _, dtype = _result(instr)
    if dtype == np.bool_:
        return x != 0
    if dtype.kind in "iu" and _is_float(x):
        # saturate, NaN → 0, as XLA does; decide in f64, where every bound is exact
        info, wide = np.iinfo(dtype), np.trunc(x.astype(np.float64))
        low, high = wide < info.min, wide >= 2.0 ** (info.bits - (dtype.kind == "i"))
        inside = np.where(low | high | np.isnan(wide), 0, wide).astype(dtype)
        return np.where(high, info.max, np.where(low, info.min, inside)).astype(dtype)
    return x.astype(dtype)


def _is_float(x) -> bool:
    return x.dtype.kind == "f" or x.dtype == numpy_dtype("bf16")


@rule("bitcast_convert")
def _bitcast_convert(frame, instr, xs):
    shape, dtype = _result(instr)
    return np.ascontiguousarray(xs[0]).view(dtype).reshape(shape)


# -- values without operands ---------------------------------------------------------


@rule("constant")
def _constant(frame, instr, xs):
    value = _attr(instr, "value")
    if not isinstance(value, np.ndarray):
        raise UnsupportedOp(f"{instr.opcode} %{instr.name}: constant {value} has no numpy form")
    return value


@rule("iota")
def _iota(frame, instr, xs):
    shape, dtype = _result(instr)
    dim = _attr(instr, "iota_dimension")
    index = np.arange(shape[dim], dtype=dtype).reshape([-1 if d == dim else 1 for d in range(len(shape))])
    return np.broadcast_to(index, shape)


# -- shapes ----------------------------------------------------------------------------


@rule("broadcast_in_dim")
def _broadcast_in_dim(frame, instr, xs):
    (x,) = xs
    shape, _ = _result(instr)
    dims = tuple(_attr(instr, "broadcast_dimensions"))
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    x = np.transpose(x, order)  # operand dims in result order
    aligned = [1] * len(shape)
    for i, d in enumerate(sorted(dims)):
        aligned[d] = x.shape[i]
    return np.broadcast_to(x.reshape(aligned), shape)


@rule("broadcast")
def _broadcast(frame, instr, xs):
    (x,) = xs
    return np.broadcast_to(x, tuple(_attr(instr, "broadcast_sizes")) + x.shape)


@rule("reshape")
def _reshape(frame, instr, xs):
    return np.reshape(xs[0], _result(instr)[0])


@rule("bitcast")
def _bitcast(frame, instr, xs):
    """MHLO's bitcast keeps the bytes: with layouts (minor-to-major), go through
    the physical order; without, a reshape."""
    (x,) = xs
    shape, _ = _result(instr)
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
    return np.transpose(xs[0], _attr(instr, "permutation"))


@rule("reverse")
def _reverse(frame, instr, xs):
    return np.flip(xs[0], tuple(_attr(instr, "dimensions")))


@rule("slice")
def _slice(frame, instr, xs):
    starts, limits = _attr(instr, "start_indices"), _attr(instr, "limit_indices")
    strides = instr.attributes.get("strides") or (1,) * len(starts)
    return xs[0][tuple(slice(s, l, st) for s, l, st in zip(starts, limits, strides))]


def _clamped_starts(x, starts, sizes) -> list[int]:
    """Start indices clamped so the window fits, as dynamic_slice requires."""
    return [int(min(max(int(s), 0), d - n)) for s, d, n in zip(starts, x.shape, sizes)]


@rule("dynamic_slice")
def _dynamic_slice(frame, instr, xs):
    x, *starts = xs
    sizes = _attr(instr, "slice_sizes")
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
    return np.concatenate(xs, axis=_attr(instr, "dimension"))


@rule("pad")
def _pad(frame, instr, xs):
    x, value = xs
    low, high = _attr(instr, "edge_padding_low"), _attr(instr, "edge_padding_high")
    interior = instr.attributes.get("interior_padding") or (0,) * x.ndim
    # interior padding first, into a grid; then the edges, where a negative edge crops
    grid = [(n - 1) * (i + 1) + 1 if n else 0 for n, i in zip(x.shape, interior)]
    out = np.full(grid, value, x.dtype)
    out[tuple(slice(None, None, i + 1) for i in interior)] = x
    out = np.pad(out, [(max(lo, 0), max(hi, 0)) for lo, hi in zip(low, high)], constant_values=value)
    return out[tuple(slice(max(-lo, 0), out.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(zip(low, high)))]


# -- contractions and reductions -------------------------------------------------------


@rule("dot_general")
def _dot_general(frame, instr, xs):
    lhs, rhs = xs
    _, dtype = _result(instr)
    dims = _attr(instr, "dot_dimension_numbers")
    lb, rb = dims["lhs_batching_dimensions"], dims["rhs_batching_dimensions"]
    lc, rc = dims["lhs_contracting_dimensions"], dims["rhs_contracting_dimensions"]
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lhs_sub, rhs_sub = [None] * lhs.ndim, [None] * rhs.ndim
    for l, r in itertools.chain(zip(lb, rb), zip(lc, rc)):
        lhs_sub[l] = rhs_sub[r] = next(letters)
    lhs_free = [d for d in range(lhs.ndim) if lhs_sub[d] is None]
    rhs_free = [d for d in range(rhs.ndim) if rhs_sub[d] is None]
    for d in lhs_free:
        lhs_sub[d] = next(letters)
    for d in rhs_free:
        rhs_sub[d] = next(letters)
    # result: batch dims, then lhs free dims, then rhs free dims
    out = [lhs_sub[d] for d in lb] + [lhs_sub[d] for d in lhs_free] + [rhs_sub[d] for d in rhs_free]
    spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(out)}"
    return np.einsum(spec, lhs.astype(dtype), rhs.astype(dtype))


@rule("dot")
def _dot(frame, instr, xs):
    lhs, rhs = xs
    _, dtype = _result(instr)
    return np.dot(lhs.astype(dtype), rhs.astype(dtype))


# A reducer region that is one of these ops on its two arguments runs as the numpy ufunc.
REDUCERS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
            "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
ELEMENTWISE = frozenset(UNARY) | frozenset(BINARY) | {"compare", "select", "clamp", "convert", "constant",
                                                      "is_finite", "return"}


def _reducer(block: Block):
    """The ufunc of a region `return op(arg0, arg1)`, else None."""
    if len(block.arguments) != 2 or len(block.instructions) != 2:
        return None
    op, ret = block.instructions
    if _suffix(ret) != "return" or ret.operands != [op] or _suffix(op) not in REDUCERS:
        return None
    if sorted(map(id, op.operands)) != sorted(map(id, block.arguments)):
        return None
    return REDUCERS[_suffix(op)]


@rule("reduce")
def _reduce(frame, instr, xs):
    n = len(xs) // 2
    inputs, inits = xs[:n], xs[n:]
    dims = tuple(_attr(instr, "dimensions"))
    ufunc = _reducer(instr.blocks[0]) if n == 1 else None
    if ufunc is not None and all(inputs[0].shape[d] for d in dims):
        return ufunc(ufunc.reduce(inputs[0], axis=dims, dtype=inputs[0].dtype), inits[0])
    return _results(_fold(frame, instr.blocks[0], inputs, inits, dims))


def _fold(frame, region: Block, inputs: list, inits: list, dims: tuple) -> list:
    """The general reduce: the region folds in the reduced positions one at a
    time. An elementwise region runs on all kept positions at once."""
    kept = [d for d in range(inputs[0].ndim) if d not in dims]
    moved = [np.transpose(x, kept + list(dims)) for x in inputs]  # kept dims first
    kept_shape, reduced_shape = moved[0].shape[:len(kept)], moved[0].shape[len(kept):]
    if all(_suffix(i) in ELEMENTWISE for i in region.walk()):
        vectorized = Frame(frame.interpreter, frame.env, exact_shapes=False)
        acc = [np.broadcast_to(i, kept_shape) for i in inits]
        for r in np.ndindex(*reduced_shape):
            step = vectorized.block(region, acc + [x[(...,) + r] for x in moved])
            acc = [np.broadcast_to(a, kept_shape) for a in step]
        return acc
    outs = [np.empty(kept_shape, i.dtype) for i in inits]
    for k in np.ndindex(*kept_shape):
        acc = list(inits)
        for r in np.ndindex(*reduced_shape):
            acc = frame.block(region, acc + [np.asarray(x[k + r]) for x in moved])
        for out, a in zip(outs, acc):
            out[k] = a
    return outs


@rule("scatter")
def _scatter(frame, instr, xs):
    """StableHLO's scatter, one update element at a time through the region."""
    n = (len(xs) - 1) // 2
    operands, indices, updates = xs[:n], xs[n], xs[n + 1:]
    d = _attr(instr, "scatter_dimension_numbers")
    window, inserted = d["update_window_dims"], d["inserted_window_dims"]
    to_operand, vector_dim = d["scattered_dims_to_operand_dims"], d["index_vector_dim"]
    operand_batching, indices_batching = d["input_batching_dims"], d["scatter_indices_batching_dims"]
    results = [np.array(x) for x in operands]
    rank = results[0].ndim
    scatter_dims = [a for a in range(updates[0].ndim) if a not in window]
    window_positions = [a for a in range(rank) if a not in inserted and a not in operand_batching]
    for update_index in np.ndindex(*updates[0].shape):
        scatter_index = [update_index[a] for a in scatter_dims]
        if vector_dim < indices.ndim:
            start = indices[tuple(scatter_index[:vector_dim]) + (slice(None),) + tuple(scatter_index[vector_dim:])]
        else:
            start = [indices[tuple(scatter_index)]]
        full = [0] * rank
        for i, o in enumerate(to_operand):
            full[o] += int(start[i])
        for o, s in zip(operand_batching, indices_batching):
            full[o] += scatter_index[s if s < vector_dim else s - 1]
        for o, a in zip(window_positions, window):
            full[o] += update_index[a]
        if not all(0 <= f < n for f, n in zip(full, results[0].shape)):
            continue  # out of bounds: skipped, as the spec says
        at = tuple(full)
        new = frame.block(instr.blocks[0], [np.asarray(r[at]) for r in results]
                          + [np.asarray(u[update_index]) for u in updates])
        for r, v in zip(results, new):
            r[at] = v
    return _results(results)


# -- control flow and calls ----------------------------------------------------------------


@rule("while")
def _while(frame, instr, xs):
    state = list(xs)
    while bool(frame.region(instr, 0, state)[0]):
        state = frame.region(instr, 1, state)
    return _results(state)


@rule("case")
def _case(frame, instr, xs):
    index = int(xs[0])
    if not 0 <= index < len(instr.blocks):
        index = len(instr.blocks) - 1  # out of range runs the last branch
    return _results(frame.region(instr, index, []))


@rule("if")
def _if(frame, instr, xs):
    return _results(frame.region(instr, 0 if bool(xs[0]) else 1, []))


@rule("fusion")
def _fusion(frame, instr, xs):
    return _results(frame.region(instr, 0, list(xs)))


@rule("call")
def _call(frame, instr, xs):
    return _results(frame.call(_attr(instr, "callee"), list(xs)))


@rule("optimization_barrier")
def _optimization_barrier(frame, instr, xs):
    return tuple(xs) if len(xs) > 1 else xs[0]


@rule("tuple")
def _tuple(frame, instr, xs):
    return tuple(xs)


@rule("get_tuple_element")
def _get_tuple_element(frame, instr, xs):
    return xs[0][_attr(instr, "index")]


def _results(values: list):
    return tuple(values) if len(values) != 1 else values[0]


__all__ = ["ExecutionError", "RULES", "UnsupportedOp", "dense", "execute", "numpy_dtype"]
