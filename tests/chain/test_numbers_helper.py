"""What a user's numeric round-trip test relies on: XLA:CPU's compile and
run isolated in the warm child (an abort or a hang is one line, and the
next call works), compiled once per module, inputs checked against the
entry's parameters in one line, every form of a module taken, and a failure
that shows the test's line, not the helper's."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from paths import REPO
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.reading.dumps import CapturedModule
from pipeline.reading.parameters import BadInputs
from pipeline.testing import assert_round_trip, xla_outputs
from cpu_hazards import SEGFAULT, WAITS
from pipeline.xla import worker
from pipeline.xla.native import XlaRejected, parse_to_proto

# The reduced module: `x @ w` after layout assignment brings a bitcast that changes rank.
RANK = """HloModule rank

ENTRY main {
  w = f32[3]{0} parameter(0)
  a = f32[3]{0} negate(w)
  b = f32[3,1]{1,0} bitcast(w), control-predecessors={a}
  ROOT t = (f32[3]{0}, f32[3,1]{1,0}) tuple(a, b)
}
"""

# A bitcast that reorders: f32[2,3]{1,0} read as f32[3,2]{0,1} is the transpose (same bytes, column-major).
LAYOUT = """HloModule layout

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  n = f32[2,3]{1,0} negate(x)
  t = f32[3,2]{0,1} bitcast(x), control-predecessors={n}
  r = f32[6]{0} bitcast(t)
  ROOT out = (f32[2,3]{1,0}, f32[3,2]{0,1}, f32[6]{0}) tuple(n, t, r)
}
"""



X = np.arange(4, dtype=np.float32)


def test_the_reduced_module_round_trips_with_xla_numbers():
    w = np.array([1.0, -2.0, 3.5], np.float32)
    result = assert_round_trip(RANK, inputs=[w])
    assert "bitcast" in result.numerics
    a, b = xla_outputs(RANK, [w])
    np.testing.assert_array_equal(a, -w)            # the semantics, by hand: negate
    np.testing.assert_array_equal(b, w.reshape(3, 1))  # a bitcast to f32[3,1]{1,0}: the same elements


def test_a_bitcast_that_changes_layout_is_a_transpose_for_xla_and_the_program():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    n, t, r = xla_outputs(LAYOUT, [x])
    np.testing.assert_array_equal(t, x.T)              # {0,1}: column-major bytes of x read as 3x2
    np.testing.assert_array_equal(r, x.T.reshape(-1, order="F"))  # and those bytes in order again
    assert_round_trip(LAYOUT, inputs=[x])               # the Penguin runtime's own bitcast agrees


def test_an_xla_abort_between_two_numeric_calls_is_one_line_and_the_next_call_works():
    assert_round_trip(EXAMPLE_HLO, inputs=[X])
    with pytest.raises(XlaRejected) as refused:
        xla_outputs(SEGFAULT, [X])
    message = str(refused.value)
    assert "\n" not in message and "XLA:CPU aborted (signal 11)" in message
    result = assert_round_trip(EXAMPLE_HLO, inputs=[X])
    assert result.numerics == "XLA:CPU's numbers on the module as given"


def test_xla_that_gives_no_answer_in_time_is_stopped_in_one_line():
    with pytest.raises(XlaRejected) as refused:
        xla_outputs(WAITS, [X], xla_timeout=1.0)
    assert "no answer within 1 s" in str(refused.value) and "\n" not in str(refused.value)
    np.testing.assert_allclose(xla_outputs(RANK, [X[:3]])[0], -X[:3])


def test_a_module_compiled_once_is_only_run_with_new_inputs():
    def compiles() -> int:  # counted by the warm child that compiles
        return int(worker.shared().ask("compiles", b"")[1])

    assert_round_trip(EXAMPLE_HLO, inputs=[X])  # compiled now (or by an earlier test: this child keeps it)
    first = compiles()
    for k in range(1, 4):  # as a parametrized test feeds one module
        assert_round_trip(EXAMPLE_HLO, inputs=[X + k])
    assert compiles() == first
    assert_round_trip(EXAMPLE_HLO.replace("HloModule ", "HloModule other_", 1), inputs=[X])  # another module
    assert compiles() == first + 1


@pytest.mark.parametrize("given, says", [
    ([np.ones(3)], "input 0 for parameter 0 (%w) takes f32[3]; given f64[3]: pass np.asarray(x, np.float32)"),
    ([np.ones(4, np.float32)], "input 0 for parameter 0 (%w) takes f32[3]; given f32[4]: pass an array of shape (3,)"),
    ([np.ones(3, np.float32), 1], "the entry computation %main takes 1 parameter(s) (%w: f32[3]); given 2 input(s)"),
    ([], "takes 1 parameter(s) (%w: f32[3]); given 0 input(s)"),
])
def test_inputs_that_do_not_fit_the_parameters_are_one_line_naming_the_parameter(given, says):
    for call in (lambda: assert_round_trip(RANK, inputs=given), lambda: xla_outputs(RANK, given)):
        with pytest.raises(BadInputs) as refused:
            call()
        assert says in str(refused.value) and "\n" not in str(refused.value)


def test_python_numbers_take_the_parameters_type_where_they_convert_exactly():
    module = """HloModule scalars

