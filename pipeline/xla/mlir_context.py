"""One MLIR context with every dialect the chain meets: func and the other
upstream dialects, StableHLO, MHLO, CHLO and Shardy."""

from __future__ import annotations

import ctypes
import os
import threading

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, mhlo, sdy, stablehlo

from pipeline.xla.native import register_upstream_dialects


def make_context() -> ir.Context:
    registry = ir.DialectRegistry()
    register_upstream_dialects(registry)
    context = ir.Context()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    mhlo.register_mhlo_dialect(context)
    chlo.register_dialect(context)
    sdy.register_dialect(context)
    return context


# A context uniques every attribute and type it has seen and frees none: a
# thread's context serves modules until this many bytes of them were read,
# then a new one starts (the old one lives on while a module holds it).
CONTEXT_BUDGET = 64 << 20
_threads = threading.local()


def _forget_contexts() -> None:
    """In a forked process: new contexts for its threads, never its parent's
    (their thread pools did not come along). The inherited ones are kept
    alive for good, never destroyed: an MLIRContext's destructor joins its
    thread pool, whose threads are not in this process (the wait would never end)."""
    global _threads
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_threads))  # not even at this process's exit
    _threads = threading.local()


os.register_at_fork(after_in_child=_forget_contexts)


def module_context(size: int) -> ir.Context:
    """A context for reading a module of `size` bytes: this thread's, reused
    (making one costs ~5 ms, a small module's whole import), or a new one once
    the thread's has read CONTEXT_BUDGET bytes."""
    used = getattr(_threads, "used", None)
    if used is None or used + size > CONTEXT_BUDGET:
        _threads.context, _threads.used = make_context(), 0
    _threads.used += size
    return _threads.context


_passes_registered = False


def register_passes() -> None:
    """Make jaxlib's StableHLO and MHLO passes (e.g. stablehlo-legalize-to-hlo)
    known to textual pipelines; once per process."""
    global _passes_registered
    if not _passes_registered:
        mhlo.register_mhlo_passes()
        stablehlo.register_stablehlo_passes()
        _passes_registered = True
