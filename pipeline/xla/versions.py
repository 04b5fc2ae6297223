"""What differs between the jax/jaxlib releases the chain supports, in one
place: jax 0.10.2 (the last for Python 3.11) to 0.12.0.1 (Python 3.12+),
both ends tested in CI (`.ci/run`).

Measured between jaxlib 0.10.2 and 0.12.0.1 (each pinned by a test; 0.11.2,
run by hand on Python 3.12, behaves as 0.12.0.1 except where said):
- `%t#i` operands: 0.12's parser reads them (a get-tuple-element named
  `t_i`, then `t_i.1`, ...) and prints them as explicit instructions; 0.10.2's
  refuses them. For 0.10.2 the chain writes each as the get-tuple-element
  0.12 makes, under the same name, before XLA parses
  (`pipeline.reading.tuple_operands`), so a newer dump runs through 0.10.2's chain
  too (`xla_reads_tuple_element_operands`).
- Mesh replica groups, `replica_groups=mesh['d'=4] {'d'}`: 0.12 prints them
  in multi-device dumps; 0.10.2's parser refuses them, and so the chain there.
- Renaming: 0.12's parser makes instruction names unique across the whole
  module when it prints (a parameter `%x` in two computations prints as
  `%x` and `%x.1`); the chain keeps the names as written. Tests compare XLA's
  printings of two texts, never our names with XLA's.
- `compare(..), type=UNSIGNED` of signed integers: 0.12's parser drops the
  type (the comparison is signed), 0.10.2 keeps it; the importer follows its
  parser, and so does the executor.
- Errors: 0.12 follows an error status with `=== Source Location Trace: ===`
  and file names (`pipeline.xla.isolated.first_said` skips them); RET_CHECK positions
  name other lines and build paths (`external/xla+/xla/...`).
- The StableHLO reference interpreter's scatter writes into its operand in
  0.10.2, and not in 0.11.2 or 0.12 (`REFERENCE_SCATTER_WRITES_ITS_OPERAND`).
- The XLA CPU pipeline: 0.12 compiles the same JAX programs into other HLO
  (other instruction numbering), and 0.11.2 differently again, so the
  regression goldens keep what each release changed (`pipeline.cli.regress`).
"""

from __future__ import annotations

import functools
import re


def release(package: str) -> str:
    """The installed release of `package` (e.g. '0.12.0.1'), without importing it."""
    from importlib import metadata  # ~30 ms of imports (email, zipfile, csv): only when asked

    return metadata.version(package)


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version)[:3])


# Read on first use (`versions.JAX`): a chain run never needs them.
_LAZY = {
    "JAX": lambda: release("jax"),
    "JAXLIB": lambda: release("jaxlib"),
    # Measured: 0.10.2 writes into the operand; 0.11.2 and 0.12.0.1 do not.
    "REFERENCE_SCATTER_WRITES_ITS_OPERAND": lambda: _numbers(release("jaxlib")) < (0, 11),
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = _LAZY[name]()
    return value


@functools.cache
def xla_reads_tuple_element_operands() -> bool:
    """Whether this jaxlib's HLO parser reads `%t#i` (asked of the parser itself, once)."""
    from pipeline.xla.native import XlaRejected, parse_with_xla

    probe = ("HloModule probe\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
             "  %t = (f32[]) tuple(%a)\n  ROOT %n = f32[] negate(%t#0)\n}\n")
    try:
        parse_with_xla(probe)
    except XlaRejected:
        return False
    return True

