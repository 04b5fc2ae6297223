"""An HloSnapshot's arguments (`LiteralProto`s, `pipeline.reading.binary`) as
numpy arrays, in their logical order. A literal's shape is the input's
word: it is checked against the values it holds, in Python ints, before
anything is allocated (a shape of 2**80 elements, or a negative dimension,
is one line, not numpy's overflow)."""

from __future__ import annotations

from passes.errors import ChainError
from pipeline.reading.parameters import element_names

__all__ = ["BadArgument", "literal_array"]


def _value_fields(literal) -> dict[int, str]:
    """xla.PrimitiveType → the LiteralProto field holding its values, XLA's
    name for the type and an "s" (`f32s`), for each type whose field the
    literal's class reads (`pipeline.reading.binary`; its numpy dtype:
    pipeline.reading.parameters, the one table of element types)."""
    read = literal.DESCRIPTOR.fields_by_name
    return {element_type: f"{name}s" for element_type, name in element_names().items() if f"{name}s" in read}


_DO = "pass inputs= yourself, or dump the snapshot again"


class BadArgument(ChainError):
    """A snapshot argument the chain cannot read back: one line naming the input and the argument."""


def literal_array(literal, index: int, where: str):
    """A dense array LiteralProto as numpy, in its logical order (the
    proto holds it in its layout's order)."""
    import numpy as np

    from pipeline.reading.parameters import element_dtype

    shape = literal.shape
    what = f"argument {index} of the snapshot"
    fields = _value_fields(literal)
    if shape.element_type not in fields:
        raise BadArgument(f"{what} has XLA element type {shape.element_type}, which the chain does not read "
                          f"back: pass inputs= yourself", where)
    dtype, field_name = element_dtype(shape.element_type), fields[shape.element_type]
    dims = [int(d) for d in shape.dimensions]
    if any(d < 0 for d in dims):
        raise BadArgument(f"{what} has shape {dims}, with a negative dimension: {_DO}", where)
    elements = 1
    for d in dims:  # Python ints: numpy's int64 product wraps past 2**63
        elements *= d
    values = getattr(literal, field_name)
    per_value = 2 if dtype.kind == "c" else 1  # a complex number is two floats in the proto
    if isinstance(values, bytes):
        if len(values) % dtype.itemsize:
            raise BadArgument(f"{what} holds {len(values)} bytes, not a whole number of its "
                              f"{dtype.itemsize}-byte values: {_DO}", where)
        count = len(values) // dtype.itemsize
    else:
        count = len(values)
    if count != elements * per_value:
        raise BadArgument(f"{what} holds {count // per_value} values for shape {dims} ({elements} elements): "
                          f"{_DO}", where)
    order = [int(d) for d in shape.layout.minor_to_major][::-1] or list(range(len(dims)))  # major to minor
    if sorted(order) != list(range(len(dims))):
        raise BadArgument(f"{what} has layout minor_to_major {order[::-1]}, which is not an order of its "
                          f"{len(dims)} dimensions: {_DO}", where)
    if isinstance(values, bytes):
        flat = np.frombuffer(values, dtype=dtype.newbyteorder("<") if dtype.itemsize > 1 else dtype)
    elif dtype.kind == "c":
        parts = np.asarray(list(values), dtype=np.float32 if dtype == np.complex64 else np.float64)
        flat = parts[0::2] + 1j * parts[1::2]
    else:
        flat = np.asarray(list(values), dtype=dtype)
    physical = flat.astype(dtype).reshape([dims[d] for d in order])
    return np.ascontiguousarray(np.transpose(physical, np.argsort(order)))
