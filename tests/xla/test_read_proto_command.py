"""The child's `read` command (`isolated.read_proto`): XLA's proto reader's
verdict on a module given as a serialized HloModuleProto, in this process
and in the warm child alike: nothing for a module XLA wrote, XLA's own
words for one it refuses."""

from __future__ import annotations

import pytest

from pipeline.reading.parsed import decode_proto
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.xla import native
from pipeline.xla.isolated import XlaRejected, read_proto


def test_read_proto_is_xlas_verdict_in_the_child_and_here():
    good = native.parse_to_proto(EXAMPLE_HLO)  # XLA's own proto of the example
    for isolate in (False, True):
        assert read_proto(good, "m.pb", isolate=isolate) is None
    module = decode_proto(good)
    module.computations[-1].instructions[-1].operand_ids.append(424242)  # an id no instruction has
    bad = module.SerializeToString()
    with pytest.raises(Exception) as xla:
        native.read_proto(bad)
    said = str(xla.value).strip().splitlines()[0]
    for isolate in (False, True):
        with pytest.raises(XlaRejected) as refused:
            read_proto(bad, "m.pb", isolate=isolate)
        assert str(refused.value) == f"m.pb: XLA refuses the module: {said}"
