"""Attributes as Python values, for link #4.

The executor (`printer.penguin.execute`) needs numbers, not MLIR text, so the
printer writes each attribute as a Python literal: a constant's `value` as
`dense(values, dtype, shape)` (a splat as its one value, which the runtime
expands with np.full; a large constant as raw little-endian bytes), a
dimension list (a window's sizes, strides, dilations, padding, reversal) as a
tuple, a comparison direction or type as 'LT' / 'FLOAT', dot, scatter, gather
and convolution dimension numbers as a dict of tuples and ints, a symbol (a
callee, a custom call's target) as its name. Anything else keeps its MLIR
text, as a string.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import mhlo, stablehlo

LARGE_CONSTANT = 1024  # elements; a larger non-splat constant is written as raw little-endian bytes


def attribute_source(name: str, attr: ir.Attribute) -> str:
    """Python source for one attribute value."""
    if isinstance(attr, ir.DenseElementsAttr):
        element = str(ir.ShapedType(attr.type).element_type)
        if name != "value" and element in ("i64", "index", "i1") and isinstance(attr, ir.DenseIntElementsAttr):
            return _literal(np.array(attr).tolist(), tuples=True)  # MHLO's dimension lists and window_reversal
        return _dense_source(attr)
    for kind, convert in _DIALECT_ATTRIBUTES:
        if kind.isinstance(attr):
            return _literal(convert(kind(attr)))
    if isinstance(attr, (ir.DenseI64ArrayAttr, ir.DenseI32ArrayAttr, ir.DenseBoolArrayAttr)):
        return _literal(tuple(attr))
    if isinstance(attr, ir.BoolAttr):
        return repr(bool(attr.value))
    if isinstance(attr, ir.IntegerAttr):
        return repr(int(attr.value))
    if isinstance(attr, ir.FloatAttr):
        width = {"f16": np.float16, "f32": np.float32}.get(str(attr.type), float)
        return _float(width(attr.value))
    if isinstance(attr, ir.StringAttr):
        return repr(attr.value)
    if isinstance(attr, ir.FlatSymbolRefAttr):
        return repr(attr.value)
    if isinstance(attr, ir.UnitAttr):
        return "True"
    if isinstance(attr, ir.ArrayAttr):
        return _tuple([attribute_source(name, a) for a in attr])
    if isinstance(attr, ir.DictAttr):
        entries = [attr[i] for i in range(len(attr))]
        return "{" + ", ".join(f"{e.name!r}: {attribute_source(e.name, e.attr)}" for e in entries) + "}"
    return repr(str(attr))


def _dims(d) -> dict:
    return {field: (tuple(getattr(d, field)) if not isinstance(getattr(d, field), int) else getattr(d, field))
            for field in dir(type(d)) if field.endswith(("_dimensions", "_dimension", "_dims", "_map", "_dim"))}


_DIALECT_ATTRIBUTES = [
    (kind, convert)
    for dialect in (stablehlo, mhlo)
    for kind, convert in (
        (dialect.ComparisonDirectionAttr, lambda a: a.value),
        (dialect.ComparisonTypeAttr, lambda a: a.value),
        (dialect.DotDimensionNumbers, _dims),
        (dialect.ScatterDimensionNumbers, _dims),
        (dialect.GatherDimensionNumbers, _dims),
        (dialect.ConvDimensionNumbers, _dims),
    )
]


def _dense_source(attr: ir.DenseElementsAttr) -> str:
    shaped = ir.ShapedType(attr.type)
    element, shape = str(shaped.element_type), tuple(shaped.shape)
    if attr.is_splat:  # one value, never expanded: the executor makes it with np.full
        scalar = ir.RankedTensorType.get([], shaped.element_type, loc=ir.Location.unknown(attr.context))
        values = _dense_numpy(ir.DenseElementsAttr.get_splat(scalar, attr.get_splat_value()), element)
    else:
        values = _dense_numpy(attr, element)
    if values is None:
        return repr(str(attr))  # an element type numpy cannot hold (complex, f8…): the executor refuses it
    if attr.is_splat:
        body = _element(values[()])
    elif values.size > LARGE_CONSTANT:
        body = f"bytes.fromhex({values.astype(values.dtype.newbyteorder('<')).tobytes().hex()!r})"
    else:
        body = _literal(_elements(values))
    return f"dense({body}, {element!r}, {_literal(shape)})"


def _dense_numpy(attr: ir.DenseElementsAttr, element: str):
    try:
        values = np.array(attr)
        if values.dtype != object:  # bf16 comes back as an object array holding the attribute
            return values
    except (TypeError, ValueError):
        pass
    if element == "bf16" and "0x" not in str(attr):
        # The bindings cannot read bf16; decimal literals re-read as f32 keep every bf16 value.
        import ml_dtypes
        as_f32 = ir.Attribute.parse(str(attr).replace("bf16>", "f32>"), context=attr.context)
        return np.array(as_f32).astype(ml_dtypes.bfloat16)
    return None


def _elements(values: np.ndarray):
    if values.ndim == 0:
        return _Raw(_element(values[()]))
    return [_elements(v) for v in values]


def _element(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return repr(bool(x))
    if isinstance(x, (int, np.integer)):
        return repr(int(x))
    return _float(x)


def _float(x) -> str:
    """The shortest literal that reads back to the same value of x's type."""
    f = float(x)
    if f != f:
        return "float('nan')"
    if f in (float("inf"), float("-inf")):
        return f"float({str(f)!r})"
    text = repr(f) if isinstance(x, float) else str(x)  # str: shortest for x's own width (f32, bf16)
    return text if any(c in text for c in ".en") else text + ".0"


class _Raw(str):
    """Source text to print as is inside a literal."""


def _literal(value, tuples: bool = False) -> str:
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, (list, tuple)):
        items = [_literal(v, tuples) for v in value]
        return _tuple(items) if tuples or isinstance(value, tuple) else "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v, tuples)}" for k, v in value.items()) + "}"
    return repr(value)


def _tuple(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
