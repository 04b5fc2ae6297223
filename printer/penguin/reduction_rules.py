"""Rules for the ops that combine many elements into each result element:
reduce, reduce_window, dot_general, convolution, scatter; and for sort and
top_k, which order them.

A region that is one ufunc (`add`, `maximum`…) runs as that ufunc; an
elementwise region runs once per reduced position on whole arrays
(`Frame.vectorized`); any other region runs on scalars.
"""

from __future__ import annotations

import functools
import itertools
import re

import numpy as np

from printer.penguin.graph import Argument, Block, Instruction, T, Value
from printer.penguin.op_rules import comparable, pad, total_order, vectorizable
from printer.penguin.registry import (
    as_results, attr, is_float, numpy_dtype, op_suffix, rule, shape_dtype, unsupported)

# -- reduce and reduce_window ----------------------------------------------------------

# A reducer region that is one of these ops on its two arguments runs as the numpy ufunc.
REDUCERS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
            "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _reducer(block: Block):
    """The ufunc of a region `return op(arg0, arg1)`, else None."""
    if len(block.arguments) != 2 or len(block.instructions) != 2:
        return None
    op, ret = block.instructions
    if op_suffix(ret) != "return" or ret.operands != [op] or op_suffix(op) not in REDUCERS:
        return None
    if sorted(map(id, op.operands)) != sorted(map(id, block.arguments)):
        return None
    return REDUCERS[op_suffix(op)]


@rule("reduce")
def _reduce(frame, instr, xs):
    n = len(xs) // 2
    return _reduce_arrays(frame, instr.blocks[0], xs[:n], xs[n:], tuple(attr(instr, "dimensions")))


def _reduce_arrays(frame, region: Block, inputs: list, inits: list, dims: tuple):
    """reduce(inputs, inits) over `dims` with `region`: a rule's value(s)."""
    ufunc = _reducer(region) if len(inputs) == 1 else None
    if ufunc is not None and all(inputs[0].shape[d] for d in dims):
        return ufunc(ufunc.reduce(inputs[0], axis=dims, dtype=inputs[0].dtype), inits[0])
    return as_results(_fold(frame, region, inputs, inits, dims))


def _fold(frame, region: Block, inputs: list, inits: list, dims: tuple) -> list:
    """The general reduce: the region folds in the reduced positions one at a
    time. An elementwise region runs on all kept positions at once."""
    kept = [d for d in range(inputs[0].ndim) if d not in dims]
    moved = [np.transpose(x, kept + list(dims)) for x in inputs]  # kept dims first
    kept_shape, reduced_shape = moved[0].shape[:len(kept)], moved[0].shape[len(kept):]
    if vectorizable(region):
        vectorized = frame.vectorized()
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


@rule("reduce_window")
def _reduce_window(frame, instr, xs):
    """As the StableHLO spec says: each input padded with its init value (base
    dilations as interior padding), then each window reduced with the init value.
    (XLA CPU skips padded positions instead, which differs only for an init that
    is not the reducer's identity: JAX's pools and cumulative ops use identities.)"""
    n = len(xs) // 2
    inputs, inits = xs[:n], xs[n:]
    rank = inputs[0].ndim
    size = tuple(attr(instr, "window_dimensions"))
    strides = instr.attributes.get("window_strides") or (1,) * rank
    base = instr.attributes.get("base_dilations") or (1,) * rank
    dilations = instr.attributes.get("window_dilations") or (1,) * rank
    edges = instr.attributes.get("padding") or ((0, 0),) * rank
    shape, _ = shape_dtype(instr)
    windows = [_windows(pad(x, init, edges, [b - 1 for b in base]), size, strides, dilations, shape)
               for x, init in zip(inputs, inits)]
    return _reduce_arrays(frame, instr.blocks[0], windows, inits, tuple(range(rank, 2 * rank)))


def _windows(x, size, strides, dilations, shape):
    """The windows of x: an array of `shape` + `size` (a view, nothing copied)."""
    spans = [(w - 1) * d + 1 for w, d in zip(size, dilations)]
    if any(s > n for s, n in zip(spans, x.shape)):
        return np.zeros(tuple(shape) + tuple(size), x.dtype)  # no window fits: an empty result
    view = np.lib.stride_tricks.sliding_window_view(x, spans)  # every start, every position in the span
    return view[tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, d) for d in dilations)]


