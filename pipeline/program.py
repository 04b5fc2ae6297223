"""The one loader of a Penguin program, for the chain (`ChainResult.module()`,
the check) and for the verifier run alone (`hlo2penguin verify`).

    module = run_program(source, "<penguin program from m.hlo>")   # its module-level `module`

CPython compiles a module as one code object, in time and memory that grow
faster than its length: a 490k-line program (300k instructions) took 22.7 s
and 4.4 GiB to compile, its ten 49k-line pieces 13 s and 0.8 GiB with
running them (measured with Python 3.11). So a long program is compiled and
run in pieces cut between top-level statements, each keeping its own line
numbers for tracebacks. The graph it builds holds no garbage cycles: the
cyclic collector is off meanwhile.
"""

from __future__ import annotations

import re

from passes.hlo.ir import no_cyclic_gc

_PIECE_LINES = 5_000
# A line that can start a top-level statement of its own (not a clause like
# `else:`); whether it is inside brackets or a string, compiling tells.
_STATEMENT_START = re.compile(r"(?!(?:else|elif|except|finally|case)\b)[A-Za-z_]")


def run_program(source: str, filename: str) -> dict:
    """Run the program's statements, in order, in one module namespace
    (named `filename` in tracebacks); the namespace."""
    namespace: dict = {"__name__": "penguin_program"}
    with no_cyclic_gc():
        for code in compiled(source, filename):
            exec(code, namespace)
    return namespace


def compiled(source: str, filename: str) -> list:
    """Code objects for consecutive pieces of about _PIECE_LINES lines, cut
    before a line that starts a statement. If a piece does not compile alone
    (a cut inside a string or brackets, or a real syntax error), the whole
    text is compiled at once: it runs as one piece, or its error names the
    real line."""
    lines = source.splitlines(keepends=True)
    if len(lines) <= 2 * _PIECE_LINES:
        return [compile(source, filename, "exec")]
    pieces, start = [], 0
    while start < len(lines):
        end = min(start + _PIECE_LINES, len(lines))
        while end < len(lines) and not _STATEMENT_START.match(lines[end]):
            end += 1
        try:
            code = compile("".join(lines[start:end]), filename, "exec")
        except SyntaxError:
            return [compile(source, filename, "exec")]
        pieces.append(code.replace(co_firstlineno=code.co_firstlineno + start) if start else code)
        start = end
    return pieces