ENTRY main {
  i = s32[] parameter(0)
  f = f32[] parameter(1)
  ROOT t = (s32[], f32[]) tuple(i, f)
}
"""
    i, f = xla_outputs(module, [3, 0.5])
    assert i.dtype == np.int32 and int(i) == 3 and f.dtype == np.float32 and float(f) == 0.5
    with pytest.raises(BadInputs, match=r"parameter 0 \(%i\) takes s32\[\]; given the Python number 3.5"):
        xla_outputs(module, [3.5, 0.5])


def test_a_tuple_parameter_is_checked_element_by_element():
    module = """HloModule tuples

ENTRY main {
  p = (f32[2], s32[]) parameter(0)
  ROOT x = f32[2] get-tuple-element(p), index=0
}
"""
    with pytest.raises(BadInputs, match=r"input 0 element \[1\] for parameter 0 \(%p\) takes s32\[\]; given s64\[\]"):
        xla_outputs(module, [(np.ones(2, np.float32), np.int64(1))])
    with pytest.raises(BadInputs, match=r"takes \(f32\[2\], s32\[\]\); given 3 element\(s\)"):
        xla_outputs(module, [(1, 2, 3)])


def test_xla_outputs_takes_a_path_text_bytes_or_a_captured_module(tmp_path):
    path = tmp_path / "rank.hlo"
    path.write_text(RANK)
    proto = parse_to_proto(RANK)
    w = [np.array([1.0, 2.0, 3.0], np.float32)]
    want = xla_outputs(RANK, w)
    for source in (path, str(path), proto, CapturedModule("rank:given", "given", RANK)):
        for got, expected in zip(xla_outputs(source, w), want):
            np.testing.assert_array_equal(got, expected)


def test_a_failing_round_trip_under_plain_pytest_shows_the_tests_line_not_the_helpers(tmp_path):
    test = tmp_path / "test_mine.py"
    test.write_text(textwrap.dedent(f"""
        import numpy as np
        from pipeline.testing import assert_round_trip

        def test_mine():
            assert_round_trip({RANK!r}, inputs=[np.ones(3, np.float32)], expected=[np.zeros(3), np.zeros((3, 1))])
    """))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # plain pytest: none of this repository's settings
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-c",
                          str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), str(test)], capture_output=True, text=True, cwd=tmp_path,
                         env={**__import__("os").environ, "PYTHONPATH": str(REPO)}, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "assert_round_trip(" in run.stdout and "test_mine.py:6: AssertionError" in run.stdout
    assert "result 0 differs from expected" in run.stdout
    assert "pipeline/testing.py" not in run.stdout and "problems" not in run.stdout
