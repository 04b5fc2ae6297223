"""Capture XLA's own dumps of the corpus programs with the jax that runs
this script, into this folder: `<program>.<stage>.hlo`, one per dumped module
with control edges, and RELEASE (the jax that wrote them).

    .venv313/bin/python tests/newer_xla/capture.py      # with the newest jax (0.12.0.1 here)

`tests/chain/test_newer_xla.py` runs every file through the chain on each jax the
suite runs with: the newer XLA's own output on the newer XLA, and on 0.10.2
(whose parser does not read the `%t#i` operands 0.12 prints: the reader makes
them explicit get-tuple-elements).
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "tests", "corpus"), ROOT]

import jax  # noqa: E402

from pipeline.reading.capture import from_jax  # noqa: E402
from programs import PROGRAMS  # noqa: E402


def main() -> int:
    for old in os.listdir(HERE):
        if old.endswith(".hlo"):
            os.remove(os.path.join(HERE, old))
    written = 0
    for program in PROGRAMS:
        for module in from_jax(jax.jit(program.fn), *program.inputs()).modules:
            path = os.path.join(HERE, f"{program.name}.{module.stage}.hlo")
            with open(path, "w", encoding="utf-8") as f:
                f.write(module.hlo_text)
            written += 1
    with open(os.path.join(HERE, "RELEASE"), "w", encoding="utf-8") as f:
        f.write(jax.__version__ + "\n")
    print(f"{written} module(s) with control edges from jax {jax.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
