"""For users' own round-trip tests: one call that runs the chain, executes
the Penguin program and fails the test with everything that went wrong.

    from pipeline.testing import assert_round_trip

    def test_my_module_keeps_its_control_edges():
        assert_round_trip("my_module.txt")                          # every edge carried
        assert_round_trip("my_module.txt", inputs=[np.ones(4, np.float32)])  # ... and XLA's numbers

The oracle for the edges is the chain's verifier (`pipeline.verifier.verify`: the
HLO read by XLA's parser against the executed program); for the numbers,
XLA:CPU running the original HLO, or `expected=` (e.g. JAX's outputs).
"""

from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np

from pipeline.chain.options import takes_options
from pipeline.chain.result import ChainResult
from pipeline.chain.steps import run
from pipeline.chain.sources import export_module, raw_of, text_of
from printer.penguin import ElidedConstants

__all__ = ["assert_round_trip", "differences", "xla_outputs"]

RTOL = ATOL = 1e-5  # XLA:CPU's last bits differ between CPUs (with or without AVX-512)


@takes_options
def assert_round_trip(hlo, *, inputs: Sequence | None = None, expected: Sequence | None = None,
                      rtol: float = RTOL, atol: float = ATOL, **chain_options) -> ChainResult:
    """Run the chain on `hlo` (a path, HLO text, a binary module as bytes
    or a path: XLA's *.hlo.pb or HloSnapshot, a serialized HloModuleProto, a
    jax.export artifact; or a captured module) with the chain's options
    and return its result. Raise AssertionError listing
    every HLO control edge lost (with the link that lost it) and every
    spurious dep edge; with `inputs`, also a result of the executed program
    that differs from `expected`, by default what XLA:CPU computes from the
    original HLO (floats within rtol/atol, everything else exactly), or,
    where XLA's dump elided a constant's values (`constant({...})`), that
    the numbers cannot be compared (the line `Module.execute` refuses with).
    An HloSnapshot's arguments are the `inputs` where none are given. Bad
    input raises the chain's own one-line error, not AssertionError.

        def test_my_module_round_trips():
            assert_round_trip("my_module.txt", inputs=[np.ones(4, np.float32)], dialect="mhlo")
    """
    if chain_options.get("check") is False:
        raise TypeError("assert_round_trip needs the chain's check: do not pass check=False")
    original, hlo, inputs = _original(hlo, chain_options.get("source_name"), inputs)
    result = run(hlo, **chain_options)
    problems = [f"  {edge}" for edge in result.report.lost] + [f"  {edge}" for edge in result.report.spurious]
    if inputs is not None:
        try:
            got = result.module().execute(*inputs)
        except ElidedConstants as refused:  # placeholder values: nothing to compare (XLA's would be placeholders too)
            problems.append(f"  numerics: {refused}")
        else:
            want = xla_outputs(original, inputs) if expected is None else list(expected)
            problems += [f"  numerics: {line}" for line in differences(got, want, "XLA's" if expected is None
                                                                       else "expected", rtol, atol, detail=True)]
    if problems:
        raise AssertionError(f"{result.source}: the round trip does not hold "
                             f"({result.report.summary()}):\n" + "\n".join(problems))
    return result


def _original(hlo, source_name: str | None, inputs):
    """(the module as XLA:CPU takes it, as the chain takes it, the inputs):
    its HLO text, or the serialized HloModuleProto a binary input holds
    (an HloSnapshot's arguments are the inputs where none are given), or
    the module a jax.export artifact compiles to (compiled once)."""
    data, where, _ = raw_of(hlo, source_name)
    if isinstance(data, bytes) and data.strip():
        from pipeline.chain import binary

        kind = binary.sniff(data)
        if kind == "proto":
            found = binary.read_binary(data, where)
            if inputs is None and found.has_arguments:
                inputs = found.arguments(where)
            return found.module, data, inputs
        if kind == "jax.export":
            module = export_module(data, where)
            return module.hlo_text, module, inputs
    return text_of(hlo, source_name)[0], hlo, inputs


def xla_outputs(hlo: str | bytes, inputs: Sequence) -> list[np.ndarray]:
    """What XLA:CPU computes from `hlo` (HLO text, read by its parser, or a
    serialized HloModuleProto; then its importer, its compiler) for
    `inputs`, one array per result."""
    from pipeline.xla.isolated import readable_text
    from pipeline.xla.native import cpu_outputs, parse_to_proto

    return cpu_outputs(hlo if isinstance(hlo, bytes) else parse_to_proto(readable_text(hlo)), inputs)


def differences(got: Sequence, want: Sequence, whose: str, rtol: float = RTOL, atol: float = ATOL, *,
                detail: bool = False) -> list[str]:
    """Where the program's results `got` differ from `want` (`whose` names
    them in the messages): the count, a shape, or the values (floats within
    rtol/atol, NaN equal to NaN, everything else exactly), as numpy's own
    comparison (`numpy.testing.assert_allclose`, `assert_array_equal`)
    judges them. One line each, empty if they agree; `regress` judges its
    numerics column with it too. With `detail`, a line for differing values
    is followed by numpy's message, indented: the mismatched elements, the
    first indices with both values, the largest absolute and relative
    difference, the tolerances (the program's results are ACTUAL, `want` DESIRED)."""
    if len(got) != len(want):
        return [f"the program gives {len(got)} results, {whose} {len(want)}"]
    found = []
    for i, (a, b) in enumerate(zip(got, want)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            found.append(f"result {i} has shape {a.shape}, {whose} {b.shape}")
            continue
        exact = not (np.issubdtype(b.dtype, np.floating) or np.issubdtype(b.dtype, np.complexfloating))
        said = _numpy_says(a, b, exact, rtol, atol)
        if said is None:
            continue
        if exact:
            line = f"result {i} differs from {whose} at {int(np.count_nonzero(a != b))} of {b.size} elements"
        else:
            wide = np.complex128 if np.issubdtype(b.dtype, np.complexfloating) else np.float64  # keep imaginary parts
            worst = float(np.nanmax(np.abs(a.astype(wide) - b.astype(wide))))
            line = f"result {i} differs from {whose} by up to {worst:.3g} (rtol={rtol}, atol={atol})"
        if detail:
            line += f"; numpy.testing says (ACTUAL the program's, DESIRED {whose}):\n" + textwrap.indent(said, "    ")
        found.append(line)
    return found


def _numpy_says(actual: np.ndarray, desired: np.ndarray, exact: bool, rtol: float, atol: float) -> str | None:
    """numpy.testing's message where `actual` and `desired` differ (None where they agree)."""
    try:
        if exact:
            np.testing.assert_array_equal(actual, desired)
        else:
            np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as err:
        return str(err).strip("\n")
    return None
