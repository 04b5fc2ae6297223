"""One declaration per option (`passes.options`): an option a pass declares
as a dataclass field turns up, with no other edit, in every place derived
from it: hlo2penguin-opt's flags and --help, its pipeline-element syntax, the
error that lists the valid options, the check of a value, and (once the
chain re-declares it with `pass_option`) the chain's options and
hlo2penguin's flags."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import pipeline.chain.options
from passes.hlo.preserve_control_deps import PreserveControlDeps
from passes.mlir import FlattenControlDepTupleOperands, FlattenError
from passes.options import OptionError, option, options, parse_element, pass_option, pass_values, split_top_level
from pipeline.chain.options import Options
from pipeline.cli import hlo2penguin, opt
from pipeline.cli.support import UsageError, chain_options, option_values
from pipeline.xla.mlir_context import make_context

MAX_DEPTH_HELP = "flatten at most this many levels of tuples (scratch)"
MNEMONIC = "flatten-control-dep-tuple-operands"
ADDED: list = []  # the passes Scratch.add_to was given, in order


@dataclass(frozen=True)
class Scratch(FlattenControlDepTupleOperands):
    """Link #3 with two more options, declared once each, here."""

    max_depth: int = option(3, help=MAX_DEPTH_HELP)
    mode: str = option("fast", choices=("fast", "slow"), help="how to walk (scratch)")

    def add_to(self, pm) -> None:
        ADDED.append(self)
        super().add_to(pm)


@dataclass(frozen=True)
class ScratchOptions(Options):
    """The chain, running Scratch, with its own default for max_depth."""

    max_depth: int = pass_option(Scratch, "max_depth", link="link #3", default=4)


# -- the declarations as they stand --------------------------------------------------

def test_link_3_s_options_are_its_declared_fields_and_dialect_is_not_one():
    declared = options(FlattenControlDepTupleOperands)
    assert [o.key for o in declared] == ["scope", "keep-attributes", "until-unchanged"]
    assert [o.default for o in declared] == ["main", False, False]
    assert declared[0].choices == ("main", "first", "all")
    assert [o.key for o in options(PreserveControlDeps)] == ["bundle"]  # `direct` is internal: a plain field


def test_the_chain_re_declares_them_with_its_own_default_scope():
    flags = [o.flag for o in options(Options)]
    assert flags == ["no-flatten", "dialect", "scope", "keep-attributes", "bundle", "verify-each"]
    scope = next(o for o in options(Options) if o.name == "scope")
    assert (scope.default, scope.choices, scope.pass_class) == ("all", ("main", "first", "all"),
                                                                FlattenControlDepTupleOperands)
    assert Options().scope == "all" and FlattenControlDepTupleOperands().scope == "main"
    assert pass_values(Options(bundle=True), PreserveControlDeps) == {"bundle": True}


# -- a new option, found everywhere ----------------------------------------------------

def test_the_new_option_is_a_flag_of_hlo2penguin_opt():
    parser = opt.build_parser(Scratch)
    text = parser.format_help()
    assert "--max-depth MAX_DEPTH" in text and MAX_DEPTH_HELP in " ".join(text.split())
    assert "--mode {fast,slow}" in text
    assert option_values(parser.parse_args(["in.mlir"]), options(Scratch))["max_depth"] == 3
    given = option_values(parser.parse_args(["--max-depth", "7", "--mode=slow", "--keep-attributes"]),
                          options(Scratch))
    assert given == {"scope": "main", "keep_attributes": True, "until_unchanged": False, "max_depth": 7,
                     "mode": "slow"}
    with pytest.raises(UsageError, match="argument --max-depth: invalid int value: 'deep'"):
        parser.parse_args(["--max-depth", "deep"])
    with pytest.raises(UsageError, match="argument --mode: invalid choice: 'slowly'"):
        parser.parse_args(["--mode", "slowly"])


