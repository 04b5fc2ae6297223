"""Link #4's names (issue 12, item 2): every op carries its own HLO name and
every edge lands on it.

HLO names are unique per computation, not per MLIR function: the importer
puts both branches of a conditional, a while's condition and body, and their
caller in one function. And it turns some instructions into several ops
(`rng` and its shape constant, `dynamic-reshape` and the concatenate of its
sizes, an async start and the collective in its region, `copy-start` and the
function it calls, a tuple-shaped custom-call and the get_tuple_elements it
reads through), all at the instruction's location. The op that yields the
value takes the HLO name, the others a derived `name:kind` that no HLO name
can take.

Each module runs through the real chain; the names are checked against the
HLO text, not against the chain's own report.
"""

from __future__ import annotations

import collections
import re

import pytest

import pipeline
from printer import print_penguin
from printer.penguin import Module

HLO_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
DIALECTS = ["stablehlo", "mhlo"]
_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%?([A-Za-z0-9_][A-Za-z0-9_.\-]*)\s*\(.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([A-Za-z0-9_][A-Za-z0-9_.\-]*)\s*=")
_PREDECESSORS = re.compile(r"control-predecessors=\{([^}]*)\}")
_RETURNS = frozenset({"func.return", "stablehlo.return", "mhlo.return"})


def hlo_names(text: str) -> dict[str, set[str]]:
    """Computation → its instruction names, read from the HLO text."""
    names: dict[str, set[str]] = {}
    current = None
    for line in text.splitlines():
        if m := _COMPUTATION.match(line):
            current = names.setdefault(m.group(1), set())
        elif current is not None and (m := _INSTRUCTION.match(line)):
            current.add(m.group(1))
    return names


def hlo_edges(text: str) -> set[tuple[str, str, str]]:
    """(computation, predecessor, successor) of every control edge in the HLO text."""
    edges, current = set(), None
    for line in text.splitlines():
        if m := _COMPUTATION.match(line):
            current = m.group(1)
        elif (m := _INSTRUCTION.match(line)) and (preds := _PREDECESSORS.search(line)):
            edges.update((current, p.strip().lstrip("%"), m.group(1)) for p in preds.group(1).split(","))
    return edges


def run(text: str, dialect: str) -> tuple[pipeline.chain.result.ChainResult, Module]:
    result = pipeline.run(text, dialect=dialect, isolate=False)
    assert result.report.lost == [], [str(e) for e in result.report.lost]
    program = result.module()
    check_names(text, program)
    return result, program


def check_names(text: str, program: Module) -> None:
    """Every dep edge names HLO instructions of its computation; every other
    name is one no HLO instruction can take."""
    names = hlo_names(text)
    for computation, pred, succ in program.dep_edges():
        assert computation in names, (computation, pred, succ)
        assert pred in names[computation] and succ in names[computation], (computation, pred, succ)
    for instr in program.instructions():
        if instr.opcode in _RETURNS:
            continue
        if instr.computation is None or instr.name not in names.get(instr.computation, ()):
            assert not HLO_NAME.fullmatch(instr.name), (instr.name, instr.opcode, instr.computation)


def carriers(program: Module) -> dict[tuple[str | None, str], list]:
    """(computation, name) → the instructions carrying it."""
    found = collections.defaultdict(list)
    for instr in program.instructions():
        found[(instr.computation, instr.name)].append(instr)
    return found


# -- (a) one name in several computations of one MLIR function -----------------

COND = """HloModule m

%b0 (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %a = f32[4]{0} exponential(%p)
  ROOT %b = f32[4]{0} negate(%p), control-predecessors={%a}
}

%b1 (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %a = f32[4]{0} log(%p)
  ROOT %b = f32[4]{0} sine(%p), control-predecessors={%a}
}

ENTRY %main (i: s32[], x: f32[4]) -> f32[4] {
  %i = s32[] parameter(0)
  %x = f32[4]{0} parameter(1)
  ROOT %c = f32[4]{0} conditional(%i, %x, %x), branch_computations={%b0, %b1}
}
"""

WHILE = """HloModule m

%cond (p: f32[4]) -> pred[] {
  %p = f32[4]{0} parameter(0)
  %c = f32[4]{0} exponential(%p)
  %r = s32[] constant(0)
  ROOT %lt = pred[] compare(%r, %r), direction=LT, control-predecessors={%c}
}

%body (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %c = f32[4]{0} negate(%p)
  ROOT %r = f32[4]{0} add(%p, %p), control-predecessors={%c}
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %c = f32[4]{0} sine(%x)
  %w = f32[4]{0} while(%x), condition=%cond, body=%body
  ROOT %r = f32[4]{0} add(%w, %x), control-predecessors={%c}
}
"""

SEND_RECV_LOOP = """HloModule m

%cond (p: f32[4]) -> pred[] {
  %p = f32[4]{0} parameter(0)
  ROOT %c = pred[] constant(false)
}

%body (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %tok = token[] after-all()
  %recv = (f32[4]{0}, u32[], token[]) recv(%tok), channel_id=4
  %send = (f32[4]{0}, u32[], token[]) send(%p, %tok), channel_id=5, control-predecessors={%recv}
  %recv-done = (f32[4]{0}, token[]) recv-done(%recv), channel_id=4
  %send-done = token[] send-done(%send), channel_id=5
  %g = f32[4]{0} get-tuple-element(%recv-done), index=0
  ROOT %r = f32[4]{0} add(%g, %p), control-predecessors={%send-done}
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %tok = token[] after-all()
  %recv = (f32[4]{0}, u32[], token[]) recv(%tok), channel_id=2
  %send = (f32[4]{0}, u32[], token[]) send(%x, %tok), channel_id=3, control-predecessors={%recv}
  %recv-done = (f32[4]{0}, token[]) recv-done(%recv), channel_id=2
  %send-done = token[] send-done(%send), channel_id=3
  %g = f32[4]{0} get-tuple-element(%recv-done), index=0
  %w = f32[4]{0} while(%g), condition=%cond, body=%body
  ROOT %r = f32[4]{0} add(%w, %x), control-predecessors={%send-done}
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_conditional_branches_keep_their_names(dialect):
    _, program = run(COND, dialect)
    assert program.dep_edges() == hlo_edges(COND) == {("b0", "a", "b"), ("b1", "a", "b")}
    found = carriers(program)
    assert [i.opcode.split(".")[-1] for i in found[("b0", "a")]] == ["exponential"]
    assert [i.opcode.split(".")[-1] for i in found[("b1", "a")]] == ["log"]
    assert [i.opcode.split(".")[-1] for i in found[("b1", "b")]] == ["sine"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_while_condition_body_and_caller_keep_their_names(dialect):
    _, program = run(WHILE, dialect)
    assert program.dep_edges() == hlo_edges(WHILE)
    found = carriers(program)
    for computation, opcode in (("cond", "exponential"), ("body", "negate"), ("main", "sine")):
        assert [i.opcode.split(".")[-1] for i in found[(computation, "c")]] == [opcode]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_send_recv_in_a_loop_body_and_its_caller(dialect):
    # Measured: the importer makes one op of a send/send-done (recv/recv-done)
    # pair, named after the send (recv); before the fix the body's pair took
    # `send`/`recv` and the caller's became `send.send`/`recv.recv`.
    result, program = run(SEND_RECV_LOOP, dialect)
    # %recv -> %send: %recv has no value after import, its recv-done (the recv op) stands in;
    # %send-done -> %r: the done is the send op.
    assert program.dep_edges() == {(c, p, s) for c in ("main", "body") for p, s in (("recv", "send"), ("send", "r"))}
    found = carriers(program)
    for computation in ("main", "body"):
        assert [i.opcode.split(".")[-1] for i in found[(computation, "recv")]] == ["recv"]
        assert [i.opcode.split(".")[-1] for i in found[(computation, "send")]] == ["send"]


# -- (b) one HLO instruction, several ops ---------------------------------------

RNG = """HloModule m

ENTRY %main (x: f32[]) -> f32[4] {
  %x = f32[] parameter(0)
  %one = f32[] constant(1)
  %e = f32[] exponential(%x)
  %rng0 = f32[4]{0} rng(%x, %one), distribution=rng_uniform, control-predecessors={%e}
  %rng1 = f32[4]{0} rng(%x, %one), distribution=rng_normal, control-predecessors={%rng0}
  %b = f32[4]{0} broadcast(%x), dimensions={}
  %s = f32[4]{0} add(%rng0, %b), control-predecessors={%rng1}
  ROOT %t = f32[4]{0} add(%s, %rng1)
}
"""

DYNAMIC_RESHAPE = """HloModule m

ENTRY %main (x: f32[4], sz: s32[1]) -> f32[2,2] {
  %x = f32[4]{0} parameter(0)
  %sz = s32[1]{0} parameter(1)
  %e = f32[4]{0} exponential(%x)
  %dr = f32[2,2]{1,0} dynamic-reshape(%x, %sz, %sz), control-predecessors={%e}
  ROOT %n = f32[2,2]{1,0} negate(%dr), control-predecessors={%dr}
}
"""

CUSTOM_CALL_TUPLE = """HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %e = f32[4]{0} exponential(%x)
  %cc = (f32[4]{0}, f32[4]{0}) custom-call(%x), custom_call_target="foo", control-predecessors={%e}
  %g = f32[4]{0} get-tuple-element(%cc), index=0
  %g1 = f32[4]{0} get-tuple-element(%cc), index=1
  %n = f32[4]{0} negate(%x), control-predecessors={%cc}
  ROOT %r = f32[4]{0} add(%g, %g1), control-predecessors={%n}
}
"""

COPY_START = """HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %e = f32[4]{0} exponential(%x)
  %cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%x), control-predecessors={%e}
  %n = f32[4]{0} negate(%x), control-predecessors={%cs}
  %cd = f32[4]{0} copy-done(%cs)
  ROOT %r = f32[4]{0} add(%cd, %n)
}
"""

ASYNC_STARTS = """HloModule m

