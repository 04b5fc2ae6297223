"""What the numerics tests of the Penguin executor share (tests/runtime/test_execute*.py):
the chain run without isolation, the corpus programs by name and stage, JAX's answer, and
the comparison of two lists of arrays."""

from __future__ import annotations

import functools

import jax
import jaxlib._hlo as xla_hlo
import numpy as np

import pipeline
from jax_programs import PROGRAMS, corpus

DIALECTS = ["stablehlo", "mhlo"]
# Before the passes; the copy-insertion stage holding the most control edges
# (every program has some there); and the module copy insertion hands on.
STAGES = {"before": "before_optimizations", "interference": "after_adding_copies_to_resolve_interference",
          "after": "after_copy-insertion"}
BY_NAME = {name: (fn, args) for name, fn, args in PROGRAMS}


def run(text: str, dialect: str, **options):
    return pipeline.run(text, dialect=dialect, isolate=False, **options)


@functools.lru_cache(maxsize=None)
def chain(program: str, stage: str, dialect: str):
    (text,) = [t for n, t in corpus() if n.startswith(program + "/") and STAGES[stage] in n]
    return run(text, dialect)


def expected(fn, args) -> list[np.ndarray]:
    """JAX's answer, compiled as the dumps were (numpy inputs to an eager
    function would get numpy's semantics for `//`, `astype`, …)."""
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(jax.jit(fn)(*args))]


def assert_same(got, want, what=""):
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (what, g, w)
        if np.issubdtype(w.dtype, np.inexact) or w.dtype.name == "bfloat16":
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-5, atol=1e-6, err_msg=what)
        else:
            np.testing.assert_array_equal(g, w, err_msg=what)


def hlo(text: str) -> str:
    """A hand-written module, checked to be real HLO by XLA's own parser."""
    xla_hlo.hlo_module_from_text(text)
    return text


def other_args(args):
    """Same shapes, other values: arange inputs make some programs all zeros."""
    return tuple(np.asarray(a) * 1.5 + 1 for a in args)
