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


def run_program(source: str, filename: str, helper=None, as_printed: "AsPrinted | None" = None) -> dict:
    """Run the program's statements, in order, in one module namespace
    (named `filename` in tracebacks); the namespace. `helper`, XLA's child
    (`pipeline.xla.worker.XlaWorker`) idle by then, compiles every other
    piece of a long program meanwhile: compiling is nine tenths of the time.
    `as_printed`: the pieces of `source` compiled while it was printed
    (used only where they are, to the character, the end of `source`)."""
    namespace: dict = {"__name__": "penguin_program"}
    codes = as_printed.codes(source, helper) if as_printed is not None else None
    with no_cyclic_gc():
        codes = codes or compiled(source, filename, helper)
        for k, code in enumerate(codes):
            codes[k] = None  # each piece's code goes once it has run (a 300k-instruction program's: 90 MB)
            exec(code, namespace)
    return namespace


class AsPrinted:
    """A long program compiled while it is printed, by XLA's child, idle by
    then: the printer hands on its lines as it prints them (`feed`, as
    `printer.print_penguin`'s `on_lines`), and each time the child is free
    it gets the next piece to compile. The printer is faster than
    compiling, so the child compiles most of a long program before it is
    printed; `codes` compiles the rest, half here and half in the child.

        as_printed = AsPrinted(helper, filename)
        with as_printed.streaming():
            source = print_penguin(module, ..., on_lines=as_printed.feed)
        run_program(source, filename, helper, as_printed)

    What runs is still the printed text: `codes` uses the pieces only where
    they are, to the character, the end of it, and compiles what comes
    before them (the imports, the module, the types) from it."""

    def __init__(self, helper, filename: str):
        self.helper, self.filename = helper, filename
        self.texts: list[str] = []
        self.codes_: list = []       # per piece: its code object (first line 1), or None
        self.lines = 0               # lines fed so far
        self.given = 0               # pieces given to the child so far (the first ones)
        self.asked: list[int] = []   # the pieces the child is compiling
        self.usable = helper is not None

    @contextlib.contextmanager
    def streaming(self):
        """The child's turn for as long as the printer prints (`reserved`):
        no other thread's request comes between a piece and its answer."""
        if not self.usable:
            yield self
            return
        with self.helper.reserved():
            try:
                yield self
            finally:
                if self.asked:
                    self._collect()
                self.usable = False  # the turn is over: `codes` compiles what is left

    def feed(self, lines: list[str]) -> None:
        """The next lines of the program, as printed: a piece of its own. A
        child done with what it was given gets the next pieces printed, four
        at most (the printer's last wait, for the child's last answer, stays
        short)."""
        self.texts.append("".join(line + "\n" for line in lines))
        self.codes_.append(None)
        self.lines += len(lines)
        if not self.usable or self.lines <= 2 * _PIECE_LINES:  # a short program is compiled at once, here
            return
        if self.asked and self.helper.answered():
            self._collect()
        if not self.asked:
            self.asked = list(range(self.given, min(self.given + 4, len(self.texts))))
            self.given += len(self.asked)
            self.helper.submit("compile", marshal.dumps((self.filename, [(0, self.texts[k]) for k in self.asked])))

    def _collect(self) -> None:
        from pipeline.xla.worker import WorkerDied

        asked, self.asked = self.asked, []
        try:
            status, answer = self.helper.collect()
        except WorkerDied:
            self.usable = False
            return
        if status == "ok":
            for k, code in zip(asked, marshal.loads(answer)):
                self.codes_[k] = code
        else:  # it does not compile alone: `codes` says so, and the whole text is compiled
            self.usable = False

    def codes(self, source: str, helper=None) -> list | None:
        """The code objects of `source`, in order, or None where the pieces
        are not its end (or one did not compile, or the program is short):
        it is then compiled as any program is (`compiled`)."""
        if self.lines <= 2 * _PIECE_LINES or not any(code is not None for code in self.codes_):
            return None
        printed = "".join(self.texts)
        if not source.endswith(printed):
            return None
        head = source[:len(source) - len(printed)]
        starts, line = [], head.count("\n")
        for text in self.texts:
            starts.append(line)
            line += text.count("\n")
        left = [(starts[k], self.texts[k]) for k, code in enumerate(self.codes_) if code is None]
        try:
            rest = iter(_compiled_pieces(left, self.filename, helper))
            codes = [compile_piece(head, self.filename, 0)] if head else []
        except SyntaxError:
            return None
        for k, code in enumerate(self.codes_):
            codes.append(next(rest) if code is None else code.replace(co_firstlineno=code.co_firstlineno + starts[k]))
        self.texts, self.codes_ = [], []  # handed on once: the caller runs them
        return codes


def _compiled_pieces(pieces: list[tuple[int, str]], filename: str, helper=None) -> list:
    """Code objects of `pieces` ((start line, text) each), with `helper`
    compiling every other one meanwhile; SyntaxError if one does not compile."""
    if helper is None or len(pieces) < 2:
        return [compile_piece(text, filename, start) for start, text in pieces]
    with helper.reserved():
        theirs = _ask_to_compile(helper, filename, pieces[1::2])
        codes = [None] * len(pieces)
        try:
            for k in range(0, len(pieces), 2):
                codes[k] = compile_piece(pieces[k][1], filename, pieces[k][0])
        finally:
            helped = theirs() if theirs is not None else None
    codes[1::2] = helped if helped is not None else [compile_piece(text, filename, start)
                                                     for start, text in pieces[1::2]]
    return codes


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
