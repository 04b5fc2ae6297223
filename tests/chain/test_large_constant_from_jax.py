"""A JAX program that closes over a large constant round-trips through
`from_jax` with JAX's numbers: its captures dump every constant's values
(`xla_dump_large_constants`). The same program dumped as XLA dumps it by
default (`constant({...})`) has its edges checked, and its numerics refused
in one line that names the constant and the flag, never compared against
placeholder values.
"""

from __future__ import annotations

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pipeline import sources
from pipeline.testing import assert_round_trip
from pipeline.xla import native

DIALECTS = ["stablehlo", "mhlo"]
STAGE = "after_adding_copies_to_resolve_interference"  # copy insertion's edges
W = np.random.default_rng(33).standard_normal((32, 4)).astype(np.float32)  # 128 values: XLA elides it by default
X = np.linspace(-1.0, 1.0, 4).astype(np.float32)


def closes_over_w(x):
    y = W @ x
    y = jax.lax.fori_loop(1, 32, lambda i, v: v.at[i].set(v[i - 1] * 0.5 + v[i]), y)  # in place: control edges
    return jnp.split(y, 4)


def jax_s_numbers() -> list[np.ndarray]:
    return [np.asarray(v) for v in jax.jit(closes_over_w)(X)]


@functools.lru_cache(maxsize=None)
def captured() -> sources.CapturedModule:
    [module] = [m for m in sources.from_jax(closes_over_w, X).modules if STAGE in m.stage]
    return module


@functools.lru_cache(maxsize=None)
def dumped_by_default(folder: str) -> sources.CapturedModule:
    """The same program as XLA dumps it without the flag: JAX's own compile, XLA's own dump."""
    jax.jit(closes_over_w).lower(X).compile(
        compiler_options={"xla_dump_to": folder, "xla_dump_hlo_pass_re": "copy-insertion"})
    [module] = [m for m in sources.from_dump_dir(folder).modules if STAGE in m.stage]
    return module


@pytest.fixture(scope="module")
def elided(tmp_path_factory) -> sources.CapturedModule:
    return dumped_by_default(str(tmp_path_factory.mktemp("default_dump")))


def test_from_jax_dumps_the_constant_with_its_values():
    text = captured().hlo_text
    assert "{...}" not in text and captured().edges > 0
    assert re.search(r"f32\[32,4\]\{1,0\} constant\(\{ \{", text)  # the 32x4 literal, written out


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_captured_module_round_trips_with_jax_s_numbers(dialect):
    result = assert_round_trip(captured(), inputs=[X], expected=jax_s_numbers(), rtol=1e-5, atol=1e-5,
                               dialect=dialect, isolate=False)
    assert result.report.elided == [] and result.report.ok


def test_xla_s_default_dump_elides_the_constant_and_xla_reads_placeholders_there(elided):
    [name] = re.findall(r"%(\S+) = f32\[32,4\]\{1,0\} constant\(\{\.\.\.\}\)", elided.hlo_text)
    assert elided.edges == captured().edges
    # What XLA's parser puts in its place (printed with every value): not W.
    line = re.search(rf"%{re.escape(name)} = f32\[32,4\]\{{1,0\}} constant\((.*?)\)(?:, |$)",
                     native.canonical_text(elided.hlo_text), re.M).group(1)
    values = np.array([float(v) for v in re.findall(r"[-+0-9.e]+", line)], np.float32)
    assert values.size == W.size and not np.allclose(values, W.ravel(), atol=1e-3)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_default_dump_is_refused_for_numerics_in_one_line_and_its_edges_are_checked(elided, dialect):
    [name] = re.findall(r"%(\S+) = f32\[32,4\]\{1,0\} constant\(\{\.\.\.\}\)", elided.hlo_text)
    with pytest.raises(AssertionError) as failed:
        assert_round_trip(elided, inputs=[X], expected=jax_s_numbers(), dialect=dialect, isolate=False)
    [numerics] = [line for line in str(failed.value).splitlines() if "numerics" in line]
    assert str(failed.value).splitlines()[1:] == [numerics]  # the only problem: no edge is lost
    assert f"%{name} (in %" in numerics and "--xla_dump_large_constants" in numerics
    assert "differs" not in numerics  # never compared
    result = assert_round_trip(elided, dialect=dialect, isolate=False)  # the edges alone: they hold
    assert result.report.ok and len(result.report.edges) == captured().edges
    assert [c for _, c in result.report.elided] == [name]
