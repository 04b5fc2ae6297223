"""Link #2: XLA's real HLO→StableHLO importer."""

from __future__ import annotations

import jaxlib._jax as xla_ext
from jaxlib.mlir import ir

from pipeline.mlir_context import make_context
from pipeline.xla import parse_with_xla


def import_hlo(text: str, context: ir.Context | None = None, source: str | None = None) -> ir.Module:
    """HLO text → XLA's parser → serialized proto → XLA's importer → StableHLO."""
    hlo = parse_with_xla(text, source)
    bytecode = xla_ext.mlir.hlo_to_stablehlo(hlo.as_serialized_hlo_module_proto())
    context = context or make_context()
    return ir.Module.parse(bytecode, context=context)
