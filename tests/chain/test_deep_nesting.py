"""Depth the input decides, through the whole chain with its check: nothing
recurses on it (links #1-#4, the verifier, `Module.execute`).

- 3,000 tuple/get-tuple-element pairs between a control predecessor and its
  successor, and 3,000 between a tuple successor and the op that reads it
  (XLA's parser accepts both);
- a value of a tuple shape nested 96 deep, the deepest XLA reads back from
  its own proto (97 is refused: protobuf's nesting limit), as a control
  predecessor;
- while loops nested 150 deep (each body holds the next loop) and calls
  nested 150 deep, a control edge at every level. XLA's parser accepts
  thousands; its importer's time grows faster than the depth, so 150 keeps
  the test short, and the lowered recursion limit below makes 150 as telling
  as 3,000: a walk that took one Python frame per level would fail.

Each runs in-process (XLA's parser in this process too: its recursion is
C++'s, not Python's) under a recursion limit a little above the test's own
depth, so a recursion on the input fails at once. Every HLO edge is carried
(preserved or rerouted, as the verifier judges from the HLO and the executed
program), in both dialects, and the program computes what the HLO says.
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np
import pytest

import pipeline
from passes.control_dep import Fate
from pipeline.xla import native

DIALECTS = ["stablehlo", "mhlo"]
HEADROOM = 120  # frames above the caller's: the chain's own depth, with its lazy imports done
X = (np.arange(8, dtype=np.float32) + 1) / 4


@contextlib.contextmanager
def shallow_stack(headroom: int = HEADROOM):
    """A recursion limit `headroom` frames above the current depth."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + headroom)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _header(name: str) -> list[str]:
    return [f"HloModule {name}", "", "ENTRY %main (x: f32[8]) -> f32[8] {", "  %x = f32[8]{0} parameter(0)"]


def predecessor_through_pairs(n: int) -> str:
    """%p reaches the successor's control predecessor through n tuple/get-tuple-element pairs."""
    lines = _header("predecessor_through_pairs") + ["  %p = f32[8]{0} negate(%x)"]
    v = "p"
    for i in range(n):
        lines += [f"  %t{i} = (f32[8]{{0}}) tuple(%{v})", f"  %g{i} = f32[8]{{0}} get-tuple-element(%t{i}), index=0"]
        v = f"g{i}"
    lines += [f"  %succ = f32[8]{{0}} add(%x, %x), control-predecessors={{%{v}}}",
              f"  ROOT %out = f32[8]{{0}} add(%succ, %{v})", "}"]
    return "\n".join(lines) + "\n"


def successor_read_through_pairs(n: int) -> str:
    """A tuple successor (no op of its own) read through n get-tuple-element/tuple pairs."""
    lines = _header("successor_read_through_pairs") + [
        "  %p = f32[8]{0} negate(%x)", "  %s = (f32[8]{0}) tuple(%x), control-predecessors={%p}"]
    v = "s"
    for i in range(n):
        lines += [f"  %g{i} = f32[8]{{0}} get-tuple-element(%{v}), index=0", f"  %t{i} = (f32[8]{{0}}) tuple(%g{i})"]
        v = f"t{i}"
    lines += [f"  %last = f32[8]{{0}} get-tuple-element(%{v}), index=0",
              "  %r = f32[8]{0} exponential(%last)", "  ROOT %out = f32[8]{0} add(%r, %p)", "}"]
    return "\n".join(lines) + "\n"


def nested_tuple_shape(depth: int) -> str:
    """exp(x) wrapped in `depth` one-element tuples (the last a control predecessor), then unwrapped."""
    def shape(k: int) -> str:
        return "(" * k + "f32[8]{0}" + ")" * k

    lines = _header("nested_tuple_shape") + ["  %e = f32[8]{0} exponential(%x)"]
    v = "e"
    for k in range(1, depth + 1):
        lines.append(f"  %t{k} = {shape(k)} tuple(%{v})")
        v = f"t{k}"
    for k in range(depth, 0, -1):
        lines.append(f"  %g{k} = {shape(k - 1)} get-tuple-element(%{v}), index=0")
        v = f"g{k}"
    lines += [f"  %succ = f32[8]{{0}} add(%x, %x), control-predecessors={{%t{depth}}}",
              f"  ROOT %out = f32[8]{{0}} add(%succ, %{v})", "}"]
    return "\n".join(lines) + "\n"


