"""Each link's output checked as it is handed on (`pipeline.chain.link_checks`).

A link made to hand on a broken module (monkeypatched here) is caught where
it hands it on: one line that names the link, exit 2 from the CLI, no
traceback. Link #3 runs under MLIR's PassManager verifier always; the other
checks come with `verify_each`, which the suite turns on (conftest.py).
"""

from __future__ import annotations

import inspect
import functools
import os

import pytest

import pipeline
from passes.mlir import FlattenControlDepTupleOperands
from pipeline.chain import link_checks, steps
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.chain.link_checks import LinkCheckFailed
from pipeline.chain.options import Options
from pipeline.cli import check, hlo2penguin, regress
from pipeline.xla.isolated import XlaRejected

TWO_PREDS = """\
HloModule two_preds

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %b = f32[4]{0} exponential(%x)
  %c = f32[4]{0} abs(%x)
  ROOT %s = f32[4]{0} add(%c, %x), control-predecessors={%b, %a}
}
"""


def _break_link1(monkeypatch):
    """Link #1 hands on a custom-call that reads an instruction the module does not have."""
    reify = steps.Reify.run

    @functools.wraps(reify)
    def broken(self, parsed, options):
        done = reify(self, parsed, options)
        for computation in parsed.proto.computations:
            for instruction in computation.instructions:
                if instruction.opcode == "custom-call":
                    instruction.operand_ids.append(987654)
                    return done
        return done

    monkeypatch.setattr(steps.Reify, "run", broken)


def _drop_return(module) -> None:
    """The entry function without its terminator: MLIR's verifier refuses it
    (`module`: an ir.Module or its operation)."""
    for op in module.operation.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            block = op.operation.regions[0].blocks[0]
            list(block.operations)[-1].operation.erase()
            return


def _break_link2(monkeypatch):
    imported = steps.Import.run

    @functools.wraps(imported)  # its signature: what the runner hands it
    def broken(self, *args, **kwargs):
        done = imported(self, *args, **kwargs)
        _drop_return(done.mlir)
        return done

    monkeypatch.setattr(steps.Import, "run", broken)


def _run_cli(argv, capfd) -> tuple[int, list[str]]:
    code = hlo2penguin.main(argv)
    return code, capfd.readouterr().err.splitlines()


# -- the suite runs with verify_each on ------------------------------------------------

def test_the_suite_runs_with_verify_each_on():
    assert os.environ.get(link_checks.ENVIRONMENT) == "1"  # conftest.py
    assert link_checks.verify_each(Options())  # the default run of every test checks each link


def test_a_run_without_the_keyword_checks_each_link_in_the_suite(monkeypatch):
    _break_link2(monkeypatch)
    with pytest.raises(LinkCheckFailed, match="link #2 hands on a module MLIR's verifier refuses"):
        pipeline.run(TWO_PREDS, flatten=False)


def test_without_verify_each_link_2_s_output_goes_on_unchecked(monkeypatch):
    monkeypatch.setenv(link_checks.ENVIRONMENT, "0")
    assert not link_checks.verify_each(Options()) and link_checks.verify_each(Options(verify_each=True))
    _break_link2(monkeypatch)
    result = pipeline.run(TWO_PREDS, flatten=False, check=False)  # the printer reads what it is given
    assert "add_dep_edge" in result.penguin_source
    with pytest.raises(LinkCheckFailed, match="link #2 hands on"):
        pipeline.run(TWO_PREDS, flatten=False, check=False, verify_each=True)


# -- a link that hands on a broken module is caught -------------------------------------

def test_link_1_output_xla_refuses_is_one_line_naming_link_1(monkeypatch):
    _break_link1(monkeypatch)
    with pytest.raises(LinkCheckFailed) as err:
        pipeline.run(TWO_PREDS, verify_each=True)
    line = str(err.value)
    assert line.startswith("<hlo text>: link #1 hands on a module XLA refuses: ") and "\n" not in line


def test_link_1_output_is_caught_by_the_cli_with_exit_2(monkeypatch, capfd, tmp_path):
    _break_link1(monkeypatch)
    path = tmp_path / "in.hlo"
    path.write_text(TWO_PREDS)
    for emit in ("penguin", "hlo"):
        code, err = _run_cli([str(path), "--verify-each", "--emit", emit, "-o", str(tmp_path / "out")], capfd)
        assert code == 2 and len(err) == 1, err
        assert err[0].startswith(f"hlo2penguin: error: {path}: link #1 hands on a module XLA refuses: ")
        assert not (tmp_path / "out").exists()


