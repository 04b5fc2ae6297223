"""Link #1 at depths the input decides, as deep as XLA reads: a predecessor
behind 3,000 tuple / get-tuple-element pairs, a successor whose one reader
is 3,000 pairs away, tuple shapes nested as deep as XLA reads its own proto
back, 3,000 nested computations. Each module is one XLA accepts; link #1's
output is read back by XLA (`link1_helpers.run`), and every edge is carried
onto the ops the input's structure gives it (no search recurses).
"""

from __future__ import annotations

import pytest

from link1_helpers import hlo, run
from passes.control_dep import Fate
from pipeline.xla import native

PAIRS = 3000


def through_pairs(n: int) -> str:
    """%a -> %k, %k read by %r only through n tuple/get-tuple-element pairs;
    %g<n-1> -> %s, %g<n-1> being %a through n pairs."""
    lines = ["HloModule deep", "", "ENTRY %main (x: f32[4]) -> (f32[4], f32[4], f32[4]) {",
             "  %x = f32[4]{0} parameter(0)", "  %a = f32[4]{0} negate(%x)",
             "  %k = f32[4]{0} constant({1, 2, 3, 4}), control-predecessors={%a}"]
    pred, read = "a", "k"
    for i in range(n):
        lines += [f"  %t{i} = (f32[4]{{0}}) tuple(%{pred})",
                  f"  %g{i} = f32[4]{{0}} get-tuple-element(%t{i}), index=0",
                  f"  %w{i} = (f32[4]{{0}}) tuple(%{read})",
                  f"  %h{i} = f32[4]{{0}} get-tuple-element(%w{i}), index=0"]
        pred, read = f"g{i}", f"h{i}"
    lines += ["  %b = f32[4]{0} exponential(%x)",
              f"  %s = f32[4]{{0}} add(%b, %x), control-predecessors={{%{pred}}}",
              f"  %r = f32[4]{{0}} abs(%{read})",
              f"  ROOT %out = (f32[4]{{0}}, f32[4]{{0}}, f32[4]{{0}}) tuple(%s, %r, %{pred})", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("bundle", [False, True], ids=["plain", "bundle"])
def test_edges_through_3000_tuple_pairs(bundle):
    text = through_pairs(PAIRS)
    native.read(text)  # XLA accepts it
    out = run(text, bundle=bundle)
    account = {(e.predecessor, e.successor): e for e in out.result.edges}
    assert {k: e.emitted for k, e in account.items()} == {
        ("a", "k"): (("a", "r"),),                 # %k's one reader, 3,000 pairs away
        (f"g{PAIRS - 1}", "s"): (("a", "s"),)}     # the one op behind the 3,000 pairs
    assert all(e.fate is Fate.REROUTED for e in account.values())
    assert not out.xla.control_edges()
    calls = {c.operands[-1]: c for c in out.xla.calls()}
    main = out.xla.computation("main")
    if bundle:
        assert [main[calls[f"h{PAIRS - 1}"].operands[0]].operands, main[calls["b"].operands[0]].operands] == [
            ("a",), ("a",)]
    else:
        assert calls[f"h{PAIRS - 1}"].operands[:-1] == ("a",) and calls["b"].operands[:-1] == ("a",)
    assert main["r"].operands == (calls[f"h{PAIRS - 1}"].name,) and main["s"].operands[0] == calls["b"].name


def test_sources_of_a_tuple_come_in_its_order_once():
    """%t = tuple(%u, %b), %u = tuple(%b, %c): its sources are %b then %c
    (%u's, first), each once, though %b is also %t's own second element."""
    text = hlo("""
        HloModule order
        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          %c = f32[4]{0} negate(%x)
          %b = f32[4]{0} abs(%x)
          %u = (f32[4]{0}, f32[4]{0}) tuple(%b, %c)
          %t = ((f32[4]{0}, f32[4]{0}), f32[4]{0}) tuple(%u, %b)
          %d = f32[4]{0} exponential(%x)
          ROOT %s = f32[4]{0} add(%d, %x), control-predecessors={%t}
        }
    """)
    out = run(text)
    [call] = out.xla.calls()
    assert call.operands == ("b", "c", "d")


def nested_tuples(depth: int) -> str:
    lines = ["HloModule nested", "", "ENTRY %main (x: f32[4]) -> f32[4] {", "  %x = f32[4]{0} parameter(0)",
             "  %a = f32[4]{0} negate(%x)"]
    pred, shape = "a", "f32[4]{0}"
    for i in range(depth):
        shape = f"({shape})"
        lines.append(f"  %t{i} = {shape} tuple(%{pred})")
        pred = f"t{i}"
    lines += [f"  ROOT %s = f32[4]{{0}} add(%x, %x), control-predecessors={{%{pred}}}", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("bundle", [False, True], ids=["plain", "bundle"])
def test_a_predecessor_with_tuple_shapes_nested_as_deep_as_xla_reads_back(bundle):
    """XLA reads back no proto whose shapes nest 100 deep ("Failed to
    deserialize HloModuleProto"); 90 it does."""
    out = run(nested_tuples(90), bundle=bundle)
    [edge] = out.result.edges
    assert (edge.predecessor, edge.fate, edge.emitted) == ("t89", Fate.REROUTED, (("a", "s"),))
    [call] = out.xla.calls()
    operands = out.xla.computation("main")[call.operands[0]].operands if bundle else call.operands[:1]
    assert operands == ("a",) and call.operands[-1] == "x"


def test_3000_nested_computations_each_with_an_edge():
    parts = ["HloModule calls", ""]
    for i in range(PAIRS - 1, -1, -1):
        inner = f"call(%a{i}), to_apply=%fn{i + 1}" if i + 1 < PAIRS else f"abs(%a{i})"
        parts += [f"%fn{i} (p{i}: f32[4]) -> f32[4] {{", f"  %p{i} = f32[4]{{0}} parameter(0)",
                  f"  %a{i} = f32[4]{{0}} negate(%p{i})",
                  f"  ROOT %n{i} = f32[4]{{0}} {inner}, control-predecessors={{%a{i}}}", "}", ""]
    parts += ["ENTRY %main (x: f32[4]) -> f32[4] {", "  %x = f32[4]{0} parameter(0)", "  %y = f32[4]{0} negate(%x)",
              "  ROOT %r = f32[4]{0} call(%y), to_apply=%fn0, control-predecessors={%y}", "}"]
    out = run("\n".join(parts) + "\n")
    expected = {("main", "y", "r")} | {(f"fn{i}", f"a{i}", f"n{i}") for i in range(PAIRS)}
    assert {(e.computation, e.predecessor, e.successor) for e in out.result.edges} == expected
    assert all(e.fate is Fate.PRESERVED for e in out.result.edges)
    assert set(out.xla.reified_edges(bundle=False)) == expected and not out.xla.control_edges()
