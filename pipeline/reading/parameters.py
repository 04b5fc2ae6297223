"""The entry computation's parameters as XLA read them, and a user's inputs
checked against them: the count, each shape and each element type, as XLA
itself would refuse them, but in one line that names the parameter.

    arrays = checked_inputs(parsed, [np.ones(3, np.float32)])   # BadInputs if they do not fit

A numpy array (or numpy scalar) must have the parameter's element type
exactly: XLA converts nothing, and a float64 array for an `f32` parameter
is a mistake worth a line, not a silent rounding. A Python number (no type
of its own, as JAX's weak types) is taken as the parameter's type where it
converts exactly. A tuple-shaped parameter takes a tuple or list, checked
element by element and handed on as given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from passes.errors import ChainError
from passes.hlo import proto as hlo_proto

__all__ = ["BadInputs", "Parameter", "checked_inputs", "element_dtype", "element_names", "entry_parameters",
           "shape_text"]

# xla.PrimitiveType (xla_data.proto) → the name XLA's text gives it, and numpy's dtype name.
_ELEMENTS = {1: ("pred", "bool"), 2: ("s8", "int8"), 3: ("s16", "int16"), 4: ("s32", "int32"),
             5: ("s64", "int64"), 6: ("u8", "uint8"), 7: ("u16", "uint16"), 8: ("u32", "uint32"),
             9: ("u64", "uint64"), 10: ("f16", "float16"), 11: ("f32", "float32"), 12: ("f64", "float64"),
             15: ("c64", "complex64"), 16: ("bf16", "bfloat16"), 18: ("c128", "complex128"),
             19: ("f8e5m2", "float8_e5m2"), 20: ("f8e4m3fn", "float8_e4m3fn")}
_BY_DTYPE = {dtype: hlo for hlo, dtype in _ELEMENTS.values()}


def element_names() -> dict[int, str]:
    """{xla.PrimitiveType: the name XLA's text gives it} of every element type the chain reads."""
    return {element_type: hlo for element_type, (hlo, _) in _ELEMENTS.items()}


def element_dtype(element_type: int) -> np.dtype | None:
    """numpy's dtype of an xla.PrimitiveType (None for one without: tuples, tokens, …)."""
    element = _ELEMENTS.get(element_type)
    return _dtype(element[1]) if element else None


class BadInputs(ChainError):
    """Inputs that do not fit the entry computation's parameters."""


@dataclass(frozen=True)
class Parameter:
    number: int
    name: str    # as the input wrote it
    shape: object  # XLA's ShapeProto

    def __str__(self) -> str:
        return f"%{self.name}: {shape_text(self.shape)}"


def entry_parameters(parsed) -> tuple[str, list[Parameter]]:
    """(the entry computation's name as written, its parameters in order) of a `Parsed`."""
    module = parsed.proto
    entry = next((c for c in module.computations if c.id == module.entry_computation_id), module.computations[-1])
    found = [Parameter(i.parameter_number, parsed.name(entry.name, i.name), i.shape)
             for i in entry.instructions if i.opcode == "parameter"]
    return entry.name, sorted(found, key=lambda p: p.number)


def checked_inputs(parsed, inputs: Sequence, where: str | None = None) -> list:
    """`inputs` as arrays of the entry's parameter types (Python numbers
    converted; tuples as given): BadInputs, naming `where` and the
    parameter, where the count, a shape or an element type differs."""
    where = where or parsed.source
    entry, parameters = entry_parameters(parsed)
    inputs = list(inputs)
    if len(inputs) != len(parameters):
        takes = ", ".join(map(str, parameters)) or "none"
        raise BadInputs(f"the entry computation %{entry} takes {len(parameters)} parameter(s) ({takes}); "
                        f"given {len(inputs)} input(s)", where)
    return [_fit(value, p, i, where) for i, (value, p) in enumerate(zip(inputs, parameters))]


def _fit(value, parameter: Parameter, index: int, where: str | None):
    """One input fitted to its parameter. A tuple-shaped one is checked
    leaf by leaf (an explicit stack: a tuple shape nests as deep as XLA
    allows) and handed on as given."""
    if parameter.shape.element_type != hlo_proto.TUPLE:
        return _array(value, parameter.shape, parameter, index, "", where)
    stack = [(value, parameter.shape, "")]
    while stack:
        value, shape, path = stack.pop()
        if shape.element_type != hlo_proto.TUPLE:
            _array(value, shape, parameter, index, path, where)
            continue
        elements = list(shape.tuple_shapes)
        if not isinstance(value, (tuple, list)) or len(value) != len(elements):
            given = f"{len(value)} element(s)" if isinstance(value, (tuple, list)) else _given(value)
            raise _mismatch(parameter, index, path, shape, given, where, "a tuple or list of its elements")
        stack += [(value[k], elements[k], f"{path}[{k}]") for k in reversed(range(len(elements)))]
    return value


def _array(value, shape, parameter: Parameter, index: int, path: str, where: str | None) -> np.ndarray:
    element = _ELEMENTS.get(shape.element_type)
    dims = tuple(shape.dimensions)
    dtype = element_dtype(shape.element_type)
    if isinstance(value, (bool, int, float, complex)) and dtype is not None:  # a Python number: no type of its own
        array = np.asarray(value, dtype)
        if array.item() != value:
            raise _mismatch(parameter, index, path, shape, f"the Python number {value!r}", where,
                            f"a value {element[0]} holds")
    else:
        array = np.asarray(value)
        if dtype is not None and array.dtype != dtype:
            raise _mismatch(parameter, index, path, shape, _given(array), where,
                            f"np.asarray(x, {_spelled(element[1])})")
    if array.shape != dims:
        raise _mismatch(parameter, index, path, shape, _given(array), where, f"an array of shape {dims}")
    return array


def _mismatch(parameter: Parameter, index: int, path: str, shape, given: str, where: str | None,
              remedy: str) -> BadInputs:
    part = f" element {path}" if path else ""
    return BadInputs(f"input {index}{part} for parameter {parameter.number} (%{parameter.name}) takes "
                     f"{shape_text(shape)}; given {given}: pass {remedy}", where)


def _given(value) -> str:
    if not isinstance(value, np.ndarray):
        value = np.asarray(value)
    hlo = _BY_DTYPE.get(value.dtype.name)
    return f"{hlo}{list(value.shape)}" if hlo else f"a {value.dtype} array of shape {value.shape}"


def shape_text(shape) -> str:
    """A ShapeProto as XLA's text writes it, without its layout: `f32[3,1]`,
    `(f32[3], s32[])` (an explicit stack: tuples nest as deep as XLA allows)."""
    out, stack = [], [shape]
    while stack:
        item = stack.pop()
        if isinstance(item, str):  # a separator or a closing parenthesis
            out.append(item)
        elif item.element_type == hlo_proto.TUPLE:
            elements = list(item.tuple_shapes)
            out.append("(")
            stack.append(")")
            for k in reversed(range(len(elements))):
                stack.append(elements[k])
                if k:
                    stack.append(", ")
        else:
            element = _ELEMENTS.get(item.element_type, (f"type{item.element_type}",))[0]
            out.append(f"{element}[{','.join(map(str, item.dimensions))}]")
    return "".join(out)


def _dtype(name: str) -> np.dtype:
    if hasattr(np, name):
        return np.dtype(name)
    import ml_dtypes  # bfloat16 and the float8 types (jax's dependency)

    return np.dtype(getattr(ml_dtypes, name))


def _spelled(name: str) -> str:
    return f"np.{name}" if hasattr(np, name) else f"ml_dtypes.{name}"
