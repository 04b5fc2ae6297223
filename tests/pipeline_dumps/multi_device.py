"""Capture XLA CPU pipeline dumps of JAX programs that run on four devices.

Run as a script in a fresh process: the device count is fixed when JAX
starts, so `XLA_FLAGS=--xla_force_host_platform_device_count=4` must be set
before `import jax` (this file sets it). Prints a JSON list with one entry per
dumped module that carries control edges: program, module name, stage, text.

    python tests/pipeline_dumps/multi_device.py > dumps.json
"""

from __future__ import annotations

import json
import os
import sys

DEVICES = 4
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           f" --xla_force_host_platform_device_count={DEVICES}").strip()

import jax  # noqa: E402  (after XLA_FLAGS)
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from pipeline.reading.capture import from_jax  # noqa: E402

RING = [(j, (j + 1) % DEVICES) for j in range(DEVICES)]


def ring_fori(x):
    """fori_loop whose body sends its block around the ring (ppermute), sums
    it over the devices (psum) and gathers it (all_gather); the carries swap."""
    def body(i, carry):
        acc, blk = carry
        moved = jax.lax.ppermute(blk, "d", RING)
        total = jax.lax.psum(moved, "d")
        gathered = jax.lax.all_gather(moved, "d", tiled=True)
        return moved, acc + total + gathered[: acc.shape[0]]
    return jax.lax.fori_loop(0, 3, body, (jnp.zeros_like(x), x))


def scan_collectives(x):
    """scan whose step writes into its carry in place, then reduces it over
    the devices; the stacked outputs are all-gathered at the end."""
    def step(carry, i):
        buf, acc = carry
        buf = buf.at[i].add(jax.lax.psum(acc, "d"))
        acc = jax.lax.ppermute(acc + buf[i], "d", RING)
        return (buf, acc), jax.lax.pmax(buf[i], "d")
    (buf, acc), ys = jax.lax.scan(step, (x, x[0]), jnp.arange(x.shape[0]))
    return buf, jax.lax.all_gather(ys, "d", tiled=True), acc


def pmap_while(a, b):
    """pmap of a while_loop that swaps its two carries, psum-ing one of them."""
    def cond(s):
        return s[0] < 4

    def body(s):
        i, a, b = s
        return i + 1, b, jax.lax.psum(a, "p") * 0.5
    return jax.lax.while_loop(cond, body, (0, a, b))[1:]


def cond_in_fori(x):
    """fori_loop with a cond on the device index; each branch updates the
    carry in place, one of them after a ppermute, the other after a psum."""
    def body(i, x):
        odd = jax.lax.axis_index("d") % 2 == 1
        return jax.lax.cond(odd,
                            lambda x: x.at[i].set(jax.lax.ppermute(x, "d", RING)[i - 1]),
                            lambda x: x.at[i].set(jax.lax.psum(x[i - 1], "d")),
                            x)
    return jax.lax.fori_loop(1, x.shape[0], body, x)


def _shard_map(fn, n_in, n_out):
    from jax import shard_map
    mesh = Mesh(jax.devices()[:DEVICES], ("d",))
    return jax.jit(shard_map(fn, mesh=mesh, in_specs=(P("d"),) * n_in,
                             out_specs=(P("d"),) * n_out if n_out > 1 else P("d")))


def programs():
    x = jnp.arange(8 * 4, dtype=jnp.float32).reshape(8, 4)
    yield "ring_fori", _shard_map(ring_fori, 1, 2), (x,)
    yield "scan_collectives", _shard_map(scan_collectives, 1, 3), (x,)
    yield "cond_in_fori", _shard_map(cond_in_fori, 1, 1), (jnp.arange(16 * 4, dtype=jnp.float32).reshape(16, 4),)
    pa = jnp.arange(DEVICES * 4, dtype=jnp.float32).reshape(DEVICES, 4)
    yield "pmap_while", jax.pmap(pmap_while, axis_name="p"), (pa, pa + 1)


def main() -> None:
    out = []
    for name, fn, args in programs():
        captured = from_jax(fn, *args)
        for module in captured.modules:
            out.append({"program": name, "name": module.name, "stage": module.stage, "hlo": module.hlo_text})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
