"""Link #1 details that mutation testing found unpinned (issue 13).

Each expectation comes from the input HLO (its control predecessors, its
data edges), checked on link #1's output as XLA reads it back
(`link1_helpers.XlaModule`) and by XLA's real importer (`imported_edges`),
never copied from link #1's own output.
"""

from __future__ import annotations

import pytest

from imported_edges import control_dep_edges, is_control_dep_call, walk
from link1_helpers import hlo, run, tuple_elements
from pipeline.reading.parsed import Parsed
from passes.hlo.preserve_control_deps import Fate
from pipeline.xla import native


def hlo_edges(text: str) -> dict[str, list[str]]:
    """successor -> its control predecessors, as XLA reads the input."""
    found: dict[str, list[str]] = {}
    for _, pred, succ in native.read(text).control_edges():
        found.setdefault(succ, []).append(pred)
    return found


# Two constants in a while's init tuple, each after its own predecessors,
# with %b shared: both edges land on the one op that reads them, %loop.
SHARED_REROUTE = hlo("""
    HloModule shared

    %body (s: (s32[], s32[], f32[4])) -> (s32[], s32[], f32[4]) {
      %s = (s32[], s32[], f32[4]{0}) parameter(0)
      %i = s32[] get-tuple-element(%s), index=0
      %j = s32[] get-tuple-element(%s), index=1
      %v = f32[4]{0} get-tuple-element(%s), index=2
      %w = f32[4]{0} negate(%v)
      ROOT %t = (s32[], s32[], f32[4]{0}) tuple(%i, %j, %w)
    }

    %cond (s.1: (s32[], s32[], f32[4])) -> pred[] {
      %s.1 = (s32[], s32[], f32[4]{0}) parameter(0)
      %i.1 = s32[] get-tuple-element(%s.1), index=0
      %lim = s32[] constant(4)
      ROOT %lt = pred[] compare(%i.1, %lim), direction=LT
    }

    ENTRY %main (x: f32[4]) -> f32[4] {
      %x = f32[4]{0} parameter(0)
      %a = f32[4]{0} negate(%x)
      %b = f32[4]{0} exponential(%x)
      %c = f32[4]{0} abs(%x)
      %k1 = s32[] constant(0), control-predecessors={%a, %b}
      %k2 = s32[] constant(1), control-predecessors={%b, %c}
      %init = (s32[], s32[], f32[4]{0}) tuple(%k1, %k2, %x)
      %loop = (s32[], s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
      ROOT %r = f32[4]{0} get-tuple-element(%loop), index=2
    }
""")


@pytest.mark.parametrize("bundle", [False, True], ids=["plain", "bundle"])
def test_shared_reroute_is_one_call_holding_every_predecessor_once(bundle):
    out = run(SHARED_REROUTE, bundle=bundle)
    expected = {p for preds in hlo_edges(SHARED_REROUTE).values() for p in preds}  # a, b, c
    # The real importer sees each predecessor ordered before %loop, the reader of both constants.
    imported = out.imported()
    assert imported.operation.verify()
    assert control_dep_edges(imported) == {(p, "loop") for p in expected}
    # One call feeds the loop (README: shared reroutes), its data operand last:
    # in link #1's view, and as XLA reads the output back.
    main = out.module.computation("main")
    [call] = [i for i in main.instructions if i.opcode == "custom-call"]
    loop = main.instruction("loop")
    assert loop.operands == [call]
    assert call.operands[-1] is main.instruction("init")
    xla = out.xla.computation("main")
    [xla_call] = out.xla.calls()
    assert xla["loop"].operands == (xla_call.name,) and xla_call.operands[-1] == "init"
    preds = xla_call.operands[:-1]
    if bundle:  # every predecessor through one tuple, as the binary's notes picture it (docs/design.md#bundle-mode)
        [tup] = preds
        assert xla[tup].opcode == "tuple"
        preds = xla[tup].operands
        assert tuple_elements(xla[tup].shape) == [xla[p].shape for p in xla[tup].operands]
    assert sorted(preds) == sorted(expected)  # each once: no duplicate operand
    edges = {(e.predecessor, e.successor): e for e in out.result.edges}
    assert set(edges) == {(p, s) for s, ps in hlo_edges(SHARED_REROUTE).items() for p in ps}
    assert all(e.fate is Fate.REROUTED and e.emitted == ((e.predecessor, "loop"),) for e in edges.values())


def test_bundle_grown_by_a_shared_reroute_has_the_shape_of_its_elements():
    """XLA's importer builds the tuple from its printed shape: a bundle whose
    shape lagged behind its operands would not import as a valid module."""
    out = run(SHARED_REROUTE, bundle=True)
    xla = out.xla.computation("main")
    [call] = out.xla.calls()
    bundle = xla[call.operands[0]]
    # XLA's reading of the bundle: one f32[4] element per predecessor, each
    # the shape of the element it holds.
    assert bundle.opcode == "tuple" and len(bundle.operands) == 3
    assert tuple_elements(bundle.shape) == [xla[p].shape for p in bundle.operands]
    assert all(xla[p].shape == xla["x"].shape for p in bundle.operands)  # f32[4]
    # And XLA's printing of it (layouts its own): three f32[4] elements.
    [line] = [line for line in out.xla.text.splitlines() if f"%{bundle.name} = " in line]
    printed = line.split(" = ", 1)[1].split(" tuple(")[0]
    assert printed.strip("()").replace("{0}", "").split(", ") == ["f32[4]"] * 3


