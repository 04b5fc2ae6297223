"""Link #1: every control edge becomes a custom-call operand, or is reported.

Link #1 runs as the chain runs it (`link1_helpers.run`: XLA's parse, link
#1's view, the write-back into XLA's proto); XLA reads every output back and
prints it, and what a test asserts of the output it reads there (XLA's
names, XLA's proto of the output) or in XLA's importer, besides the view.
"""

from __future__ import annotations

import collections

import pytest

from imported_edges import control_dep_edges
from link1_helpers import XlaModule, hlo, run, tuple_elements
from passes.control_dep import CONTROL_DEP_TARGET, HAS_CONTROL_DEPS
from passes.hlo import proto as hlo_proto
from pipeline.reading.parsed import Parsed
from passes.hlo.preserve_control_deps import Fate, PreserveControlDeps
from passes.hlo.view import view_of
from pipeline.xla import native


def fates(result) -> dict[tuple[str, str], Fate]:
    return {(e.predecessor, e.successor): e.fate for e in result.edges}


TWO_PREDS = hlo("""
    HloModule two_preds, frontend_attributes={origin="test"}

    ENTRY %main (x: f32[4]) -> f32[4] {
      %x = f32[4]{0} parameter(0)
      %a = f32[4]{0} negate(%x)
      %b = f32[4]{0} exponential(%x)
      %c = f32[4]{0} abs(%x)
      ROOT %s = f32[4]{0} add(%c, %x), control-predecessors={%b, %a}
    }
""")


def test_one_custom_call_per_successor_with_predecessors_in_order_then_data():
    out = run(TWO_PREDS)
    main = out.module.computation("main")
    s = main.instruction("s")
    cc = s.operands[0]
    assert cc.opcode == "custom-call" and cc.target == CONTROL_DEP_TARGET
    assert [o.name for o in cc.operands] == ["b", "a", "c"]  # S's order, data last
    assert cc.shape == main.instruction("c").shape
    assert s.operands[1].name == "x"  # only operand 0 is rewired
    assert s.control_predecessors == []
    assert out.result.changed
    assert fates(out.result) == {("b", "s"): Fate.PRESERVED, ("a", "s"): Fate.PRESERVED}
    # As XLA reads the output back: one side-effecting AwsNeuronControlDep call
    # of the original API, shaped as its data operand, in %s's operand 0.
    xla = out.xla.computation("main")
    [call] = out.xla.calls()
    assert xla["s"].operands == (call.name, "x") and xla["s"].control_predecessors == ()
    assert call.operands == ("b", "a", "c")
    assert call.has_side_effect and call.api_version == hlo_proto.API_VERSION_ORIGINAL
    assert call.shape == xla["c"].shape
    assert f'custom_call_target="{CONTROL_DEP_TARGET}", custom_call_has_side_effect=true' in out.xla.text


def test_module_frontend_attribute_is_merged_not_replaced():
    out = run(TWO_PREDS)
    expected = {"origin": "test", HAS_CONTROL_DEPS: "1"}  # the binary's value
    assert dict(out.parsed.proto.frontend_attributes.map) == expected
    assert out.xla.frontend_attributes == expected
    assert 'has_control_deps = "1"' in str(out.imported())


def run_in_place(parsed: Parsed):
    """Link #1 on `parsed`: its view, its report, and whether the proto stayed byte for byte as it was."""
    before = parsed.serialized()
    module = view_of(parsed)
    result = PreserveControlDeps().run(module)
    return module, result, parsed.serialized() == before


def test_running_twice_changes_nothing():
    first = run(TWO_PREDS)
    assert first.result.changed
    # On link #1's output as XLA prints it, and on its proto as it is.
    for again in (native.read(first.xla.text), Parsed.from_serialized(first.parsed.serialized())):
        _, second, unchanged = run_in_place(again)
        assert not second.changed and second.edges == [] and unchanged


