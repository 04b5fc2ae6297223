"""The independent verifier (`pipeline.verifier.verify`, `hlo2penguin verify`) catches
planted bugs (issue 13, item 2).

Each tampering test edits the program the chain emits (or the chain itself)
and fails if the verifier does not catch it; each first checks that the
untampered program verifies ok with the expected fate, so none passes
vacuously. Then the CLI's exit statuses, and agreement between
`hlo2penguin verify` and `pipeline.run(...).report` on the HLO corpora.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys

import jaxlib._hlo as xla_hlo
import pytest

import pipeline
from pipeline.cli import hlo2penguin as cli
from pipeline.chain.blame import LINKS
from pipeline.verifier.verify import verify
from printer import python_printer
from paths import TESTS as HERE

SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))
DIALECTS = ("stablehlo", "mhlo")

# -- modules ---------------------------------------------------------------------

# a -> b: nothing else orders them; a -> c: c reads a (the data implies it);
# d, e: unrelated to every edge.
SIMPLE = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(f32[4]{0} %x)
  %b = f32[4]{0} exponential(f32[4]{0} %x), control-predecessors={%a}
  %d = f32[4]{0} sqrt(f32[4]{0} %x)
  %e = f32[4]{0} abs(f32[4]{0} %x)
  %c = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %b), control-predecessors={%a}
  %f = f32[4]{0} add(f32[4]{0} %d, f32[4]{0} %e)
  ROOT %g = f32[4]{0} add(f32[4]{0} %c, f32[4]{0} %f)
}
"""

# Only a -> b, which nothing else orders.
ONE_EDGE = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(f32[4]{0} %x)
  %b = f32[4]{0} exponential(f32[4]{0} %x), control-predecessors={%a}
  ROOT %c = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %b)
}
"""


def _conditional(right_edge: bool) -> str:
    """Both branches have instructions a and b; a -> b in %left, and in
    %right too if `right_edge`."""
    return f"""\
HloModule m

%left (p: f32[4]) -> f32[4] {{
  %p = f32[4]{{0}} parameter(0)
  %a = f32[4]{{0}} negate(f32[4]{{0}} %p)
  %b = f32[4]{{0}} abs(f32[4]{{0}} %p), control-predecessors={{%a}}
  ROOT %r = f32[4]{{0}} add(f32[4]{{0}} %a, f32[4]{{0}} %b)
}}

%right (p.1: f32[4]) -> f32[4] {{
  %p.1 = f32[4]{{0}} parameter(0)
  %a = f32[4]{{0}} exponential(f32[4]{{0}} %p.1)
  %b = f32[4]{{0}} log(f32[4]{{0}} %p.1){", control-predecessors={%a}" if right_edge else ""}
  ROOT %r = f32[4]{{0}} multiply(f32[4]{{0}} %a, f32[4]{{0}} %b)
}}

ENTRY %main (flag: pred[], x: f32[4]) -> f32[4] {{
  %flag = pred[] parameter(0)
  %x = f32[4]{{0}} parameter(1)
  ROOT %cond = f32[4]{{0}} conditional(pred[] %flag, f32[4]{{0}} %x, f32[4]{{0}} %x), true_computation=%left, false_computation=%right
}}
"""


COND = _conditional(right_edge=False)
COND_BOTH = _conditional(right_edge=True)

# A constant (no operand) after p, read by r1 and r2: link #1 reroutes the
# edge to both readers.
CONST = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %p = f32[4]{0} negate(f32[4]{0} %x)
  %k = f32[4]{0} constant({1, 2, 3, 4}), control-predecessors={%p}
  %r1 = f32[4]{0} multiply(f32[4]{0} %x, f32[4]{0} %k)
  %r2 = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %k)
  %s = f32[4]{0} add(f32[4]{0} %r1, f32[4]{0} %r2)
  ROOT %t = f32[4]{0} add(f32[4]{0} %s, f32[4]{0} %p)
}
"""

