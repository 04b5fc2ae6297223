"""`ChainResult` holds each link's output whatever `check` says, and its
repr is one short line. The oracle for the artifacts is the same run with
the check (the chain's own snapshots, taken before and after link #3, that
the verifier reads) and MLIR's parser; for the repr, the report's counts."""

from __future__ import annotations

import pytest
from jaxlib.mlir import ir

import pipeline
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.xla.mlir_context import make_context

SWAP = "tests/newer_xla/while_swap_buffers.copy-insertion.after_adding_copies_to_resolve_interference.hlo"


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
@pytest.mark.parametrize("isolate", [True, False])
def test_each_link_s_output_is_there_with_check_false(dialect, isolate):
    for source in (EXAMPLE_HLO, SWAP):
        checked = pipeline.run(source, dialect=dialect, isolate=isolate)
        unchecked = pipeline.run(source, dialect=dialect, isolate=isolate, check=False)
        assert unchecked.report is None
        assert unchecked.mlir and unchecked.mlir == checked.mlir  # link #2's module, before link #3
        assert unchecked.flat_mlir and unchecked.flat_mlir == checked.flat_mlir
        if source is EXAMPLE_HLO:  # a tuple-shaped predecessor: link #3 changes the module
            assert unchecked.mlir != unchecked.flat_mlir
        for text in (unchecked.mlir, unchecked.flat_mlir):
            ir.Module.parse(text, context=make_context())  # MLIR reads it back
        plain = pipeline.run(source, dialect=dialect, isolate=isolate, check=False, flatten=False)
        assert plain.mlir == checked.mlir and plain.flat_mlir is None


def test_the_repr_is_one_short_line_with_the_verdict_and_counts():
    result = pipeline.run(EXAMPLE_HLO, dialect="mhlo")
    text = repr(result)
    assert "\n" not in text and len(text) < 200 and "\\x" not in text and "_hlo" not in text
    assert repr(result.source) in text and "'mhlo'" in text and ": ok" in text
    for name, count in result.report.totals().items():
        assert f"{name}={count}" in text
    lost = pipeline.run(EXAMPLE_HLO, flatten=False)
    assert "NOT OK" in repr(lost) and f"lost={len(lost.report.lost)}" in repr(lost) and lost.report.lost
    unchecked = repr(pipeline.run(EXAMPLE_HLO, check=False))
    assert "\n" not in unchecked and "not checked" in unchecked and "edges=" not in unchecked