def test_module_without_edges_is_left_alone():
    text = hlo("""
        HloModule plain
        ENTRY %main (x: f32[]) -> f32[] {
          %x = f32[] parameter(0)
          ROOT %n = f32[] negate(%x)
        }
    """)
    parsed = native.read(text)
    module, result, unchanged = run_in_place(parsed)
    assert not result.changed and result.edges == [] and module.computations == []
    assert unchanged  # XLA's parse, as it was
    assert XlaModule(parsed.serialized()).frontend_attributes == {}


def test_the_module_is_stamped_only_when_an_edge_was_reified():
    """The decompiled pass writes has_control_deps only if it made a call: an
    edge from a parameter (skipped) or onto an unread constant (nothing to
    carry it) reifies nothing, though the control predecessors are gone."""
    text = hlo("""
        HloModule nothing_reified
        ENTRY %main (x: f32[]) -> f32[] {
          %x = f32[] parameter(0)
          %a = f32[] negate(%x), control-predecessors={%x}
          %c = f32[] constant(1), control-predecessors={%a}
          ROOT %n = f32[] negate(%a)
        }
    """)
    out = run(text)
    assert out.result.changed and not out.xla.control_edges() and "control-predecessors" not in out.xla.text
    assert [e.fate for e in out.result.edges] == [Fate.DROPPED, Fate.DROPPED]
    assert HAS_CONTROL_DEPS not in out.parsed.proto.frontend_attributes.map
    assert out.xla.frontend_attributes == {} and out.xla.calls() == []
    assert "has_control_deps" not in str(out.imported())


def test_imported_module_shows_each_edge_as_an_operand_feeding_its_successor():
    module = run(TWO_PREDS).imported()
    assert module.operation.verify()
    assert control_dep_edges(module) == {("b", "s"), ("a", "s")}


EVERY_KIND_OF_COMPUTATION = hlo("""
    HloModule everywhere

    %fused (p: f32[4], q: f32[4]) -> f32[4] {
      %p = f32[4]{0} parameter(0)
      %q = f32[4]{0} parameter(1)
      %fa = f32[4]{0} negate(%p)
      ROOT %fb = f32[4]{0} add(%q, %p), control-predecessors={%fa}
    }

    %callee (c: f32[4]) -> f32[4] {
      %c = f32[4]{0} parameter(0)
      %ca = f32[4]{0} negate(%c)
      ROOT %cb = f32[4]{0} abs(%c), control-predecessors={%ca}
    }

    %body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
      %s = (s32[], f32[4]{0}) parameter(0)
      %i = s32[] get-tuple-element(%s), index=0
      %v = f32[4]{0} get-tuple-element(%s), index=1
      %copy.v = f32[4]{0} copy(%v)
      %w = f32[4]{0} negate(%v), control-predecessors={%copy.v}
      ROOT %t = (s32[], f32[4]{0}) tuple(%i, %w)
    }

    %cond (s.1: (s32[], f32[4])) -> pred[] {
      %s.1 = (s32[], f32[4]{0}) parameter(0)
      %i.1 = s32[] get-tuple-element(%s.1), index=0
      %k = s32[] constant(4)
      ROOT %lt = pred[] compare(%i.1, %k), direction=LT, control-predecessors={%k}
    }

    %then (a.1: f32[4]) -> f32[4] {
      %a.1 = f32[4]{0} parameter(0)
      %t1 = f32[4]{0} negate(%a.1)
      ROOT %t2 = f32[4]{0} abs(%a.1), control-predecessors={%t1}
    }

    %else (a.2: f32[4]) -> f32[4] {
      %a.2 = f32[4]{0} parameter(0)
      ROOT %e1 = f32[4]{0} negate(%a.2)
    }

    ENTRY %main (x: f32[4], flag: pred[]) -> f32[4] {
      %x = f32[4]{0} parameter(0)
      %flag = pred[] parameter(1)
      %zero = s32[] constant(0)
      %init = (s32[], f32[4]{0}) tuple(%zero, %x)
      %loop = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
      %r = f32[4]{0} get-tuple-element(%loop), index=1
      %f = f32[4]{0} fusion(%r, %x), kind=kLoop, calls=%fused
      %called = f32[4]{0} call(%f), to_apply=%callee
      ROOT %branch = f32[4]{0} conditional(%flag, %called, %x), true_computation=%then, false_computation=%else
    }
""")


