"""The JAX programs of the corpus, with deterministic example inputs.

Each program is chosen so that XLA's copy insertion adds control edges when
it compiles (copies ordered against the in-place writes they protect). The
artifacts beside this file (`<name>.jaxexport`, `inputs/<name>.npz`,
`expected/<name>.npz`) are written from here by `regenerate.py`; the tests
read only the artifacts, never these functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["PROGRAMS", "Program", "by_name"]


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable
    make_inputs: Callable[[np.random.RandomState], tuple]
    seed: int
    # The XLA stages (CapturedModule.stage) whose module carries control
    # edges, measured on XLA CPU with jaxlib 0.10.2 and
    # xla_dump_hlo_pass_re="copy-insertion"; tests check it.
    edge_stages: tuple[str, ...] = ()

    def inputs(self) -> tuple:
        return self.make_inputs(np.random.RandomState(self.seed))

    def specs(self) -> tuple:
        return tuple(jax.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype) for a in self.inputs())


# Where the edges come from. Copy insertion first adds a copy wherever a
# loop-carried (or aliased) buffer would be overwritten while its old value is
# still read, and orders it with control edges: the module dumped
# "after_adding_copies_to_resolve_interference" carries edges for every
# program here. Copy elision ("after_removing_unnecessary_copies") then
# removes the copies an in-place update does not need, with their edges; only
# the copies of carries that trade places (swap, rotate) survive, and those
# keep their edges through the special-case copies, the end of copy insertion
# and into the optimized module ("cpu_after_optimizations").
INTERFERENCE = ("copy-insertion.after_adding_copies_to_resolve_interference",)
SURVIVES = INTERFERENCE + (
    "copy-insertion.after_removing_unnecessary_copies",
    "copy-insertion.after_adding_special-case_copies",
    "HLO_passes_after_layout_assignment.after_copy-insertion.before_small-while-loop-hoisting",
    "cpu_after_optimizations",
)


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _i32(rng, high, *shape):
    return rng.randint(0, high, size=shape).astype(np.int32)


# --------------------------------------------------------------------------
# Programs
# --------------------------------------------------------------------------


def fori_inplace(x):
    """Prefix doubling: each step reads x[i-1] and writes x[i] in place."""
    return jax.lax.fori_loop(1, x.shape[0], lambda i, x: x.at[i].set(x[i - 1] * 2.0), x)


def scan_inplace_carry(x):
    """scan whose carry buffer is updated in place at the step index."""

    def step(carry, i):
        buf, acc = carry
        buf = buf.at[i].add(acc)
        return (buf, acc + buf[i]), buf[i]

    return jax.lax.scan(step, (x, jnp.float32(0.0)), jnp.arange(x.shape[0]))


def while_swap_buffers(a, b):
    """Ping-pong while_loop: the carries trade places every iteration."""

    def body(s):
        i, a, b = s
        return i + 1, b, a + b

    return jax.lax.while_loop(lambda s: s[0] < 5, body, (jnp.int32(0), a, b))


def while_rotate_three(a, b, c):
    """Three buffers rotated each iteration, one also updated in place."""

    def body(s):
        i, a, b, c = s
        return i + 1, b, c, a.at[i % a.shape[0]].set(c[0])

    return jax.lax.while_loop(lambda s: s[0] < 4, body, (jnp.int32(0), a, b, c))


def while_many_buffers(x, y, z, w):
    """while_loop over four buffers, each written in place from another's old value."""

    def body(s):
        i, x, y, z, w = s
        return (i + 1, x.at[i].set(y[i] + 1.0), y.at[i].set(z[i] * 2.0),
                z.at[i].set(w[i] - x[i]), w.at[i].set(x[i] * y[i]))

    return jax.lax.while_loop(lambda s: s[0] < x.shape[0], body, (jnp.int32(0), x, y, z, w))


def fori_cond_inplace(x):
    """cond inside a loop; both branches write the same buffer in place."""

    def body(i, x):
        return jax.lax.cond(i % 2 == 0,
                            lambda x: x.at[i].set(x[i] + 1.0),
                            lambda x: x.at[i].set(x[i - 1] * 3.0),
                            x)

    return jax.lax.fori_loop(1, x.shape[0], body, x)


