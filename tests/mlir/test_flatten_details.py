"""Link #3 details that mutation testing found unpinned (issue 13)."""

from __future__ import annotations

import pytest
from jaxlib.mlir import passmanager

from passes.mlir import MHLO, STABLEHLO, FlattenControlDepTupleOperands
from pipeline.xla.mlir_context import make_context

# The pass names the README documents (hlo2penguin-opt flags and --pass-pipeline elements).
DOCUMENTED = {"mhlo": "flatten-control-dep-tuple-operands",
              "stablehlo": "stablehlo-flatten-control-dep-tuple-operands"}


@pytest.mark.parametrize("dialect", [STABLEHLO, MHLO], ids=lambda d: d.name)
def test_a_pass_manager_prints_the_pass_under_its_documented_name(dialect):
    """MLIR's own printing of the pipeline (what a reproducer or
    --mlir-print-ir-* would show) names the pass by its argument."""
    with make_context():
        pm = passmanager.PassManager("builtin.module")
        FlattenControlDepTupleOperands(dialect).add_to(pm)
        pm.add("canonicalize")
        assert str(pm).startswith(f"builtin.module({DOCUMENTED[dialect.name]},")
