"""Verifier details that mutation testing found unpinned (issue 13).

Each expected fate follows from the HLO text and the rules the README states
for the verifier (preserved / rerouted / dropped / lost); the programs are the
chain's, sometimes with one dep edge taken out. No expectation is copied from
the verifier's output.
"""

from __future__ import annotations

import pytest

import pipeline
from pipeline.verifier.verify import verify

DIALECTS = ("stablehlo", "mhlo")


def chain(text: str, dialect: str = "stablehlo"):
    return pipeline.run(text, dialect=dialect, isolate=False)


def dep(pred: str, succ: str) -> str:
    """A dep edge as link #4 writes it: the real printer's statement, on the successor."""
    return (f"{succ}.add_dep_edge(Dependency.DependencyEdge(src={pred}, dst={succ}, idx_map=[], "
            f"kind=Dependency.EdgeKind.ORDERED, predicates=[]))\n")


def without(source: str, *lines: str) -> str:
    for line in lines:
        assert source.count(line) == 1, (line, source)
        source = source.replace(line, "")
    return source


def fates(report) -> dict[tuple[str, str], str]:
    return {(e.predecessor, e.successor): e.fate for e in report.edges}


# ROOT %b after %a: the computation ends after every instruction, so the
# order holds even with no dep edge.
ROOT_SUCCESSOR = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %d = f32[4]{0} abs(%a)
  ROOT %b = f32[4]{0} exponential(%x), control-predecessors={%a}
}
"""


def test_an_unordered_root_successor_is_dropped_not_lost():
    source = chain(ROOT_SUCCESSOR).penguin_source
    report = verify(ROOT_SUCCESSOR, without(source, dep("a", "b")))
    assert fates(report) == {("a", "b"): "dropped"}
    assert report.ok and report.lost == []


# %s is dead code (no reader, not the ROOT) but an op like any other: an
# unordered %p -> %s is lost, not excused as "nothing observes it".
DEAD_SUCCESSOR = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %p = f32[4]{0} negate(%x)
  %s = f32[4]{0} exponential(%x), control-predecessors={%p}
  ROOT %u = f32[4]{0} add(%x, %p)
}
"""


def test_an_unread_op_successor_without_its_dep_edge_is_lost():
    source = chain(DEAD_SUCCESSOR).penguin_source
    assert fates(verify(DEAD_SUCCESSOR, source)) == {("p", "s"): "preserved"}
    report = verify(DEAD_SUCCESSOR, without(source, dep("p", "s")))
    assert fates(report) == {("p", "s"): "lost"}
    assert not report.ok


# A tuple nobody reads: it has no op after import and nothing can come after it.
UNREAD_TUPLE = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %p = f32[4]{0} negate(%x)
  %t = (f32[4]{0}, f32[4]{0}) tuple(%x, %p), control-predecessors={%p}
  ROOT %u = f32[4]{0} add(%x, %p)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_unread_tuple_successor_is_dropped(dialect):
    report = chain(UNREAD_TUPLE, dialect).report
    assert fates(report) == {("p", "t"): "dropped"}
    assert report.ok


# %io (no operand) reaches the ROOT only through a nested tuple: its value is
# the computation's result, which ends after %a.
IOTA_INTO_NESTED_ROOT = """\
HloModule m

ENTRY %main (x: f32[4]) -> ((s32[4], f32[4]), f32[4]) {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %io = s32[4]{0} iota(), iota_dimension=0, control-predecessors={%a}
  %t1 = (s32[4]{0}, f32[4]{0}) tuple(%io, %x)
  ROOT %out = ((s32[4]{0}, f32[4]{0}), f32[4]{0}) tuple(%t1, %a)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_successor_reaching_the_root_through_nested_tuples_is_dropped(dialect):
    report = chain(IOTA_INTO_NESTED_ROOT, dialect).report
    assert fates(report) == {("a", "io"): "dropped"}
    assert report.ok


# A custom-call with no operand and no reader, after %a: nothing can carry
# the edge and it has an effect, so it is lost (README: lost at link #1).
EFFECT_WITHOUT_READER = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %cc = f32[4]{0} custom-call(), custom_call_target="foo", custom_call_has_side_effect=true, control-predecessors={%a}
  ROOT %r = f32[4]{0} abs(%a)
}
"""


def test_an_effect_with_no_operand_and_no_reader_is_lost():
    report = chain(EFFECT_WITHOUT_READER).report
    assert fates(report) == {("a", "cc"): "lost"}
    assert not report.ok


# %k (a constant) is read by %r1 directly and by %r2 through a tuple and a
# get-tuple-element: both readers must come after %p.
TWO_READERS = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %p = f32[4]{0} negate(%x)
  %k = f32[4]{0} constant({1, 2, 3, 4}), control-predecessors={%p}
  %r1 = f32[4]{0} add(%k, %x)
  %t = (f32[4]{0}, f32[4]{0}) tuple(%k, %x)
  %g = f32[4]{0} get-tuple-element(%t), index=0
  %r2 = f32[4]{0} multiply(%g, %x)
  %s = f32[4]{0} add(%r1, %r2)
  ROOT %u = f32[4]{0} add(%s, %p)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_reroute_through_a_tuple_counts_every_reader(dialect):
    source = chain(TWO_READERS, dialect).penguin_source
    assert fates(verify(TWO_READERS, source)) == {("p", "k"): "rerouted"}
    for reader in ("r1", "r2"):  # either reader left unordered loses the edge
        report = verify(TWO_READERS, without(source, dep("p", reader)))
        assert fates(report) == {("p", "k"): "lost"}, reader


# A tuple successor read by an op: the tuple only forwards, so its reader
# carries the edge.
TUPLE_SUCCESSOR = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %p = f32[4]{0} negate(%x)
  %t = (f32[4]{0}, f32[4]{0}) tuple(%x, %x), control-predecessors={%p}
  %c = f32[4]{0} custom-call(%t), custom_call_target="bar"
  ROOT %u = f32[4]{0} add(%c, %p)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_tuple_successor_is_carried_by_its_reader(dialect):
    source = chain(TUPLE_SUCCESSOR, dialect).penguin_source
    assert fates(verify(TUPLE_SUCCESSOR, source)) == {("p", "t"): "rerouted"}
    assert fates(verify(TUPLE_SUCCESSOR, without(source, dep("p", "c")))) == {("p", "t"): "lost"}


# %m -> %cd: a copy-done reads its copy-start (pinned), so %cd's reader %r
# (which does not read %m) carries the edge. %cs -> %s: %cd would stand in for %cs but waits for %s
# through %m and %n; no program can carry it.
PINNED_AND_CYCLE = """\
HloModule cyc

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%x)
  %s = f32[4]{0} negate(%x), control-predecessors={%cs}
  %n = f32[4]{0} abs(%s)
  %m = f32[4]{0} sqrt(%n)
  %cd = f32[4]{0} copy-done(%cs), control-predecessors={%m}
  ROOT %r = f32[4]{0} add(%cd, %x)
}
"""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_done_successor_is_carried_by_its_reader_and_a_cycle_is_lost(dialect):
    result = chain(PINNED_AND_CYCLE, dialect)
    assert fates(result.report) == {("m", "cd"): "rerouted", ("cs", "s"): "lost"}
    report = verify(PINNED_AND_CYCLE, without(result.penguin_source, dep("m", "r")))
    assert fates(report)[("m", "cd")] == "lost"
