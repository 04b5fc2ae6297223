"""Flags that cannot mean anything fail loudly, `--quiet` never hides why
the exit is 1, and a report is written once: `hlo2penguin` and `hlo2penguin
verify` run as a user runs them."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from pipeline.chain.example import EXAMPLE_HLO
from pipeline.cli.hlo2penguin import main
from paths import DOCS, PIPELINE_DUMPS

SMALL = """\
HloModule small

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %a = f32[4] negate(%x)
  %b = f32[4] exponential(%x), control-predecessors={%a}
  ROOT %c = f32[4] add(%a, %b)
}
"""


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.hlo"
    path.write_text(SMALL)
    return str(path)


def cli(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("argv, says", [
    (["--json"], "--json writes the report as JSON: it goes with --emit report, not --emit penguin"),
    (["--emit", "hlo", "--json"], "it goes with --emit report, not --emit hlo"),
    (["--emit", "hlo", "--check"], "--check judges the Penguin program, and --emit hlo stops after link #1"),
    (["--debug-info"], "--debug-info prints MLIR locations: it goes with --emit mlir or flat-mlir"),
])
def test_a_flag_the_output_cannot_use_is_a_usage_error(small, tmp_path, capsys, argv, says):
    out_file = tmp_path / "out.py"
    status, out, err = cli([small, *argv, "-o", str(out_file)], capsys)
    assert status == 2 and out == ""
    assert err.startswith("hlo2penguin: error: ") and says in err and err.count("\n") == 1
    assert not out_file.exists()


def test_quiet_hides_the_summary_but_not_the_reason_for_exit_1(capsys):
    # Without link #3, the example's tuple-shaped predecessor loses an edge: --check fails.
    status, out, err = cli(["--no-flatten", "--check", "-q"], capsys)
    assert status == 1 and "add_dep_edge" in out
    lines = err.splitlines()
    assert lines and all(line.startswith("hlo2penguin: warning: ") for line in lines)
    assert any(": lost at link #3" in line for line in lines) and any(": spurious" in line for line in lines)
    assert "HLO control edge(s)" not in err  # the summary stays hidden


def test_quiet_on_a_success_says_nothing(small, capsys):
    status, out, err = cli([small, "--check", "-q"], capsys)
    assert status == 0 and "add_dep_edge" in out and err == ""


def test_the_report_on_stdout_is_not_repeated_on_stderr(small, capsys):
    status, out, err = cli([small, "--emit", "report"], capsys)
    assert status == 0 and out.splitlines()[-1].startswith("1 HLO control edge(s): 1 preserved")
    assert err == ""
    status, out, err = cli([small, "--emit", "report", "--json"], capsys)
    assert status == 0 and json.loads(out)["totals"]["preserved"] == 1 and err == ""


def test_the_report_to_a_file_keeps_its_summary_on_stderr(small, tmp_path, capsys):
    status, out, err = cli([small, "--emit", "report", "-o", str(tmp_path / "r.txt")], capsys)
    assert status == 0 and out == "" and "hlo2penguin: chain: 1 HLO control edge(s)" in err


def test_the_usage_line_names_the_subcommands():
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "--help"], capture_output=True, text=True, check=True)
    usage = done.stdout.split("\n\n")[0]
    for sub in ("check", "verify", "regress"):
        assert f"hlo2penguin {sub} " in usage, usage


def test_verify_takes_quiet_and_output_like_the_other_commands(small, tmp_path, capsys):
    program = tmp_path / "p.py"
    assert main([small, "-o", str(program), "-q"]) == 0
    capsys.readouterr()
    assert cli(["verify", small, str(program), "-q"], capsys) == (0, "", "")
    # An edited program: the lost edge alone, exit 1.
    program.write_text("\n".join(line for line in program.read_text().splitlines() if "add_dep_edge" not in line))
    status, out, err = cli(["verify", small, str(program), "-q"], capsys)
    assert (status, out, err) == (1, "func @main: %a -> %b: lost (%b does not come after %a)\n", "")
    report = tmp_path / "report.txt"
    status, out, err = cli(["verify", small, str(program), "-o", str(report)], capsys)
    assert status == 1 and out == "" and "0 preserved" in report.read_text()


def test_verify_quiet_with_json_is_a_usage_error(small, tmp_path, capsys):
    program = tmp_path / "p.py"
    assert main([small, "-o", str(program), "-q"]) == 0
    capsys.readouterr()
    status, out, err = cli(["verify", small, str(program), "-q", "--json"], capsys)
    assert status == 2 and out == "" and "choose one" in err


def test_the_example_still_runs_with_no_flags(capsys):
    status, out, err = cli([], capsys)
    assert status == 0 and "add_dep_edge" in out and "preserved" in err
    assert EXAMPLE_HLO  # the built-in example is what ran


def test_the_built_in_example_can_be_printed_and_run_from_a_file(tmp_path, capsys):
    status, out, err = cli(["--example"], capsys)
    assert status == 0 and err == "" and out.startswith("HloModule example")
    path = tmp_path / "example.hlo"
    path.write_text(out)
    # The file is what the chain runs with no INPUT: the same program, from the same HLO.
    assert cli([str(path), "-q"], capsys)[1].split("\n", 1)[1] == cli(["-q"], capsys)[1].split("\n", 1)[1]


@pytest.mark.parametrize("flag", [["--plot-function", "main"], ["--plot-nested", "all"]])
def test_a_plot_flag_without_plot_is_a_usage_error(small, capsys, flag):
    status, out, err = cli([small, *flag], capsys)
    assert status == 2 and out == "" and "says what --plot draws: give --plot OUT.png|OUT.svg too" in err


@pytest.mark.parametrize("command", [["check"], ["verify"], ["regress"], []], ids=["check", "verify", "regress",
                                                                                     "hlo2penguin"])
def test_every_command_takes_output_and_quiet(command):
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", *command, "--help"], capture_output=True, text=True,
                          check=True)
    # Python 3.13's argparse writes "-o, --output OUT" where 3.11 writes "-o OUT, --output OUT".
    assert re.search(r"-o( OUT)?, --output OUT", done.stdout) and "-q, --quiet" in done.stdout


def test_check_writes_its_table_to_a_file(tmp_path, capsys):

    dump = PIPELINE_DUMPS
    module = sorted(dump.glob("*.hlo"))[0]
    table = tmp_path / "table.txt"
    status, out, err = cli(["check", str(module), "-o", str(table), "-q"], capsys)
    assert out == "" and status in (0, 1) and table.read_text().splitlines()[-1].startswith(("total", "files", "skipped"))


def test_check_and_regress_default_to_every_core():
    for command in (["check"], ["regress"]):
        done = subprocess.run([sys.executable, "-m", "pipeline.cli", *command, "--help"], capture_output=True,
                              text=True, check=True)
        assert "(default: every core" in " ".join(done.stdout.split()), command


def _help(*command: str) -> str:
    done = subprocess.run([sys.executable, "-m", *command, "--help"], capture_output=True, text=True, check=True)
    return " ".join(done.stdout.split())


def test_the_dialect_flag_says_the_links_the_docs_say():
    import re

    page = (DOCS / "cli.md").read_text()
    links = re.search(r"\| `--dialect stablehlo\\\|mhlo` \| dialect of links #(\d)–#(\d)", page).groups()
    assert f"dialect of links #{links[0]}-#{links[1]}" in _help("pipeline.cli")


def test_the_two_scope_defaults_are_explained_where_they_differ():
    assert "all (default:" in _help("pipeline.cli")                       # the chain walks every function
    said = _help("pipeline.cli.opt")
    assert "main (default" in said and "what hlo2penguin's chain walks" in said  # the pass alone keeps main
