"""Link #3 on MLIR: the control-dep tuple flatten pass and its twin."""

from passes.mlir.flatten_control_dep_tuple_operands import (
    BY_MNEMONIC, DIALECTS, MHLO, SCOPES, STABLEHLO, DialectOps, FlattenControlDepTupleOperands,
    FlattenError, FlattenResult)

__all__ = ["BY_MNEMONIC", "DIALECTS", "MHLO", "SCOPES", "STABLEHLO", "DialectOps",
           "FlattenControlDepTupleOperands", "FlattenError", "FlattenResult"]
