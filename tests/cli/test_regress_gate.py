"""`regress` as a CI gate: rows without numbers are said and counted (and
fail with --require-numbers), and --junit-xml writes one test case per row,
read back here with junitparser."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest
from junitparser import Failure, JUnitXml, Skipped

import paths
from pipeline.cli import hlo2penguin as cli

NAMES = ("while_swap_buffers", "fori_inplace")


@pytest.fixture
def corpus(tmp_path):
    """Two programs of the repository's corpus, with their goldens."""
    for name in NAMES:
        for sub, ext in (("inputs", ".npz"), ("expected", ".npz"), ("goldens", ".json")):
            (tmp_path / sub).mkdir(exist_ok=True)
            shutil.copy(paths.CORPUS / sub / f"{name}{ext}", tmp_path / sub)
        shutil.copy(paths.CORPUS / f"{name}.jaxexport", tmp_path)
        shutil.copytree(paths.CORPUS / "goldens" / name, tmp_path / "goldens" / name)
    return tmp_path


def _rows(corpus, capsys):
    assert cli.main(["regress", str(corpus), "--jobs", "1", "--json"]) in (0, 1)
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_a_row_without_inputs_says_so_is_counted_and_fails_when_numbers_are_required(corpus, capsys):
    os.remove(corpus / "inputs" / "fori_inplace.npz")
    code = cli.main(["regress", str(corpus), "--jobs", "1"])
    out, err = capsys.readouterr()
    assert code == 0  # judged on its edges and golden; the numbers' absence is said, not failed
    lines = out.splitlines()
    without = [line for line in lines if line.startswith("fori_inplace")]
    assert without and all(" no inputs " in line for line in without)
    assert not any("no inputs" in line for line in lines if line.startswith("while_swap_buffers"))
    assert f", {len(without)} no numbers" in lines[-1] and "0 regressions" in lines[-1]
    assert f"{len(without)} row(s) judged without numbers" in err and f"hlo2penguin corpus add {corpus} ..." in err
    assert cli.main(["regress", str(corpus), "--jobs", "1", "--require-numbers"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines()[-1].endswith(f"{len(without)} regressions")
    assert "which --require-numbers fails" in err


def test_require_numbers_passes_a_corpus_with_every_input(corpus, capsys):
    assert cli.main(["regress", str(corpus), "--jobs", "1", "--require-numbers"]) == 0
    assert "no numbers" not in capsys.readouterr().out


def _cases(path):
    return [case for suite in JUnitXml.fromfile(str(path)) for case in suite]


def test_junit_xml_has_a_case_per_row_and_a_changed_row_fails_with_its_diff(corpus, tmp_path_factory, capsys):
    golden_path = corpus / "goldens" / "while_swap_buffers.json"
    golden = json.loads(golden_path.read_text())
    record = next(d["mhlo"] for m, d in golden.items() if m.endswith(":cpu_after_optimizations"))
    program = corpus / "goldens" / record["program"]
    text = program.read_text().replace("module = Module(", "module = OldModule(", 1)
    program.write_text(text)
    record["penguin_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    golden_path.write_text(json.dumps(golden))
    os.remove(corpus / "inputs" / "fori_inplace.npz")
    xml = tmp_path_factory.mktemp("ci") / "regress.xml"
    assert cli.main(["regress", str(corpus), "--jobs", "1", "--junit-xml", str(xml)]) == 1
    capsys.readouterr()
    rows = _rows(corpus, capsys)
    cases = _cases(xml)
    assert len(cases) == len(rows)
    assert sorted((c.classname, c.name) for c in cases) == sorted((r["program"], f"{r['module']} {r['dialect']}")
                                                                  for r in rows)
    failed = {(c.classname, c.name): c.result[0] for c in cases if c.result and isinstance(c.result[0], Failure)}
    assert list(failed) == [("while_swap_buffers", "jit_while_swap_buffers:cpu_after_optimizations mhlo")]
    [failure] = failed.values()
    assert failure.message == "golden: changed: penguin program"
    assert "-module = OldModule(" in failure.text and "+module = Module(" in failure.text
    skipped = [c for c in cases if c.result and isinstance(c.result[0], Skipped)]
    assert skipped and {c.classname for c in skipped} == {"fori_inplace"}
    assert all(c.result[0].message == "numerics: no inputs" for c in skipped)
    # With numbers required, those rows are failures.
    assert cli.main(["regress", str(corpus), "--jobs", "1", "--junit-xml", str(xml), "--require-numbers"]) == 1
    failures = [c for c in _cases(xml) if c.result and isinstance(c.result[0], Failure)]
    assert sum(c.result[0].message == "numerics: no inputs" for c in failures) == len(skipped)


@pytest.mark.parametrize("target", ["goldens/while_swap_buffers.json", "goldens/while_swap_buffers/new.stablehlo.py",
                                    "inputs/fori_inplace.npz", "table.txt"])
def test_junit_xml_is_never_a_corpus_file(corpus, capsys, target):
    path = corpus / target
    before = path.read_bytes() if path.exists() else None
    argv = ["regress", str(corpus), "--junit-xml", str(path)]
    if target == "table.txt":  # not read by regress, but the table's own file
        argv += ["-o", str(path)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--junit-xml" in err
    assert (path.read_bytes() if path.exists() else None) == before
