"""Link #1 details that mutation testing found unpinned (issue 13).

Each expectation comes from the input HLO (its control predecessors, its
data edges), checked on link #1's output by XLA's parser and by XLA's real
importer (`imported_edges`), never copied from link #1's own output.
"""

from __future__ import annotations

import textwrap

import pytest

from imported_edges import control_dep_edges, is_control_dep_call, walk
from passes.hlo import read_module, write_module
from passes.hlo.preserve_control_deps import Fate, PreserveControlDeps
from pipeline.importer import import_hlo
from pipeline.xla import parse_with_xla


def hlo(text: str) -> str:
    text = textwrap.dedent(text).strip() + "\n"
    parse_with_xla(text)
    return text


def run(text: str, bundle: bool = False):
    module = read_module(text)
    result = PreserveControlDeps(bundle=bundle).run(module)
    out = write_module(module)
    parse_with_xla(out)  # XLA's parser accepts the output (shapes, no cycle)
    return module, result, out


def hlo_edges(text: str) -> dict[str, list[str]]:
    """successor -> its control predecessors, as the input writes them."""
    found = {}
    for comp in read_module(text).computations:
        for instr in comp.instructions:
            if instr.control_predecessors:
                found[instr.name] = [p.name for p in instr.control_predecessors]
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


def _calls(module):
    return [i for i in module.entry.instructions
            if i.opcode == "custom-call" and "AwsNeuronControlDep" in (i.attribute("custom_call_target") or "")]


@pytest.mark.parametrize("bundle", [False, True], ids=["plain", "bundle"])
def test_shared_reroute_is_one_call_holding_every_predecessor_once(bundle):
    module, result, out = run(SHARED_REROUTE, bundle=bundle)
    expected = {p for preds in hlo_edges(SHARED_REROUTE).values() for p in preds}  # a, b, c
    # The real importer sees each predecessor ordered before %loop, the reader of both constants.
    imported = import_hlo(out)
    assert imported.operation.verify()
    assert control_dep_edges(imported) == {(p, "loop") for p in expected}
    # One call feeds the loop (README: shared reroutes), its data operand last.
    [call] = _calls(module)
    loop = module.entry.instruction("loop")
    assert loop.operands == [call]
    assert call.operands[-1] is module.entry.instruction("init")
    preds = call.operands[:-1]
    if bundle:  # every predecessor through one tuple, as the spec pictures it
        [tup] = preds
        assert tup.opcode == "tuple"
        preds = tup.operands
        assert len(tup.shape.elements if hasattr(tup.shape, "elements") else tup.operands) == len(expected)
    names = [p.name for p in preds]
    assert sorted(names) == sorted(expected)  # each once: no duplicate operand
    edges = {(e.predecessor, e.successor): e for e in result.edges}
    assert set(edges) == {(p, s) for s, ps in hlo_edges(SHARED_REROUTE).items() for p in ps}
    assert all(e.fate is Fate.REROUTED and e.emitted == ((e.predecessor, "loop"),) for e in edges.values())


def test_bundle_grown_by_a_shared_reroute_has_the_shape_of_its_elements():
    """XLA's importer builds the tuple from its printed shape: a bundle whose
    shape lagged behind its operands would not import as a valid module."""
    module, _, out = run(SHARED_REROUTE, bundle=True)
    [call] = _calls(module)
    bundle = call.operands[0]
    xla = parse_with_xla(out)
    [printed] = [i.to_string() for c in xla.computations() for i in c.instructions()
                 if i.name == bundle.name]
    # XLA's own printing of the bundle: one f32[4] element per predecessor.
    assert printed.split(" = ")[1].startswith("(" + ", ".join(["f32[4]{0}"] * 3) + ") tuple(")


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
    module, result, out = run(CYCLE_THROUGH_A_CHAIN)
    edges = {(e.predecessor, e.successor): e for e in result.edges}
    dropped = edges[("cs", "s")]
    assert dropped.fate is Fate.DROPPED
    assert dropped.computation == "main" and dropped.emitted == ()
    assert "cycle" in dropped.reason
    s = module.entry.instruction("s")
    assert [o.name for o in s.operands] == ["x"]  # nothing feeds %s
    # The other edge (%m -> %cd, a pinned successor) reaches %cd's reader.
    imported = import_hlo(out)
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
    _, result, _ = run(text)
    by_edge = {(e.predecessor, e.successor): e for e in result.edges}
    # %s is the body's parameter (no value after import); %k only reaches the ROOT.
    assert by_edge[("s", "w")].fate is Fate.DROPPED and by_edge[("s", "w")].computation == "body"
    assert by_edge[("a", "k")].fate is Fate.DROPPED and by_edge[("a", "k")].computation == "main"
    for edge in (by_edge[("s", "w")], by_edge[("a", "k")]):
        assert edge.emitted == ()
        assert str(edge).startswith(f"%{edge.computation}: %{edge.predecessor} -> %{edge.successor}: dropped (")


def test_no_control_dep_call_reads_a_value_defined_after_it():
    """The stand-in %cd is defined after %s in the input; the output must
    define it before the call that reads it (XLA's parser would refuse)."""
    text = hlo("""
        HloModule order

        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          %cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%x)
          %e = f32[4]{0} exponential(%x)
          %s = f32[4]{0} negate(%e), control-predecessors={%cs}
          %l = f32[4]{0} log(%x)
          %cd = f32[4]{0} copy-done(%cs)
          ROOT %r = f32[4]{0} add(%cd, %s)
        }
    """)
    module, result, out = run(text)
    [edge] = result.edges
    assert edge.fate is Fate.REROUTED and edge.emitted == (("cd", "s"),)
    order = [i.name for i in module.entry.instructions]
    originals = [n for n in order if n in {"x", "cs", "e", "s", "l", "cd", "r"}]
    # Only %cd moves (before %s's call); everything else keeps the input's order.
    assert originals == ["x", "cs", "e", "cd", "s", "l", "r"]
    assert control_dep_edges(import_hlo(out)) == {("cd", "s")}
    assert any(is_control_dep_call(op) for op in walk(import_hlo(out).operation))
