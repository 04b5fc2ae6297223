"""The chain as a list of steps: which steps run for which options, stopping
after one, timing each by name; and link #1's pass object, which holds its
options and nothing of a run."""

from __future__ import annotations

import gc
import inspect
import os
import traceback

import pytest

import pipeline
from pipeline.reading.parsed import Parsed
from passes.hlo.preserve_control_deps import PreserveControlDeps
from passes.hlo.view import view_of
from bench.synthetic import synthetic_hlo
from pipeline.chain.options import Options
from pipeline.chain.result import build_graph
from pipeline.chain.steps import GIVEN, RELEASED, Read, Work, released_after, steps, takes, unmet
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.xla.isolated import XlaRejected, canonical_text, print_module
from processes import live_children
from pipeline.xla import native

LINKS = ["read", "link #1", "write", "link #2", "link #3", "link #4", "proof"]


def names(options: Options, stop_after: str | None = None) -> list[str]:
    return [step.name for step in steps(options, stop_after)]


def test_the_default_chain_is_the_four_links_between_reading_and_checking():
    assert names(Options()) == LINKS


def test_options_take_their_steps_out():
    assert names(Options(reify=False)) == [s for s in LINKS if s != "link #1"]
    assert names(Options(flatten=False)) == [s for s in LINKS if s != "link #3"]
    assert names(Options(check=False)) == LINKS[:-1]
    # Isolated or not, link #2's own parse of link #1's output is XLA's verdict on it.
    assert names(Options(isolate=False)) == LINKS


def test_stopping_after_link_1_writes_its_output_and_has_xla_read_it_back():
    assert names(Options(), "link #1") == ["read", "link #1", "write", "XLA read-back"]
    assert names(Options(), "link #3") == LINKS[:5]
    with pytest.raises(ValueError, match="no step 'link #3' in this chain"):
        steps(Options(flatten=False), "link #3")


@pytest.mark.parametrize("reify", [True, False])
@pytest.mark.parametrize("flatten", [True, False])
@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("stop_after", [None, "link #1", "write", "link #2"])
def test_each_step_takes_only_what_the_runner_or_an_earlier_step_gives(reify, flatten, check, stop_after):
    options = Options(reify=reify, flatten=flatten, check=check)
    if stop_after == "link #1" and not reify:
        return  # no such step in that chain
    chain = steps(options, stop_after)
    assert unmet(chain) == []
    for step in chain:  # what a step says it gives is a named tuple of Work's fields
        assert set(step.gives._fields) <= set(Work.__dataclass_fields__), step.name
    # What the runner lets go is let go after every step that takes it, and the result keeps none of it.
    released = {name: index for index, names in released_after(chain).items() for name in names}
    assert set(released) == set(RELEASED)
    for index, step in enumerate(chain):
        assert all(released[name] >= index for name in takes(step) if name in released), step.name
    kept = inspect.getsource(Work.result)
    assert not [name for name in RELEASED if f"self.{name}" in kept]


def test_a_step_that_takes_what_no_step_gave_is_named():
    chain = steps(Options())
    without_read = unmet(chain[1:])  # nothing read: link #1 has no module to edit, the printer no name
    assert "link #1: parsed" in without_read and "link #4: name" in without_read
    assert not [m for m in without_read if m.endswith((": options", ": source", ": importer"))]
    assert set(takes(Read())) == set(GIVEN)


def test_timings_hold_each_step_that_ran_by_name():
    timings: dict = {}
    result = pipeline.run(EXAMPLE_HLO, isolate=False, stop_after="link #1", timings=timings)
    assert list(timings) == ["read", "link #1", "write", "XLA read-back"]
    assert all(seconds >= 0 for seconds in timings.values())
    assert result.penguin_source == "" and result.report is None  # nothing after link #1 ran
    timings.clear()
    pipeline.run(EXAMPLE_HLO, isolate=False, timings=timings)
    assert list(timings) == names(Options(isolate=False))


def link_1_by_hand(text: str, bundle: bool = False):
    """Link #1 run by hand on XLA's parse of `text`: (the parse, edited in place, and link #1's result)."""
    parsed = native.read(text)
    module = view_of(parsed)
    done = PreserveControlDeps(bundle=bundle).run(module)
    return parsed, done


