"""One MLIR context with every dialect the chain meets: func and the other
upstream dialects, StableHLO, MHLO, CHLO and Shardy."""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, mhlo, sdy, stablehlo


def make_context() -> ir.Context:
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    context = ir.Context()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    mhlo.register_mhlo_dialect(context)
    chlo.register_dialect(context)
    sdy.register_dialect(context)
    return context


_passes_registered = False


def register_passes() -> None:
    """Make jaxlib's StableHLO and MHLO passes (e.g. stablehlo-legalize-to-hlo)
    known to textual pipelines; once per process."""
    global _passes_registered
    if not _passes_registered:
        mhlo.register_mhlo_passes()
        stablehlo.register_stablehlo_passes()
        _passes_registered = True
