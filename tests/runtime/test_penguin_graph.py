"""The Penguin graph's own promises (printer/penguin/graph.py), as a user
building or reading a module by hand relies on them: results and their
index errors, nested blocks and their arguments, result types given as text,
and a schedule that honours data edges (through a result index too) when a
dependency pulls an instruction ahead. Oracles: the docstrings' contract and
the definition of a topological order."""

from __future__ import annotations

import pytest

from printer.penguin import Function, Module, T
from printer.penguin.graph import Value

F32 = T("tensor<f32>")


def test_an_instruction_s_results_and_the_index_error_that_names_their_count():
    m = Module("m")
    f = m.function("main", [("x", F32)])
    pair = f.op("stablehlo.custom_call", "pair", [f.args[0]], [F32, F32])
    assert isinstance(pair[1], Value) and pair[1].name == "pair#1" and pair[1].instruction is pair
    for bad in (2, -1):
        with pytest.raises(IndexError, match=r"^pair has 2 result\(s\), not #" + str(bad) + "$"):
            pair[bad]


def test_result_types_given_as_text_become_types_with_shape_and_dtype():
    f = Module("m").function("main")
    op = f.op("stablehlo.iota", "i", [], ["tensor<2x?x3xi32>", T("tensor<f32>")])
    assert all(isinstance(t, T) for t in op.result_types)
    assert (op.result_types[0].shape, op.result_types[0].dtype) == ((2, -1, 3), "i32")
    assert (op.result_types[1].shape, op.result_types[1].dtype) == ((), "f32")
    assert T("tuple<tensor<f32>>").shape is None and T("!stablehlo.token").dtype is None


def test_a_nested_block_knows_its_name_its_op_and_its_arguments():
    m = Module("m")
    f = m.function("main", [("x", F32)])
    loop = f.op("stablehlo.while", "loop", [f.args[0]], [F32])
    body = loop.block("body", [("i", F32), ("acc", "tensor<4xf32>")])
    assert loop.blocks == [body] and body.name == "body" and body.parent is loop
    assert [(a.name, str(a.type), a.index, a.block) for a in body.args] == [
        ("i", "tensor<f32>", 0, body), ("acc", "tensor<4xf32>", 1, body)]
    inner = body.op("stablehlo.negate", "n", [body.args[0]], [F32])
    assert list(f.walk()) == [loop, inner] and inner.parent is body


@pytest.mark.parametrize("through_a_result_index", [False, True])
def test_a_dependency_never_schedules_an_instruction_before_the_value_it_reads(through_a_result_index):
    """Program order p, q, r with q reading p and a dependency r -> p: the only
    order is r, p, q (the dependency alone would allow q first)."""
    m = Module("m")
    f = m.function("main", [("x", F32)])
    p = f.op("stablehlo.custom_call", "p", [f.args[0]], [F32, F32] if through_a_result_index else [F32])
    q = f.op("stablehlo.negate", "q", [p[1] if through_a_result_index else p], [F32])
    r = f.op("stablehlo.abs", "r", [f.args[0]], [F32])
    m.add_dep_edge(r, p)
    assert [i.name for i in f.schedule()] == ["r", "p", "q"]
    assert q.operands[0].__class__ is (Value if through_a_result_index else type(p))


def test_a_function_outside_any_module_schedules_by_its_data_edges():
    f = Function("alone")
    f.arguments = []
    a = f.op("stablehlo.constant", "a", [], [F32])
    b = f.op("stablehlo.negate", "b", [a], [F32])
    assert f.schedule() == [a, b]


@pytest.mark.parametrize("length", [2, 10, 11, 12])
def test_a_cycle_is_named_by_the_instructions_on_it_ten_at_most(length):
    """ScheduleError names what the cycle holds (not the instructions that
    could be placed before it), in program order, and at most ten of them."""
    from printer.penguin import ScheduleError

    m = Module("m")
    f = m.function("main", [("x", F32)])
    free = f.op("stablehlo.abs", "free", [f.args[0]], [F32])
    ring = [f.op("stablehlo.negate", f"c{i}", [free], [F32]) for i in range(length)]
    for a, b in zip(ring, ring[1:] + ring[:1]):
        m.add_dep_edge(a, b)
    names = ", ".join(f"c{i}" for i in range(min(length, 10)))
    with pytest.raises(ScheduleError) as failed:
        f.schedule()
    assert str(failed.value) == (f"block main: data and dependency edges form a cycle through {names}"
                                 + (" …" if length > 10 else ""))
