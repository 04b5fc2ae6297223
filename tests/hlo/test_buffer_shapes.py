"""Buffer shapes, `b(f32[16])`, as copy insertion's Pin/Unpin tests in XLA
write them: XLA's parser reads them, and the chain carries every edge
around them. A control-dep call cannot stand for a buffer (the importer
writes a custom_call whose verifier refuses a buffer result), so an edge
into an op whose operand 0 is a buffer lands on the ops that read it."""

from __future__ import annotations

import jaxlib._hlo as xla_hlo
import pytest

import pipeline

PIN = """\
HloModule pin
ENTRY e {
  p = f32[16] parameter(0)
  pin = b(f32[16]) custom-call(p), custom_call_target="Pin"
  n = f32[16] negate(p), control-predecessors={pin}
  unpin = f32[16] custom-call(pin), custom_call_target="Unpin", control-predecessors={n}
  ROOT r = f32[16] add(n, unpin)
}
"""


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
@pytest.mark.parametrize("bundle", [False, True])
def test_every_edge_around_a_buffer_goes_through_the_whole_chain(dialect, bundle):
    xla_hlo.hlo_module_from_text(PIN)  # the oracle reads it
    result = pipeline.run(PIN, dialect=dialect, bundle=bundle, isolate=True)
    fates = {(e.predecessor, e.successor): e.fate for e in result.report.edges}
    assert fates == {("pin", "n"): "preserved", ("n", "unpin"): "rerouted"}
    assert result.report.ok and not result.report.spurious
    # Where the rerouted edge landed: the op that reads %unpin's value.
    assert ("n", "r") in {(d.predecessor.name, d.successor.name) for d in result.module().dependencies}