def test_edges_are_reified_in_every_kind_of_computation():
    out = run(EVERY_KIND_OF_COMPUTATION)
    by_computation = {e.computation for e in out.result.edges}
    assert by_computation == {"fused", "callee", "body", "cond", "then"}
    assert out.parsed.control_edges() == [] and not out.xla.control_edges()
    assert {c.computation for c in out.xla.calls()} == by_computation  # a call in each
    # A predecessor that is also an operand of its successor still gets its
    # own custom-call: the edge must be visible as an edge, not as data.
    lt = out.module.computation("cond").instruction("lt")
    assert [o.name for o in lt.operands[0].operands] == ["k", "i.1"]
    cond = out.xla.computation("cond")
    assert cond["lt"].operands[1] == "k" and cond[cond["lt"].operands[0]].operands == ("k", "i.1")
    assert out.imported().operation.verify()


@pytest.mark.parametrize("bundle", [False, True])
def test_every_kind_of_computation_survives_import(bundle):
    out = run(EVERY_KIND_OF_COMPUTATION, bundle=bundle)
    imported = control_dep_edges(out.imported())
    for edge in out.result.edges:
        assert set(edge.emitted) <= imported, edge


ZERO_OPERAND_SUCCESSORS = hlo("""
    HloModule zero_operands

    ENTRY %main (x: f32[4]) -> (f32[4], f32[4], s32[4], token[]) {
      %x = f32[4]{0} parameter(0)
      %a = f32[4]{0} negate(%x)
      %k = f32[] constant(2), control-predecessors={%a}
      %kb = f32[4]{0} broadcast(%k), dimensions={}
      %m1 = f32[4]{0} multiply(%x, %kb)
      %k2 = f32[4]{0} constant({1, 2, 3, 4}), control-predecessors={%a}
      %m2 = f32[4]{0} add(%k2, %k2)
      %io = s32[4]{0} iota(), iota_dimension=0, control-predecessors={%a}
      %tok = token[] after-all(), control-predecessors={%a}
      %unused = f32[] constant(1), control-predecessors={%a}
      ROOT %out = (f32[4]{0}, f32[4]{0}, s32[4]{0}, token[]) tuple(%m1, %m2, %io, %tok)
    }
""")


def test_successor_without_operands_reroutes_to_each_user_or_drops_with_a_reason():
    out = run(ZERO_OPERAND_SUCCESSORS)
    by_succ = {e.successor: e for e in out.result.edges}
    assert by_succ["k"].fate is Fate.REROUTED
    assert set(by_succ["k"].emitted) == {("a", "kb")}
    # %io and %tok are read only by the ROOT tuple, which is no op after
    # import: the edge would land on the computation's end, which it precedes anyway.
    for implied in ("io", "tok"):
        assert by_succ[implied].fate is Fate.DROPPED
        assert by_succ[implied].reason.startswith("implied")
    assert by_succ["unused"].fate is Fate.DROPPED
    assert "no user" in by_succ["unused"].reason
    assert ("a", "kb") in control_dep_edges(out.imported())


def test_one_successor_feeding_one_user_twice_is_wrapped_once():
    out = run(ZERO_OPERAND_SUCCESSORS)
    m2 = out.module.computation("main").instruction("m2")
    assert m2.operands[0] is m2.operands[1]  # one custom-call, read twice
    assert [o.name for o in m2.operands[0].operands] == ["a", "k2"]
    xla = out.xla.computation("main")
    [call] = [c for c in out.xla.calls() if c.operands[-1] == "k2"]
    assert xla["m2"].operands == (call.name, call.name) and call.operands == ("a", "k2")


