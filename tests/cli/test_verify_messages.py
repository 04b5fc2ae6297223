"""What `hlo2penguin verify` says when it is handed the wrong things, as the
CLI prints it: the module and the program swapped, MLIR for the module (the
main command's hlo2penguin-opt hint), a bad limit. And what its --help
promises for MODULE: a jax.export artifact is read (the module the main
command takes from it), as the main command reads it."""

from __future__ import annotations

import json

import jax

import pipeline
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.cli import hlo2penguin as cli
from jax_programs import while_swap_buffers, _f32

MLIR = """\
module @m {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}
"""


def files(tmp_path) -> tuple[str, str]:
    module, program = tmp_path / "module.txt", tmp_path / "program.py"
    module.write_text(EXAMPLE_HLO)
    program.write_text(pipeline.run(EXAMPLE_HLO, isolate=False).penguin_source)
    return str(module), str(program)


def verify(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(["verify", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_swapped_arguments_say_the_order(tmp_path, capsys):
    module, program = files(tmp_path)
    assert verify(capsys, program, module) == (2, "", (
        f"hlo2penguin verify: error: verify takes MODULE then PROGRAM.py: '{program}' is Python, not an HLO "
        f"module and '{module}' is an HLO module, not a Penguin program\n"))
    assert verify(capsys, module, module) == (2, "", (
        f"hlo2penguin verify: error: verify takes MODULE then PROGRAM.py: '{module}' is an HLO module, "
        "not a Penguin program\n"))
    assert verify(capsys, module, program)[0] == 0  # the right order still verifies


def test_an_mlir_module_names_hlo2penguin_opt(tmp_path, capsys):
    _, program = files(tmp_path)
    (tmp_path / "in.mlir").write_text(MLIR)
    status, out, err = verify(capsys, str(tmp_path / "in.mlir"), program)
    assert (status, out) == (2, "")
    assert err.startswith(f"hlo2penguin verify: error: {tmp_path / 'in.mlir'}:") and err.count("\n") == 1, err
    assert err.endswith("; this is MLIR, and hlo2penguin reads HLO text: for MLIR use hlo2penguin-opt\n"), err


def test_a_limit_must_be_above_zero(tmp_path, capsys):
    module, program = files(tmp_path)
    assert verify(capsys, "--timeout", "0", module, program) == (
        2, "", "hlo2penguin verify: error: --timeout takes a number of seconds above 0, not 0\n")
    assert verify(capsys, "--memory", "-1", module, program) == (
        2, "", "hlo2penguin verify: error: --memory takes a number of MiB above 0, not -1\n")


def test_help_lists_a_jax_export_artifact_and_the_limits(capsys):
    helps = {a.dest: " ".join(a.help.split()) for a in cli.build_verify_parser()._actions}
    assert "a jax.export artifact" in helps["module"]
    assert "(default: 300)" in helps["timeout"] and "(default: 4096)" in helps["memory"]


def test_a_jax_export_artifact_is_read_as_the_main_command_reads_it(tmp_path, capsys):
    args = (_f32(4), _f32(4))
    artifact = tmp_path / "prog.jaxexport"
    artifact.write_bytes(jax.export.export(jax.jit(while_swap_buffers), platforms=("cpu",))(*args).serialize())
    program = tmp_path / "program.py"
    assert cli.main([str(artifact), "-o", str(program), "-q"]) == 0
    capsys.readouterr()
    status, out, err = verify(capsys, str(artifact), str(program), "--json")
    assert status == 0, err
    judged = {(e["computation"], e["predecessor"], e["successor"], e["fate"]) for e in json.loads(out)["edges"]}
    chain = pipeline.run(artifact.read_bytes(), isolate=False).report  # the module the main command took
    assert judged and judged == {(e.computation, e.predecessor, e.successor, e.fate) for e in chain.edges}
