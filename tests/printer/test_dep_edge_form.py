"""The dep edge as neuronx-cc's printer writes it (`printControlDeps`, per
the public notes on the binary): on the successor,

    dst.add_dep_edge(Dependency.DependencyEdge(src=…, dst=…, idx_map=[],
                                               kind=Dependency.EdgeKind.ORDERED, predicates=[]))

with `Dependency` imported only when the module has control deps. The
runtime gives that API (`printer/penguin/Dependency.py`) beside the
shorthand `Module.add_dep_edge(pred, succ)`, and the verifier reads both.
Oracles: the statement's text as the notes give it, the schedule's order,
the verifier's report on the same program in the other form."""

from __future__ import annotations

import re

import pytest
from jaxlib.mlir import ir

import pipeline
from pipeline.xla.mlir_context import make_context
from pipeline.verifier.verify import verify
from printer.penguin import Dependency, DependencyEdge, EdgeKind, Module, T
from printer.python_printer import print_penguin

F32 = T("tensor<f32>")
# The real printer's statement, whole: the successor's variable twice.
REAL_FORM = re.compile(r"^(\w+)\.add_dep_edge\(Dependency\.DependencyEdge\(src=(\w+), dst=\1, idx_map=\[\], "
                       r"kind=Dependency\.EdgeKind\.ORDERED, predicates=\[\]\)\)$", re.M)
IMPORT = "from printer.penguin import Dependency\n"

ROUTED = """\
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] add(p, p)
  d = f32[4] negate(p)
  t = (f32[4], f32[4]) tuple(a, p)
  b = f32[4] multiply(p, p), control-predecessors={a, t, d}
  c = f32[4] abs(p), control-predecessors={a}
  ROOT r = f32[4] subtract(c, b), control-predecessors={b, c}
}
"""


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_every_dep_edge_is_the_real_printer_s_statement_on_its_successor(dialect):
    result = pipeline.run(ROUTED, dialect=dialect, isolate=False)
    source = result.penguin_source
    statements = REAL_FORM.findall(source)
    assert result.report.ok, result.report.lines()
    assert len(statements) == result.report.dep_edges == source.count(".add_dep_edge(")
    # b's predecessors a, d and t (whose elements are a and the parameter p: a stands in), c's a, r's b and c.
    assert sorted((pred, succ) for succ, pred in statements) == [
        ("a", "b"), ("a", "c"), ("b", "r"), ("c", "r"), ("d", "b")]
    assert source.count(IMPORT) == 1 and "module.add_dep_edge" not in source


def test_a_module_stamped_has_control_deps_imports_it_with_no_edge_to_print():
    """As the real printer: the import follows the module's `has_control_deps`."""
    text = """
module @m attributes {mhlo.frontend_attributes = {has_control_deps = "1"}} {
  func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.negate %arg0 : tensor<f32>
    return %0 : tensor<f32>
  }
}"""
    with make_context():
        source = print_penguin(ir.Module.parse(text))
    assert source.count(IMPORT) == 1 and ".add_dep_edge(" not in source
    scope: dict = {}
    exec(compile(source, "<program>", "exec"), scope)  # the program runs: the import is real
    assert scope["module"].dependencies == []


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_the_verifier_reads_the_shorthand_as_it_reads_the_real_form(dialect):
    result = pipeline.run(ROUTED, dialect=dialect, isolate=False)
    shorthand = REAL_FORM.sub(lambda m: f"module.add_dep_edge({m.group(2)}, {m.group(1)})", result.penguin_source)
    assert shorthand != result.penguin_source and "DependencyEdge" not in shorthand
    real, short = verify(ROUTED, result.penguin_source), verify(ROUTED, shorthand)
    assert real.ok and short.ok and real.lines() == short.lines()
    # The edge a -> c gone (no data orders c after a), in either form: it is lost, the same way.
    line = next(m.group(0) for m in REAL_FORM.finditer(result.penguin_source) if m.group(1, 2) == ("c", "a"))
    lost_real = verify(ROUTED, result.penguin_source.replace(line + "\n", ""))
    lost_short = verify(ROUTED, shorthand.replace("module.add_dep_edge(a, c)\n", ""))
    assert [(e.predecessor, e.successor) for e in lost_real.edges if e.fate == "lost"] == [("a", "c")]
    assert lost_real.lines() == lost_short.lines()


def test_an_edge_added_on_the_successor_orders_the_schedule_and_is_the_module_s():
    m = Module("m")
    f = m.function("main", [("x", F32)])
    p = f.op("stablehlo.custom_call", "p", [f.args[0]], [F32, F32])
    q = f.op("stablehlo.negate", "q", [f.args[0]], [F32])
    edge = q.add_dep_edge(Dependency.DependencyEdge(src=p[1], dst=q, idx_map=[], kind=Dependency.EdgeKind.ORDERED,
                                                    predicates=[]))
    r = f.op("stablehlo.abs", "r", [f.args[0]], [F32])
    m.add_dep_edge(r, p)  # the shorthand, beside it
    assert [i.name for i in f.schedule()] == ["r", "p", "q"]
    assert m.dependencies[0] is edge and edge.src is p and edge.kind is EdgeKind.ORDERED
    assert [type(d) for d in m.dependencies] == [DependencyEdge, DependencyEdge]
    assert m.dep_edges() == {(None, "p", "q"), (None, "r", "p")}


def test_an_edge_on_an_instruction_inside_a_loop_body_is_the_module_s():
    m = Module("m")
    f = m.function("main", [("x", F32)])
    loop = f.op("stablehlo.while", "loop", [f.args[0]], [F32])
    body = loop.block("body", [("i", F32)])
    inner = body.op("stablehlo.negate", "n", [body.args[0]], [F32])
    inner.add_dep_edge(DependencyEdge(src=f.args[0], dst=inner))
    assert [(d.src.name, d.dst.name) for d in m.dependencies] == [("x", "n")]


def test_a_wrong_edge_is_refused_with_what_is_wrong():
    m = Module("m")
    f = m.function("main", [("x", F32)])
    a = f.op("stablehlo.negate", "a", [f.args[0]], [F32])
    b = f.op("stablehlo.abs", "b", [a], [F32])
    with pytest.raises(ValueError, match=r"^add_dep_edge on b: the edge's dst must be b, not 'a'$"):
        b.add_dep_edge(DependencyEdge(src=f.args[0], dst=a))
    with pytest.raises(TypeError, match="kind must be a Dependency.EdgeKind"):
        DependencyEdge(src=a, dst=b, kind="ORDERED")
    with pytest.raises(TypeError, match="dst must be an instruction"):
        DependencyEdge(src=a, dst=f.args[0])
    with pytest.raises(TypeError, match="src must be an instruction or an argument"):
        DependencyEdge(src="a", dst=b)
    loose = Module("other").function("main").op("stablehlo.abs", "loose", [], [F32])
    loose.parent = None
    with pytest.raises(ValueError, match="in no module's function"):
        loose.add_dep_edge(DependencyEdge(src=a, dst=loose))
    assert m.dependencies == []