def test_the_chain_stopped_after_link_1_writes_what_xla_reads_as_link_1_s_output():
    # Oracle: XLA's printing of link #1 run by hand on XLA's parse of the text.
    parsed, by_hand = link_1_by_hand(EXAMPLE_HLO)
    result = pipeline.run(EXAMPLE_HLO, stop_after="link #1")
    assert "AwsNeuronControlDep" in result.hlo and "control-predecessors" not in result.hlo
    assert canonical_text(result.hlo) == canonical_text(print_module(parsed.serialized()))
    assert result.link1.summary() == by_hand.summary()


def test_options_and_keywords_combine_and_bad_ones_fail_before_any_work(tmp_path):
    missing = str(tmp_path / "no-such.hlo")
    with pytest.raises(ValueError, match="unknown dialect 'mlho'"):
        pipeline.run(missing, Options(), dialect="mlho")  # not "cannot read input"
    with pytest.raises(ValueError, match="unknown scope 'everything'"):
        pipeline.run(missing, Options(scope="everything"))
    result = pipeline.run(EXAMPLE_HLO, Options(dialect="mhlo", isolate=False), check=False)
    assert result.dialect == "mhlo" and result.report is None and "mhlo." in result.mlir + result.penguin_source


def test_link_1_s_pass_object_keeps_nothing_of_a_run():
    other = EXAMPLE_HLO.replace("ENTRY %main", "ENTRY %other")
    reused = PreserveControlDeps(bundle=True)
    before = dict(vars(reused))
    first, second = native.read(EXAMPLE_HLO), native.read(other)
    reused.run(view_of(first))
    assert vars(reused) == before
    second_view = view_of(second)
    reused.run(second_view)
    fresh, _ = link_1_by_hand(other, bundle=True)
    # A second run of the same object names its calls as a fresh object does.
    assert "AwsNeuronControlDep" in print_module(second.serialized())
    assert print_module(second.serialized()) == print_module(fresh.serialized())


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads Linux's /proc")
def test_the_process_keeps_one_warm_child_whatever_the_chain_meets():
    """With `isolate`, every run uses this process's one warm child: whether
    the chain ends well, is refused, or XLA aborts its child (the dead one is
    reaped and the next run starts another), no other child is left; and
    `pipeline.close()` ends it."""
    from pipeline.xla import worker as xla_child

    pipeline.close()
    before = live_children()
    assert pipeline.run(EXAMPLE_HLO, check=False).penguin_source
    warm = xla_child.shared().process.pid
    assert live_children() == before | {warm}
    with pytest.raises(XlaRejected, match=r"^<hlo text>:\d+:\d+: XLA's parser: "):  # refused by XLA's parser
        pipeline.run(EXAMPLE_HLO.replace("ROOT", "ROOT %undefined = f32[] negate(%nope)\n  %was_root ="))
    assert live_children() == before | {warm}
    # XLA's parser kills its child (a parameter past the signature): the next run has a new one.
    with pytest.raises(XlaRejected, match=r"^<hlo text>: XLA's parser aborted \(signal \d+\)"):
        pipeline.run(EXAMPLE_HLO.replace("%x = f32[4]{0} parameter(0)", "%x = f32[4]{0} parameter(5)"))
    pipeline.run(EXAMPLE_HLO, stop_after="link #1", isolate=True)
    again = xla_child.shared().process.pid
    assert again != warm and live_children() == before | {again}
    pipeline.close()
    assert live_children() == before


@pytest.fixture(scope="module")
def long_program() -> str:
    """A program long enough to run in pieces (over 10,000 lines)."""
    source = pipeline.run(synthetic_hlo(8000), check=False, isolate=False).penguin_source
    assert source.count("\n") > 10_000
    return source


def _whole(source: str):
    namespace = {"__name__": "penguin_program"}
    exec(compile(source, "whole", "exec"), namespace)
    return namespace["module"]


def test_a_long_program_run_in_pieces_builds_what_python_builds_from_it_whole(long_program):
    ours, whole = build_graph(long_program, "long"), _whole(long_program)
    assert ours.dep_edges() == whole.dep_edges() and len(ours.dep_edges()) > 1000
    assert [(op.name, op.opcode) for op in ours.instructions()] == \
        [(op.name, op.opcode) for op in whole.instructions()]
    assert gc.isenabled()


