"""What to do next, added to an error that is right but leads nowhere: one
clause after the error's own line (`…; HINT`), so the message stays one
line and the exit status 2. The hints read from the input's text and the
error alone are made here; a hint that needs what a step knew (XLA's
importer, a regress row, a worker) is made beside it (docs/architecture.md
lists where).

    with_hint(err, parser_hint(text, str(err)))   # XLA's parser refused `text`
    with_hint(err, directory_hint(path))          # hlo2penguin was given a folder
    NO_CONTROL_EDGES                              # a module without control-predecessors

Pure Python (no jaxlib): the commands import it before XLA is loaded.
"""

from __future__ import annotations

import re

from passes.errors import ChainError
from pipeline.reading.lexical import COMPUTATION_HEAD_LINE, definition, starts_as_module

# XLA's parser meets a control predecessor it has not read yet: `instruction 'b' is not defined`.
_NOT_DEFINED = re.compile(r":(\d+):\d+: XLA's parser: instruction '([^']+)' is not defined")
# A computation's head and its closing brace, at the start of a line (XLA prints them so).
_COMPUTATION_HEAD = re.compile(COMPUTATION_HEAD_LINE)
_COMPUTATION_END = re.compile(r"\}\s*$")
# The first thing an MLIR module's text holds (after comments): `module`, `func.func`, an alias, generic form.
_MLIR_START = re.compile(r'(?:module\b|func\.func\b|#[\w.$\-]+\s*=|"builtin\.module"|"func\.func"|'
                         r'(?:stablehlo|mhlo)\.)')

CONTROL_ORDER = ("XLA's parser needs each control predecessor defined above its successor "
                 "(a cycle of control edges cannot be written)")
MLIR_FOR_HLO = "this is MLIR, and hlo2penguin reads HLO text: for MLIR use hlo2penguin-opt"
NO_CONTROL_EDGES = ("XLA adds control edges in copy insertion and later passes, so an earlier dump stage "
                    "has none")


def with_hint(err: ChainError, hint: str | None) -> ChainError:
    """`err`, its message followed by `; hint` (unchanged if there is no hint)."""
    if hint:
        err.message = f"{err.message}; {hint}"
        err.args = (str(err),)
    return err


def parser_hint(text: str, message: str) -> str | None:
    """The hint for XLA's parser's refusal `message` of the HLO `text`: MLIR
    handed to the HLO reader names hlo2penguin-opt; a control predecessor
    XLA's parser calls undefined although the same computation defines it
    further down (a forward reference, or a control cycle) says that XLA's
    parser reads predecessors first. None otherwise."""
    if looks_like_mlir(text):
        return MLIR_FOR_HLO
    found = _NOT_DEFINED.search(message)
    if found is None:
        return None
    line, name = int(found.group(1)), found.group(2)
    below = defined_below(text.splitlines(), line, name)
    if below is None:
        return None
    return f"'{name}' is defined below, on line {below}: {CONTROL_ORDER}"


def defined_below(lines: list[str], line: int, name: str) -> int | None:
    """The line (1-based) after `line` where the computation holding `line`
    defines the instruction `name`, or None."""
    if not 1 <= line <= len(lines):
        return None
    defines = re.compile(rf"[ \t]*{definition(name)}")
    for number in range(line + 1, len(lines) + 1):
        text = lines[number - 1]
        if _COMPUTATION_END.match(text) or _COMPUTATION_HEAD.match(text):
            return None  # the computation ends: a name defined in another one is another instruction
        if defines.match(text):
            return number
    return None


def looks_like_mlir(text: str) -> bool:
    """Whether `text` starts as an MLIR module does (after blank lines and `//` comments)."""
    first = _first_line(text)
    return first is not None and _MLIR_START.match(first) is not None


def looks_like_hlo_text(text: str) -> bool:
    """Whether `text` starts as HLO text does (`HloModule …` or a computation's
    head, after comments) and not as MLIR does (`module {` reads as both)."""
    return starts_as_module(text) and not looks_like_mlir(text)


def mlir_tool_hint(text: str) -> str | None:
    """For hlo2penguin-opt's refusal of `text`: HLO names hlo2penguin."""
    if looks_like_hlo_text(text):
        return "this is HLO text, and hlo2penguin-opt reads MLIR: for HLO use hlo2penguin"
    return None


def directory_hint(path: str) -> str:
    """For hlo2penguin given a folder."""
    return f"for every module in a folder (an XLA dump): hlo2penguin check {path}"


def _first_line(text: str) -> str | None:
    for line in text[:65536].splitlines():
        line = line.strip()
        if line and not line.startswith("//"):
            return line
    return None
