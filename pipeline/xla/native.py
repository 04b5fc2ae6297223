"""XLA in this process, through the one module that imports jaxlib's
private modules (`jaxlib._hlo`, `jaxlib._jax`, `jaxlib.mlir._mlir_libs`):
XLA's HLO parser (the oracle for every HLO text the chain reads or writes,
and the shape inference for text that leaves shapes out), its printer, its
HLO → MLIR importer, XLA:CPU for a module's numbers, and the upstream MLIR
dialects jaxlib ships. `pipeline.xla.isolated` runs
the same calls in a child process (`pipeline.xla.worker`), where XLA may
abort."""

from __future__ import annotations

import collections
import hashlib
import re

import jaxlib._hlo as xla_hlo
import jaxlib._jax as xla_ext

from passes.errors import ChainError


class XlaRejected(ChainError):
    """XLA's parser refused a module; the message is its first error, on one line."""


_ERROR = re.compile(r"(?:was parsing )?(\d+):(\d+): error: ([^\n]*)")


def parse_with_xla(text: str, source: str | None = None):
    """`jaxlib._hlo.hlo_module_from_text`, with XLA's multi-line complaint
    folded into `source:line:col: message`."""
    try:
        return xla_hlo.hlo_module_from_text(text)
    except Exception as err:  # jaxlib raises its own XlaRuntimeError type
        raise refusal(str(err), source) from None


def refusal(message: str, source: str | None) -> XlaRejected:
    """XLA's parser's complaint (as it prints it) as an XlaRejected, on one line."""
    errors = _ERROR.findall(message)
    where = f"{source}:" if source else ""
    if errors:
        line, column, said = errors[0]
        said = said.strip()
        if said.endswith(":") and len(errors) > 1 and errors[1][:2] == (line, column):
            said = f"{said} {errors[1][2].strip()}"  # a lead-in: XLA's next line at the same place says what
        return XlaRejected(f"{where}{line}:{column}: XLA's parser: {said}")
    first = next((line.strip() for line in message.splitlines() if line.strip()), "unknown error")
    return XlaRejected(f"{where} XLA's parser: {first}".strip())


def print_options():
    """One fixed set of printing options: two texts that XLA reads as the same
    module print the same."""
    options = xla_hlo.HloPrintOptions()
    options.print_large_constants = True
    return options


def canonical_text(text: str, source: str | None = None) -> str:
    """XLA's printing of the module `text` (XlaRejected, naming `source`, if XLA refuses it)."""
    return parse_with_xla(text, source).to_string(print_options())


def read(text: str, source: str | None = None):
    """XLA's parse of `text` with the names as written (a `pipeline.reading.parsed.Parsed`):
    XlaRejected, naming `source`, if XLA refuses it."""
    from pipeline.reading.parsed import Parsed

    return Parsed.from_serialized(parse_with_xla(text, source).as_serialized_hlo_module_proto(), text, source)


def parse_to_proto(text: str) -> bytes:
    """XLA's serialized HloModuleProto of `text`; XLA's own error as it raised it."""
    return xla_hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto()


def read_proto(proto: bytes) -> None:
    """XLA's reading of a serialized HloModuleProto (`HloModule::CreateFromProto`:
    ids, operands, called computations, the entry); XLA's own error as it raised it.
    jaxlib exposes no HloVerifier: this is the check XLA makes of every proto it reads."""
    xla_hlo.HloModule.from_serialized_hlo_module_proto(proto)


def print_proto(proto: bytes) -> str:
    """XLA's printing of a serialized HloModuleProto (with `print_options`)."""
    return xla_hlo.HloModule.from_serialized_hlo_module_proto(proto).to_string(print_options())


def hlo_to_stablehlo(proto: bytes) -> bytes:
    """XLA's importer: a serialized HloModuleProto → StableHLO bytecode; XLA's own error as it raised it."""
    return xla_ext.mlir.hlo_to_stablehlo(proto)


def register_upstream_dialects(registry) -> None:
    """Add func and the other upstream MLIR dialects jaxlib ships to an
    `ir.DialectRegistry` (the extension is loaded when asked: XLA's child never asks)."""
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext

    _jax_mlir_ext.register_dialects(registry)


def compile_cpu(proto: bytes):
    """XLA:CPU's executable for a serialized HloModuleProto (through XLA's
    importer and its whole compiler); XLA's own error as it raised it."""
    from jax.extend import backend

    cpu = backend.get_backend("cpu")
    return cpu.compile_and_load(hlo_to_stablehlo(proto), xla_ext.DeviceList((cpu.local_devices()[0],)),
                                xla_ext.CompileOptions())


def run_cpu(executable, inputs) -> list:
    """`executable` (from `compile_cpu`) on `inputs`, one numpy array per result."""
    import jax
    import numpy as np

    device = executable.local_devices()[0]
    arguments = [jax.device_put(np.asarray(x), device) for x in inputs]
    return [np.asarray(x) for x in executable.execute(arguments)]


_COMPILED: collections.OrderedDict = collections.OrderedDict()  # digest of the proto → executable
_COMPILED_KEEP = 32  # executables kept, the last used last
_COMPILES = 0  # modules `cpu_outputs` compiled in this process


def compiles() -> int:
    """How many modules `cpu_outputs` compiled in this process (the rest were run as compiled before)."""
    return _COMPILES


def cpu_outputs(proto: bytes, inputs) -> list:
    """What XLA:CPU computes from a serialized HloModuleProto for `inputs`
    (through XLA's importer and compiler), one numpy array per result. A
    module compiled before in this process is not compiled again (the
    `_COMPILED_KEEP` last ones, by the bytes' digest)."""
    global _COMPILES
    key = hashlib.sha256(proto).digest()
    executable = _COMPILED.pop(key, None)
    if executable is None:
        executable = compile_cpu(proto)
        _COMPILES += 1
    _COMPILED[key] = executable
    while len(_COMPILED) > _COMPILED_KEEP:
        _COMPILED.popitem(last=False)
    return run_cpu(executable, inputs)