# p -> loop: p does not feed the while; res and y read it.
WHILE = """\
HloModule m

%body (state: (s32[], f32[4])) -> (s32[], f32[4]) {
  %state = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[4]{0}) %state), index=0
  %one = s32[] constant(1)
  %next = s32[] add(s32[] %i, s32[] %one)
  %buf = f32[4]{0} get-tuple-element((s32[], f32[4]{0}) %state), index=1
  %twice = f32[4]{0} add(f32[4]{0} %buf, f32[4]{0} %buf)
  ROOT %out = (s32[], f32[4]{0}) tuple(s32[] %next, f32[4]{0} %twice)
}

%cond (state.1: (s32[], f32[4])) -> pred[] {
  %state.1 = (s32[], f32[4]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element((s32[], f32[4]{0}) %state.1), index=0
  %limit = s32[] constant(3)
  ROOT %lt = pred[] compare(s32[] %i.1, s32[] %limit), direction=LT
}

ENTRY %main (x: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4]{0} parameter(0)
  %p = f32[4]{0} negate(f32[4]{0} %x)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(s32[] %zero, f32[4]{0} %x)
  %loop = (s32[], f32[4]{0}) while((s32[], f32[4]{0}) %init), condition=%cond, body=%body, control-predecessors={%p}
  %res = f32[4]{0} get-tuple-element((s32[], f32[4]{0}) %loop), index=1
  %y = f32[4]{0} multiply(f32[4]{0} %res, f32[4]{0} %res)
  ROOT %out = (f32[4]{0}, f32[4]{0}) tuple(f32[4]{0} %y, f32[4]{0} %p)
}
"""

# s = async-start -> u = async-update -> d = async-done; r reads d and must
# run after s.
ASYNC = """\
HloModule m

%async_comp (q: f32[4]) -> f32[4] {
  %q = f32[4]{0} parameter(0)
  ROOT %cc = f32[4]{0} custom-call(f32[4]{0} %q), custom_call_target="foo"
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %s = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(f32[4]{0} %x), calls=%async_comp
  %u = ((f32[4]{0}), f32[4]{0}, s32[]) async-update(((f32[4]{0}), f32[4]{0}, s32[]) %s), calls=%async_comp
  %d = f32[4]{0} async-done(((f32[4]{0}), f32[4]{0}, s32[]) %u), calls=%async_comp
  %r = f32[4]{0} negate(f32[4]{0} %d), control-predecessors={%s}
  ROOT %t = f32[4]{0} add(f32[4]{0} %r, f32[4]{0} %x)
}
"""

# Our reader reads it; XLA's parser refuses the attribute.
XLA_REFUSES = """\
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(f32[4]{0} %x), bogus_attr=3
  ROOT %b = f32[4]{0} exponential(f32[4]{0} %x), control-predecessors={%a}
}
"""

MODULES = {"SIMPLE": SIMPLE, "ONE_EDGE": ONE_EDGE, "COND": COND, "COND_BOTH": COND_BOTH, "CONST": CONST,
           "WHILE": WHILE, "ASYNC": ASYNC}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_are_real_hlo(name):
    xla_hlo.hlo_module_from_text(MODULES[name])


def test_xla_refuses_the_bad_module():
    with pytest.raises(Exception, match="bogus_attr"):
        xla_hlo.hlo_module_from_text(XLA_REFUSES)


# -- helpers -------------------------------------------------------------------------


@functools.cache
def chain(text: str, dialect: str = "stablehlo") -> pipeline.chain.result.ChainResult:
    return pipeline.run(text, dialect=dialect, isolate=False)


def source_of(text: str, dialect: str = "stablehlo") -> str:
    return chain(text, dialect).penguin_source


def var(source: str, name: str, computation: str) -> str:
    """The program's variable for the op named `name` in `computation` (read
    from what the program builds, whatever form its lines take)."""
    from pipeline.verifier.program import run_program
    from printer.penguin import Instruction

    found = [v for v, value in run_program(source, "<test>").items()
             if isinstance(value, Instruction) and (value.name, value.computation) == (name, computation)]
    assert len(found) == 1, (name, computation, found)
    return found[0]


def dep(pred: str, succ: str) -> str:
    """A dep edge as link #4 writes it: the real printer's statement, on the successor."""
    return (f"{succ}.add_dep_edge(Dependency.DependencyEdge(src={pred}, dst={succ}, idx_map=[], "
            f"kind=Dependency.EdgeKind.ORDERED, predicates=[]))\n")


def without(source: str, line: str) -> str:
    assert source.count(line) == 1, (line, source)
    return source.replace(line, "")


def fates(report) -> dict[tuple[str, str, str], str]:
    return {(e.computation, e.predecessor, e.successor): e.fate for e in report.edges}


