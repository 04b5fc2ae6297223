"""`hlo2penguin check --junit-xml`: what a CI server reads, read back by a
real JUnit parser (junitparser): one test case per module and stage, a
failure where an edge is lost, an error where the chain refuses a module."""

from __future__ import annotations

import subprocess
import sys

import pytest
from junitparser import Error, Failure, JUnitXml

from pipeline.chain.example import EXAMPLE_HLO
from pipeline.cli.junit import Case, junit_xml

BROKEN = "HloModule broken\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] add(x, z), control-predecessors={x}\n}\n"


def check(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", "check", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300, stdin=subprocess.DEVNULL)


def cases_of(path) -> list:
    return [case for suite in JUnitXml.fromfile(str(path)) for case in suite]


def test_one_case_per_module_a_failure_for_a_lost_edge_an_error_for_a_refused_module(tmp_path):
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / "good.txt").write_text(EXAMPLE_HLO)
    (tmp_path / "dump" / "broken.txt").write_text(BROKEN)
    run = check("dump", "--junit-xml", "out.xml", "-q", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    cases = {c.classname: c for c in cases_of(tmp_path / "out.xml")}
    assert set(cases) == {"good.txt", "broken.txt"}
    assert cases["good.txt"].name == "example" and cases["good.txt"].is_passed
    [error] = cases["broken.txt"].result
    assert isinstance(error, Error) and "XLA's parser" in error.message

    lost = check("dump/good.txt", "--no-flatten", "--junit-xml", "lost.xml", "-q", cwd=tmp_path)
    assert lost.returncode == 1
    [case] = cases_of(tmp_path / "lost.xml")
    [failure] = case.result
    assert isinstance(failure, Failure) and "1 edge(s) lost" in failure.message


def test_the_junit_file_is_never_an_input(tmp_path):
    (tmp_path / "m.txt").write_text(EXAMPLE_HLO)
    run = check("m.txt", "--junit-xml", "m.txt", cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "--junit-xml" in run.stderr
    assert (tmp_path / "m.txt").read_text() == EXAMPLE_HLO


@pytest.mark.parametrize("text", ["a \x01 b", "plain", "é 中"])
def test_any_message_is_well_formed_xml(text):
    document = junit_xml("suite", [Case(text, text, failure=text), Case("x", "y", skipped=text)])
    parsed = JUnitXml.fromstring(document.decode())
    assert parsed.tests == 2 and parsed.failures == 1 and parsed.skipped == 1
