"""Small JAX programs whose compiled HLO carries control dependencies.

XLA's copy-insertion pass adds ``copy`` instructions (and ``control-predecessors``
edges ordering them) wherever a loop-carried buffer would otherwise be read
after being overwritten in place.  The programs below are chosen to trigger
that: in-place updates inside loops, carries swapped between iterations,
conditionals and nested loops.

Which dump stage carries the edges (measured on XLA CPU, jaxlib 0.10.2):

* ``*.copy-insertion.after_adding_copies_to_resolve_interference.txt`` holds
  edges for every program here; it is the richest source.
* ``*.copy-insertion.after_removing_unnecessary_copies.txt``,
  ``*.after_adding_special-case_copies.txt``, ``*.after_copy-insertion.*`` and
  ``*.cpu_after_optimizations.txt`` keep only edges whose copies survive copy
  elision.  In practice that is the programs that swap or rotate carries
  (``while_swap_buffers``, ``while_rotate_three``, ``fori_swap_carries``,
  ``scan_swap_inplace``); pure in-place updates lose all their edges there.
* ``before_optimizations`` and ``*.before_copy-insertion.txt`` never have
  them: they are the pass's input.

Importing this module needs only JAX; it has no pytest dependency.
"""

from __future__ import annotations

import functools
import math
import os
import re
import tempfile
from typing import Callable, Sequence

import jax
import jax.numpy as jnp

__all__ = [
    "PROGRAMS",
    "capture_dumps",
    "corpus",
    "count_control_edges",
    "is_hlo_dump_name",
]


# --------------------------------------------------------------------------
# Programs
# --------------------------------------------------------------------------


def fori_inplace(x):
    """Prefix-doubling: each step reads ``x[i-1]`` and writes ``x[i]`` in place."""

    def body(i, x):
        return x.at[i].set(x[i - 1] * 2.0)

    return jax.lax.fori_loop(1, x.shape[0], body, x)


def scan_inplace_carry(x):
    """``scan`` whose carry buffer is updated in place at the step index."""

    def step(carry, i):
        buf, acc = carry
        buf = buf.at[i].add(acc)
        return (buf, acc + buf[i]), buf[i]

    (buf, acc), ys = jax.lax.scan(step, (x, jnp.float32(0.0)), jnp.arange(x.shape[0]))
    return buf, acc, ys


def while_swap_buffers(a, b):
    """Ping-pong ``while_loop``: the carries trade places every iteration."""

    def cond(s):
        return s[0] < 5

    def body(s):
        i, a, b = s
        return i + 1, b, a + b

    return jax.lax.while_loop(cond, body, (jnp.int32(0), a, b))


def while_rotate_three(a, b, c):
    """Three buffers rotated each iteration, one of them also updated in place."""

    def cond(s):
        return s[0] < 4

    def body(s):
        i, a, b, c = s
        return i + 1, b, c, a.at[i % a.shape[0]].set(c[0])

    return jax.lax.while_loop(cond, body, (jnp.int32(0), a, b, c))


def fori_cond_inplace(x):
    """``cond`` inside a loop; both branches write the same buffer in place."""

    def body(i, x):
        return jax.lax.cond(
            i % 2 == 0,
            lambda x: x.at[i].set(x[i] + 1.0),
            lambda x: x.at[i].set(x[i - 1] * 3.0),
            x,
        )

    return jax.lax.fori_loop(1, x.shape[0], body, x)


def nested_scan(m):
    """Outer scan over rows, inner scan updating the row carry in place."""

    def inner(row, j):
        row = row.at[j].add(row[j - 1])
        return row, row[j]

    def outer(carry, r):
        carry = carry + r
        carry, _ = jax.lax.scan(inner, carry, jnp.arange(1, carry.shape[0]))
        return carry, carry.sum()

    return jax.lax.scan(outer, jnp.zeros(m.shape[1], m.dtype), m)


def fori_swap_carries(a, b):
    """``fori_loop`` whose body swaps its two carries after touching one."""

    def body(i, s):
        a, b = s
        return b.at[i].set(a[i]), a

    return jax.lax.fori_loop(0, a.shape[0], body, (a, b))


