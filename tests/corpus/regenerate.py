"""Rewrite every artifact of the corpus from `programs.py`:

    python tests/corpus/regenerate.py            # all programs
    python tests/corpus/regenerate.py NAME ...   # only these
    python tests/corpus/regenerate.py --check    # write nothing: exit 1 if an artifact is stale

For each program it writes
  tests/corpus/<name>.jaxexport   jax.export.export(jax.jit(fn))(*specs).serialize()
  tests/corpus/inputs/<name>.npz   the example inputs, arg_0, arg_1, …
  tests/corpus/expected/<name>.npz JAX's outputs on them, out_0, out_1, … (flattened pytree)
and checks that `pipeline.sources.from_export` on the artifact yields at least
one module with control edges, in the stages the program claims.

Artifacts and inputs are byte-for-byte reproducible (paths relative to the
repository, fixed .npz timestamps; keep `build`'s export call on its line);
JAX's outputs are compared with a tolerance (`same_numbers`).
"""

from __future__ import annotations

import io
import os
import re
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, ROOT]

import jax  # noqa: E402
import numpy as np  # noqa: E402

# Locations name files relative to the repository (no checkout path in the
# artifacts), one frame each (smaller artifacts).
jax.config.update("jax_hlo_source_file_canonicalization_regex", "^" + re.escape(ROOT + os.sep))
jax.config.update("jax_include_full_tracebacks_in_locations", False)

from pipeline import sources  # noqa: E402
from programs import PROGRAMS, Program  # noqa: E402

SUFFIX = ".jaxexport"


def artifact_path(name: str) -> str:
    return os.path.join(HERE, name + SUFFIX)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An .npz that np.load reads, with fixed timestamps (np.savez stamps the time)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key, array in arrays.items():
            member = io.BytesIO()
            # ascontiguousarray would turn a 0-d array into shape (1,)
            np.lib.format.write_array(member, np.asarray(array, order="C"), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, member.getvalue())
    return buffer.getvalue()


def build(program: Program) -> dict[str, bytes]:
    """The artifacts of one program: {path: bytes}."""
    inputs = program.inputs()
    exported = jax.export.export(jax.jit(program.fn))(*program.specs())
    outputs = jax.tree_util.tree_leaves(jax.jit(program.fn)(*inputs))
    return {
        artifact_path(program.name): bytes(exported.serialize()),
        os.path.join(HERE, "inputs", program.name + ".npz"):
            npz_bytes({f"arg_{i}": np.asarray(a) for i, a in enumerate(inputs)}),
        os.path.join(HERE, "expected", program.name + ".npz"):
            npz_bytes({f"out_{i}": np.asarray(o) for i, o in enumerate(outputs)}),
    }


# XLA:CPU's floating-point results differ in the last bits between CPUs (with
# or without AVX-512: attention_scan's outputs went stale on one), so an
# expected output is stale only beyond this tolerance, and a regeneration on
# another CPU leaves it as it is. Integers and booleans compare exactly.
RTOL, ATOL = 1e-5, 1e-6


def same_numbers(old: bytes, new: bytes) -> bool:
    """Two expected-output .npz files hold the same arrays: names, dtypes and
    shapes equal, values equal within RTOL/ATOL (exactly, for non-floats)."""
    with np.load(io.BytesIO(old)) as a, np.load(io.BytesIO(new)) as b:
        if sorted(a.files) != sorted(b.files):
            return False
        for key in a.files:
            x, y = a[key], b[key]
            if x.dtype != y.dtype or x.shape != y.shape:
                return False
            if np.issubdtype(x.dtype, np.inexact):
                if not np.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True):
                    return False
            elif not np.array_equal(x, y):
                return False
    return True


def is_stale(path: str, old: bytes | None, new: bytes) -> bool:
    if old is None:
        return True
    if os.path.dirname(path) == os.path.join(HERE, "expected"):
        return not same_numbers(old, new)
    return old != new


# The artifacts are written by the oldest supported jax, named in JAX_RELEASE:
# a newer jax reads an older artifact, not the other way round. On another
# release `--check` compares inputs and JAX's outputs (the same programs must
# compute the same numbers) but not the artifacts' bytes, and rewriting is refused.
MADE_WITH = open(os.path.join(HERE, "JAX_RELEASE"), encoding="utf-8").read().strip()


def check_edges(program: Program, path: str) -> tuple[int, int]:
    captured = sources.from_export(path)
    if not captured.modules:
        raise SystemExit(f"{program.name}: no module with control edges: change the program")
    stages = tuple(m.stage for m in captured.modules)
    if stages != program.edge_stages:
        raise SystemExit(f"{program.name}: edges in stages {stages}, programs.py says {program.edge_stages}")
    return len(captured.modules), captured.edges


def main(argv: list[str]) -> int:
    check_only = "--check" in argv
    names = [a for a in argv if not a.startswith("-")]
    chosen = [p for p in PROGRAMS if not names or p.name in names]
    unknown = set(names) - {p.name for p in chosen}
    if unknown:
        print(f"unknown program(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    own_release = jax.__version__ == MADE_WITH
    if not own_release and not check_only:
        print(f"the artifacts are jax {MADE_WITH}'s (tests/corpus/JAX_RELEASE), and this is jax "
              f"{jax.__version__}: regenerate them with jax {MADE_WITH}", file=sys.stderr)
        return 2
    stale = []
    for program in chosen:
        for path, data in build(program).items():
            if path == artifact_path(program.name) and not own_release:
                continue  # another jax exports other bytes; it must still read these
            old = open(path, "rb").read() if os.path.exists(path) else None
            if is_stale(path, old, data):
                stale.append(os.path.relpath(path, ROOT))
                if not check_only:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "wb") as f:
                        f.write(data)
        if check_only and not os.path.exists(artifact_path(program.name)):
            continue
        modules, edges = check_edges(program, artifact_path(program.name))
        size = os.path.getsize(artifact_path(program.name))
        print(f"{program.name:22s} {modules} module(s) with edges, {edges:2d} control edge(s), {size:5d} bytes")
    if check_only and stale:
        print("stale: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