def spurious(report) -> set[tuple[str, str, str]]:
    return {(s.computation, s.predecessor, s.successor) for s in report.spurious}


def assert_good(text: str, expected: dict, dialect: str = "stablehlo") -> str:
    """The untampered program verifies ok, with the expected fates; its source."""
    source = source_of(text, dialect)
    report = verify(text, source)
    assert report.ok, report.lines()
    assert fates(report) == expected
    assert spurious(report) == set()
    return source


def cli_verify(tmp_path, hlo: str, program: str, *extra: str, capsys) -> tuple[int, str, str]:
    hlo_path, program_path = tmp_path / "module.hlo", tmp_path / "program.py"
    hlo_path.write_text(hlo)
    program_path.write_text(program)
    status = cli.main(["verify", str(hlo_path), str(program_path), *extra])
    out, err = capsys.readouterr()
    return status, out, err


# -- 1. tampered programs ---------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_dropped_dep_edge_is_lost(tmp_path, capsys, dialect):
    source = assert_good(SIMPLE, {("main", "a", "b"): "preserved", ("main", "a", "c"): "preserved"}, dialect)
    tampered = without(source, dep("a", "b"))
    report = verify(SIMPLE, tampered)
    assert not report.ok
    assert fates(report) == {("main", "a", "b"): "lost", ("main", "a", "c"): "preserved"}
    assert spurious(report) == set()
    status, out, _ = cli_verify(tmp_path, SIMPLE, tampered, capsys=capsys)
    assert status == 1
    assert "func @main: %a -> %b: lost" in out


def test_a_dropped_edge_the_data_implies_is_not_lost():
    # The control test for the one above: c reads a, so without its dep
    # edge a -> c is still ordered (rerouted through the data), not lost.
    report = verify(SIMPLE, without(source_of(SIMPLE), dep("a", "c")))
    assert report.ok, report.lines()
    assert fates(report)[("main", "a", "c")] == "rerouted"


def test_b_an_added_dep_edge_between_unrelated_ops_is_spurious():
    source = assert_good(SIMPLE, {("main", "a", "b"): "preserved", ("main", "a", "c"): "preserved"})
    report = verify(SIMPLE, source + dep("d", "e"))
    assert not report.ok
    assert spurious(report) == {("main", "d", "e")}
    assert report.lost == []
    assert report.dep_edges == 3


def test_c_a_reversed_dep_edge_is_spurious_and_its_edge_lost():
    source = assert_good(SIMPLE, {("main", "a", "b"): "preserved", ("main", "a", "c"): "preserved"})
    report = verify(SIMPLE, source.replace(dep("a", "b"), dep("b", "a")))
    assert not report.ok
    assert spurious(report) == {("main", "b", "a")}
    assert fates(report) == {("main", "a", "b"): "lost", ("main", "a", "c"): "preserved"}


