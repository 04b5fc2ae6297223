"""Control edges from parameters, as the decompiled PreserveControlDeps
treats them: skipped (phase 1 compares the predecessor's opcode with
kParameter), in every computation, since a parameter is ready before any
instruction of its computation. The chain reports each as dropped,
implied, and makes no call for it; the module is stamped `has_control_deps`
only if some other edge was reified.

The case that showed it: XLA backend tests write reducers with an edge
between their two parameters (`y = f16[] parameter(1),
control-predecessors={x}`). Reified, it was rerouted onto the reducer's
`add`; after import the reducer is the region of its all-reduce/reduce, whose
block arguments carried the enclosing op's name, so the edge came out as a
spurious dep edge from the all-reduce. The regions' block arguments now
carry the callee's parameter names, as the HLO writes them.

Oracles: the HLO text (which predecessors are parameters, and the parameters'
names by number), XLA's parser (it reads every module here and link #1's
output) and the chain's independent verifier, in both dialects."""

from __future__ import annotations

import re

import jaxlib._hlo as xla_hlo
import pytest

import pipeline
from jax_programs import count_control_edges

DIALECTS = ["stablehlo", "mhlo"]

REDUCERS = """HloModule reducer_edges

%sum (x: f16[], y: f16[]) -> f16[] {
  %x = f16[] parameter(0)
  %y = f16[] parameter(1), control-predecessors={%x}
  ROOT %add = f16[] add(%x, %y)
}

%sum2 (a: f32[], b: f32[]) -> f32[] {
  %b = f32[] parameter(1)
  %a = f32[] parameter(0), control-predecessors={%b}
  %m = f32[] multiply(%a, %b), control-predecessors={%a}
  ROOT %r = f32[] add(%m, %b), control-predecessors={%b}
}

ENTRY %main (p: f16[8], q: f32[8]) -> (f16[8], f32[]) {
  %p = f16[8]{0} parameter(0)
  %q = f32[8]{0} parameter(1)
  %ar = f16[8]{0} all-reduce(%p), replica_groups={}, to_apply=%sum
  %zero = f32[] constant(0)
  %red = f32[] reduce(%q, %zero), dimensions={0}, to_apply=%sum2
  ROOT %t = (f16[8]{0}, f32[]) tuple(%ar, %red)
}
"""

# In the entry too: %x is a parameter (dropped), %a is not (reified).
ENTRY_PARAMETER = """HloModule entry_parameter

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %b = f32[4]{0} exponential(%x), control-predecessors={%x}
  ROOT %c = f32[4]{0} add(%b, %a), control-predecessors={%x, %a}
}
"""

_PARAMETER = re.compile(r"%([\w.\-]+) = \S+ parameter\((\d+)\)")


def parameter_edges(text: str) -> set[tuple[str, str]]:
    """(predecessor, successor) of every control edge that starts at a parameter, read from the text."""
    params = {name for name, _ in _PARAMETER.findall(text)}
    found = set()
    for succ, preds in re.findall(r"%([\w.\-]+) = [^\n]*control-predecessors=\{([^}]*)\}", text):
        found |= {(p.strip().lstrip("%"), succ) for p in preds.split(",") if p.strip().lstrip("%") in params}
    return found


@pytest.mark.parametrize("dialect", DIALECTS)
def test_edges_between_a_reducer_s_parameters_are_implied_and_leave_no_spurious_dep_edge(dialect):
    xla_hlo.hlo_module_from_text(REDUCERS)
    result = pipeline.run(REDUCERS, dialect=dialect, isolate=False)
    report = result.report
    assert len(report.edges) == count_control_edges(REDUCERS) == len(parameter_edges(REDUCERS)) == 4
    assert {(e.predecessor, e.successor) for e in report.edges} == parameter_edges(REDUCERS)
    assert all(e.fate == "dropped" and "is a parameter of" in e.reason for e in report.edges)
    assert report.spurious == [] and report.ok
    assert result.module().dependencies == []  # no call was made for any of them
    assert "AwsNeuronControlDep" not in result.hlo and "has_control_deps" not in result.hlo
    xla_hlo.hlo_module_from_text(result.hlo)  # link #1's output is still a module XLA reads


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_inlined_reducer_s_block_arguments_carry_its_parameter_names(dialect):
    program = pipeline.run(REDUCERS, dialect=dialect, isolate=False).module()
    regions = {i.name: i.blocks for i in program.instructions() if i.blocks}
    by_number = {}
    for computation in ("sum", "sum2"):
        body = REDUCERS.split(f"%{computation} (")[1].split("}")[0]
        by_number[computation] = [n for n, _ in sorted(_PARAMETER.findall(body), key=lambda p: int(p[1]))]
    assert [a.name for a in regions["ar"][0].arguments] == by_number["sum"] == ["x", "y"]
    assert [a.name for a in regions["red"][0].arguments] == by_number["sum2"] == ["a", "b"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_in_the_entry_a_parameter_edge_is_dropped_and_the_others_reified(dialect):
    result = pipeline.run(ENTRY_PARAMETER, dialect=dialect, isolate=False)
    fates = {(e.predecessor, e.successor): e.fate for e in result.report.edges}
    assert set(fates) == parameter_edges(ENTRY_PARAMETER) | {("a", "c")}
    assert {k: v for k, v in fates.items() if k[0] == "x"} == {("x", "b"): "dropped", ("x", "c"): "dropped"}
    assert fates[("a", "c")] == "preserved" and result.report.ok
    assert result.module().dep_edges() == {("main", "a", "c")}
    assert 'has_control_deps="1"' in result.hlo  # an edge was reified: stamped as the binary stamps it
    assert result.link1 is not None and {(e.predecessor, e.successor) for e in result.link1.edges
                                         if e.fate == "dropped"} == parameter_edges(ENTRY_PARAMETER)
