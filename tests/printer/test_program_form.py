"""A program that is cheap to run: each type built once at the top and
shared, no `T(...)` on an op's line, and an op's computation said once per
block (the block's default) unless it differs. Oracles: the program's text
(the form), and what it builds against the HLO (every op's computation is
the one its HLO instruction belongs to, as XLA's parse says)."""

from __future__ import annotations

import re

import pytest

import pipeline
from bench.synthetic import synthetic_hlo
from pipeline.reading.parsed import Parsed
from pipeline.verifier.program import run_program
from printer.penguin import Module, T
from pipeline.xla import native

F32 = T("tensor<f32>")


@pytest.fixture(scope="module")
def synthetic():
    text = synthetic_hlo(1500)
    return text, pipeline.run(text, isolate=False)


def test_each_type_is_defined_once_before_the_first_function(synthetic):
    _, result = synthetic
    lines = result.penguin_source.splitlines()
    definitions = [line for line in lines if re.match(r"^\w+ = T\('", line)]
    texts = [re.search(r"T\('([^']*)'\)", line).group(1) for line in definitions]
    assert len(texts) == len(set(texts)) >= 3  # f32[8], s32[], pred[], tuples…
    first_function = next(i for i, line in enumerate(lines) if "module.function(" in line)
    assert all(lines.index(d) < first_function for d in definitions)
    assert sum("T(" in line for line in lines) == len(definitions)  # no op line builds a type


def test_every_op_says_its_hlo_computation(synthetic):
    """The computation an op's line leaves to its block is the one XLA's
    parse puts the instruction in (the while body's ops in the body)."""
    text, result = synthetic
    parsed = native.read(text)
    of = {(c.name, i.name) for c in parsed.proto.computations for i in c.instructions}
    module = run_program(result.penguin_source, "<test>")["module"]
    named = [i for i in module.instructions() if i.opcode not in ("func.return", "stablehlo.return")]
    assert len(named) > 1000
    assert all((i.computation, i.name) in of for i in named), [
        (i.computation, i.name) for i in named if (i.computation, i.name) not in of][:5]
    assert {i.computation for i in named} == {"main", "body", "cond"}
    assert result.report.ok
    # Said once per block: far fewer `computation=` than ops.
    assert result.penguin_source.count("computation=") < len(named) / 10


def test_a_block_s_computation_is_its_instructions_unless_one_says_otherwise():
    m = Module("m")
    f = m.function("main", [("x", F32)], computation="entry")
    a = f.op("stablehlo.negate", "a", [f.args[0]], [F32])
    r = f.op("func.return", "return", [a], computation=None)
    other = f.op("stablehlo.abs", "b", [a], [F32], computation="elsewhere")
    loop = f.op("stablehlo.while", "w", [a], [F32])
    body = loop.block("body", [("s", F32)], computation="body")
    inner = body.op("stablehlo.negate", "n", [body.args[0]], [F32])
    plain = Module("p").function("main").op("stablehlo.abs", "c", [], [F32])
    assert [i.computation for i in (a, r, other, loop, inner, plain)] == [
        "entry", None, "elsewhere", "entry", "body", None]


def test_a_type_reads_its_text_once_and_equals_by_its_text():
    t = T("tensor<2x?x3xi32>")
    assert t.shape == (2, -1, 3) and t.dtype == "i32" and t.shape is t.shape
    assert t == T("tensor<2x?x3xi32>") and hash(t) == hash(T("tensor<2x?x3xi32>"))
    assert T("!stablehlo.token").shape is None and T("!stablehlo.token").dtype is None
