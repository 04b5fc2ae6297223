"""What the interpreter (`execute`) and the op rules (`op_rules`,
`reduction_rules`) share: the errors, element types, constants as the emitted
program writes them, and the registry of rules by op suffix.

A rule gets the frame (for regions, calls and vectorized runs), the
instruction, and its operands' values; it returns the value, or a tuple for
several results. A rule that runs regions or calls is a generator: it
yields `frame.region(...)` / `frame.call(...)` and gets their results
(`execute.Frame`), so nesting takes no Python stack. `add` serves `stablehlo.add` and `mhlo.add`, as JAX's
lowering registry does.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from passes.dialects import kind
from printer.penguin.graph import Instruction


class ExecutionError(ValueError):
    """The module cannot be run on these arrays."""


class ElidedConstants(ExecutionError):
    """The module has constants XLA's dump printed without their values
    (`constant({...})`): its numbers would be computed from placeholders."""


class UnsupportedOp(ExecutionError, NotImplementedError):
    """An op the executor has no rule for."""


def unsupported(instr: Instruction, why: str = "the executor has no rule for it") -> UnsupportedOp:
    """The error naming an op, its instruction and computation: 'unsupported op X (instruction %y …): why'."""
    where = f" in computation {instr.computation}" if instr.computation else ""
    return UnsupportedOp(f"unsupported op {instr.opcode} (instruction %{instr.name}{where}): {why}")


# -- element types and constants ----------------------------------------------------

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


# -- the registry ----------------------------------------------------------------------

Rule = Callable[[object, Instruction, list], object]  # (frame, instruction, operand values) → value(s)
RULES: dict[str, Rule] = {}


def rule(*suffixes: str):
    def register(fn: Rule) -> Rule:
        for suffix in suffixes:
            RULES[suffix] = fn
        return fn
    return register


# -- small helpers every rule module uses ------------------------------------------------


def op_suffix(instr: Instruction) -> str:
    """'add' for stablehlo.add and mhlo.add (`passes.dialects.kind` of its opcode)."""
    return kind(instr.opcode)


def shape_dtype(instr: Instruction, index: int = 0) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, numpy dtype) of result `index`."""
    t = instr.result_types[index]
    return t.shape, numpy_dtype(t.dtype)


def attr(instr: Instruction, name: str, default=None):
    """An attribute the op cannot do without (or `default`)."""
    value = instr.attributes.get(name, default)
    if value is None:
        raise ExecutionError(f"{instr.opcode} %{instr.name} has no attribute {name!r}")
    return value


def as_results(values: list):
    """What a rule returns for these values: one value, or a tuple of several."""
    return tuple(values) if len(values) != 1 else values[0]


def is_float(x) -> bool:
    """An array (or dtype) of floats, bf16 included."""
    dtype = np.dtype(getattr(x, "dtype", x))
    return dtype.kind == "f" or dtype == numpy_dtype("bf16")
