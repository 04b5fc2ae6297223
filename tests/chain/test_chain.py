"""The proof of the chain: HLO control edges = Penguin dep edges, on real modules."""

from __future__ import annotations

import collections
import functools
import json
import re
import runpy
import subprocess
import sys

import jaxlib._hlo as xla_hlo
import pytest

import pipeline
from jax_programs import corpus
from pipeline.cli import hlo2penguin as cli
from pipeline.chain.example import EXAMPLE_HLO
from printer.penguin import Module, ScheduleError, T

WITH_EDGES = [("example", EXAMPLE_HLO)] + [(n, t) for n, t in corpus() if "control-predecessors" in t]

_XLA_COMPUTATION = re.compile(r"^(?:ENTRY )?%([^\s(]+) \(.*\{$")
_XLA_CONTROL_PREDS = re.compile(r"^\s+(?:ROOT )?%([^\s=]+) = .*?control-predecessors=\{([^}]*)\}")


@functools.lru_cache(maxsize=None)
def xla_control_edges(text: str) -> collections.Counter:
    """The oracle the chain does not control: (computation, predecessor,
    successor) for every name in every `control-predecessors={…}` of XLA's own
    printing of the module (`hlo_module_from_text(text).to_string()`)."""
    edges: collections.Counter = collections.Counter()
    computation = None
    for line in xla_hlo.hlo_module_from_text(text).to_string().splitlines():
        header = _XLA_COMPUTATION.match(line)
        if header:
            computation = header.group(1)
            continue
        instr = _XLA_CONTROL_PREDS.match(line)
        if instr:
            for pred in instr.group(2).split(","):
                edges[(computation, pred.strip().lstrip("%"), instr.group(1))] += 1
    return edges


@pytest.mark.parametrize("bundle", [False, True], ids=["flat", "bundle"])
@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_invariant_holds_on_every_module(dialect, bundle):
    """Every control edge XLA prints, and no other, has a fate in the report, and none is lost."""
    # The chain's defaults: link #3 walks every function (scope=all).
    for name, text in WITH_EDGES:
        result = pipeline.run(text, dialect=dialect, bundle=bundle, isolate=False)
        report = result.report
        xla = xla_control_edges(text)
        assert sum(xla.values()) > 0, name
        assert collections.Counter((e.computation, e.predecessor, e.successor) for e in report.edges) == xla, name
        totals = report.totals()
        assert totals["edges"] == totals["preserved"] + totals["rerouted"] + totals["dropped"] == sum(xla.values())
        assert report.lost == [] and totals["lost"] == 0, (name, [str(e) for e in report.lost])
        assert report.count("dropped") == 0 or name == "example", [str(e) for e in report.edges]


def test_flat_reading_of_the_invariant_is_exact_on_the_corpus():
    # Without reroutes, every HLO edge is one dep edge with the same names.
    for name, text in WITH_EDGES[1:]:
        result = pipeline.run(text, isolate=False)
        hlo_edges = {(e.computation, e.predecessor, e.successor) for e in result.report.edges
                     if e.fate == "preserved"}
        assert hlo_edges <= result.module().dep_edges(), name


def test_without_link_3_tuple_shaped_predecessors_are_lost_and_link_3_is_blamed():
    report = pipeline.run(EXAMPLE_HLO, flatten=False).report
    lost = {(e.predecessor, e.successor): e for e in report.lost}
    # %loop is a while: its value reaches the call as one tuple operand, so the
    # program's dep edges start at that tuple op, which no HLO instruction is.
    assert set(lost) == {("loop", "scale")}
    assert all("link #3" in e.lost_at for e in lost.values())
    assert {(e.predecessor, e.successor) for e in report.spurious} == {("loop:tuple", "scaled"),
                                                                      ("loop:tuple", "scales")}
    assert all("link #3" in e.at for e in report.spurious) and not report.ok
    # %scaled reads %loop's result: the data order it, whatever the dep edges.
    fates = {(e.predecessor, e.successor): e.fate for e in report.edges}
    assert fates[("loop", "scaled")] == "rerouted"
    assert report.count("preserved") == 2  # %copy.x and %copy.buf are plain values


def test_without_link_1_every_edge_not_ordered_by_data_is_lost_at_the_importer():
    report = pipeline.run(EXAMPLE_HLO, reify=False).report
    lost = {(e.predecessor, e.successor) for e in report.lost}
    assert lost == {("copy.buf", "copy.twice"), ("loop", "scale"), ("copy.x", "scaled")}
    assert all("link #2" in e.lost_at for e in report.lost)
    assert report.dep_edges == 0
    # The one the data order (%scaled reads %loop's result) needs no dep edge.
    rest = [e for e in report.edges if e.fate != "lost"]
    assert [(e.predecessor, e.successor, e.fate) for e in rest] == [("loop", "scaled", "rerouted")]


def test_scope_main_leaves_called_functions_bundled_and_says_so():
    name, text = next((n, t) for n, t in WITH_EDGES if "cpu_after_optimizations" in n and "swap" in n)
    report = pipeline.run(text, bundle=True, scope="main", isolate=False).report
    assert report.lost and all("scope=main" in e.reason for e in report.lost)


def test_emitted_program_runs_standalone_in_a_fresh_interpreter(tmp_path):
    result = pipeline.run(EXAMPLE_HLO)
    path = tmp_path / "program.py"
    path.write_text(result.penguin_source)
    probe = ("import runpy, sys; m = runpy.run_path(sys.argv[1])['module']; "
             "print(sorted((d.predecessor.name, d.successor.name) for d in m.dependencies))")
    done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(sorted((p, s) for _, p, s in result.module().dep_edges()))
    assert isinstance(runpy.run_path(str(path))["module"], Module)