ASYNC = hlo("""
    HloModule async_edges

    %async_comp (y: f32[4]) -> f32[4] {
      %y = f32[4]{0} parameter(0)
      ROOT %ny = f32[4]{0} negate(%y)
    }

    ENTRY %main (x: f32[4]) -> (f32[4], f32[4], f32[4], f32[4]) {
      %x = f32[4]{0} parameter(0)
      %a = f32[4]{0} add(%x, %x)
      %start = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(%a), calls=%async_comp
      %done = f32[4]{0} async-done(%start)
      %after = f32[4]{0} abs(%x), control-predecessors={%start}
      %cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%a)
      %cd = f32[4]{0} copy-done(%cs), control-predecessors={%a}
      %use = f32[4]{0} negate(%cd)
      ROOT %out = (f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(%done, %after, %use, %a)
    }
""")


def test_async_start_predecessor_is_replaced_by_its_done():
    out = run(ASYNC)
    edge = fates(out.result)
    assert edge[("start", "after")] is Fate.REROUTED
    by_succ = {e.successor: e for e in out.result.edges}
    assert by_succ["after"].emitted == (("done", "after"),)
    assert "stands in" in by_succ["after"].reason
    xla = out.xla.computation("main")
    assert xla[xla["after"].operands[0]].operands == ("done", "x")
    assert ("done", "after") in control_dep_edges(out.imported())


def test_done_successor_is_pinned_so_its_users_carry_the_edge():
    out = run(ASYNC)
    by_succ = {e.successor: e for e in out.result.edges}
    assert by_succ["cd"].fate is Fate.REROUTED
    assert by_succ["cd"].emitted == (("a", "use"),)
    assert out.module.computation("main").instruction("cd").operands[0].opcode == "copy-start"
    xla = out.xla.computation("main")
    assert xla["cd"].operands == ("cs",)
    assert xla[xla["use"].operands[0]].operands == ("a", "cd")
    assert ("a", "use") in control_dep_edges(out.imported())


def test_stand_in_done_defined_later_is_moved_before_its_reader():
    text = hlo("""
        HloModule later_done, is_scheduled=true

        %async_comp (y: f32[4]) -> f32[4] {
          %y = f32[4]{0} parameter(0)
          ROOT %ny = f32[4]{0} negate(%y)
        }

        ENTRY %main (x: f32[4]) -> (f32[4], f32[4]) {
          %x = f32[4]{0} parameter(0)
          %start = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(%x), calls=%async_comp
          %b = f32[4]{0} abs(%x), control-predecessors={%start}
          %done = f32[4]{0} async-done(%start)
          ROOT %out = (f32[4]{0}, f32[4]{0}) tuple(%done, %b)
        }
    """)
    out = run(text)
    # XLA reads the output back with its schedule (which XLA verifies):
    # the proto's order and the schedule both define %done first.
    for names in (out.written_order("main"), out.scheduled_order("main"), out.xla.order("main")):
        assert names.index("done") < names.index("b.control-dep") < names.index("b")
    assert out.xla.instruction("main", "b.control-dep").operands == ("done", "x")
    assert out.result.edges[0].emitted == (("done", "b"),)


def test_stand_in_that_would_make_a_cycle_is_dropped_with_a_reason():
    text = hlo("""
        HloModule cycle

        %async_comp (y: f32[4]) -> f32[4] {
          %y = f32[4]{0} parameter(0)
          ROOT %ny = f32[4]{0} negate(%y)
        }

        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          %start = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(%x), calls=%async_comp
          %b = f32[4]{0} abs(%x), control-predecessors={%start}
          %done = f32[4]{0} async-done(%start), control-predecessors={%b}
          ROOT %out = f32[4]{0} add(%done, %b)
        }
    """)
    out = run(text)
    edge = {(e.predecessor, e.successor): e for e in out.result.edges}[("start", "b")]
    assert edge.fate is Fate.DROPPED and "cycle" in edge.reason
    assert out.xla.instruction("main", "b").operands == ("x",)
    assert out.imported().operation.verify()