def test_link_1_output_whose_printing_xla_s_parser_refuses_names_link_1(monkeypatch):
    parse = link_checks.parse

    def refuse(text, source=None, **kwargs):  # link #1's printing, not the input's
        if "AwsNeuronControlDep" in text:
            raise XlaRejected(f"{source}: 3:4: XLA's parser: expected '('")
        return parse(text, source, **kwargs)

    monkeypatch.setattr(link_checks, "parse", refuse)
    with pytest.raises(LinkCheckFailed, match=r"^<hlo text>: link #1 hands on a module whose printing XLA's "
                                              r"parser refuses: <hlo text> after link #1: 3:4: XLA's parser"):
        pipeline.run(TWO_PREDS, verify_each=True)


def test_an_input_whose_own_printing_xla_s_parser_refuses_is_no_fault_of_link_1(monkeypatch):
    """XLA's printer writes some modules as text its parser refuses: then
    the text check of link #1's output is no verdict on link #1."""
    def refuse(text, source=None, **_):
        raise XlaRejected(f"{source}: 3:4: XLA's parser: expected '('")

    monkeypatch.setattr(link_checks, "parse", refuse)
    monkeypatch.setattr(link_checks, "print_module", lambda *_, **__: "printed")
    work = steps.Work(TWO_PREDS, Options(), read_proto=b"proto")
    link_checks.check_link1(work)  # no error


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_link_2_output_mlir_refuses_is_one_line_naming_link_2(monkeypatch, capfd, tmp_path, dialect):
    _break_link2(monkeypatch)
    path = tmp_path / "in.hlo"
    path.write_text(TWO_PREDS)
    code, err = _run_cli([str(path), "--verify-each", "--no-flatten", "--dialect", dialect], capfd)
    assert code == 2 and len(err) == 1 and "Traceback" not in err[0], err
    assert err[0].startswith(f"hlo2penguin: error: {path}: link #2 hands on a module MLIR's verifier refuses: "
                             "%s in %main: block with no terminator"), err


@pytest.mark.parametrize("verify_each", [False, True])
def test_link_3_runs_under_the_pass_manager_s_verifier(monkeypatch, verify_each):
    """Always: the PassManager verifies the module after link #3."""
    monkeypatch.setenv(link_checks.ENVIRONMENT, "0")
    run = FlattenControlDepTupleOperands.run

    def broken(self, module):
        result = run(self, module)
        _drop_return(module)
        return result

    monkeypatch.setattr(FlattenControlDepTupleOperands, "run", broken)
    with pytest.raises(LinkCheckFailed) as err:
        pipeline.run(TWO_PREDS, verify_each=verify_each)
    assert str(err.value).startswith("<hlo text>: MLIR's verifier refuses the module after link #3 "
                                     "(stablehlo-flatten-control-dep-tuple-operands): %s in %main: "
                                     "block with no terminator")


def test_link_3_s_own_error_passes_through_the_pass_manager(monkeypatch):
    def refuse(self, module):
        raise link_checks.ChainError("flatten says no")

    monkeypatch.setattr(FlattenControlDepTupleOperands, "run", refuse)
    with pytest.raises(link_checks.ChainError, match="^flatten says no$"):
        pipeline.run(TWO_PREDS)


# -- nothing else changes ------------------------------------------------------------------

@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_the_checks_change_no_output(monkeypatch, dialect):
    on = pipeline.run(EXAMPLE_HLO, dialect=dialect, verify_each=True)
    monkeypatch.setenv(link_checks.ENVIRONMENT, "0")
    off = pipeline.run(EXAMPLE_HLO, dialect=dialect)
    assert on.penguin_source == off.penguin_source and on.report.lines() == off.report.lines()
    assert on.hlo == off.hlo
    assert pipeline.run(EXAMPLE_HLO, stop_after="link #1", verify_each=True).hlo == \
        pipeline.run(EXAMPLE_HLO, stop_after="link #1").hlo


def test_the_option_is_in_every_place_the_chain_s_options_are():
    assert inspect.signature(pipeline.run).parameters["verify_each"].default is False
    assert "verify_each: bool = False" in pipeline.run.__doc__
    for parser in (hlo2penguin.build_parser(), check.build_parser(), regress.build_parser()):
        assert "--verify-each" in parser.format_help()
    assert regress.build_parser().parse_args(["--verify-each"]).verify_each is True


def test_the_checks_of_link_1_run_xla_in_its_child_even_in_process(monkeypatch):
    """`isolate=False` runs the chain's XLA in this process; the checks of
    link #1's output still run XLA in its child: the chain's own output is
    no input the user vouched for (XLA's parser can crash on its printing)."""
    asked = []

    def recorded(function):
        def call(*args, isolate=False, **kwargs):
            asked.append((function.__name__, isolate))
            return function(*args, isolate=isolate, **kwargs)
        return call

    monkeypatch.setattr(link_checks, "parse", recorded(link_checks.parse))
    monkeypatch.setattr(link_checks, "print_module", recorded(link_checks.print_module))
    assert pipeline.run(TWO_PREDS, isolate=False, verify_each=True).report.ok
    assert ("print_module", True) in asked and ("parse", True) in asked
    assert all(isolate for _, isolate in asked), asked
