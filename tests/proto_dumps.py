"""XLA dump folders of a few JAX programs with control edges (a while loop
that swaps its carries, a scan, a fori loop with in-place updates), made by
XLA itself at test time: as text, as protos (`*.hlo.pb`), or both, with
every pass dumped (`xla_dump_hlo_pass_re=.*`) and, on request, the
HloSnapshots XLA writes when it runs them.

    folder = dump(tmp_path / "pb", text=False, proto=True)

The same as `XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_proto
--xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*` (the compile options
are XLA's debug options, per compilation). Importing this needs only JAX.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile

import jax
import numpy as np

from jax_programs import PROGRAMS

# Programs whose dumps carry control edges at several stages, and loops of each kind.
NAMES = ("while_swap_buffers", "scan_swap_inplace", "fori_inplace")


def programs():
    return [(name, fn, args) for name, fn, args in PROGRAMS if name in NAMES]


def run_arguments(args) -> list:
    """The arguments the snapshots are of: each example argument plus 10 times
    its position, so that no two are alike."""
    return [np.asarray(a) + np.asarray(10 * i, dtype=np.asarray(a).dtype) for i, a in enumerate(args)]


@functools.cache
def _dumped(text: bool, proto: bool, snapshots: bool) -> str:
    folder = tempfile.mkdtemp(prefix="hlo2penguin_proto_dumps_")
    for _, fn, args in programs():
        compiled = jax.jit(fn).lower(*args).compile(compiler_options={
            "xla_dump_to": folder, "xla_dump_hlo_pass_re": ".*", "xla_dump_hlo_as_text": text,
            "xla_dump_hlo_as_proto": proto, "xla_dump_hlo_snapshots": snapshots})
        if snapshots:
            jax.block_until_ready(compiled(*run_arguments(args)))  # XLA writes a snapshot as it runs the module
    return folder


def dump(to, *, text: bool = True, proto: bool = True, snapshots: bool = False):
    """A copy, at `to`, of the dump folder of `programs()` in the forms asked
    (made once per session; copied, so that a test may change its copy)."""
    shutil.copytree(_dumped(text, proto, snapshots), to)
    return to


def stages(folder) -> list[tuple[str, str]]:
    """(the *.txt, the *.hlo.pb) of each stage dumped both ways in `folder`."""
    found = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".hlo.pb") and os.path.exists(os.path.join(folder, name[:-len(".hlo.pb")] + ".txt")):
            found.append((os.path.join(folder, name[:-len(".hlo.pb")] + ".txt"), os.path.join(folder, name)))
    return found
