"""The proof's program compiled while link #4 prints it
(`pipeline.verifier.program.AsPrinted`): XLA's child, idle meanwhile,
compiles the printed lines as they come. What runs is still the printed
text: Python's own compile of the whole text is the oracle for the graph it
builds and for the lines its errors name."""

from __future__ import annotations

import marshal
import re
import traceback

import pytest

import pipeline
from bench.synthetic import synthetic_hlo
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.verifier import program
from pipeline.xla.worker import XlaWorker
from printer.python_printer import STREAM_LINES


@pytest.fixture(scope="module")
def long_program() -> str:
    source = pipeline.run(synthetic_hlo(8000), check=False, isolate=False).penguin_source
    assert source.count("\n") > 4 * STREAM_LINES
    return source


def _whole(source: str):
    namespace = {"__name__": "penguin_program"}
    exec(compile(source, "whole", "exec"), namespace)
    return namespace["module"]


def _same_graph(ours, theirs) -> None:
    assert ours.dep_edges() == theirs.dep_edges() and len(ours.dep_edges()) > 1000
    assert [(i.name, i.opcode, i.computation) for i in ours.instructions()] == \
        [(i.name, i.opcode, i.computation) for i in theirs.instructions()]


def _printed(source: str, head_lines: int, worker: XlaWorker) -> program.AsPrinted:
    """`source` handed on as the printer hands on a program: all but its
    first `head_lines` lines, STREAM_LINES at a time, the child compiling."""
    as_printed = program.AsPrinted(worker, "long")
    lines = source.splitlines()
    with as_printed.streaming():
        for at in range(head_lines, len(lines), STREAM_LINES):
            as_printed.feed(lines[at:at + STREAM_LINES])
    return as_printed


def test_the_chain_s_program_compiled_as_printed_builds_what_python_builds_from_it_whole(monkeypatch):
    used = []
    real = program.AsPrinted.codes

    def spying(self, source, helper=None):
        by_the_child = sum(code is not None for code in self.codes_)
        codes = real(self, source, helper)
        used.append((by_the_child, codes is not None))
        return codes

    monkeypatch.setattr(program.AsPrinted, "codes", spying)
    result = pipeline.run(synthetic_hlo(8000))  # the warm child compiles as link #4 prints
    [(by_the_child, usable)] = used
    assert usable and by_the_child >= 1  # it did: the rest was compiled at the proof
    _same_graph(result.module(), _whole(result.penguin_source))
    assert result.report.ok


def test_a_short_program_asks_the_child_nothing(monkeypatch):
    sent = []
    real = XlaWorker.submit
    monkeypatch.setattr(XlaWorker, "submit", lambda self, c, p: sent.append(c) or real(self, c, p))
    pipeline.run(EXAMPLE_HLO)
    assert "compile" not in sent


def test_a_piece_compiled_as_printed_keeps_the_program_s_line_numbers(long_program):
    lines = long_program.splitlines()
    head = 40  # the printer's head: its imports, the module, the types
    target = next(i for i in range(head + 3 * STREAM_LINES, len(lines)) if ".op(" in lines[i] and " = " in lines[i])
    broken = "\n".join(lines[:target] + [lines[target].replace(" = ", " = 1 / 0 or ", 1)] + lines[target + 1:]) + "\n"
    worker = XlaWorker()
    try:
        as_printed = _printed(broken, head, worker)
        assert sum(code is not None for code in as_printed.codes_) >= 1
        with pytest.raises(ZeroDivisionError) as failed:
            program.run_program(broken, "long", worker, as_printed)
        assert traceback.extract_tb(failed.value.__traceback__)[-1].lineno == target + 1
        assert worker.ask("compile", marshal.dumps(("x", [(0, "a = 1\n")])))[0] == "ok"  # in step with the child
    finally:
        worker.close()


def test_a_piece_that_does_not_compile_alone_leaves_the_whole_text_to_name_the_line(long_program):
    lines = long_program.splitlines()
    target = next(i for i in range(40 + STREAM_LINES, len(lines)) if ".op(" in lines[i])
    unclosed = "\n".join(lines[:target] + [lines[target] + " ("] + lines[target + 1:]) + "\n"
    worker = XlaWorker()
    try:
        as_printed = _printed(unclosed, 40, worker)
        with pytest.raises(SyntaxError) as refused:
            program.run_program(unclosed, "long", worker, as_printed)
        assert refused.value.lineno == target + 1
    finally:
        worker.close()


def test_what_runs_is_the_text_given_not_the_pieces_compiled(long_program):
    """Pieces that are not, to the character, the end of the text run are
    not used: the text is compiled as it is."""
    worker = XlaWorker()
    try:
        as_printed = _printed(long_program, 40, worker)
        assert sum(code is not None for code in as_printed.codes_) >= 1
        *_, last = re.finditer(r"\.op\('stablehlo\.\w+', '(\w+)'", long_program)  # the last op's HLO name
        renamed = long_program[:last.start(1)] + "renamed" + long_program[last.end(1):]
        assert as_printed.codes(renamed, worker) is None
        built = program.run_program(renamed, "long", worker, as_printed)["module"]
        assert "renamed" in {i.name for i in built.instructions()}
        _same_graph(program.run_program(long_program, "long", worker, as_printed)["module"], _whole(long_program))
    finally:
        worker.close()