# %cs -> %s: %cs (copy-start) has no value after import and its %cd would
# stand in, but %cd waits for %m, which reads %n, which reads %s: a cycle two
# steps away, which only a transitive search sees.
CYCLE_THROUGH_A_CHAIN = hlo("""
    HloModule cyc

    ENTRY %main (x: f32[4]) -> f32[4] {
      %x = f32[4]{0} parameter(0)
      %cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%x)
      %s = f32[4]{0} negate(%x), control-predecessors={%cs}
      %n = f32[4]{0} abs(%s)
      %m = f32[4]{0} sqrt(%n)
      %cd = f32[4]{0} copy-done(%cs), control-predecessors={%m}
      ROOT %r = f32[4]{0} add(%cd, %m)
    }
""")


def test_a_done_that_waits_for_the_successor_through_a_chain_does_not_stand_in():
    out = run(CYCLE_THROUGH_A_CHAIN)
    edges = {(e.predecessor, e.successor): e for e in out.result.edges}
    dropped = edges[("cs", "s")]
    assert dropped.fate is Fate.DROPPED
    assert dropped.computation == "main" and dropped.emitted == ()
    assert "cycle" in dropped.reason
    s = out.module.computation("main").instruction("s")
    assert [o.name for o in s.operands] == ["x"]  # nothing feeds %s
    assert out.xla.instruction("main", "s").operands == ("x",)
    # The other edge (%m -> %cd, a pinned successor) reaches %cd's reader.
    imported = out.imported()
    assert imported.operation.verify()
    assert control_dep_edges(imported) == {("m", "r")}


def test_every_dropped_edge_names_its_computation_and_emits_nothing():
    text = hlo("""
        HloModule drops

        %body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
          %s = (s32[], f32[4]{0}) parameter(0)
          %i = s32[] get-tuple-element(%s), index=0
          %v = f32[4]{0} get-tuple-element(%s), index=1
          %w = f32[4]{0} negate(%v), control-predecessors={%s}
          ROOT %t = (s32[], f32[4]{0}) tuple(%i, %w)
        }

        %cond (s.1: (s32[], f32[4])) -> pred[] {
          %s.1 = (s32[], f32[4]{0}) parameter(0)
          %i.1 = s32[] get-tuple-element(%s.1), index=0
          %lim = s32[] constant(4)
          ROOT %lt = pred[] compare(%i.1, %lim), direction=LT
        }

        ENTRY %main (x: f32[4]) -> (f32[4], f32[4]) {
          %x = f32[4]{0} parameter(0)
          %a = f32[4]{0} negate(%x)
          %zero = s32[] constant(0)
          %init = (s32[], f32[4]{0}) tuple(%zero, %x)
          %loop = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
          %r = f32[4]{0} get-tuple-element(%loop), index=1
          %k = f32[4]{0} constant({1, 2, 3, 4}), control-predecessors={%a}
          ROOT %out = (f32[4]{0}, f32[4]{0}) tuple(%r, %k)
        }
    """)
    out = run(text)
    by_edge = {(e.predecessor, e.successor): e for e in out.result.edges}
    # %s is the body's parameter (no value after import); %k only reaches the ROOT.
    assert by_edge[("s", "w")].fate is Fate.DROPPED and by_edge[("s", "w")].computation == "body"
    assert by_edge[("a", "k")].fate is Fate.DROPPED and by_edge[("a", "k")].computation == "main"
    for edge in (by_edge[("s", "w")], by_edge[("a", "k")]):
        assert edge.emitted == ()
        assert str(edge).startswith(f"%{edge.computation}: %{edge.predecessor} -> %{edge.successor}: dropped (")
    # Nothing was reified: no call, no edge left, no stamp.
    assert out.xla.calls() == [] and not out.xla.control_edges() and out.xla.frontend_attributes == {}


# XLA's proto lists a computation in its own post order: with the root
# reading %s first, XLA defines %cd after %s (as the text does), and the
# write-back must move it; reading %cd first, XLA defines it before %s.
@pytest.mark.parametrize("root", ["add(%s, %cd)", "add(%cd, %s)"], ids=["cd-after-s", "cd-before-s"])
def test_no_control_dep_call_reads_a_value_defined_after_it(root):
    """The stand-in %cd is defined after %s in the input; the output must
    define it before the call that reads it (XLA would refuse it)."""
    text = hlo("""
        HloModule order

        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          %cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%x)
          %e = f32[4]{0} exponential(%x)
          %s = f32[4]{0} negate(%e), control-predecessors={%cs}
          %l = f32[4]{0} log(%x)
          %cd = f32[4]{0} copy-done(%cs)
          ROOT %r = f32[4]{0} ROOT_OPERATION
        }
    """.replace("ROOT_OPERATION", root))
    read = [i.name for i in native.read(text).proto.computations[0].instructions]  # XLA's order
    out = run(text)
    [edge] = out.result.edges
    assert edge.fate is Fate.REROUTED and edge.emitted == (("cd", "s"),)
    # The output proto, which XLA read back (it requires operands first):
    # only %cd moves (before %s's call); everything else keeps the order XLA read.
    order = out.written_order("main")
    assert order.index("cd") < order.index("s.control-dep") == order.index("s") - 1
    assert [n for n in order if n not in ("cd", "s.control-dep")] == [n for n in read if n != "cd"]
    assert out.xla.instruction("main", "s.control-dep").operands == ("cd", "e")
    imported = out.imported()
    assert control_dep_edges(imported) == {("cd", "s")}
    assert any(is_control_dep_call(op) for op in walk(imported.operation))
