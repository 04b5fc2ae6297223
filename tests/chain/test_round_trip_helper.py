"""`pipeline.testing.assert_round_trip`, the helper for users' own tests:
it passes where the chain carries every edge and the program computes what
XLA computes, and fails naming the edge and the link, or the result, where
not. Oracles: the HLO text itself (which edge a tuple-shaped predecessor
is), JAX's own numbers, and CPython's numpy."""

from __future__ import annotations

import re

import numpy as np
import pytest

from jax_programs import PROGRAMS
from passes.errors import ChainError
from pipeline import sources
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.testing import assert_round_trip, differences, xla_outputs
from pipeline.xla import native
from paths import DOCS

X = np.arange(4, dtype=np.float32) - 1.5


def edges_only_a_flat_tuple_carries(text: str) -> set[tuple[str, str]]:
    """(predecessor, successor) where the predecessor's shape is a tuple and
    the successor does not read it through data: the edges that need link
    #3. Read from the HLO text alone (one computation's names)."""
    shapes = dict(re.findall(r"%([\w.\-]+) = (\S)", text))
    operands = {name: re.findall(r"%([\w.\-]+)", args)
                for name, args in re.findall(r"%([\w.\-]+) = \S+ [a-z\-]+\(([^)]*)\)", text)}

    def reads(user: str, value: str) -> bool:
        return any(o == value or reads(o, value) for o in operands.get(user, ()))

    edges = set()
    for successor, preds in re.findall(r"%([\w.\-]+) = [^\n]*control-predecessors=\{([^}]*)\}", text):
        for pred in (p.strip().lstrip("%") for p in preds.split(",")):
            if shapes[pred] == "(" and not reads(successor, pred):
                edges.add((pred, successor))
    return edges


@pytest.fixture(scope="module")
def captured():
    name, fn, args = next(p for p in PROGRAMS if p[0] == "while_swap_buffers")
    return fn, args, sources.from_jax(fn, *args).modules[0]


def test_a_good_module_passes_and_its_numbers_are_xla_s():
    result = assert_round_trip(EXAMPLE_HLO, inputs=[X])
    assert result.report.ok and result.report.edges


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_without_link_3_the_tuple_shaped_predecessor_s_edge_is_named_with_its_link(dialect):
    expected = edges_only_a_flat_tuple_carries(EXAMPLE_HLO)
    assert expected  # the example's while loop is a tuple-shaped predecessor
    with pytest.raises(AssertionError) as failed:
        assert_round_trip(EXAMPLE_HLO, flatten=False, dialect=dialect)
    message = str(failed.value)
    for pred, succ in expected:
        assert re.search(rf"%{re.escape(pred)} -> %{re.escape(succ)}: lost at link #3", message), message
    assert "spurious" in message


def test_xla_s_numbers_are_jax_s(captured):
    fn, args, module = captured
    np.testing.assert_allclose(xla_outputs(module.hlo_text, args)[0], np.asarray(fn(*args)[0]), rtol=1e-5, atol=1e-5)


def test_a_module_from_jax_round_trips_with_jax_s_numbers(captured):
    fn, args, module = captured
    expected = [np.asarray(r) for r in fn(*args)]
    assert assert_round_trip(module, inputs=args, expected=expected).report.ok
    assert assert_round_trip(module, inputs=args, dialect="mhlo").report.ok


def test_a_numerics_mismatch_names_the_result(captured):
    fn, args, module = captured
    expected = [np.asarray(r) for r in fn(*args)]
    expected[1] = expected[1] + 1.0
    with pytest.raises(AssertionError, match=r"numerics: result 1 differs from expected by up to 1 "):
        assert_round_trip(module, inputs=args, expected=expected)
    with pytest.raises(AssertionError, match=rf"numerics: the program gives {len(expected)} results, expected 1"):
        assert_round_trip(module, inputs=args, expected=expected[:1])


def test_the_tolerance_given_is_the_one_used(captured):
    """rtol= and atol= reach the comparison: a looser one accepts what the
    defaults (1e-5) refuse, a tighter one refuses what they accept."""
    fn, args, module = captured
    jax_s = [np.asarray(r) for r in fn(*args)]
    assert any(np.issubdtype(r.dtype, np.floating) and np.abs(r).max() > 0.5 for r in jax_s)
    scaled = [r * np.float32(1 + 1e-3) if np.issubdtype(r.dtype, np.floating) else r for r in jax_s]
    with pytest.raises(AssertionError, match=r"\(rtol=1e-05, atol=1e-05\)"):
        assert_round_trip(module, inputs=args, expected=scaled)
    assert assert_round_trip(module, inputs=args, expected=scaled, rtol=1e-2).report.ok
    shifted = [r + np.float32(0.5) if np.issubdtype(r.dtype, np.floating) else r for r in jax_s]
    with pytest.raises(AssertionError, match="numerics: result"):
        assert_round_trip(module, inputs=args, expected=shifted)
    assert assert_round_trip(module, inputs=args, expected=shifted, atol=1.0).report.ok
    # 3e-6 apart: within the defaults, far beyond rtol=1e-7 (XLA:CPU's own last bits stay below it)
    nudged = [r * np.float32(1 + 3e-6) if np.issubdtype(r.dtype, np.floating) else r for r in jax_s]
    assert assert_round_trip(module, inputs=args, expected=nudged).report.ok
    with pytest.raises(AssertionError, match=r"\(rtol=1e-07, atol=0\)"):
        assert_round_trip(module, inputs=args, expected=nudged, rtol=1e-7, atol=0)