%add_f (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %e = f32[4]{0} exponential(%x)
  %ars = f32[4]{0} all-reduce-start(%x), replica_groups={{0,1}}, to_apply=%add_f, control-predecessors={%e}
  %n = f32[4]{0} negate(%x), control-predecessors={%ars}
  %ard = f32[4]{0} all-reduce-done(%ars)
  %ags = (f32[4]{0}, f32[8]{0}) all-gather-start(%x), replica_groups={{0,1}}, dimensions={0}, control-predecessors={%n}
  %s = f32[4]{0} sine(%x), control-predecessors={%ags}
  %agd = f32[8]{0} all-gather-done(%ags)
  %cps = (f32[4]{0}, f32[4]{0}, u32[], u32[]) collective-permute-start(%x), source_target_pairs={{0,1},{1,0}}, control-predecessors={%s}
  %c = f32[4]{0} cosine(%x), control-predecessors={%cps}
  %cpd = f32[4]{0} collective-permute-done(%cps)
  ROOT %r = f32[4]{0} add(%ard, %cpd)
}
"""


def expansion(program: Module, computation: str, name: str) -> tuple[str, list[str]]:
    """The op kind that carries `name`, and the derived names beside it."""
    found = carriers(program)
    carrier = found[(computation, name)]
    assert len(carrier) == 1, carrier
    derived = sorted(n for c, n in found if c == computation and n.startswith(name + ":"))
    return carrier[0].opcode.split(".")[-1], derived


@pytest.mark.parametrize("dialect", DIALECTS)
def test_rng_takes_its_name_and_its_shape_constant_a_derived_one(dialect):
    _, program = run(RNG, dialect)
    assert program.dep_edges() == hlo_edges(RNG)
    assert expansion(program, "main", "rng0") == ("rng", ["rng0:constant"])
    assert expansion(program, "main", "rng1") == ("rng", ["rng1:constant"])


# `r` is read by nothing (not even a control-dep call): no use outside its
# ops tells the rng from its shape constant, and the rng still takes the
# name, the op XLA's `rng` is.
UNUSED_RNG = """HloModule m

