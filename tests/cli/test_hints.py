"""Errors that are right and now say what to do next, one line each, exit 2
(the installed console scripts, in a subprocess). The oracles: XLA's own
parser message (it must still lead the line), the file system (a folder),
the input text (where the name is defined)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import jaxlib._hlo as xla_hlo
import pytest

import pipeline
from passes.errors import ChainError

BIN = os.path.dirname(sys.executable)
H2P, OPT = (shutil.which(p, path=BIN) for p in ("hlo2penguin", "hlo2penguin-opt"))
ORDER = "XLA's parser needs each control predecessor defined above its successor"


def module(*lines: str) -> str:
    body = "".join(f"  {line}\n" for line in lines)
    return f"HloModule m\nENTRY %main (x: f32[4]) -> f32[4] {{\n  %x = f32[4]{{0}} parameter(0)\n{body}}}\n"


CYCLE = module("%a = f32[4]{0} negate(%x), control-predecessors={%b}",
               "%b = f32[4]{0} exponential(%x), control-predecessors={%a}", "ROOT %s = f32[4]{0} add(%a, %b)")
FORWARD = module("%a = f32[4]{0} negate(%x), control-predecessors={%b}", "%b = f32[4]{0} exponential(%x)",
                 "ROOT %s = f32[4]{0} add(%a, %b)")
UNDEFINED = module("%a = f32[4]{0} negate(%x), control-predecessors={%zz}", "%b = f32[4]{0} exponential(%x)",
                   "ROOT %s = f32[4]{0} add(%a, %b)")
# Below is `%bb`, whose name starts as `b`'s does: not `b`.
PREFIX_BELOW = module("%a = f32[4]{0} negate(%x), control-predecessors={%b}", "%bb = f32[4]{0} exponential(%x)",
                      "ROOT %s = f32[4]{0} add(%a, %bb)")
# `b` is defined below, but in another computation: not a forward reference in this one.
ELSEWHERE = (module("%a = f32[4]{0} negate(%x), control-predecessors={%b}", "ROOT %s = f32[4]{0} add(%a, %x)")
             + "\n%other (y: f32[4]) -> f32[4] {\n  %y = f32[4]{0} parameter(0)\n  ROOT %b = f32[4]{0} negate(%y)\n}\n")
NO_EDGES = module("ROOT %a = f32[4]{0} negate(%x)")


def run(*argv: str, cwd) -> tuple[int, str, str]:
    done = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def xla_says(text: str) -> str:
    with pytest.raises(Exception) as refused:
        xla_hlo.hlo_module_from_text(text)
    return str(refused.value)


def one_error_line(status: int, out: str, err: str, prog: str = "hlo2penguin") -> str:
    assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"{prog}: error: ")
    return err.strip()


@pytest.mark.parametrize("text", [CYCLE, FORWARD], ids=["cycle", "forward"])
def test_a_predecessor_defined_below_says_xla_reads_predecessors_first(tmp_path, text):
    assert "instruction 'b' is not defined" in xla_says(text)  # XLA's own words
    (tmp_path / "g.hlo").write_text(text)
    line = one_error_line(*run(H2P, "g.hlo", cwd=tmp_path))
    defined = next(i for i, t in enumerate(text.splitlines(), 1) if t.strip().startswith("%b ="))
    assert line.startswith("hlo2penguin: error: g.hlo:4:") and "instruction 'b' is not defined; " in line
    assert ORDER in line and f"line {defined}" in line
    with pytest.raises(ChainError, match=ORDER):  # the API says the same
        pipeline.run(text, isolate=False)


@pytest.mark.parametrize("text", [UNDEFINED, ELSEWHERE, PREFIX_BELOW],
                         ids=["undefined", "other-computation", "a-longer-name-below"])
def test_a_name_not_defined_below_in_its_computation_gets_no_such_hint(tmp_path, text):
    assert "is not defined" in xla_says(text)
    (tmp_path / "g.hlo").write_text(text)
    line = one_error_line(*run(H2P, "g.hlo", cwd=tmp_path))
    assert line.endswith("is not defined") and ORDER not in line


def test_mlir_to_hlo2penguin_names_hlo2penguin_opt_and_hlo_to_opt_names_hlo2penguin(tmp_path):
    (tmp_path / "g.hlo").write_text(FORWARD.replace("control-predecessors={%b}", "control-predecessors={%x}"))
    status, mlir, _ = run(H2P, "g.hlo", "--emit", "mlir", "-q", cwd=tmp_path)
    assert status == 0
    (tmp_path / "g.mlir").write_text(mlir)
    line = one_error_line(*run(H2P, "g.mlir", cwd=tmp_path))
    assert "XLA's parser: expects '=' in instruction" in line or "XLA's parser:" in line
    assert line.endswith("for MLIR use hlo2penguin-opt")
    line = one_error_line(*run(OPT, "g.hlo", cwd=tmp_path), prog="hlo2penguin-opt")
    assert "custom op 'HloModule' is unknown" in line and line.endswith("for HLO use hlo2penguin")
    assert run(OPT, "g.mlir", "-o", "flat.mlir", cwd=tmp_path)[0] == 0  # the right tool reads it


def test_a_folder_names_check(tmp_path):
    (tmp_path / "adir").mkdir()
    assert os.path.isdir(tmp_path / "adir")
    line = one_error_line(*run(H2P, "adir", cwd=tmp_path))
    assert line == ("hlo2penguin: error: cannot read input 'adir': Is a directory; "
                    "for every module in a folder (an XLA dump): hlo2penguin check adir")


def test_a_module_without_control_edges_says_where_xla_adds_them(tmp_path):
    assert "control-predecessors" not in NO_EDGES
    (tmp_path / "g.hlo").write_text(NO_EDGES)
    status, out, err = run(H2P, "g.hlo", "-o", "g.py", cwd=tmp_path)
    assert status == 0 and out == ""
    notes = [line for line in err.splitlines() if "copy insertion" in line]
    assert notes == ["hlo2penguin: note: the module has no control edges (control-predecessors=): XLA adds "
                     "control edges in copy insertion and later passes, so an earlier dump stage has none"]
    status, out, err = run(H2P, "check", "g.hlo", cwd=tmp_path)
    assert status == 0 and out == "" and err.count("\n") == 1
    assert err.strip().endswith("XLA adds control edges in copy insertion and later passes, so an earlier dump "
                                "stage has none")
    assert run(H2P, "g.hlo", "-q", "-o", "g.py", cwd=tmp_path)[2] == ""  # -q: nothing on stderr