def test_c_a_reversed_dep_edge_the_data_implies_is_spurious():
    # c reads a: reversed, the edge is still ordered by the data (not lost),
    # but the reversed dep edge (a cycle with the data edge) is spurious.
    source = source_of(SIMPLE)
    report = verify(SIMPLE, source.replace(dep("a", "c"), dep("c", "a")))
    assert not report.ok
    assert spurious(report) == {("main", "c", "a")}
    assert fates(report) == {("main", "a", "b"): "preserved", ("main", "a", "c"): "rerouted"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_d_a_dep_edge_moved_to_the_same_names_in_another_computation(dialect):
    source = assert_good(COND, {("left", "a", "b"): "preserved"}, dialect)
    a, b = var(source, "a", "left"), var(source, "b", "left")
    a2, b2 = var(source, "a", "right"), var(source, "b", "right")
    assert (a, b) != (a2, b2)
    report = verify(COND, source.replace(dep(a, b), dep(a2, b2)))
    assert not report.ok
    assert fates(report) == {("left", "a", "b"): "lost"}
    assert spurious(report) == {("right", "a", "b")}


def test_d_a_dep_edge_half_moved_to_another_computation():
    # Its successor moved only: %right's b after %left's a.
    source = source_of(COND)
    b2 = var(source, "b", "right")
    report = verify(COND, source.replace(dep("a", var(source, "b", "left")), dep("a", b2)))
    assert fates(report) == {("left", "a", "b"): "lost"}
    assert spurious(report) == {("right", "a", "b")}


def test_d_an_added_dep_edge_across_branches_with_the_same_edge_is_spurious():
    # Both branches have a -> b, and the program both dep edges; an extra dep
    # edge from %left's a to %right's b orders two branches of a conditional,
    # which no HLO edge does.
    source = assert_good(COND_BOTH, {("left", "a", "b"): "preserved", ("right", "a", "b"): "preserved"})
    tampered = source + dep(var(source, "a", "left"), var(source, "b", "right"))
    report = verify(COND_BOTH, tampered)
    assert not report.ok
    assert len(report.spurious) == 1


@pytest.mark.parametrize("reader", ["r1", "r2"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_e_a_reroute_carried_by_only_some_readers_is_lost(reader, dialect):
    source = assert_good(CONST, {("main", "p", "k"): "rerouted"}, dialect)
    assert dep("p", "r1") in source and dep("p", "r2") in source
    report = verify(CONST, without(source, dep("p", reader)))
    assert not report.ok
    assert fates(report) == {("main", "p", "k"): "lost"}
    assert spurious(report) == set()


def test_e_a_reroute_onto_the_successor_itself_is_spurious():
    # The constant has no operand: a dep edge onto it instead of its readers
    # leaves the readers unordered, and lies about what carries the edge.
    source = source_of(CONST)
    tampered = without(without(source, dep("p", "r1")), dep("p", "r2")) + dep("k", "p")
    report = verify(CONST, tampered)
    assert fates(report) == {("main", "p", "k"): "lost"}
    assert spurious(report) == {("main", "k", "p")}


# -- 2. modules ---------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_f_a_dep_edge_the_printer_does_not_write_is_lost_at_link_4(monkeypatch, dialect):
    good = pipeline.run(ONE_EDGE, dialect=dialect, isolate=False)
    assert fates(good.report) == {("main", "a", "b"): "preserved"} and good.report.ok

    original = python_printer._Printer.control_deps

    def skip_first(self):
        assert self.pending, "the printer has no control-dep call to skip"
        self.pending = self.pending[1:]
        return original(self)

    monkeypatch.setattr(python_printer._Printer, "control_deps", skip_first)
    result = pipeline.run(ONE_EDGE, dialect=dialect, isolate=False)
    assert "add_dep_edge" not in result.penguin_source
    assert not result.report.ok
    [edge] = result.report.edges
    assert (edge.computation, edge.predecessor, edge.successor, edge.fate) == ("main", "a", "b", "lost")
    assert edge.lost_at == LINKS[4]
    # The independent verifier, on the text alone, agrees.
    assert fates(verify(ONE_EDGE, result.penguin_source)) == {("main", "a", "b"): "lost"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_g_async_start_update_done_around_an_edge(dialect):
    result = pipeline.run(ASYNC, dialect=dialect, isolate=False)
    report = result.report
    assert report.ok, report.lines()
    assert set(fates(report)) == {("main", "s", "r")}
    assert fates(report)[("main", "s", "r")] in ("preserved", "rerouted")
    result.module().schedule()  # no cycle
    again = verify(ASYNC, result.penguin_source)
    assert fates(again) == fates(report) and again.ok
    # Without its dep edge the data still orders r after s (r reads d, which
    # reads u, which reads s): kept, not lost.
    for line in re.findall(r"^\w+\.add_dep_edge\(.*\)\n", result.penguin_source, re.M):
        assert verify(ASYNC, without(result.penguin_source, line)).ok


@pytest.mark.parametrize("dialect", DIALECTS)
def test_h_an_edge_onto_a_while_lands_on_the_while(dialect):
    result = pipeline.run(WHILE, dialect=dialect, isolate=False)
    assert result.report.ok, result.report.lines()
    assert fates(result.report) == {("main", "p", "loop"): "preserved"}
    edges = result.module().dep_edges()
    assert ("main", "p", "loop") in edges
    assert {e for e in edges if e[1] == "p"} == {("main", "p", "loop")}  # not on its readers
    assert fates(verify(WHILE, result.penguin_source)) == {("main", "p", "loop"): "preserved"}


def test_h_an_edge_onto_a_while_weakened_to_its_readers_is_lost():
    # What a chain that weakened p -> loop to the while's reader would emit
    # (y; the get-tuple-element res has no op of its own): the while itself
    # may start before p.
    source = source_of(WHILE)
    assert dep("p", "loop") in source
    report = verify(WHILE, source.replace(dep("p", "loop"), dep("p", var(source, "y", "main"))))
    assert not report.ok
    assert fates(report) == {("main", "p", "loop"): "lost"}


# -- 3. the CLI -------------------------------------------------------------------------------


def test_cli_good_pair(tmp_path, capsys):
    status, out, err = cli_verify(tmp_path, SIMPLE, source_of(SIMPLE), capsys=capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[-1] == ("2 HLO control edge(s): 2 preserved, 0 rerouted, 0 dropped, 0 lost; "
                         "2 dep edge(s) in the Penguin program")
    assert "func @main: %a -> %b: preserved" in lines


def test_cli_good_pair_json(tmp_path, capsys):
    status, out, _ = cli_verify(tmp_path, CONST, source_of(CONST), "--json", capsys=capsys)
    assert status == 0
    data = json.loads(out)
    assert data["totals"]["rerouted"] == 1 and data["spurious"] == []
    assert [(e["predecessor"], e["successor"], e["fate"]) for e in data["edges"]] == [("p", "k", "rerouted")]


def test_cli_tampered_pair(tmp_path, capsys):
    tampered = without(source_of(SIMPLE), dep("a", "b")) + dep("d", "e")
    status, out, err = cli_verify(tmp_path, SIMPLE, tampered, capsys=capsys)
    assert status == 1, err
    lines = out.splitlines()
    assert any(line.startswith("func @main: %a -> %b: lost") for line in lines), out
    assert any(line.startswith("func @main: %d -> %e: spurious") for line in lines), out
    assert lines[-1] == ("2 HLO control edge(s): 1 preserved, 0 rerouted, 0 dropped, 1 lost; "
                         "2 dep edge(s) in the Penguin program, 1 spurious")


def test_cli_tampered_pair_json(tmp_path, capsys):
    tampered = source_of(SIMPLE).replace(dep("a", "b"), dep("b", "a"))
    status, out, _ = cli_verify(tmp_path, SIMPLE, tampered, "--json", capsys=capsys)
    assert status == 1
    data = json.loads(out)
    assert data["totals"]["lost"] == 1 and data["totals"]["spurious"] == 1
    assert [(s["computation"], s["predecessor"], s["successor"]) for s in data["spurious"]] == [("main", "b", "a")]


def _one_line_error(status, out, err, *needles):
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("hlo2penguin verify: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    for needle in needles:
        assert needle in err, err


def test_cli_missing_program(tmp_path, capsys):
    (tmp_path / "module.hlo").write_text(SIMPLE)
    status = cli.main(["verify", str(tmp_path / "module.hlo"), str(tmp_path / "nowhere.py")])
    _one_line_error(status, *capsys.readouterr(), "nowhere.py", "No such file")


def test_cli_missing_module(tmp_path, capsys):
    (tmp_path / "program.py").write_text(source_of(SIMPLE))
    status = cli.main(["verify", str(tmp_path / "nowhere.hlo"), str(tmp_path / "program.py")])
    _one_line_error(status, *capsys.readouterr(), "nowhere.hlo")


@pytest.mark.parametrize("program,needle", [
    ("raise RuntimeError('planted')\n", "RuntimeError: planted"),
    ("x = (\n", "SyntaxError"),
    ("module = 3\n", "no Penguin `module`"),
], ids=["raises", "syntax-error", "no-module"])
def test_cli_bad_program(tmp_path, capsys, program, needle):
    status, out, err = cli_verify(tmp_path, SIMPLE, program, capsys=capsys)
    _one_line_error(status, out, err, "program.py", needle)


def test_cli_program_that_exits(tmp_path, capsys):
    try:
        status, out, err = cli_verify(tmp_path, SIMPLE, "import sys\nsys.exit(0)\n", capsys=capsys)
    except SystemExit as exit_:
        status, (out, err) = exit_.code, capsys.readouterr()
    _one_line_error(status, out, err, "program.py")


def test_cli_hlo_xla_refuses(tmp_path, capsys):
    status, out, err = cli_verify(tmp_path, XLA_REFUSES, source_of(SIMPLE), capsys=capsys)
    _one_line_error(status, out, err, "module.hlo:5:", "XLA's parser", "bogus_attr")


def test_console_script(tmp_path):
    assert SCRIPT, "the console script hlo2penguin is not installed"
    (tmp_path / "module.hlo").write_text(SIMPLE)
    (tmp_path / "good.py").write_text(source_of(SIMPLE))
    (tmp_path / "bad.py").write_text(without(source_of(SIMPLE), dep("a", "b")))
    # One process, three runs: good (0), tampered (1), missing program (2).
    script = (f"{SCRIPT} verify module.hlo good.py; echo status=$?; "
              f"{SCRIPT} verify module.hlo bad.py; echo status=$?; "
              f"{SCRIPT} verify module.hlo missing.py; echo status=$?")
    run = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    statuses = re.findall(r"^status=(\d+)$", run.stdout, re.M)
    assert statuses == ["0", "1", "2"], (run.stdout, run.stderr)
    assert "func @main: %a -> %b: lost" in run.stdout
    assert run.stderr == "hlo2penguin verify: error: cannot read program 'missing.py': No such file or directory\n"


# -- 4. agreement with the chain's report ------------------------------------------------------

# XLA's importer refuses these whatever the chain does (tests/chain/test_pipeline_dumps.py pins why).
_XLA_REFUSES = {"gpu_async_gemm_tuple.hlo", "gpu_combined_all_reduce.hlo", "gpu_pipelined_p2p_loop.hlo"}
CORPUS = sorted([*(HERE / "xla_style").glob("*.hlo"),
                 *(p for p in (HERE / "pipeline_dumps").glob("*.hlo") if p.name not in _XLA_REFUSES)])


def test_the_excluded_dumps_are_the_ones_xla_refuses():
    from xla_refusals import REFUSED
    assert set(REFUSED) == _XLA_REFUSES


@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS])
def test_cli_agrees_with_the_chain(path, tmp_path, capsys):
    result = pipeline.run(str(path), isolate=False)
    capsys.readouterr()
    program = tmp_path / "program.py"
    program.write_text(result.penguin_source)
    status = cli.main(["verify", str(path), str(program), "--json"])
    out, err = capsys.readouterr()
    data = json.loads(out)
    chain_fates = {(e.computation, e.predecessor, e.successor, e.fate) for e in result.report.edges}
    cli_fates = {(e["computation"], e["predecessor"], e["successor"], e["fate"]) for e in data["edges"]}
    assert cli_fates == chain_fates
    assert len(data["edges"]) == len(result.report.edges)
    assert data["spurious"] == [] and result.report.spurious == []
    assert status == (0 if result.report.ok else 1), err


def test_a_tuple_predecessor_is_kept_by_its_elements_even_where_the_importer_made_it_an_op():
    # Found by the property tests: %t feeds the while, so the importer makes it
    # a stablehlo.tuple; link #1 has its elements stand in for it. A tuple
    # orders nothing of its own: S after every element is S after %t.
    text = """HloModule m

%cond {
  %p = (s32[], f32[]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  ROOT %lt = pred[] compare(%i, %i), direction=LT
}

%body {
  ROOT %p = (s32[], f32[]) parameter(0)
}

ENTRY %main {
  %a = f32[] parameter(0)
  %k = s32[] constant(0)
  %x = f32[] negate(%a)
  %t = (s32[], f32[]) tuple(%k, %a), control-predecessors={%x}
  %w = (s32[], f32[]) while(%t), condition=%cond, body=%body
  %c = f32[] constant(1), control-predecessors={%t}
  ROOT %r = f32[] add(%a, %c)
}
"""
    import jaxlib._hlo as xla_hlo
    xla_hlo.hlo_module_from_text(text)
    result = pipeline.run(text, isolate=False)
    assert any(i.name == "t" and i.opcode == "stablehlo.tuple" for i in result.module().instructions())
    fates = {(e.predecessor, e.successor): e.fate for e in result.report.edges}
    assert fates[("t", "c")] == "rerouted" and result.report.ok
    # Without the dep edge from %k (the element that is an op), %r need not come after %t.
    tampered = result.penguin_source.replace(dep("k", "r"), "")
    assert tampered != result.penguin_source
    assert {(e.predecessor, e.successor): e.fate for e in verify(text, tampered).edges}[("t", "c")] == "lost"
