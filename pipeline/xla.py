"""XLA's own HLO parser, the oracle for every HLO text the chain writes."""

from __future__ import annotations

import re

import jaxlib._hlo as xla_hlo


class XlaRejected(ValueError):
    """XLA's parser refused a module; the message is its first error, on one line."""


_ERROR = re.compile(r"(?:was parsing )?(\d+):(\d+): error: ([^\n]*)")


def parse_with_xla(text: str, source: str | None = None):
    """`jaxlib._hlo.hlo_module_from_text`, with XLA's multi-line complaint
    folded into `source:line:col: message`."""
    try:
        return xla_hlo.hlo_module_from_text(text)
    except Exception as err:  # jaxlib raises its own XlaRuntimeError type
        raise XlaRejected(_one_line(str(err), source)) from None


def _one_line(message: str, source: str | None) -> str:
    m = _ERROR.search(message)
    where = f"{source}:" if source else ""
    if m:
        return f"{where}{m.group(1)}:{m.group(2)}: XLA's parser: {m.group(3).strip()}"
    first = next((line.strip() for line in message.splitlines() if line.strip()), "unknown error")
    return f"{where} XLA's parser: {first}".strip()


def canonical_text(text: str) -> str:
    """XLA's printing of a module under one fixed set of options: two texts
    that XLA reads as the same module print the same."""
    options = xla_hlo.HloPrintOptions()
    options.print_large_constants = True
    return parse_with_xla(text).to_string(options)
