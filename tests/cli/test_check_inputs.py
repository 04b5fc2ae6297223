"""`hlo2penguin check` on what is not HLO, on an output that is an input, and
the lines a new user meets (the console scripts, in a subprocess). The
oracles: XLA's parser (what it refuses, what it reads), the file system
(os.stat: the same file), and the files' own names."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import jaxlib._hlo as xla_hlo
import pytest

from jax_programs import count_control_edges

SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))
MLIR = """module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}
"""
MODULE = """HloModule example

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %a = f32[4] negate(%p)
  %b = f32[4] exponential(%p)
  ROOT %c = f32[4] add(%a, %b), control-predecessors={%b, %a}
}
"""
REPORT = "BufferAssignment:\nallocation 0: size 16, parameter 0\n"


def run(*argv: str, cwd) -> tuple[int, str, str]:
    done = subprocess.run([SCRIPT, *argv], cwd=cwd, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def one_line(status: int, out: str, err: str, prog: str = "hlo2penguin check") -> str:
    assert (status, out) == (2, "") and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"{prog}: error: ")
    return err.strip()


def xla_refuses(text: str) -> None:
    with pytest.raises(Exception):
        xla_hlo.hlo_module_from_text(text)


def test_mlir_named_is_refused_with_hlo2penguin_opt_and_in_a_folder_is_not_hlo(tmp_path):
    xla_refuses(MLIR)
    (tmp_path / "in.mlir").write_text(MLIR)
    line = one_line(*run("check", "in.mlir", cwd=tmp_path))
    _, _, main_err = run("in.mlir", cwd=tmp_path)  # the main command's words for the same file
    assert main_err.startswith("hlo2penguin: error: in.mlir:") and main_err.strip().endswith(
        "this is MLIR, and hlo2penguin reads HLO text: for MLIR use hlo2penguin-opt")
    assert line == "hlo2penguin check: error: " + main_err.strip()[len("hlo2penguin: error: "):]
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "in.txt").write_text(MLIR)
    status, out, err = run("check", "d", "--json", cwd=tmp_path)
    assert (status, json.loads(out)["skipped"]) == (0, {"not_hlo": 1, "no_control_edges": 0})
    assert err == "hlo2penguin check: no HLO module in 1 file (1 not HLO); nothing to check\n"


def test_other_text_named_is_refused_and_says_what_to_give(tmp_path):
    xla_refuses(REPORT)
    (tmp_path / "notes.txt").write_text(REPORT)
    line = one_line(*run("check", "notes.txt", cwd=tmp_path))
    assert line.startswith("hlo2penguin check: error: notes.txt:") and "XLA's parser: " in line
    assert "not an HLO module" in line and "XLA dump folders" in line


def test_a_module_after_a_long_comment_is_found_in_a_folder(tmp_path):
    """A 1 MB comment line before the module: XLA's parser reads it, so check finds it."""
    text = "// " + "x" * (1 << 20) + "\n" + MODULE
    xla_hlo.hlo_module_from_text(text)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "module.txt").write_text(text)
    status, out, err = run("check", "d", "--json", cwd=tmp_path)
    assert (status, err) == (0, "")
    (row,) = json.loads(out)["modules"]
    assert (row["module"], row["error"], row["edges"]) == ("example", "", count_control_edges(MODULE))


@pytest.mark.parametrize("out", ["module.txt", "link.txt", "hard.txt", "d/module.txt", "d/new.txt", "hard2.txt"])
def test_check_never_writes_a_file_it_reads(tmp_path, out):
    (tmp_path / "d").mkdir()
    (tmp_path / "module.txt").write_text(MODULE)
    (tmp_path / "d" / "module.txt").write_text(MODULE)
    os.symlink("module.txt", tmp_path / "link.txt")
    os.link(tmp_path / "module.txt", tmp_path / "hard.txt")
    os.link(tmp_path / "d" / "module.txt", tmp_path / "hard2.txt")
    line = one_line(*run("check", "module.txt", "d", "-o", out, "-q", cwd=tmp_path))
    assert line.startswith(f"hlo2penguin check: error: -o '{out}' ") and ("is the input" in line or "'d'" in line)
    assert (tmp_path / "module.txt").read_text() == (tmp_path / "d" / "module.txt").read_text() == MODULE
    assert not (tmp_path / "d" / "new.txt").exists()
    status, _, _ = run("check", "module.txt", "d", "-o", "d/table.json", "-q", cwd=tmp_path)  # not read there
    assert status == 0 and (tmp_path / "d" / "table.json").read_text().startswith("module")


def test_regress_never_writes_a_file_of_its_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    source = os.path.join(os.path.dirname(__file__), "..", "corpus")
    shutil.copy(os.path.join(source, "fori_inplace.jaxexport"), corpus)
    (corpus / "goldens").mkdir()
    golden = corpus / "goldens" / "fori_inplace.json"
    golden.write_text("{}")
    for out in ("corpus/fori_inplace.jaxexport", "corpus/goldens/fori_inplace.json"):
        before = (tmp_path / out).read_bytes()
        line = one_line(*run("regress", "corpus", "-o", out, cwd=tmp_path), prog="hlo2penguin regress")
        assert f"-o '{out}' is in the input folder 'corpus'" in line
        assert (tmp_path / out).read_bytes() == before


def test_two_copies_of_a_module_in_two_folders_are_two_rows_named_by_their_files(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "example.hlo").write_text(MODULE)
    status, out, err = run("check", "a", "b", "-q", cwd=tmp_path)
    assert (status, err) == (0, "")
    rows = out.splitlines()[2:4]
    assert [r.split()[0] for r in rows] == ["a/example.hlo", "b/example.hlo"], out


def test_an_error_row_names_its_file(tmp_path):
    bad = MODULE.replace("exponential", "frobnicate")
    xla_refuses(bad)
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "example.hlo").write_text(bad)
    status, out, err = run("check", "a", "b", "-q", cwd=tmp_path)
    assert status == 1 and err == ""
    rows = out.splitlines()[2:4]
    for row, file in zip(rows, ("a/example.hlo", "b/example.hlo")):
        assert row.split()[-1] != "" and f"  {file}:6:" in row and "XLA's parser" in row, out


def test_a_jax_export_without_control_edges_says_so_and_names_its_module(tmp_path):
    import jax

    exported = jax.export.export(jax.jit(lambda x: x * 2), platforms=("cpu",))(
        jax.ShapeDtypeStruct((4,), "float32"))
    (tmp_path / "noloop.jaxexport").write_bytes(bytes(exported.serialize()))
    status, out, err = run("noloop.jaxexport", "-o", "noloop.py", cwd=tmp_path)
    assert status == 0 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith("hlo2penguin: noloop.jaxexport: a jax.export artifact: no module XLA dumped as it "
                               "compiled it has control edges; the program is of ")
    assert "cpu_after_optimizations" in lines[0] and "the last module XLA dumped with control edges" not in err
    assert not any("the module has no control edges" in line for line in lines)


def test_check_s_help_names_every_stage_it_does_not_go_with(tmp_path):
    status, out, _ = run("--help", cwd=tmp_path)
    said = "".join(out.split())  # argparse wraps lines, also at a hyphen
    check = said[said.index("--check"):said.index("--no-flatten")]
    for emit in ("hlo", "hlo-proto"):  # what the parser refuses with --check
        status, _, err = run("--check", "--emit", emit, "-o", "x", cwd=tmp_path)
        assert status == 2 and "--check" in err
    assert "--emithloorhlo-proto" in check