def test_a_path_text_and_a_captured_module_are_taken_and_judged_against_the_original_hlo(tmp_path):
    """`hlo` may be a path (str or Path), HLO text (str or bytes) or a
    captured module; link #1 edits XLA's parse of it, yet XLA's numbers are
    those of the HLO as given. Our own IR (`passes.hlo.Module`) is not an input."""
    from pipeline.reading.parsed import Parsed
    from passes.hlo.view import view_of

    path = tmp_path / "example.hlo"
    path.write_text(EXAMPLE_HLO)
    captured = sources.CapturedModule("example:by_hand", "by_hand", EXAMPLE_HLO)
    wrong = [np.asarray(r) + 1 for r in xla_outputs(EXAMPLE_HLO, [X])]
    for hlo in (str(path), path, EXAMPLE_HLO, EXAMPLE_HLO.encode(), captured):
        result = assert_round_trip(hlo, inputs=[X])
        assert result.report.ok and len(result.report.edges) == 4, hlo
        with pytest.raises(AssertionError, match="numerics: result 0 differs from expected by up to 1 "):
            assert_round_trip(hlo, inputs=[X], expected=wrong)
    with pytest.raises(TypeError, match="give a path, HLO text or a captured module"):
        assert_round_trip(view_of(native.read(EXAMPLE_HLO)), inputs=[X])


def test_differences_compares_floats_within_the_tolerance_and_the_rest_exactly():
    """The promise of `differences` (regress's numerics column too): count,
    shapes, then values; floats and complex numbers within rtol/atol (NaN
    equal to NaN), integers and booleans exactly; every result is looked at."""
    f = np.array([1.0, np.nan, 3.0], np.float32)
    assert differences([f], [f * np.float32(1 + 1e-6)], "JAX's") == []
    c = np.array([1 + 2j, 3 - 1j], np.complex64)
    assert differences([c], [c * np.complex64(1 + 1e-6)], "JAX's") == []
    assert differences([c], [c + np.complex64(0.5j)], "JAX's") == [
        "result 0 differs from JAX's by up to 0.5 (rtol=1e-05, atol=1e-05)"]
    big = np.array([1_000_000, 7, 7], np.int64)  # within any float tolerance of each other, yet not equal
    assert differences([big], [big + np.array([1, 0, 1])], "JAX's") == [
        "result 0 differs from JAX's at 2 of 3 elements"]
    assert differences([np.array([True])], [np.array([False])], "JAX's") == [
        "result 0 differs from JAX's at 1 of 1 elements"]
    # A wrong shape in one result does not hide a wrong value in the next.
    assert differences([np.zeros(2), np.ones(3)], [np.zeros(3), np.zeros(3)], "JAX's") == [
        "result 0 has shape (2,), JAX's (3,)", "result 1 differs from JAX's by up to 1 (rtol=1e-05, atol=1e-05)"]
    assert differences([f], [f, f], "JAX's") == ["the program gives 1 results, JAX's 2"]


def test_lost_edges_and_numbers_are_both_named_and_xla_is_named_as_the_reference():
    wrong = [np.asarray(r) + 1 for r in xla_outputs(EXAMPLE_HLO, [X])]
    with pytest.raises(AssertionError) as failed:
        assert_round_trip(EXAMPLE_HLO, flatten=False, inputs=[X], expected=wrong)
    message = str(failed.value)
    assert ": lost at link #3" in message and "numerics: result 0 differs from expected" in message
    with pytest.raises(AssertionError, match="lost at link #3") as failed:
        assert_round_trip(EXAMPLE_HLO, flatten=False, inputs=[X])  # numbers right, an edge lost
    assert "numerics" not in str(failed.value)


def test_bad_input_is_the_chain_s_error_not_a_failed_assertion():
    with pytest.raises(ChainError):
        assert_round_trip(EXAMPLE_HLO.replace("add(", "addd("))
    with pytest.raises(TypeError, match="check=False"):
        assert_round_trip(EXAMPLE_HLO, check=False)
    with pytest.raises(ChainError, match=r"^my_module\.hlo:1:1: input is not UTF-8 text"):
        assert_round_trip(b"\xff\xfe" + EXAMPLE_HLO.encode(), source_name="my_module.hlo")


def test_the_docs_example_failure_is_what_the_helper_prints():
    import re

    from pipeline.chain.example import EXAMPLE_HLO
    from pipeline.testing import assert_round_trip

    page = (DOCS / "api.md").read_text()
    shown = re.search(r"with `flatten=False` on the built-in example:\n\n```\n(.*?)```", page, re.S).group(1)
    with pytest.raises(AssertionError) as failed:
        assert_round_trip(EXAMPLE_HLO, flatten=False, isolate=False)
    printed = str(failed.value).splitlines()
    shown_lines = shown.splitlines()
    assert len(shown_lines) == len(printed)
    for said, real in zip(shown_lines, printed):
        # docs/api.md cuts long lines with "...": each piece is in the real line, in order.
        at = 0
        for piece in said.split("..."):
            at = real.index(piece, at) + len(piece)
