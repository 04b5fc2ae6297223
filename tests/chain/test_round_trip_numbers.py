"""assert_round_trip's numerics failure carries numpy's own message: the
mismatched elements, the first indices with both values, the largest
absolute and relative difference, with the result's index and the
tolerances. The oracle: numpy.testing.assert_allclose on the same arrays
(the program's results are what XLA:CPU computes: xla_outputs)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.chain.example import EXAMPLE_HLO
from pipeline.testing import assert_round_trip, xla_outputs

X = np.arange(4, dtype=np.float32)


def test_the_numerics_failure_names_the_indices_and_both_values():
    got = [np.asarray(r) for r in xla_outputs(EXAMPLE_HLO, [X])]
    want = [r.copy() for r in got]
    want[1][2] += 3  # result 1, index 2
    with pytest.raises(AssertionError) as failed:
        assert_round_trip(EXAMPLE_HLO, inputs=[X], expected=want)
    message = str(failed.value)
    with pytest.raises(AssertionError) as numpy_says:
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5, equal_nan=True)
    for line in str(numpy_says.value).strip().splitlines():  # numpy's own lines, each of them
        assert line.strip() in message
    assert "result 1 differs from expected" in message and "rtol=1e-05, atol=1e-05" in message
    assert " [2]: " in message  # the index, as numpy prints it
    assert str(float(got[1][2])) in message and str(float(want[1][2])) in message
    assert "Mismatched elements: 1 / 4" in message and "result 0" not in message