_STATE = "(s32[], f32[8]{0})"


def nested_whiles(depth: int) -> str:
    """A while whose body holds a while whose body holds … `depth` deep; each
    loop runs once and adds 1 after its inner loop, a control edge
    (exp of the state → the add) at every level: main returns x + depth."""
    parts = ["HloModule nested_whiles", ""]
    for k in range(depth, 0, -1):
        inner = (f"  %iw = {_STATE} while(%st), condition=%cond{k + 1}, body=%body{k + 1}\n"
                 f"  %v = f32[8]{{0}} get-tuple-element(%iw), index=1\n") if k < depth else \
            "  %v = f32[8]{0} get-tuple-element(%st), index=1\n"
        parts.append(
            f"%cond{k} (c: {_STATE}) -> pred[] {{\n  %c = {_STATE} parameter(0)\n"
            f"  %ci = s32[] get-tuple-element(%c), index=0\n  %n = s32[] constant(1)\n"
            f"  ROOT %lt = pred[] compare(%ci, %n), direction=LT\n}}\n\n"
            f"%body{k} (s: {_STATE}) -> {_STATE} {{\n  %s = {_STATE} parameter(0)\n"
            f"  %i = s32[] get-tuple-element(%s), index=0\n  %one = s32[] constant(1)\n"
            f"  %i1 = s32[] add(%i, %one)\n  %w = f32[8]{{0}} get-tuple-element(%s), index=1\n"
            f"  %e = f32[8]{{0}} exponential(%w)\n  %zero = s32[] constant(0)\n"
            f"  %st = {_STATE} tuple(%zero, %w)\n{inner}"
            f"  %f1 = f32[] constant(1)\n  %ones = f32[8]{{0}} broadcast(%f1), dimensions={{}}\n"
            f"  %m = f32[8]{{0}} add(%v, %ones), control-predecessors={{%e}}\n"
            f"  ROOT %t = {_STATE} tuple(%i1, %m)\n}}\n")
    parts.append(f"ENTRY %main (x: f32[8]) -> f32[8] {{\n  %x = f32[8]{{0}} parameter(0)\n  %zero = s32[] constant(0)\n"
                 f"  %init = {_STATE} tuple(%zero, %x)\n"
                 f"  %loop = {_STATE} while(%init), condition=%cond1, body=%body1\n"
                 f"  ROOT %out = f32[8]{{0}} get-tuple-element(%loop), index=1\n}}\n")
    return "\n".join(parts)


def nested_calls(depth: int) -> str:
    """Computation k calls computation k+1 and adds 1 to what it returns,
    `depth` deep, a control edge at every level: main returns x + depth."""
    parts = ["HloModule nested_calls", ""]
    for k in range(depth, 0, -1):
        inner = f"  %v = f32[8]{{0}} call(%a), to_apply=%f{k + 1}\n" if k < depth else \
            "  %v = f32[8]{0} copy(%a)\n"
        parts.append(f"%f{k} (a: f32[8]) -> f32[8] {{\n  %a = f32[8]{{0}} parameter(0)\n"
                     f"  %e = f32[8]{{0}} exponential(%a)\n{inner}"
                     f"  %f1 = f32[] constant(1)\n  %ones = f32[8]{{0}} broadcast(%f1), dimensions={{}}\n"
                     f"  ROOT %m = f32[8]{{0}} add(%v, %ones), control-predecessors={{%e}}\n}}\n")
    parts.append("ENTRY %main (x: f32[8]) -> f32[8] {\n  %x = f32[8]{0} parameter(0)\n"
                 "  ROOT %out = f32[8]{0} call(%x), to_apply=%f1\n}\n")
    return "\n".join(parts)


def _warm(dialect: str) -> None:
    """The chain's lazy imports done, outside the lowered limit."""
    pipeline.run(nested_whiles(2), isolate=False, dialect=dialect).module().execute(X)
    pipeline.run(nested_calls(2), isolate=False, dialect=dialect).module().execute(X)