SEND_RECV = hlo("""
    HloModule send_recv

    ENTRY %main (x: f32[4]) -> (f32[4], f32[4]) {
      %x = f32[4]{0} parameter(0)
      %tok = token[] after-all()
      %snd = (f32[4]{0}, u32[], token[]) send(%x, %tok), channel_id=1, is_host_transfer=true
      %sd = token[] send-done(%snd), channel_id=1, is_host_transfer=true
      %rcv = (f32[4]{0}, u32[], token[]) recv(%sd), channel_id=2, is_host_transfer=true
      %rd = (f32[4]{0}, token[]) recv-done(%rcv), channel_id=2, is_host_transfer=true
      %got = f32[4]{0} get-tuple-element(%rd), index=0
      %n = f32[4]{0} negate(%x), control-predecessors={%snd, %rcv}
      ROOT %out = (f32[4]{0}, f32[4]{0}) tuple(%got, %n)
    }
""")


@pytest.mark.parametrize("bundle", [False, True])
def test_send_and_recv_predecessors_never_reach_the_importer(bundle):
    # Emitting %snd or %rcv as an operand makes XLA's importer abort the
    # process; reaching this line at all is half the test.
    out = run(SEND_RECV, bundle=bundle)
    cc = out.module.computation("main").instruction("n").operands[0]
    operand_ops = {o.opcode for o in cc.operands} | {
        o.opcode for t in cc.operands if t.opcode == "tuple" for o in t.operands}
    assert not operand_ops & {"send", "recv"}
    xla = out.xla.computation("main")
    call = xla[xla["n"].operands[0]]
    assert call.is_control_dep and call.operands[-1] == "x"
    read = [xla[o] for o in call.operands[:-1]]
    read += [xla[o] for t in read if t.opcode == "tuple" for o in t.operands]
    assert not {o.opcode for o in read} & {"send", "recv"}
    assert {e.emitted for e in out.result.edges} == {(("sd", "n"),), (("rd", "n"),)}
    # The importer folds each send/send-done (recv/recv-done) pair into one
    # op that keeps the start's name: the edges come back as written.
    assert control_dep_edges(out.imported()) == {("snd", "n"), ("rcv", "n")}


def test_bundle_sends_predecessors_through_one_tuple_that_import_keeps():
    out = run(TWO_PREDS, bundle=True)
    cc = out.module.computation("main").instruction("s").operands[0]
    assert [o.opcode for o in cc.operands] == ["tuple", "abs"]
    assert [o.name for o in cc.operands[0].operands] == ["b", "a"]
    xla = out.xla.computation("main")
    call = xla[xla["s"].operands[0]]
    bundle = xla[call.operands[0]]
    assert call.is_control_dep and call.operands[1:] == ("c",)
    assert bundle.opcode == "tuple" and bundle.operands == ("b", "a")
    assert tuple_elements(bundle.shape) == [xla["b"].shape, xla["a"].shape]
    imported = out.imported()
    assert "stablehlo.tuple" in str(imported)
    assert control_dep_edges(imported) == {("b", "s"), ("a", "s")}


def test_tuple_shaped_predecessor_arrives_as_a_tuple_op_after_import():
    text = hlo("""
        HloModule while_pred

        %body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
          ROOT %s = (s32[], f32[4]{0}) parameter(0)
        }

        %cond (s.1: (s32[], f32[4])) -> pred[] {
          %s.1 = (s32[], f32[4]{0}) parameter(0)
          ROOT %f = pred[] constant(false)
        }

        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          %zero = s32[] constant(0)
          %init = (s32[], f32[4]{0}) tuple(%zero, %x)
          %loop = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
          ROOT %n = f32[4]{0} negate(%x), control-predecessors={%loop}
        }
    """)
    out = run(text)
    assert fates(out.result) == {("loop", "n"): Fate.PRESERVED}
    imported = out.imported()
    call = [line for line in str(imported).splitlines() if CONTROL_DEP_TARGET in line][0]
    assert "tuple<" in call  # the import artifact link #3 exists to undo
    assert control_dep_edges(imported) == {("loop", "n")}


