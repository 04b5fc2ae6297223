"""The cyclic garbage collector, paused where a pass builds a large graph of
small objects that holds no garbage cycles worth chasing (link #1's view,
the verifier's graph, a long program's pieces)."""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def no_cyclic_gc():
    """The IR is a large graph of small objects and holds no garbage cycles
    worth chasing; the cyclic collector would rescan it again and again while
    a pass allocates (measured: half the time of link #1 at 100k instructions)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
