"""A module whose constants XLA's dump printed as `constant({...})` is never
executed: XLA's parser reads `{...}` as placeholder bits, so every number
computed from it would be noise. `Module.execute` refuses it in one line
that names the constant and the dump flag that keeps its values; the
printed program carries the mark, so the refusal holds wherever the
program runs. The edges are checked as ever.

The oracle for "placeholders": XLA itself, which reads the same `{...}`
text as different values each time it parses it, and XLA:CPU, whose
numbers from such a module are not the module's.
"""

from __future__ import annotations

import jaxlib._hlo as xla_hlo
import numpy as np
import pytest

import pipeline
from pipeline.testing import xla_outputs
from pipeline.verifier.program import run_program
from printer.penguin import ElidedConstants, ExecutionError

DIALECTS = ["stablehlo", "mhlo"]
FLAG = "--xla_dump_large_constants"
VALUES = "{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}"
MODULE = f"""\
HloModule elided

ENTRY main {{
  x = f32[12] parameter(0)
  w = f32[12] constant({VALUES})
  n = f32[12] negate(x)
  a = f32[12] add(x, w)
  ROOT r = f32[12] multiply(a, n), control-predecessors={{w}}
}}
"""
ELIDED = MODULE.replace(VALUES, "{...}")
X = np.linspace(-1.0, 1.0, 12).astype(np.float32)


def one_line(err: BaseException) -> str:
    text = str(err)
    assert "\n" not in text, text
    return text


def test_xla_reads_the_elided_text_as_placeholders_not_values():
    # XLA fills the literal with values of its own (jaxlib 0.10.2 from a counter, so two parses differ):
    # they print as values, and they are not the module's.
    options = xla_hlo.HloPrintOptions()
    options.print_large_constants = True
    first = xla_hlo.hlo_module_from_text(ELIDED).to_string(options)
    assert "{...}" not in first
    assert not np.allclose(xla_outputs(ELIDED, [X])[0], xla_outputs(MODULE, [X])[0])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_execute_refuses_a_module_with_an_elided_constant_in_one_line(dialect):
    result = pipeline.run(ELIDED, dialect=dialect, isolate=False)
    assert result.report.ok and len(result.report.edges) == 1  # the edge w -> r is carried and checked
    with pytest.raises(ElidedConstants) as refused:
        result.module().execute(X)
    line = one_line(refused.value)
    assert "%w (in %main)" in line and FLAG in line and "constant({...})" in line
    assert isinstance(refused.value, ExecutionError)  # what a caller of execute already catches


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_same_module_with_its_values_executes_with_xla_s_numbers(dialect):
    result = pipeline.run(MODULE, dialect=dialect, isolate=False)
    assert result.module().elided == []
    np.testing.assert_allclose(result.module().execute(X)[0], xla_outputs(MODULE, [X])[0], rtol=1e-6, atol=1e-6)


def test_the_printed_program_carries_the_mark_wherever_it_runs():
    source = pipeline.run(ELIDED, isolate=False).penguin_source
    module = run_program(source, "<a program on its own>")["module"]  # the program, run afresh
    assert module.elided == [("main", "w")]
    with pytest.raises(ElidedConstants, match=r"%w \(in %main\).*--xla_dump_large_constants"):
        module.execute(X)


def test_a_function_other_than_main_is_refused_too():
    module = pipeline.run(ELIDED, isolate=False).module()
    with pytest.raises(ElidedConstants):
        module.execute(X, function="no-such-function")  # refused before anything is looked up or computed