def fori_switch_inplace(x, k):
    """lax.switch with three branches inside a loop, each writing in place."""

    def body(i, x):
        return jax.lax.switch(k[i] % 3, [
            lambda x: x.at[i].set(x[i - 1] + x[i]),
            lambda x: x.at[i].multiply(-1.0),
            lambda x: x.at[i - 1].set(x[i]),
        ], x)

    return jax.lax.fori_loop(1, x.shape[0], body, x)


def nested_fori(m):
    """Nested loops over a matrix: m[i, j] += m[i-1, j] + m[i, j-1], in place."""

    def outer(i, m):
        def inner(j, m):
            return m.at[i, j].add(m[i - 1, j] + m[i, j - 1])

        return jax.lax.fori_loop(1, m.shape[1], inner, m)

    return jax.lax.fori_loop(1, m.shape[0], outer, m)


def nested_scan(m):
    """Outer scan over rows, inner scan updating the row carry in place."""

    def inner(row, j):
        row = row.at[j].add(row[j - 1])
        return row, row[j]

    def outer(carry, r):
        carry, _ = jax.lax.scan(inner, carry + r, jnp.arange(1, carry.shape[0]))
        return carry, carry.sum()

    return jax.lax.scan(outer, jnp.zeros(m.shape[1], m.dtype), m)


def sort_in_loop(x):
    """Sort a row per iteration and write it back in place (row i from row i-1)."""

    def body(i, x):
        return x.at[i].set(jnp.sort(x[i - 1] + x[i]))

    return jax.lax.fori_loop(1, x.shape[0], body, x)


def top_k_in_loop(x):
    """top_k of the previous row, its values written into the current row in place."""
    k = 3

    def body(i, s):
        x, idx = s
        values, indices = jax.lax.top_k(x[i - 1], k)
        return x.at[i, :k].set(values), idx.at[i].set(indices)

    return jax.lax.fori_loop(1, x.shape[0], body, (x, jnp.zeros((x.shape[0], k), jnp.int32)))


def remat_grad_scan(w, xs):
    """Gradients (w.r.t. weights and inputs) of a scan whose step is
    rematerialized with jax.checkpoint: the backward loop recomputes each step."""

    def loss(w, xs):
        @jax.checkpoint
        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h.sum()

        h, ys = jax.lax.scan(step, jnp.zeros(w.shape[0], w.dtype), xs)
        return (h ** 2).sum() + ys.sum()

    return jax.grad(loss, argnums=(0, 1))(w, xs)


def attention_scan(q, k, v):
    """Single-head attention applied layer after layer in a scan; each layer's
    output is written into a history buffer in place."""

    def layer(carry, i):
        x, hist = carry
        scores = (x @ k.T) / jnp.sqrt(jnp.float32(q.shape[-1]))
        out = jax.nn.softmax(scores, axis=-1) @ v
        x = x + out
        return (x, hist.at[i].set(x)), out.sum()

    hist = jnp.zeros((3,) + q.shape, q.dtype)
    return jax.lax.scan(layer, (q, hist), jnp.arange(3))


def conv_in_loop(img, kernel):
    """A 2-D convolution per iteration; each result replaces one slice in place."""

    def body(i, x):
        y = jax.lax.conv_general_dilated(x[i - 1][None, None], kernel[None, None], (1, 1), "SAME")[0, 0]
        return x.at[i].set(jnp.tanh(y + x[i]))

    return jax.lax.fori_loop(1, img.shape[0], body, img)


def cumsum_in_loop(x):
    """cumsum of the previous row written over the current row, in place."""

    def body(i, x):
        return x.at[i].set(jnp.cumsum(x[i - 1]) * 0.5 + x[i])

    return jax.lax.fori_loop(1, x.shape[0], body, x)


def scatter_add_loop(x, idx):
    """Scatter-add into a buffer at data-dependent indices, reading it as it goes."""

    def body(i, x):
        return x.at[idx[i]].add(x[(idx[i] + 1) % x.shape[0]])

    return jax.lax.fori_loop(0, idx.shape[0], body, x)


def dynamic_slice_rows(x):
    """dynamic_update_slice of a 2x2 window shifted each iteration (overlapping reads/writes)."""

    def body(i, x):
        window = jax.lax.dynamic_slice(x, (i, i), (2, 2))
        return jax.lax.dynamic_update_slice(x, window.T * 0.5, (i + 1, i))

    return jax.lax.fori_loop(0, x.shape[0] - 2, body, x)


