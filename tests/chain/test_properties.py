"""Property-based tests: random acyclic HLO modules (tests/hlo_strategies.py)
through every link, both dialects, bundle on and off.

Properties:
- the generator writes modules XLA's parser accepts, with the control edges
  it drew (as the chain reads them: XLA's parse, the names as written);
- the invariant: `pipeline.run(...).report.lost == []`, one report entry per
  HLO control edge;
- link by link: XLA reads link #1's output back, its printing parses again
  and has no control predecessor left (a second link #1 changes nothing, and
  XLA prints its output the same); the imported module
  verifies, and so does the module after every run of link #3; link #3 is
  idempotent once the chain's repeated runs are done (`changed` False and
  the same module text); the printer is deterministic (twice on one module,
  and across two independent `pipeline.run`s).

Profiles (selected by HLO2PENGUIN_HYPOTHESIS_PROFILE; registered here, not
in a conftest): "ci" (default: 290 examples in all, 35-60 s on 2 cores;
the target phase steers the invariant towards modules with many edges;
derandomized and without the example database, so every machine draws the
same examples and a failure on one reproduces on another) and "long"
(10,000 examples of the invariant, 5,000 parses, 2,000 link by link;
random, with the database; no target phase: breadth). Measured: the parses and the links
take 15 minutes together; the invariant runs 160-200 examples a minute,
so its 10,000 take about an hour (run it apart: `-k invariant`).
HLO2PENGUIN_HYPOTHESIS_LAST=path writes each module there before the chain
runs: the importer runs in-process here (isolate=False, for speed), so if
XLA ever aborts the process that file holds the culprit.
"""

from __future__ import annotations

import collections
import os

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings, target
from hypothesis import strategies as st

import pipeline
from hlo_strategies import hlo_modules
from pipeline.reading.parsed import Parsed
from passes.hlo.preserve_control_deps import PreserveControlDeps
from passes.hlo.view import view_of
from passes.mlir import DIALECTS as DIALECT_OPS
from passes.mlir import FlattenControlDepTupleOperands
from pipeline.chain.result import build_graph
from pipeline.xla.importer import import_hlo
from pipeline.xla.isolated import parse, print_module
from printer import print_penguin
from pipeline.xla import native

# No "explain" phase: on a failure it reruns the chain hundreds of times.
_COMMON = dict(deadline=None, print_blob=True, phases=[p for p in Phase if p is not Phase.explain],
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.large_base_example])
settings.register_profile("ci", max_examples=100, derandomize=True, database=None, **_COMMON)
# "long" is breadth: no target phase (hill-climbing towards more edges makes
# each example about 4x slower), so that 10,000 distinct modules fit.
settings.register_profile("long", max_examples=10_000,
                          **{**_COMMON, "phases": [p for p in _COMMON["phases"] if p is not Phase.target]})