# -- contractions ----------------------------------------------------------------------


@rule("dot_general")
def _dot_general(frame, instr, xs):
    lhs, rhs = xs
    _, dtype = shape_dtype(instr)
    dims = attr(instr, "dot_dimension_numbers")
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
    _, dtype = shape_dtype(instr)
    return np.dot(lhs.astype(dtype), rhs.astype(dtype))


# -- convolution -----------------------------------------------------------------------


@rule("convolution")
def _convolution(frame, instr, xs):
    """StableHLO's convolution: lay the input out as (N, C, spatial…) and the
    kernel as (O, I, spatial…), pad and dilate the input, then add up one
    channel contraction per kernel position."""
    lhs, rhs = xs
    shape, dtype = shape_dtype(instr)
    d = attr(instr, "dimension_numbers")
    if not isinstance(d, dict):
        raise unsupported(instr, f"dimension numbers {d} are not structured (a program from an older printer)")
    spatial = len(d["input_spatial_dimensions"])
    strides = instr.attributes.get("window_strides") or (1,) * spatial
    edges = tuple(instr.attributes.get("padding") or ((0, 0),) * spatial)
    lhs_dilation = instr.attributes.get("lhs_dilation") or (1,) * spatial
    rhs_dilation = instr.attributes.get("rhs_dilation") or (1,) * spatial
    reversal = instr.attributes.get("window_reversal") or (False,) * spatial
    groups, batch_groups = instr.attributes.get("feature_group_count", 1), instr.attributes.get("batch_group_count", 1)
    work = np.dtype(np.float32) if is_float(dtype) and dtype.itemsize < 4 else dtype  # f16, bf16: sums in f32

    x = np.transpose(lhs, (d["input_batch_dimension"], d["input_feature_dimension"], *d["input_spatial_dimensions"]))
    k = np.transpose(rhs, (d["kernel_output_feature_dimension"], d["kernel_input_feature_dimension"],
                           *d["kernel_spatial_dimensions"]))
    k = np.flip(k, [2 + i for i, r in enumerate(reversal) if r])
    x = pad(x.astype(work), work.type(0), ((0, 0), (0, 0)) + edges, (0, 0) + tuple(r - 1 for r in lhs_dilation))
    # Groups: the input as (B, N/B, G, C/G, …), the kernel as (B, G, O/(B·G), C/G, …);
    # output feature o belongs to batch group or feature group o // (O/(B·G)) (B or G is 1).
    (n, c), (o, i) = x.shape[:2], k.shape[:2]
    x = x.reshape(batch_groups, n // batch_groups, groups, c // groups, *x.shape[2:])
    k = k.astype(work).reshape(batch_groups, groups, o // (batch_groups * groups), i, *k.shape[2:])
    out_spatial = [shape[a] for a in d["output_spatial_dimensions"]]
    out = np.zeros((n // batch_groups, batch_groups, groups, o // (batch_groups * groups), *out_spatial), work)
    for position in np.ndindex(*k.shape[4:]):
        starts = [p * r for p, r in zip(position, rhs_dilation)]
        window = x[(...,) + tuple(slice(s, s + (m - 1) * st + 1, st) for s, m, st in zip(starts, out_spatial, strides))]
        out += np.einsum("bngc...,bgoc->nbgo...", window, k[(...,) + position])
    out = out.reshape(n // batch_groups, o, *out_spatial)  # (N', O, spatial…)
    order = [0] * out.ndim  # result dimension → canonical dimension
    order[d["output_batch_dimension"]], order[d["output_feature_dimension"]] = 0, 1
    for j, a in enumerate(d["output_spatial_dimensions"]):
        order[a] = 2 + j
    return np.transpose(out, order).astype(dtype)


# -- scatter ---------------------------------------------------------------------------


@rule("scatter")
def _scatter(frame, instr, xs):
    """StableHLO's scatter, one update element at a time through the region."""
    n = (len(xs) - 1) // 2
    operands, indices, updates = xs[:n], xs[n], xs[n + 1:]
    d = attr(instr, "scatter_dimension_numbers")
    window, inserted = d["update_window_dims"], d["inserted_window_dims"]
    to_operand, vector_dim = d["scattered_dims_to_operand_dims"], d["index_vector_dim"]
    operand_batching, indices_batching = d["input_batching_dims"], d["scatter_indices_batching_dims"]
    outs = [np.array(x) for x in operands]
    rank = outs[0].ndim
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
        if not all(0 <= f < n for f, n in zip(full, outs[0].shape)):
            continue  # out of bounds: skipped, as the StableHLO specification says
        at = tuple(full)
        new = frame.block(instr.blocks[0], [np.asarray(r[at]) for r in outs]
                          + [np.asarray(u[update_index]) for u in updates])
        for r, v in zip(outs, new):
            r[at] = v
    return as_results(outs)


# -- sort and top_k --------------------------------------------------------------------


@rule("sort")
def _sort(frame, instr, xs):
    """All operands reordered by one permutation along `dimension`: by keys with
    numpy when the comparator compares keys, else by running the comparator on
    pairs. Always stable: with is_stable=false equal elements may come in any
    order, so keeping them in order is one right answer."""
    axis = instr.attributes.get("dimension", -1) % xs[0].ndim
    region = instr.blocks[0]
    key = _sort_key(frame, region, xs)
    if key is not None:
        order = _stable_argsort(*key, axis)
    else:
        order = _comparison_sort(frame, region, xs, axis)
    return as_results([np.take_along_axis(x, order, axis) for x in xs])


def _sort_key(frame, region: Block, xs: list):
    """(keys, descending) when the comparator returns `compare LT|GT (f(lhs…), f(rhs…))`
    for one elementwise f of the lhs arguments and the same f of the rhs ones;
    the keys are f of every element, computed at once. f is the identity in
    `compare(lhs0, rhs0), direction=LT`; in JAX's float comparator it maps -0.0
    to 0.0 and every NaN to one, then bitcasts to integers in total order.
    None for any other comparator (or keys with NaNs under a partial order)."""
    ret = region.instructions[-1] if region.instructions else None
    if ret is None or op_suffix(ret) != "return" or len(ret.operands) != 1 or not vectorizable(region):
        return None
    compare = ret.operands[0]
    if not isinstance(compare, Instruction) or op_suffix(compare) != "compare":
        return None
    direction = compare.attributes.get("comparison_direction")
    lhs, rhs = compare.operands
    if direction not in ("LT", "GT"):
        return None
    reads = _reading_arguments(region)
    if not _mirrors(lhs, rhs, region, reads):
        if not _mirrors(rhs, lhs, region, reads):
            return None
        lhs, direction = rhs, "GT" if direction == "LT" else "LT"  # compare(f(rhs), f(lhs))
    vectorized = frame.vectorized()
    vectorized.block(region, [x for x in xs for _ in ("lhs", "rhs")])  # f(every element), on both sides
    keys = np.broadcast_to(vectorized.value(lhs, compare), xs[0].shape)
    keys = comparable(keys, compare.attributes.get("compare_type"))
    if is_float(keys) and np.isnan(keys).any():
        return None  # NaN is unordered here: the region decides each comparison
    return keys, direction == "GT"


def _reading_arguments(region: Block) -> set[int]:
    """ids of the region's arguments and of its instructions that read one."""
    reads = {id(a) for a in region.arguments}
    for instr in region.instructions:  # operands come before their users
        if any(id(o.instruction if isinstance(o, Value) else o) in reads for o in instr.operands):
            reads.add(id(instr))
    return reads


def _mirrors(a, b, region: Block, reads: set[int]) -> bool:
    """b computes from the rhs arguments (1, 3, …) what a computes from the lhs
    ones (0, 2, …). Pair by pair on an explicit stack (a region's chain of ops
    is as long as the input makes it); a pair met twice is judged once."""
    stack, seen = [(a, b)], set()
    while stack:
        a, b = stack.pop()
        if (id(a), id(b)) in seen:
            continue
        seen.add((id(a), id(b)))
        if isinstance(a, Argument) and a.block is region:
            if not (isinstance(b, Argument) and b.block is region and a.index % 2 == 0 and b.index == a.index + 1):
                return False
        elif a is b:
            if id(a) in reads:  # a value both sides share: a constant, or from outside the region
                return False
        elif not (isinstance(a, Instruction) and isinstance(b, Instruction)):
            return False
        elif not (a.opcode == b.opcode and a.result_types == b.result_types and _same_attributes(a, b)
                  and len(a.operands) == len(b.operands)):
            return False
        else:
            stack += zip(a.operands, b.operands)
    return True


def _same_attributes(a: Instruction, b: Instruction) -> bool:
    if a.attributes.keys() != b.attributes.keys():
        return False
    for name, x in a.attributes.items():
        y = b.attributes[name]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):  # constants: the same bits
            x, y = np.asarray(x), np.asarray(y)
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                return False
        elif x != y:
            return False
    return True


def _stable_argsort(keys, descending: bool, axis: int):
    if not descending:
        return np.argsort(keys, axis=axis, kind="stable")
    # descending and stable: sort the reversed keys ascending, then reverse back
    last = keys.shape[axis] - 1
    return last - np.flip(np.argsort(np.flip(keys, axis), axis=axis, kind="stable"), axis)


def _comparison_sort(frame, region: Block, xs: list, axis: int):
    """The permutation the comparator region gives, one row at a time, by
    Python's stable sort (which asks only "is i less than j?")."""
    rows = [np.moveaxis(x, axis, -1) for x in xs]
    order = np.empty(rows[0].shape, np.int64)
    for index in np.ndindex(*rows[0].shape[:-1]):
        row = [r[index] for r in rows]

        def compare(i, j) -> int:  # sorted() asks only whether compare(i, j) < 0
            args = [np.asarray(v) for r in row for v in (r[i], r[j])]
            return -1 if bool(frame.block(region, args)[0]) else 0

        order[index] = sorted(range(row[0].shape[0]), key=functools.cmp_to_key(compare))
    return np.moveaxis(order, -1, axis)


def _top_k(x, k: int, largest: bool, index_dtype):
    """(values, indices) of the k largest (or smallest) along the last dimension,
    floats in total order (-NaN < -Inf < … < -0 < +0 < … < NaN), a tie to the lower index."""
    keys = total_order(x) if is_float(x) else x
    order = _stable_argsort(keys, largest, -1)[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(index_dtype)


@rule("topk")
def _topk(frame, instr, xs):
    (values_shape, _), (_, index_dtype) = shape_dtype(instr, 0), shape_dtype(instr, 1)
    return _top_k(xs[0], attr(instr, "k", values_shape[-1]), instr.attributes.get("largest", True), index_dtype)


# -- custom calls, by target name ------------------------------------------------------

_TENSOR = re.compile(r"tensor<[^<>]*>")


def _result_tensors(instr: Instruction) -> list[T]:
    """The tensor types of the results, a tuple<…> result's elements in order."""
    return [T(m) for t in instr.result_types for m in _TENSOR.findall(t.text)]


def _xla_top_k(frame, instr, xs):
    """XLA CPU's "TopK": (values, indices) of the k largest along the last
    dimension, k from the result type; its comparator region is the same order."""
    values, indices = _result_tensors(instr)
    return _top_k(xs[0], values.shape[-1], True, numpy_dtype(indices.dtype))


CUSTOM_CALLS = {"TopK": _xla_top_k}


@rule("custom_call")
def _custom_call(frame, instr, xs):
    """By call_target_name; an unknown target is refused, named."""
    target = instr.attributes.get("call_target_name")
    if target not in CUSTOM_CALLS:
        raise unsupported(instr, f"no rule for custom call target {target!r}")
    out = CUSTOM_CALLS[target](frame, instr, xs)
    if len(instr.result_types) == 1 and instr.result_types[0].dtype is None:
        return tuple(out)  # one tuple<…> result, as XLA's importer writes it
    return out
