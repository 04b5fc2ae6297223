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

import contextlib
import marshal
import re

from passes.collector import no_cyclic_gc
from pipeline.xla.child import compile_piece

_PIECE_LINES = 5_000
# A line that can start a top-level statement of its own (not a clause like
# `else:`); whether it is inside brackets or a string, compiling tells.
_STATEMENT_START = re.compile(r"(?!(?:else|elif|except|finally|case)\b)[A-Za-z_]")


def run_program(source: str, filename: str, helper=None) -> dict:
    """Run the program's statements, in order, in one module namespace
    (named `filename` in tracebacks); the namespace. `helper`, XLA's child
    (`pipeline.xla.worker.XlaWorker`) idle by then, compiles every other
    piece of a long program meanwhile: compiling is nine tenths of the time."""
    namespace: dict = {"__name__": "penguin_program"}
    with no_cyclic_gc():
        for code in compiled(source, filename, helper):
            exec(code, namespace)
    return namespace


def compiled(source: str, filename: str, helper=None) -> list:
    """Code objects for consecutive pieces of about _PIECE_LINES lines, cut
    before a line that starts a statement (with `helper`, it compiles the
    odd pieces while this process compiles the even ones). If a piece does
    not compile alone (a cut inside a string or brackets, or a real syntax
    error), the whole text is compiled at once: it runs as one piece, or its
    error names the real line."""
    lines = source.splitlines(keepends=True)
    if len(lines) <= 2 * _PIECE_LINES:
        return [compile(source, filename, "exec")]
    pieces = _pieces(lines)
    with helper.reserved() if helper is not None else contextlib.nullcontext():  # its turn, in threads
        theirs = _ask_to_compile(helper, filename, pieces[1::2]) if helper is not None else None
        codes: list = [None] * len(pieces)
        try:
            for k, (start, text) in enumerate(pieces):
                if theirs is None or k % 2 == 0:
                    codes[k] = compile_piece(text, filename, start)
        except SyntaxError:
            codes = None
        if theirs is not None:
            helped = theirs()
            if codes is not None and helped is None:  # the child could not: its pieces here
                try:
                    helped = [compile_piece(text, filename, start) for start, text in pieces[1::2]]
                except SyntaxError:
                    codes = None
            if codes is not None:
                codes[1::2] = helped
    return codes if codes is not None else [compile(source, filename, "exec")]


def _pieces(lines: list[str]) -> list[tuple[int, str]]:
    pieces, start = [], 0
    while start < len(lines):
        end = min(start + _PIECE_LINES, len(lines))
        while end < len(lines) and not _STATEMENT_START.match(lines[end]):
            end += 1
        pieces.append((start, "".join(lines[start:end])))
        start = end
    return pieces


def _ask_to_compile(helper, filename: str, pieces: list[tuple[int, str]]):
    """Hand `pieces` to the child; a function that returns their code objects
    (None if the child could not compile them, or died)."""
    from pipeline.xla.worker import WorkerDied

    try:
        helper.submit("compile", marshal.dumps((filename, pieces)))
    except (OSError, ValueError):
        return None

    def collect():
        try:
            status, answer = helper.collect()
        except WorkerDied:
            return None
        return marshal.loads(answer) if status == "ok" else None

    return collect