def test_a_long_program_s_errors_name_their_own_lines(long_program):
    lines = long_program.splitlines()
    target = max(i for i, line in enumerate(lines) if " = fn_main.op(" in line) - 3  # in the last piece
    broken = lines[:target] + [lines[target].replace(" = fn_main.op(", " = 1 / 0 or fn_main.op(", 1)] + lines[target + 1:]
    with pytest.raises(ZeroDivisionError) as failed:
        build_graph("\n".join(broken) + "\n", "long")
    assert traceback.extract_tb(failed.value.__traceback__)[-1].lineno == target + 1
    unclosed = lines[:target] + [lines[target] + " ("] + lines[target + 1:]
    with pytest.raises(SyntaxError) as refused:
        build_graph("\n".join(unclosed) + "\n", "long")
    assert refused.value.lineno == target + 1


def test_the_verifier_run_alone_judges_a_long_program_as_the_chain_does(long_program, tmp_path):
    """`hlo2penguin verify` runs a long program (in its child, in pieces:
    tests/verifier/test_verify_child_loads_in_pieces.py counts them there) and
    judges it as the chain judged it."""
    from pipeline.verifier import program
    from pipeline.verifier.verify import verify

    hlo = synthetic_hlo(8000)
    path = tmp_path / "long.py"
    path.write_text(long_program)
    report = verify(hlo, path)
    assert len(program.compiled(long_program, "long")) > 1
    chained = pipeline.run(hlo, check=True, isolate=False).report
    assert report.ok and report.lines() == chained.lines() and report.dep_edges > 1000


def _pieces_of(source: str) -> list[tuple[int, str]]:
    from pipeline.verifier import program

    return program._pieces(source.splitlines(keepends=True))


def test_xla_s_child_compiles_half_of_a_long_program_and_it_builds_the_same(long_program, monkeypatch):
    from pipeline.verifier import program
    from pipeline.xla.worker import XlaWorker

    monkeypatch.setattr(program, "_PIECE_LINES", 1000)  # a dozen pieces, half of them the child's

    sent = []
    real_submit = XlaWorker.submit

    def spying(self, command, payload):
        sent.append(command)
        return real_submit(self, command, payload)

    monkeypatch.setattr(XlaWorker, "submit", spying)
    worker = XlaWorker()
    try:
        helped = program.run_program(long_program, "long", worker)["module"]
        assert sent == ["compile"] and len(_pieces_of(long_program)) >= 10
        assert worker.ask("parse", b"HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")[0] == "ok"
    finally:
        worker.close()
    alone = _whole(long_program)
    assert helped.dep_edges() == alone.dep_edges()
    assert [(i.name, i.opcode, i.computation) for i in helped.instructions()] == \
        [(i.name, i.opcode, i.computation) for i in alone.instructions()]


def test_a_piece_the_child_compiled_keeps_the_program_s_line_numbers(long_program):
    """Errors in the child's half (the odd pieces) name their own lines, at
    run time and at compile time, and the child answers on after either."""
    from pipeline.verifier import program
    from pipeline.xla.worker import XlaWorker

    lines = long_program.splitlines()
    start, text = _pieces_of(long_program)[1]
    target = start + next(i for i, line in enumerate(text.splitlines()) if ".op(" in line and " = " in line)
    worker = XlaWorker()
    try:
        broken = lines[:target] + [lines[target].replace(" = ", " = 1 / 0 or ", 1)] + lines[target + 1:]
        with pytest.raises(ZeroDivisionError) as failed:
            program.run_program("\n".join(broken) + "\n", "long", worker)
        assert traceback.extract_tb(failed.value.__traceback__)[-1].lineno == target + 1
        unclosed = lines[:target] + [lines[target] + " ("] + lines[target + 1:]
        with pytest.raises(SyntaxError) as refused:
            program.run_program("\n".join(unclosed) + "\n", "long", worker)
        assert refused.value.lineno == target + 1
        assert worker.alive and worker.ask("compile", __import__("marshal").dumps(("x", [(0, "a = 1\n")])))[0] == "ok"
    finally:
        worker.close()


def test_a_long_program_still_runs_if_xla_s_child_has_died(long_program):
    from pipeline.verifier import program
    from pipeline.xla.worker import XlaWorker

    worker = XlaWorker()
    worker.process.kill()
    worker.process.wait()
    try:
        module = program.run_program(long_program, "long", worker)["module"]
    finally:
        worker.close()
    assert module.dep_edges() == _whole(long_program).dep_edges()