def test_the_new_option_is_read_in_a_pipeline_element():
    ADDED.clear()
    opt.build_pass_manager(make_context(), f"builtin.module({MNEMONIC}{{max-depth=5 until-unchanged=1}},"
                           f"stablehlo-{MNEMONIC},canonicalize)", [], flatten=Scratch,
                           **option_values(opt.build_parser(Scratch).parse_args(["--mode=slow"]), options(Scratch)))
    first, second = ADDED
    assert (first.max_depth, first.until_unchanged, first.mode, first.dialect.name) == (5, True, "slow", "mhlo")
    assert (second.max_depth, second.until_unchanged, second.mode, second.dialect.name) == (3, False, "slow",
                                                                                             "stablehlo")
    assert parse_element(Scratch, "max-depth=9 keep-attributes=false") == {"max_depth": 9, "keep_attributes": False}


def test_the_new_option_is_in_the_error_that_lists_the_valid_ones():
    with pytest.raises(OptionError) as err:
        opt.build_pass_manager(make_context(), f"builtin.module({MNEMONIC}{{depth=5}})", [], flatten=Scratch)
    assert str(err.value) == (f"{MNEMONIC}: unknown option(s) depth; it takes scope=main|first|all, "
                              "keep-attributes=true|false, until-unchanged=true|false, max-depth=INT "
                              "and mode=fast|slow")
    with pytest.raises(OptionError, match=f"^{MNEMONIC}: max-depth=five: expected an integer$"):
        parse_element(Scratch, "max-depth=five", MNEMONIC)


def test_the_new_option_s_choices_are_checked_with_the_message_of_scope():
    with pytest.raises(FlattenError, match="^unknown mode 'slowly': choose one of fast, slow$"):
        Scratch(mode="slowly")
    with pytest.raises(FlattenError, match="^unknown scope 'x': choose one of main, first, all$"):
        Scratch(scope="x")


def test_the_new_option_re_declared_by_the_chain_is_a_flag_of_hlo2penguin(monkeypatch):
    monkeypatch.setattr(pipeline.chain.options, "Options", ScratchOptions)  # the chain add_chain_options reads
    parser = hlo2penguin.build_parser()
    assert f"link #3: {MAX_DEPTH_HELP}" in " ".join(parser.format_help().split())
    assert chain_options(parser.parse_args([]))["max_depth"] == 4  # the chain's default, not the pass's
    assert chain_options(parser.parse_args(["--max-depth", "9", "--no-flatten"])) == {
        "flatten": False, "dialect": "stablehlo", "scope": "all", "keep_attributes": False, "bundle": False,
        "verify_each": False, "max_depth": 9}
    assert pass_values(ScratchOptions(max_depth=2), Scratch) == {"scope": "all", "keep_attributes": False,
                                                                  "max_depth": 2}


# -- the pieces ---------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("1", True), ("true", True), ("TRUE", True), (None, True), ("0", False), ("false", False)])
def test_a_bool_is_1_0_true_or_false(text, expected):
    assert options(FlattenControlDepTupleOperands)[1].parse(text) is expected


def test_a_bool_s_other_words_are_refused():
    with pytest.raises(OptionError, match="keep-attributes=yes: expected true|false"):
        parse_element(FlattenControlDepTupleOperands, "keep-attributes=yes")


def test_an_option_of_no_command_line_type_is_refused_when_read():
    @dataclass(frozen=True)
    class Listy:
        names: list = option(None, help="no command-line form")

    with pytest.raises(TypeError, match="Listy.names: an option is a bool, int, float or str"):
        options(Listy)


def test_split_top_level_respects_brackets():
    assert split_top_level("a, b{x=1,y=2},c(d,e) ,,f[g,h]") == ["a", "b{x=1,y=2}", "c(d,e)", "f[g,h]"]
    assert split_top_level("scope=all  keep-attributes=true", " ") == ["scope=all", "keep-attributes=true"]
