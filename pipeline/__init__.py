"""The chain end to end, HLO → Penguin program, and its proof.

    import pipeline
    result = pipeline.run("module.txt")                      # links #1-#4 and the check
    report = pipeline.verify("module.txt", "program.py")     # any program against its HLO
    captured = pipeline.from_jax(fn, *args)                  # HLO with control edges from JAX
    pipeline.close()                                         # end XLA's warm child (it ends at exit anyway)

The public names are these and `pipeline.testing.assert_round_trip` (for
users' own tests); the modules that define them may move, these paths do
not. They are the chain's own objects (`pipeline.chain.steps.run`,
`pipeline.verifier.verify.verify`, `pipeline.reading.capture.from_jax`, …),
imported on first use: `hlo2penguin --help` does not pay for jaxlib. XLA's
INFO log lines are off unless TF_CPP_MIN_LOG_LEVEL says otherwise.

XLA runs in one warm child process per process (`pipeline.xla.worker`),
started by the first call that needs it and reused by every later one;
`close()` ends it (a long-lived host such as a Jupyter kernel that is done
with the chain); the next call starts a new one.
"""

from __future__ import annotations

import importlib
import os

# XLA's INFO log lines (the CPU client's device count, each dump's path) say
# nothing a user of the chain needs; warnings and errors still print. A value
# the user set wins; it takes effect if `pipeline` is imported before jaxlib.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

# name → the module that defines it
_EXPORTS = {
    "run": "pipeline.chain.steps",
    "Options": "pipeline.chain.options",
    "ChainResult": "pipeline.chain.result",
    "verify": "pipeline.verifier.verify",
    "Report": "pipeline.verifier.report",
    "close": "pipeline.xla.worker",
    "from_jax": "pipeline.reading.capture",
    "from_export": "pipeline.reading.capture",
    "from_dump_dir": "pipeline.reading.capture",
    "Captured": "pipeline.reading.dumps",
    "CapturedModule": "pipeline.reading.dumps",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
