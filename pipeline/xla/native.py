"""XLA in this process, through the one module that imports jaxlib's
private modules (`jaxlib._hlo`, `jaxlib._jax`, `jaxlib.mlir._mlir_libs`):
XLA's HLO parser (the oracle for every HLO text the chain reads or writes,
and the shape inference for text that leaves shapes out), its printer, its
HLO → MLIR importer, XLA:CPU for a module's numbers, and the upstream MLIR
dialects jaxlib ships. `pipeline.xla.isolated` runs
the same calls in a child process (`pipeline.xla.worker`), where XLA may
abort."""

from __future__ import annotations

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


def cpu_outputs(proto: bytes, inputs) -> list:
    """What XLA:CPU computes from a serialized HloModuleProto for `inputs`
    (through XLA's importer and compiler), one numpy array per result."""
    import jax
    import numpy as np
    from jax.extend import backend

    cpu = backend.get_backend("cpu")
    device = cpu.local_devices()[0]
    executable = cpu.compile_and_load(hlo_to_stablehlo(proto), xla_ext.DeviceList((device,)),
                                      xla_ext.CompileOptions())
    arguments = [jax.device_put(np.asarray(x), device) for x in inputs]
    return [np.asarray(x) for x in executable.execute(arguments)]