def scan_swap_inplace(a, b):
    """``scan`` that both swaps two carries and writes into one of them."""

    def step(s, i):
        a, b = s
        return (b, a.at[i].multiply(2.0)), a[i] + b[i]

    return jax.lax.scan(step, (a, b), jnp.arange(a.shape[0]))


def while_two_inplace(x, y):
    """Two buffers, each written in place from the other's old contents."""

    def cond(s):
        return s[0] < x.shape[0]

    def body(s):
        i, x, y = s
        return i + 1, x.at[i].set(y[i] + 1.0), y.at[i].set(x[i] * 2.0)

    return jax.lax.while_loop(cond, body, (jnp.int32(0), x, y))


def _f32(*shape):
    return jnp.arange(math.prod(shape), dtype=jnp.float32).reshape(shape)


#: (name, function, example positional arguments).  Arrays stay tiny so that
#: compiling the whole list takes a few seconds.
PROGRAMS: list[tuple[str, Callable, tuple]] = [
    ("fori_inplace", fori_inplace, (_f32(4),)),
    ("scan_inplace_carry", scan_inplace_carry, (_f32(4),)),
    ("while_swap_buffers", while_swap_buffers, (_f32(4), _f32(4))),
    ("while_rotate_three", while_rotate_three, (_f32(4), _f32(4), _f32(4))),
    ("fori_cond_inplace", fori_cond_inplace, (_f32(4),)),
    ("nested_scan", nested_scan, (_f32(3, 4),)),
    ("fori_swap_carries", fori_swap_carries, (_f32(4), _f32(4))),
    ("scan_swap_inplace", scan_swap_inplace, (_f32(4), _f32(4))),
    ("while_two_inplace", while_two_inplace, (_f32(4), _f32(4))),
]


# --------------------------------------------------------------------------
# Capture
# --------------------------------------------------------------------------

# Reports XLA writes next to the HLO dumps; they are text but not HLO modules.
_NON_HLO_MARKERS = ("buffer-assignment", "memory-usage", "live-range")


def is_hlo_dump_name(name: str) -> bool:
    """True if a dump file name denotes an HLO module text (not a report)."""
    if not name.endswith(".txt"):
        return False
    if any(m in name for m in _NON_HLO_MARKERS):
        return False
    return (
        "copy-insertion" in name
        or "before_optimizations" in name
        or name.endswith("after_optimizations.txt")
    )


def capture_dumps(fn: Callable, args: Sequence, pass_re: str = "copy-insertion") -> list[tuple[str, str]]:
    """Compile ``fn(*args)`` with HLO dumping on; return ``[(file name, text)]``.

    Dumps go to a private temporary directory that is removed before
    returning, so repeated calls do not see each other's files.
    """
    with tempfile.TemporaryDirectory(prefix="hlo2penguin_dump_") as d:
        jax.jit(fn).lower(*args).compile(
            # every constant's values, as `pipeline.reading.capture.DUMP_OPTIONS` has them
            compiler_options={"xla_dump_large_constants": True, "xla_dump_to": d, "xla_dump_hlo_pass_re": pass_re}
        )
        out = []
        for name in sorted(os.listdir(d)):
            if is_hlo_dump_name(name):
                with open(os.path.join(d, name), encoding="utf-8") as fh:
                    out.append((name, fh.read()))
    return out


@functools.lru_cache(maxsize=None)
def _corpus() -> tuple[tuple[str, str], ...]:
    items = []
    for prog_name, fn, args in PROGRAMS:
        for file_name, text in capture_dumps(fn, args):
            items.append((f"{prog_name}/{file_name}", text))
    return tuple(items)


def corpus() -> list[tuple[str, str]]:
    """All captured modules over ``PROGRAMS`` as ``[("prog/file", text)]``.

    Compilation is memoized; each call returns a fresh list so callers may
    mutate it without corrupting the cache.
    """
    return list(_corpus())


_CONTROL_PREDS = re.compile(r"control-predecessors=\{([^}]*)\}")


def count_control_edges(text: str) -> int:
    """Number of control edges: entries summed over all ``control-predecessors`` lists."""
    return sum(
        len([p for p in m.group(1).split(",") if p.strip()])
        for m in _CONTROL_PREDS.finditer(text)
    )