def test_output_is_byte_identical_on_reruns():
    first = pipeline.run(EXAMPLE_HLO, dialect="mhlo").penguin_source
    assert pipeline.run(EXAMPLE_HLO, dialect="mhlo").penguin_source == first


@pytest.mark.parametrize("name,text", WITH_EDGES[:8], ids=[n for n, _ in WITH_EDGES[:8]])
def test_schedule_honours_every_dependency_and_data_edge(name, text):
    program = pipeline.run(text, isolate=False).module()
    for fn in program.functions:
        blocks = [fn] + [b for i in fn.walk() for b in i.blocks]
        for block in blocks:
            order = block.schedule()
            assert sorted(map(id, order)) == sorted(map(id, block.instructions))
            at = {id(i): n for n, i in enumerate(order)}
            for instr in order:
                for operand in instr.operands:
                    source = getattr(operand, "instruction", operand)
                    if id(source) in at:
                        assert at[id(source)] < at[id(instr)]
            for dep in program.dependencies:
                if id(dep.predecessor) in at and id(dep.successor) in at:
                    assert at[id(dep.predecessor)] < at[id(dep.successor)], dep


def test_schedule_moves_an_instruction_after_its_dependency_and_reports_cycles():
    m = Module("m")
    f = m.function("main", [("x", T("tensor<f32>"))])
    a = f.op("stablehlo.negate", "a", [f.args[0]], ["tensor<f32>"])
    b = f.op("stablehlo.abs", "b", [f.args[0]], ["tensor<f32>"])
    m.add_dep_edge(b, a)
    assert [i.name for i in f.schedule()] == ["b", "a"]  # program order alone says a, b
    m.add_dep_edge(a, b)
    with pytest.raises(ScheduleError, match="cycle through a, b"):
        f.schedule()


def test_schedule_lifts_a_dependency_into_a_nested_block_onto_the_op_that_holds_it():
    """Block.schedule's promise: a dependency whose successor (or predecessor)
    sits inside an op's region orders that op. Program order alone says w first."""
    t = T("tensor<f32>")
    m = Module("m")
    f = m.function("main", [("x", t)])
    w = f.op("stablehlo.while", "w", [f.args[0]], [t])
    body = w.block("body", [("s", t)])
    inner = body.op("stablehlo.negate", "n", [body.args[0]], [t])
    body.op("stablehlo.return", "return", [inner])
    p = f.op("stablehlo.abs", "p", [f.args[0]], [t])
    assert [i.name for i in f.schedule()] == ["w", "p"]  # no edge yet: program order
    m.add_dep_edge(p, inner)  # into the body: the while runs after p
    assert [i.name for i in f.schedule()] == ["p", "w"]
    assert [i.name for i in m.schedule()["main"]] == ["p", "w"]

    m2 = Module("m2")
    g = m2.function("main", [("x", t)])
    q = g.op("stablehlo.abs", "q", [g.args[0]], [t])
    w2 = g.op("stablehlo.while", "w", [g.args[0]], [t])
    inner2 = w2.block("body", [("s", t)]).op("stablehlo.negate", "n", [g.args[0]], [t])
    m2.add_dep_edge(inner2, q)  # out of the body: q runs after the while
    assert [i.name for i in g.schedule()] == ["w", "q"]


def test_cli_report_json_and_check(capsys):
    assert cli.main(["--emit", "report", "--json", "-q"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["totals"] == {"edges": 4, "preserved": 3, "rerouted": 1, "dropped": 0, "lost": 0, "spurious": 0}
    assert cli.main(["--emit", "report", "--no-flatten", "--check", "-q"]) == 1
    capsys.readouterr()


def test_cli_default_runs_the_chain_and_says_edges_in_and_out(capsys):
    assert cli.main([]) == 0
    captured = capsys.readouterr()
    assert "scaled.add_dep_edge(Dependency.DependencyEdge(src=loop, dst=scaled, idx_map=[], kind=Dependency.EdgeKind.ORDERED, predicates=[]))" in captured.out
    assert "4 HLO control edge(s)" in captured.err and "4 dep edge(s)" in captured.err


COLLECTIVE = """\
HloModule collective

%sum (s.x: f32[], s.y: f32[]) -> f32[] {
  %s.x = f32[] parameter(0)
  %s.y = f32[] parameter(1)
  ROOT %s.add = f32[] add(%s.x, %s.y)
}

ENTRY %main (x: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} abs(%x)
  %ars = f32[4]{0} all-reduce-start(%x), replica_groups={}, to_apply=%sum
  %ard = f32[4]{0} all-reduce-done(%ars)
  %n = f32[4]{0} negate(%x), control-predecessors={%ars, %a}
  ROOT %out = (f32[4]{0}, f32[4]{0}) tuple(%ard, %n)
}
"""


def test_bundle_keeps_a_collective_start_beside_the_tuple():
    # !stablehlo.future may not be a tuple element; the bundle holds the rest.
    result = pipeline.run(COLLECTIVE, bundle=True)
    assert result.report.lost == [] and result.report.count("preserved") == 2
    assert "custom_call @AwsNeuronControlDep" in result.mlir and "stablehlo.tuple" in result.mlir


def test_mhlo_refusal_of_collectives_is_one_clear_error(capsys, tmp_path):
    path = tmp_path / "collective.txt"
    path.write_text(COLLECTIVE)
    assert cli.main([str(path), "--dialect", "mhlo"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "%ars" in err and "--dialect stablehlo" in err