PROFILE = os.environ.get("HLO2PENGUIN_HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "long"):
    raise ValueError(f"HLO2PENGUIN_HYPOTHESIS_PROFILE={PROFILE!r}: choose 'ci' or 'long'")
EXAMPLES = {
    "ci": {"parse": 150, "invariant": 100, "links": 40},
    "long": {"parse": 5_000, "invariant": 10_000, "links": 2_000},
}[PROFILE]
CONFIGS = [(d, b) for d in ("stablehlo", "mhlo") for b in (False, True)]
_LAST = os.environ.get("HLO2PENGUIN_HYPOTHESIS_LAST")


def profile(test: str):
    return settings(settings.get_profile(PROFILE), max_examples=EXAMPLES[test])


_SEEN: dict[str, int] = {}


def remember(text: str, test: str) -> None:
    """With HLO2PENGUIN_HYPOTHESIS_LAST set: the module about to run, and in
    `<path>.count` how many examples each test has started (a long run cut
    short by a timeout still tells its count)."""
    if _LAST:
        _SEEN[test] = _SEEN.get(test, 0) + 1
        with open(_LAST, "w") as f:
            f.write(text)
        with open(_LAST + ".count", "w") as f:
            f.write("".join(f"{k} {v}\n" for k, v in sorted(_SEEN.items())))


def describe(case) -> None:
    """Statistics for --hypothesis-show-statistics."""
    for op in ("while", "conditional", "call", "after-all", "iota", "tuple"):
        if op in case.opcodes:
            event(f"has {op}")
    event(f"control edges: {min(len(case.edges), 10)}{'+' if len(case.edges) >= 10 else ''}")


def link_1(text: str, bundle: bool, source: str | None = None) -> Parsed:
    """XLA's parse of `text` with link #1's edits made in its proto."""
    parsed = parse(text, source)
    module = view_of(parsed)
    PreserveControlDeps(bundle=bundle).run(module)
    return parsed


@profile("parse")
@given(hlo_modules())
def test_generated_modules_parse_in_xla_with_the_edges_drawn(case):
    describe(case)
    remember(case.text, "parse")
    parsed = parse(case.text, "generated")  # the generator writes modules XLA accepts
    # Each edge once (Parsed lists them in XLA's order of the proto, not always the text's).
    assert collections.Counter(parsed.control_edges()) == collections.Counter(case.edges)


@profile("invariant")
@given(st.one_of(hlo_modules(), hlo_modules(many_edges=True, edge_chance=60)))
def test_invariant_holds_for_every_dialect_and_bundle_mode(case):
    describe(case)
    target(float(len(case.edges)), label="control edges")
    remember(case.text, "invariant")
    for dialect, bundle in CONFIGS:
        result = pipeline.run(case.text, dialect=dialect, bundle=bundle, scope="all", isolate=False)
        report = result.report
        where = f"{dialect}, bundle={bundle}"
        assert report.lost == [], (where, [str(e) for e in report.lost])
        assert len(report.edges) == len(case.edges), where
        assert {(e.computation, e.predecessor, e.successor) for e in report.edges} == set(case.edges), where
        for edge in report.edges:
            assert edge.fate in ("preserved", "rerouted", "dropped"), (where, str(edge))
            assert edge.fate == "preserved" or edge.reason, (where, str(edge))  # never silently
        if report.count("dropped"):
            event("some edge dropped (reported)")


def _blocks(printed: str) -> list[str]:
    """XLA's printing of a module as its header and computations, sorted:
    XLA prints computations in a post order that follows instruction order,
    which a proto and XLA's reparse of its printing may hold differently."""
    return sorted(printed.split("\n\n"))


@profile("links")
@given(hlo_modules(), st.sampled_from(CONFIGS))
def test_each_link_verifies_link3_is_idempotent_and_the_printer_deterministic(case, rerun):
    describe(case)
    remember(case.text, "links")
    for dialect, bundle in CONFIGS:
        where = f"{dialect}, bundle={bundle}"
        # Link #1: XLA reads what it writes, and it leaves nothing to do.
        module = link_1(case.text, bundle)
        name = module.proto.name
        hlo = print_module(module.serialized(), f"after link #1 ({where})")
        again = parse(hlo, f"XLA's printing after link #1 ({where})")
        assert again.control_edges() == [], where
        view = view_of(again)
        assert not PreserveControlDeps(bundle=bundle).run(view).changed, where
        assert _blocks(print_module(again.serialized())) == _blocks(hlo), where
        # Link #2: the imported module verifies.
        mlir = import_hlo(module, dialect, isolate=False, source_name=name)
        assert mlir.operation.verify(), where
        # Link #3, as the chain runs it (repeated until nothing changes): the
        # module verifies after every run; one more run is a no-op.
        flatten = FlattenControlDepTupleOperands(DIALECT_OPS[dialect], "all")
        runs = 0
        while flatten.run(mlir).changed:
            runs += 1
            assert runs <= 8, (where, "link #3 keeps changing the module")
            assert mlir.operation.verify(), (where, f"after link #3 run {runs}")
        text = mlir.operation.get_asm(enable_debug_info=True)
        rerun_result = flatten.run(mlir)
        assert not rerun_result.changed and rerun_result.rewritten == rerun_result.erased == 0, where
        assert mlir.operation.get_asm(enable_debug_info=True) == text, where
        assert mlir.operation.verify(), where
        # Link #4: the same module prints the same program.
        first = print_penguin(mlir, name, dialect)
        assert print_penguin(mlir, name, dialect) == first, where
        build_graph(first, name)  # the program runs
    # Two independent runs of the whole chain (fresh contexts) agree.
    dialect, bundle = rerun
    one = pipeline.run(case.text, dialect=dialect, bundle=bundle, scope="all", isolate=False)
    two = pipeline.run(case.text, dialect=dialect, bundle=bundle, scope="all", isolate=False)
    assert one.penguin_source == two.penguin_source
    assert one.hlo == two.hlo and one.flat_mlir == two.flat_mlir


# -- what the properties found, pinned --------------------------------------------

FOUND = {
    # Two zero-operand successors read by one `while` through its init tuple:
    # the second edge was rerouted onto the custom-call made for the first, by
    # a second call inserted before that new one, which link #1 never wrote
    # out (XLA: "cannot parse as an instruction name"); the edge also named
    # the made call as its successor. Now the first call takes the second's
    # predecessors (tests/chain/test_scale.py: thousands of them).
    "reroute_onto_a_made_call": """\
HloModule m

%cond (p: (s32[], f32[])) -> pred[] {
  %p = (s32[], f32[]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(2)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[])) -> (s32[], f32[]) {
  %q = (s32[], f32[]) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %one = s32[] constant(1)
  %k = s32[] add(%j, %one)
  %v = f32[] get-tuple-element(%q), index=1
  ROOT %t = (s32[], f32[]) tuple(%k, %v)
}

ENTRY %main {
  %a = f32[] constant(0)
  %zero = s32[] constant(0), control-predecessors={%a}
  %init = (s32[], f32[]) tuple(%zero, %a), control-predecessors={%a}
  ROOT %w = (s32[], f32[]) while(%init), condition=%cond, body=%body, control-predecessors={%a}
}
""",
    # A branch parameter as predecessor: the importer replaces it by the
    # conditional's operand, so no op carries its name (reported lost); now
    # dropped as implied (a parameter is ready before its computation runs).
    # And a zero-operand successor read as a branch operand: the edge landed
    # inside the branch; now the conditional carries it on its selector.
    "conditional_branches": """\
HloModule m

%tb (a: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  ROOT %neg = f32[2]{0} negate(%a), control-predecessors={%a}
}

%fb (b: f32[2]) -> f32[2] {
  ROOT %b = f32[2]{0} parameter(0)
}

ENTRY %main {
  %l = f32[2]{0} constant({1, 2})
  %c = pred[] constant(true)
  %x = f32[2]{0} parameter(0), control-predecessors={%l}
  %k = f32[2]{0} constant({3, 4}), control-predecessors={%x}
  ROOT %cnd = f32[2]{0} conditional(%c, %x, %k), true_computation=%tb, false_computation=%fb
}
""",
    # A while condition's (tuple-shaped) parameter as predecessor: the
    # importer flattens it into unnamed iteration arguments (reported lost).
    "while_parameter_predecessor": """\
HloModule m

%cond (p: (s32[], s32[2])) -> pred[] {
  %p = (s32[], s32[2]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(0)
  ROOT %lt = pred[] compare(%i, %n), direction=LT, control-predecessors={%p}
}

%body (q: (s32[], s32[2])) -> (s32[], s32[2]) {
  %q = (s32[], s32[2]{0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %v = s32[2]{0} get-tuple-element(%q), index=1, control-predecessors={%q}
  %w = s32[2]{0} negate(%v), control-predecessors={%q, %j}
  ROOT %t = (s32[], s32[2]{0}) tuple(%j, %w)
}

ENTRY %main {
  %b = s32[] constant(1)
  %a = s32[2]{0} constant({0, 9})
  %init = (s32[], s32[2]{0}) tuple(%b, %a)
  ROOT %loop = (s32[], s32[2]{0}) while(%init), condition=%cond, body=%body
}
""",
    # Instructions named like the emitted program's own names: `dense`
    # shadowed the literal helper (TypeError when the program ran).
    "program_names": """\
HloModule m

ENTRY %main {
  %dense = f32[2]{0} constant({1, 2})
  %Module = f32[2]{0} negate(%dense)
  %T = f32[2]{0} constant({3, 4}), control-predecessors={%Module}
  ROOT %module = f32[2]{0} add(%T, %dense), control-predecessors={%dense}
}
""",
}


@pytest.mark.parametrize("dialect,bundle", CONFIGS, ids=[f"{d}-{'bundle' if b else 'flat'}" for d, b in CONFIGS])
@pytest.mark.parametrize("name", sorted(FOUND))
def test_what_the_properties_found(name, dialect, bundle):
    text = FOUND[name]
    report = pipeline.run(text, dialect=dialect, bundle=bundle, scope="all", isolate=False).report
    assert report.lost == [], [str(e) for e in report.lost]
    assert len(report.edges) == len(native.read(text).control_edges())
    fates = {(e.predecessor, e.successor): e for e in report.edges}
    if name == "reroute_onto_a_made_call":
        assert fates[("a", "zero")].emitted == (("a", "w"),)
        assert fates[("a", "init")].emitted == (("a", "w"),)
        # One call per successor, and %w reads the second; XLA reads link #1's output so.
        parsed = native.read(text)
        module = view_of(parsed)
        PreserveControlDeps(bundle=bundle).run(module)
        main = module.computation("main")
        calls = [i for i in main.instructions if i.opcode == "custom-call"]
        assert len(calls) == 2 and main.instruction("w").operands == [calls[-1]]
        [entry] = [c for c in native.read(print_module(parsed.serialized())).proto.computations
                   if c.name == "main"]
        by_id = {i.id: i for i in entry.instructions}
        [w] = [i for i in entry.instructions if i.name == "w"]
        assert [by_id[o].custom_call_target for o in w.operand_ids] == ["AwsNeuronControlDep"]
        assert sum(1 for i in entry.instructions if i.custom_call_target == "AwsNeuronControlDep") == 2
    if name == "conditional_branches":
        assert fates[("a", "neg")].fate == "dropped" and fates[("a", "neg")].reason.startswith("implied")
        assert fates[("l", "x")].emitted == (("l", "cnd"),)
        # %x is a parameter: ready before everything, skipped as the binary skips it
        assert fates[("x", "k")].fate == "dropped" and fates[("x", "k")].reason.startswith("implied")
        assert fates[("x", "k")].emitted == ()
    if name == "while_parameter_predecessor":
        # %j, a get-tuple-element of the loop state, stands for the state itself.
        assert {k for k, e in fates.items() if e.fate == "dropped"} == {("p", "lt"), ("q", "v"), ("q", "w"), ("j", "w")}
        assert all(e.reason.startswith("implied") for e in fates.values())
    if name == "program_names":
        assert report.count("preserved") == report.count("rerouted") == 1  # %T is a constant


def test_a_made_up_name_never_takes_an_hlo_name():
    # XLA's importer makes ops of its own with no location (a tuple that
    # re-packs a nested loop state or a tuple-shaped operand, found by the
    # invariant property). The printer named them `tuple.1`, `tuple.2`, … in
    # the HLO's own name space, so an HLO instruction `%tuple.1` printed
    # later became `tuple.1.constant` and its edges were lost at link #4.
    from jaxlib.mlir import ir

    from pipeline.xla.mlir_context import make_context

    text = """
    module @m {
      func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
        %0 = stablehlo.tuple %arg0 : tuple<tensor<2xf32>>
        %1 = stablehlo.negate %arg0 : tensor<2xf32> loc(fused<"main">["tuple.1"])
        %2 = stablehlo.custom_call @AwsNeuronControlDep(%1, %arg0) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
        %3 = stablehlo.abs %2 : tensor<2xf32> loc(fused<"main">["s"])
        return %3 : tensor<2xf32>
      }
    }
    """
    program = build_graph(print_penguin(ir.Module.parse(text, context=make_context()), "m"))
    assert program.dep_edges() == {("main", "tuple.1", "s")}
    assert {i.name for i in program.instructions()} >= {"tuple#1", "tuple.1", "s"}
