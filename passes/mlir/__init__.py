"""Link #3 on MLIR: the control-dep tuple flatten pass and its twin. The
dialect rows it runs on come from `passes.dialects`."""

from passes.dialects import BY_MNEMONIC, DIALECTS, MHLO, STABLEHLO, Dialect
from passes.mlir.flatten_control_dep_tuple_operands import (
    SCOPES, FlattenControlDepTupleOperands, FlattenError, FlattenResult)

__all__ = ["BY_MNEMONIC", "DIALECTS", "MHLO", "SCOPES", "STABLEHLO", "Dialect",
           "FlattenControlDepTupleOperands", "FlattenError", "FlattenResult"]
