"""A pinned successor (`*-done`, `async-update`: XLA requires it to read its
start) that nothing reads cannot take an edge at an operand, nor hand it to
a reader; its start can: ordering the start after p orders S after p too.
Link #1 reroutes `p -> S` onto the start, unless p comes after the start
already (a cycle), where it keeps the edge out and says why.

Judged end to end (`pipeline.run` with the check on, both dialects) by the
verifier, which reads the HLO and the program alone: the edge is carried,
by the dep edge into the start's op, and nothing is spurious; in the cycle
case exactly one edge of the cycle is lost, the one link #1 said it
dropped, naming the cycle.
"""

from __future__ import annotations

import pytest

import pipeline
from passes.control_dep import Fate
from pipeline.xla.native import parse_with_xla

HEAD = """HloModule pinned, replica_count=2

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}

%async_comp (y: f32[4]) -> f32[4] {
  %y = f32[4]{0} parameter(0)
  ROOT %ny = f32[4]{0} negate(%y)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %tok = token[] after-all()
"""

# The pinned successor %d of each kind, after its start %s0; nothing reads %d.
KINDS = {
    "all-gather-done": ("%s0 = (f32[4]{0}, f32[8]{0}) all-gather-start(%x), replica_groups={{0,1}}, dimensions={0}",
                        "%d = f32[8]{0} all-gather-done(%s0)"),
    "all-reduce-done": ("%s0 = f32[4]{0} all-reduce-start(%x), replica_groups={{0,1}}, to_apply=%sum",
                        "%d = f32[4]{0} all-reduce-done(%s0)"),
    "collective-permute-done": (
        "%s0 = (f32[4]{0}, f32[4]{0}) collective-permute-start(%x), source_target_pairs={{0,1},{1,0}}",
        "%d = f32[4]{0} collective-permute-done(%s0)"),
    "copy-done": ("%s0 = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%x)", "%d = f32[4]{0} copy-done(%s0)"),
    "async-done": ("%s0 = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(%x), calls=%async_comp",
                   "%d = f32[4]{0} async-done(%s0)"),
    "async-update": ("%s0 = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(%x), calls=%async_comp",
                     "%d = ((f32[4]{0}), f32[4]{0}, s32[]) async-update(%s0){EDGE}\n  %d2 = f32[4]{0} async-done(%d)"),
    "send-done": ("%s0 = (f32[4]{0}, u32[], token[]) send(%x, %tok), channel_id=1",
                  "%d = token[] send-done(%s0), channel_id=1"),
    "recv-done": ("%s0 = (f32[4]{0}, u32[], token[]) recv(%tok), channel_id=2",
                  "%d = (f32[4]{0}, token[]) recv-done(%s0), channel_id=2"),
}
# The collective starts import as a future (a value: an edge from the start is itself).
FUTURES = {"all-gather-done", "all-reduce-done", "collective-permute-done"}
# The mhlo dialect refuses async collectives (`stablehlo.async_start` does not
# legalize; tests/test_pipeline_dumps.py), edges or not.
CASES = [(k, d) for k in KINDS for d in ("stablehlo", "mhlo") if not (d == "mhlo" and k in FUTURES)]


def module(kind: str, cycle: bool) -> str:
    """%n -> %d, and with `cycle` %s0 -> %n (the start comes before %n)."""
    start, done = KINDS[kind]
    n = "%n = f32[4]{0} negate(%x)" + (", control-predecessors={%s0}" if cycle else "")
    done = done.replace("{EDGE}", ", control-predecessors={%n}") if "{EDGE}" in done else \
        done + ", control-predecessors={%n}"
    return f"{HEAD}  {start}\n  {n}\n  {done}\n  ROOT %r = f32[4]{{0}} abs(%n)\n}}\n"


def by_edge(edges) -> dict:
    return {(e.predecessor, e.successor): e for e in edges}


@pytest.mark.parametrize("kind,dialect", CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_an_unread_pinned_successor_takes_its_edge_through_its_start(kind, dialect):
    result = pipeline.run(module(kind, cycle=False), dialect=dialect, isolate=False)
    parse_with_xla(result.hlo)  # link #1 wrote real XLA
    report = result.report
    [edge] = report.edges
    assert (edge.predecessor, edge.successor) == ("n", "d")
    assert edge.fate in (Fate.PRESERVED, Fate.REROUTED) and report.lost == [] and report.spurious == []
    assert ("n", "s0") in edge.carried  # the program's dep edge into the start's op
    assert ("main", "n", "s0") in result.module().dep_edges()
    [said] = result.link1.edges
    assert said.fate is Fate.REROUTED and said.emitted == (("n", "s0"),)
    assert "its start %s0 carries the edge" in said.reason


@pytest.mark.parametrize("kind,dialect", CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_where_the_start_comes_before_the_predecessor_one_edge_of_the_cycle_is_lost_and_said(kind, dialect):
    result = pipeline.run(module(kind, cycle=True), dialect=dialect, isolate=False)
    parse_with_xla(result.hlo)
    result.module().schedule()  # the program has no cycle
    report = result.report
    assert report.spurious == []
    verdict, said = by_edge(report.edges), by_edge(result.link1.edges)
    assert set(verdict) == {("s0", "n"), ("n", "d")}
    [lost] = report.lost
    lost = (lost.predecessor, lost.successor)
    assert said[lost].fate is Fate.DROPPED and "(a cycle)" in said[lost].reason
    [kept] = set(verdict) - {lost}
    assert verdict[kept].fate in (Fate.PRESERVED, Fate.REROUTED)
    if kind in FUTURES:
        # The start is a value: %s0 -> %n is kept as it is, so %n comes after
        # %s0 and the start cannot carry %n -> %d.
        assert lost == ("n", "d") and verdict[("s0", "n")].fate is Fate.PRESERVED
        assert "its start %s0 cannot carry it either: %n comes after %s0 (a cycle)" in said[lost].reason
    else:
        # The start has no value after import: its %d would stand in for it
        # in %s0 -> %n, but %d waits for %n: that edge is the one kept out,
        # and %n -> %d goes through the start.
        assert lost == ("s0", "n")
        assert said[("n", "d")].fate is Fate.REROUTED and said[("n", "d")].emitted == (("n", "s0"),)
