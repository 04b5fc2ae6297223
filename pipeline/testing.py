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
from pipeline.reading.capture import export_module
from pipeline.reading.source import identify, text_of
from pipeline.reading.parameters import BadInputs, checked_inputs
from pipeline.xla.native import XlaRejected
from printer.penguin import ElidedConstants

__all__ = ["BadInputs", "assert_round_trip", "differences", "xla_outputs"]

RTOL = ATOL = 1e-5  # XLA:CPU's last bits differ between CPUs (with or without AVX-512)
XLA_SECONDS = 600.0  # XLA:CPU's compile and run of one module, before it is stopped


@takes_options
def assert_round_trip(hlo, *, inputs: Sequence | None = None, expected: Sequence | None = None,
                      rtol: float = RTOL, atol: float = ATOL, xla_timeout: float = XLA_SECONDS,
                      **chain_options) -> ChainResult:
    """Run the chain on `hlo` (a path, HLO text, a binary module as bytes
    or a path: XLA's *.hlo.pb or HloSnapshot, a serialized HloModuleProto, a
    jax.export artifact; or a captured module) with the chain's options
    and return its result. Raise AssertionError listing
    every HLO control edge lost (with the link that lost it) and every
    spurious dep edge; with `inputs`, also a result of the executed program
    that differs from `expected`, by default what XLA:CPU computes from the
    original module (floats within rtol/atol, everything else exactly), or
    why there are no numbers to compare: XLA:CPU refused, aborted on or did
    not finish (within `xla_timeout` seconds) the module, or XLA's dump
    elided a constant's values (`constant({...})`). A module XLA dumped
    after layout assignment runs on XLA:CPU as its closest runnable form
    (`pipeline.xla.runnable`); `result.numerics` says what ran. `inputs`
    must fit the entry's parameters (count, shape, element type: BadInputs,
    one line, otherwise); an HloSnapshot's arguments are the `inputs` where
    none are given. Bad input raises the chain's own one-line error, not
    AssertionError. XLA:CPU runs in this process's warm XLA child, which
    keeps what it compiled: the same module with new inputs is only run.

        def test_my_module_round_trips():
            assert_round_trip("my_module.txt", inputs=[np.ones(4, np.float32)], dialect="mhlo")
    """
    __tracebackhide__ = True  # a failure shows the test's line (pytest), not this helper's
    if chain_options.get("check") is False:
        raise TypeError("assert_round_trip needs the chain's check: do not pass check=False")
    module = _Module(hlo, chain_options.get("source_name"))
    inputs = module.arguments if inputs is None else inputs
    result = run(module.for_chain, **chain_options)
    problems = [f"  {edge}" for edge in result.report.lost] + [f"  {edge}" for edge in result.report.spurious]
    if inputs is not None:
        module.read_by_the_chain(result)
        inputs = checked_inputs(module.parsed(), inputs, result.source)
        try:
            got = result.module().execute(*inputs)
        except ElidedConstants as refused:  # placeholder values: nothing to compare (XLA's would be placeholders too)
            problems.append(f"  numerics: {refused}")
        else:
            whose, want = "expected", expected
            if expected is None:
                try:
                    want, ran = _xla(module, inputs, result.source, xla_timeout)
                except XlaRejected as refused:
                    problems.append(f"  numerics: no XLA:CPU numbers to compare with: {refused} "
                                    f"(pass expected=, e.g. JAX's outputs)")
                    want = None
                else:
                    whose = "XLA's"
                    result.numerics = f"XLA:CPU's numbers on {ran}"
            else:
                result.numerics = "the expected numbers given"
            if want is not None:
                problems += [f"  numerics: {line}" for line in differences(got, list(want), whose, rtol, atol,
                                                                           detail=True)]
    if problems:
        raise AssertionError(f"{result.source}: the round trip does not hold "
                             f"({result.report.summary()}):\n" + "\n".join(problems))
    return result


class _Module:
    """An input to the round trip: what the chain takes (a jax.export artifact
    compiled once: its module), XLA's parse of it for XLA:CPU and the
    inputs' check (made on first use), and an HloSnapshot's arguments."""

    def __init__(self, hlo, source_name: str | None):
        found = identify(hlo, source_name)
        data, self.where = found.data, found.where
        self.for_chain, self._text, self._proto, self.arguments = hlo, None, None, None
        if found.kind == "proto":
            from pipeline.reading.binary import read_binary

            module = read_binary(data, self.where)
            self._proto, self.for_chain = module.module, data
            if module.has_arguments:
                self.arguments = module.arguments(self.where)
            return
        if found.kind == "jax.export":
            self.for_chain = export_module(data, self.where)
            self._text = self.for_chain.hlo_text
            return
        self._text = text_of(hlo, source_name)[0]
        self._parsed = None

    def read_by_the_chain(self, result: ChainResult) -> None:
        """Take XLA's parse of the module from the chain's run of it: no second parse."""
        if result.read_proto and getattr(self, "_parsed", None) is None:
            from pipeline.reading.parsed import Parsed

            self._proto = self._proto or result.read_proto
            self._parsed = Parsed.from_serialized(result.read_proto, self._text, self.where)

    def parsed(self):
        """XLA's parse of the module (in the warm child), the names as written."""
        if getattr(self, "_parsed", None) is None:
            from pipeline.reading.parsed import Parsed
            from pipeline.xla.isolated import parse

            self._parsed = (Parsed.from_serialized(self._proto, None, self.where) if self._proto is not None
                            else parse(self._text, self.where, isolate=True))
        return self._parsed

    def proto(self) -> bytes:
        """XLA's serialized HloModuleProto of the module."""
        return self._proto if self._proto is not None else self.parsed().serialized()


def _xla(module: _Module, inputs, where: str, timeout: float | None) -> tuple[list, str]:
    """(XLA:CPU's outputs for `inputs`, what it ran: the module as dumped, or its runnable form)."""
    from pipeline.xla.isolated import cpu_outputs
    from pipeline.xla.runnable import runnable

    proto, rewrites = runnable(module.proto())
    ran = f"the module with {rewrites}" if rewrites else "the module as given"
    return cpu_outputs(proto, inputs, where, timeout=timeout), ran


def xla_outputs(hlo, inputs: Sequence, *, xla_timeout: float | None = XLA_SECONDS) -> list[np.ndarray]:
    """What XLA:CPU computes from `hlo` for `inputs`, one array per result.
    `hlo` is anything `assert_round_trip` takes (a path, HLO text, a binary
    module as bytes, a captured module); XLA's parser reads it, and XLA:CPU
    compiles and runs it in this process's warm XLA child (a module past
    layout assignment as its closest runnable form: `pipeline.xla.runnable`),
    compiled once per module. `inputs` must fit the entry's parameters.
    XLA's refusal, an abort or no answer within `xla_timeout` seconds:
    `XlaRejected`, one line."""
    __tracebackhide__ = True
    module = _Module(hlo, None)
    inputs = checked_inputs(module.parsed(), inputs, module.where)
    return _xla(module, inputs, module.where, xla_timeout)[0]


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