COLLECTIVES = hlo("""
    HloModule collectives

    %sum (s.x: f32[], s.y: f32[]) -> f32[] {
      %s.x = f32[] parameter(0)
      %s.y = f32[] parameter(1)
      ROOT %s.add = f32[] add(%s.x, %s.y)
    }

    ENTRY %main (x: f32[4]) -> (f32[4], f32[4], f32[4]) {
      %x = f32[4]{0} parameter(0)
      %ars = f32[4]{0} all-reduce-start(%x), replica_groups={}, to_apply=%sum
      %ard = f32[4]{0} all-reduce-done(%ars)
      %cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%x)
      %cd = f32[4]{0} copy-done(%cs)
      %n = f32[4]{0} negate(%x), control-predecessors={%ars, %cs}
      ROOT %out = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(%ard, %cd, %n)
    }
""")


def test_collective_start_is_a_value_after_import_but_copy_start_is_not():
    # all-reduce-start imports as !stablehlo.future, a legal operand: kept as is.
    # copy-start imports as !mhlo.async_bundle, which the verifier refuses.
    out = run(COLLECTIVES)
    by_pred = {e.predecessor: e for e in out.result.edges}
    assert by_pred["ars"].fate is Fate.PRESERVED
    assert by_pred["cs"].fate is Fate.REROUTED and by_pred["cs"].emitted == (("cd", "n"),)
    xla = out.xla.computation("main")
    assert xla[xla["n"].operands[0]].operands == ("ars", "cd", "x")
    imported = out.imported()
    assert imported.operation.verify()
    assert ("cd", "n") in control_dep_edges(imported)


STRUCTURAL = hlo("""
    HloModule structural

    %body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
      ROOT %s = (s32[], f32[4]{0}) parameter(0)
    }

    %cond (s.1: (s32[], f32[4])) -> pred[] {
      %s.1 = (s32[], f32[4]{0}) parameter(0)
      ROOT %f = pred[] constant(false)
    }

    ENTRY %main (x: f32[4]) -> (f32[4], f32[4]) {
      %x = f32[4]{0} parameter(0)
      %zero = s32[] constant(0)
      %a = f32[4]{0} abs(%x)
      %init = (s32[], f32[4]{0}) tuple(%zero, %x), control-predecessors={%a}
      %loop = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
      %r = f32[4]{0} get-tuple-element(%loop), index=1
      %e = f32[4]{0} exponential(%x), control-predecessors={%r, %init}
      %g = f32[4]{0} get-tuple-element(%loop), index=1, control-predecessors={%a}
      %n = f32[4]{0} negate(%g)
      ROOT %out = (f32[4]{0}, f32[4]{0}) tuple(%n, %e)
    }
""")


def test_tuple_and_get_tuple_element_are_seen_through_on_both_ends():
    # The importer folds tuples and get-tuple-elements into the values they
    # (un)pack, so an edge must start at the op behind them and land on an op
    # that reads them, or it would name something the MLIR does not have.
    out = run(STRUCTURAL)
    by_edge = {(e.predecessor, e.successor): e for e in out.result.edges}
    assert by_edge[("r", "e")].emitted == (("loop", "e"),)
    # %x, a parameter, is ready before everything: as the binary, no edge from it
    assert set(by_edge[("init", "e")].emitted) == {("zero", "e")}
    assert by_edge[("a", "init")].emitted == (("a", "loop"),)
    assert by_edge[("a", "g")].emitted == (("a", "n"),)
    assert all(e.fate is Fate.REROUTED for e in out.result.edges)
    emitted = {edge for e in out.result.edges for edge in e.emitted}
    assert collections.Counter(("main", p, s) for p, s in emitted) == out.xla.reified_edges(bundle=False)
    assert emitted <= control_dep_edges(out.imported())