def rnn_grad(w, xs):
    """Gradient (w.r.t. the weights) of an RNN scan: forward and backward loops."""

    def loss(w):
        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h

        _, hs = jax.lax.scan(step, jnp.zeros(w.shape[0], w.dtype), xs)
        return (hs ** 2).sum()

    return jax.grad(loss)(w)


def while_converge(x):
    """Data-dependent while_loop (Jacobi-like sweeps until small) writing in place."""

    def cond(s):
        i, x, delta = s
        return jnp.logical_and(i < 8, delta > 1e-3)

    def body(s):
        i, x, _ = s
        j = i % (x.shape[0] - 2) + 1
        new = 0.5 * (x[j - 1] + x[j + 1])
        return i + 1, x.at[j].set(new), jnp.abs(new - x[j])

    return jax.lax.while_loop(cond, body, (jnp.int32(0), x, jnp.float32(1.0)))


def scan_swap_inplace(a, b):
    """scan that both swaps two carries and writes into one of them."""

    def step(s, i):
        a, b = s
        return (b, a.at[i].multiply(2.0)), a[i] + b[i]

    return jax.lax.scan(step, (a, b), jnp.arange(a.shape[0]))


# --------------------------------------------------------------------------
# The list
# --------------------------------------------------------------------------

PROGRAMS: list[Program] = [
    # name, function, example inputs from a RandomState, seed, stages with edges
    Program("fori_inplace", fori_inplace, lambda r: (_f32(r, 6),), 0, INTERFERENCE),
    Program("scan_inplace_carry", scan_inplace_carry, lambda r: (_f32(r, 5),), 1, INTERFERENCE),
    Program("while_swap_buffers", while_swap_buffers, lambda r: (_f32(r, 4), _f32(r, 4)), 2, SURVIVES),
    Program("while_rotate_three", while_rotate_three, lambda r: tuple(_f32(r, 4) for _ in range(3)), 3, SURVIVES),
    Program("while_many_buffers", while_many_buffers, lambda r: tuple(_f32(r, 4) for _ in range(4)), 4,
            INTERFERENCE),
    Program("fori_cond_inplace", fori_cond_inplace, lambda r: (_f32(r, 6),), 5, INTERFERENCE),
    Program("fori_switch_inplace", fori_switch_inplace, lambda r: (_f32(r, 6), _i32(r, 3, 6)), 6, INTERFERENCE),
    Program("nested_fori", nested_fori, lambda r: (_f32(r, 3, 4),), 7, INTERFERENCE),
    Program("nested_scan", nested_scan, lambda r: (_f32(r, 3, 4),), 8, INTERFERENCE),
    Program("sort_in_loop", sort_in_loop, lambda r: (_f32(r, 4, 5),), 9, INTERFERENCE),
    Program("top_k_in_loop", top_k_in_loop, lambda r: (_f32(r, 4, 6),), 10, INTERFERENCE),
    Program("remat_grad_scan", remat_grad_scan, lambda r: (_f32(r, 3, 3) * 0.5, _f32(r, 4, 3)), 11, INTERFERENCE),
    Program("attention_scan", attention_scan, lambda r: tuple(_f32(r, 4, 8) for _ in range(3)), 12, INTERFERENCE),
    Program("conv_in_loop", conv_in_loop, lambda r: (_f32(r, 3, 5, 5), _f32(r, 3, 3)), 13, INTERFERENCE),
    Program("cumsum_in_loop", cumsum_in_loop, lambda r: (_f32(r, 4, 5),), 14, INTERFERENCE),
    Program("scatter_add_loop", scatter_add_loop, lambda r: (_f32(r, 6), _i32(r, 6, 5)), 15, INTERFERENCE),
    Program("dynamic_slice_rows", dynamic_slice_rows, lambda r: (_f32(r, 5, 5),), 16, INTERFERENCE),
    Program("rnn_grad", rnn_grad, lambda r: (_f32(r, 3, 3) * 0.5, _f32(r, 4, 3)), 17, INTERFERENCE),
    Program("while_converge", while_converge, lambda r: (_f32(r, 6),), 18, INTERFERENCE),
    Program("scan_swap_inplace", scan_swap_inplace, lambda r: (_f32(r, 4), _f32(r, 4)), 19, SURVIVES),
]


def by_name(name: str) -> Program:
    for program in PROGRAMS:
        if program.name == name:
            return program
    raise KeyError(name)