def _carried(text: str, dialect: str, edges: int):
    """The chain on `text` in-process under a shallow stack: every one of its
    `edges` HLO edges carried (the verifier's fates), and the program."""
    _warm(dialect)
    with shallow_stack():
        result = pipeline.run(text, isolate=False, check=True, dialect=dialect)
        module = result.module()
        got = module.execute(X)
    fates = [e.fate for e in result.report.edges]
    assert len(fates) == edges == len(native.read(text).control_edges())  # XLA's count of the edges
    assert result.report.ok and set(fates) <= {Fate.PRESERVED, Fate.REROUTED}, result.report.summary()
    return got


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_predecessor_through_3000_tuple_pairs(dialect):
    (got,) = _carried(predecessor_through_pairs(3000), dialect, edges=1)
    np.testing.assert_allclose(got, X + X - X, rtol=1e-6)  # (x + x) + -x


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_successor_read_through_3000_tuple_pairs(dialect):
    (got,) = _carried(successor_read_through_pairs(3000), dialect, edges=1)
    np.testing.assert_allclose(got, np.exp(X) - X, rtol=1e-6)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_tuple_shape_nested_as_deep_as_xla_reads_it(dialect):
    (got,) = _carried(nested_tuple_shape(96), dialect, edges=1)
    np.testing.assert_allclose(got, X + X + np.exp(X), rtol=1e-6)


def test_97_levels_of_tuple_are_past_what_xla_reads_back():
    """Where the deepest shape above stops: XLA's parser reads the text, and
    refuses its own proto of it (the form link #1 edits), which the chain says."""
    native.read(nested_tuple_shape(97))
    with pytest.raises(pipeline.xla.isolated.XlaRejected, match="XLA refuses its own proto"):
        pipeline.run(nested_tuple_shape(97), isolate=False)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_whiles_nested_150_deep(dialect):
    (got,) = _carried(nested_whiles(150), dialect, edges=150)
    np.testing.assert_allclose(got, X + 150, rtol=1e-6)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_calls_nested_150_deep(dialect):
    (got,) = _carried(nested_calls(150), dialect, edges=150)
    np.testing.assert_allclose(got, X + 150, rtol=1e-6)


def test_a_control_dep_calls_readers_through_3000_tuple_pairs():
    """What the printer orders after a control-dep call (`ordered_ops`: its
    readers, through tuples): 3,000 pairs deep in MLIR written by hand (the
    chain's own calls are read directly), found without recursion."""
    from jaxlib.mlir import ir

    from passes.control_dep import CONTROL_DEP_TARGET, is_control_dep, ordered_ops
    from pipeline.xla.mlir_context import make_context

    f, t = "tensor<8xf32>", "tuple<tensor<8xf32>>"
    lines = [f"func.func @main(%x: {f}) -> {f} {{", f"  %p = stablehlo.negate %x : {f}",
             f"  %v = stablehlo.custom_call @{CONTROL_DEP_TARGET}(%p, %x) : ({f}, {f}) -> {f}"]
    v = "v"
    for i in range(3000):
        lines += [f"  %t{i} = stablehlo.tuple %{v} : {t}",
                  f"  %g{i} = stablehlo.get_tuple_element %t{i}[0] : ({t}) -> {f}"]
        v = f"g{i}"
    lines += [f"  %s = stablehlo.exponential %{v} : {f}", f"  return %s : {f}", "}"]
    module = ir.Module.parse("\n".join(lines), context=make_context())
    [call] = [op for op in module.body.operations[0].regions[0].blocks[0].operations if is_control_dep(op.operation)]
    with shallow_stack():
        [reader] = ordered_ops(call)
    assert reader.name == "stablehlo.exponential"


def test_drawing_whiles_nested_150_deep():
    """The drawings walk every nested block without recursion: one cluster
    (DOT) and one panel (SVG) per block, a condition and a body per loop."""
    from printer.penguin import drawing

    module = pipeline.run(nested_whiles(150), isolate=False).module()
    drawing.to_dot(pipeline.run(nested_whiles(2), isolate=False).module())  # the drawing's imports, outside
    drawing.svg(pipeline.run(nested_whiles(2), isolate=False).module(), function=None, nested="all")
    with shallow_stack():
        dot = drawing.to_dot(module)
        svg = drawing.svg(module, function=None, nested="all").decode()
    assert dot.count("subgraph ") == 1 + 2 * 150
    assert svg.count("(while): body") == svg.count("(while): cond") == 150