ENTRY %main (x: f32[]) -> f32[4] {
  %x = f32[] parameter(0)
  %one = f32[] constant(1)
  %e = f32[] exponential(%x)
  %r = f32[4]{0} rng(%x, %one), distribution=rng_uniform, control-predecessors={%e}
  %b = f32[4]{0} broadcast(%x), dimensions={}
  ROOT %n = f32[4]{0} negate(%b)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_unused_rng_takes_its_name_and_carries_its_edges(dialect):
    _, program = run(UNUSED_RNG, dialect)
    assert program.dep_edges() == hlo_edges(UNUSED_RNG) == {("main", "e", "r")}
    assert expansion(program, "main", "r") == ("rng", ["r:constant"])
    (dep,) = program.dependencies
    assert dep.successor.opcode.split(".")[-1] == "rng"  # the edge lands on the rng, not its shape constant


@pytest.mark.parametrize("dialect", DIALECTS)
def test_dynamic_reshape_takes_its_name_and_the_concatenate_of_its_sizes_a_derived_one(dialect):
    _, program = run(DYNAMIC_RESHAPE, dialect)
    assert program.dep_edges() == hlo_edges(DYNAMIC_RESHAPE)
    assert expansion(program, "main", "dr") == ("dynamic_reshape", ["dr:concatenate"])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_tuple_shaped_custom_call_and_the_importers_get_tuple_elements(dialect):
    # The importer reads %g and %g1 through get_tuple_elements located at %cc:
    # %cc is the custom_call, they are `cc:get_tuple_element` and `….2`.
    result, program = run(CUSTOM_CALL_TUPLE, dialect)
    assert program.dep_edges() == {("main", "e", "cc"), ("main", "cc", "n"), ("main", "n", "r")}
    assert expansion(program, "main", "cc") == ("custom_call", ["cc:get_tuple_element", "cc:get_tuple_element.2"])
    assert not any(name in ("g", "g1") for _, name in carriers(program))  # no op of their own


@pytest.mark.parametrize("dialect", DIALECTS)
def test_copy_start_takes_its_name_and_the_copy_in_its_function_a_derived_one(dialect):
    # copy-start imports as an async_start calling a function of its own,
    # located at %cs like the copy inside it; the function comes first.
    result, program = run(COPY_START, dialect)
    assert hlo_edges(COPY_START) == {("main", "e", "cs"), ("main", "cs", "n")}
    # %cs -> %n: copy-start has no value after import, its copy-done stands in.
    assert program.dep_edges() == {("main", "e", "cs"), ("main", "cd", "n")}
    assert expansion(program, "main", "cs") == ("async_start", ["cs:copy"])


def test_async_starts_take_their_names_and_the_collectives_in_their_regions_derived_ones():
    # StableHLO only: stablehlo-legalize-to-hlo refuses stablehlo.async_start (README).
    _, program = run(ASYNC_STARTS, "stablehlo")
    assert program.dep_edges() == hlo_edges(ASYNC_STARTS)
    assert expansion(program, "main", "ars") == ("async_start", ["ars:all_reduce"])
    assert expansion(program, "main", "ags") == ("async_start", ["ags:all_gather"])
    assert expansion(program, "main", "cps") == ("async_start", ["cps:collective_permute"])


# -- a computation inlined twice: two instances, both keep the names -------------

SHARED_REDUCER = """HloModule m

%add_f (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %m = f32[] multiply(%a, %b)
  ROOT %r = f32[] add(%a, %b), control-predecessors={%m}
}

ENTRY %main (x: f32[4], y: f32[4]) -> f32[] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %z = f32[] constant(0)
  %r1 = f32[] reduce(%x, %z), dimensions={0}, to_apply=%add_f
  %r2 = f32[] reduce(%y, %z), dimensions={0}, to_apply=%add_f
  ROOT %r = f32[] add(%r1, %r2)
}
"""

SHARED_BRANCH = """HloModule m

%b (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %a = f32[4]{0} exponential(%p)
  ROOT %r = f32[4]{0} negate(%p), control-predecessors={%a}
}

ENTRY %main (i: s32[], x: f32[4]) -> f32[4] {
  %i = s32[] parameter(0)
  %x = f32[4]{0} parameter(1)
  ROOT %c = f32[4]{0} conditional(%i, %x, %x), branch_computations={%b, %b}
}
"""


@pytest.mark.parametrize("text, computation, pred, succ", [(SHARED_REDUCER, "add_f", "m", "r"),
                                                           (SHARED_BRANCH, "b", "a", "r")],
                         ids=["reducer", "branch"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_computation_inlined_twice_keeps_its_names_in_both(dialect, text, computation, pred, succ):
    _, program = run(text, dialect)
    assert program.dep_edges() == hlo_edges(text) == {(computation, pred, succ)}
    assert len(program.dependencies) == 2  # one per instance
    found = carriers(program)
    assert len(found[(computation, pred)]) == len(found[(computation, succ)]) == 2
    for dep in program.dependencies:
        assert dep.predecessor.parent is dep.successor.parent  # each instance's own pair


# -- opcodes that import as one op: their names stay as they are -----------------

ONE_OP_EACH = """HloModule m

%add_f (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

%lt (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %r = pred[] compare(%a, %b), direction=LT
}

ENTRY %main (x: f32[4], k: u64[2], m: f32[3,3], y: s32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %k = u64[2]{0} parameter(1)
  %m = f32[3,3]{1,0} parameter(2)
  %y = s32[4]{0} parameter(3)
  %rbg = (u64[2]{0}, u32[4]{0}) rng-bit-generator(%k), algorithm=rng_philox
  %st = u64[2]{0} rng-get-and-update-state(), delta=4, control-predecessors={%rbg}
  %pid = u32[] partition-id(), control-predecessors={%st}
  %rid = u32[] replica-id(), control-predecessors={%pid}
  %ids = u32[] add(%pid, %rid)
  %st2 = u64[2]{0} add(%st, %k)
  %tok = token[] after-all()
  %inf = ((f32[4]{0}), token[]) infeed(%tok), infeed_config="c", control-predecessors={%rid}
  %out = token[] outfeed(%x, %tok), outfeed_shape=f32[4]{0}, outfeed_config="o", control-predecessors={%inf}
  %ad = f32[4]{0} add-dependency(%x, %out)
  %z = f32[] constant(0)
  %red = f32[] reduce(%ad, %z), dimensions={0}, to_apply=%add_f, control-predecessors={%out}
  %so = (f32[4]{0}, s32[4]{0}) sort(%x, %y), dimensions={0}, to_apply=%lt, control-predecessors={%red}
  %tk = (f32[2]{0}, s32[2]{0}) topk(%x), k=2, largest=true, control-predecessors={%so}
  %ch = f32[3,3]{1,0} cholesky(%m), lower=true, control-predecessors={%tk}
  %ts = f32[3,3]{1,0} triangular-solve(%ch, %m), left_side=true, lower=true, transpose_a=NO_TRANSPOSE, control-predecessors={%ch}
  %cx = c64[4]{0} convert(%x)
  %ff = c64[4]{0} fft(%cx), fft_type=FFT, fft_length={4}, control-predecessors={%ts}
  %gds = s32[] get-dimension-size(%x), dimensions={0}, control-predecessors={%ff}
  %t = (f32[4]{0}, f32[4]{0}) tuple(%x, %x)
  %ob = (f32[4]{0}, f32[4]{0}) opt-barrier(%t), control-predecessors={%gds}
  %g = f32[4]{0} get-tuple-element(%ob), index=0
  ROOT %n = f32[4]{0} negate(%g), control-predecessors={%ob}
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_opcodes_that_import_as_one_op_keep_their_names(dialect):
    _, program = run(ONE_OP_EACH, dialect)
    names = hlo_names(ONE_OP_EACH)
    # (Link #1's call for %ob reads a tuple: the importer reads it through
    # get_tuple_elements at the call's location, `ob.control-dep:…`.)
    derived = [i.name for i in program.instructions() if i.name.split(":")[0] in names.get(i.computation, ())
               and ":" in i.name]
    assert derived == []
    # %st, %pid and %rid take no operand: their readers (%st2 reads %st, %ids
    # reads %pid and %rid) carry the edges into them.
    rerouted = {("main", "rbg", "st2"), ("main", "st", "ids"), ("main", "pid", "ids")}
    assert program.dep_edges() == {e for e in hlo_edges(ONE_OP_EACH) if e[2] not in ("st", "pid", "rid")} | rerouted


# -- the printer alone: an edge to a helper goes to the op with the HLO name -----

HELPER_READS_THE_CALL = """
module @m {
  func.func @main(%arg0: tensor<4xf32> loc("x"), %arg1: tensor<1xi32> loc("sz")) -> tensor<2x2xf32> {
    %e = stablehlo.exponential %arg0 : tensor<4xf32> loc(fused<"main">["e"])
    %cd = stablehlo.custom_call @AwsNeuronControlDep(%e, %arg1) {has_side_effect = true} : (tensor<4xf32>, tensor<1xi32>) -> tensor<1xi32> loc(fused<"main">["dr.control-dep"])
    %sizes = stablehlo.concatenate %cd, %arg1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(fused<"main">["dr"])
    %dr = stablehlo.dynamic_reshape %arg0, %sizes : (tensor<4xf32>, tensor<2xi32>) -> tensor<2x2xf32> loc(fused<"main">["dr"])
    return %dr : tensor<2x2xf32> loc(unknown)
  }
}
"""


def test_an_edge_to_a_helper_op_lands_on_the_op_with_the_hlo_name():
    # Link #1 wraps operand 0, which the importer's helpers do not read; a
    # call that feeds a helper (the concatenate of dynamic-reshape's sizes)
    # still gives the edge to the instruction: %e -> %dr.
    from jaxlib.mlir import ir

    from pipeline.chain.result import build_graph
    from pipeline.xla.mlir_context import make_context

    mlir = ir.Module.parse(HELPER_READS_THE_CALL, context=make_context())
    program = build_graph(print_penguin(mlir))
    assert program.dep_edges() == {("main", "e", "dr")}
    assert {i.name for i in program.instructions() if i.computation} == {"e", "dr", "dr:concatenate"}
