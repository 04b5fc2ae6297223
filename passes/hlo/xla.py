"""XLA's own HLO parser (`jaxlib._hlo`), in this process: the oracle for
every HLO text the chain reads or writes, and the shape inference for text
that leaves shapes out. `pipeline.xla` runs the same parser in a child
process where XLA might abort."""

from __future__ import annotations

import re

import jaxlib._hlo as xla_hlo

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
