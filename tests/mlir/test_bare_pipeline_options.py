"""A bare key in a pipeline element (`NAME{keep-attributes}`), read as MLIR
reads one: a bool option given without a value is true (llvm::cl's
`parser<bool>` takes "" as true), and an option that takes a value says it
needs one. MLIR's own passes are the oracle: `canonicalize{test-convergence}`
sets the flag, `canonicalize{max-iterations}` is refused.

Both twins, through the installed `hlo2penguin-opt` and through the
PassManager `pipeline.cli.opt.build_pass_manager` builds in Python.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from jaxlib.mlir import ir, passmanager

from passes.control_dep import is_control_dep
from passes.options import OptionError
from pipeline.cli import opt
from pipeline.xla.mlir_context import make_context

OPT = shutil.which("hlo2penguin-opt", path=os.path.dirname(sys.executable))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
T2 = "tuple<tensor<f32>, tensor<i32>>"
MODULE = f"""\
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = stablehlo.tuple %a, %b : {T2}
  %c = stablehlo.custom_call @AwsNeuronControlDep(%t, %d) {{backend_config = "kept", has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}}
"""
TEXT = {"stablehlo": MODULE, "mhlo": MODULE.replace("stablehlo.", "mhlo.")}
MNEMONIC = {"stablehlo": "stablehlo-flatten-control-dep-tuple-operands", "mhlo": "flatten-control-dep-tuple-operands"}


def _call_attributes(text: str, dialect: str) -> set[str]:
    """The attributes of the one control-dep call after the pass, which must have flattened it."""
    module = ir.Module.parse(text, context=make_context())
    calls = [op.operation for op in module.body.operations[0].regions[0].blocks[0].operations
             if is_control_dep(op.operation)]
    [call] = calls
    assert call.name == f"{dialect}.custom_call"
    assert len(call.operands) == 3, text  # flattened: a, b, then the data operand
    return set(call.attributes)


def _script(args: list[str], stdin: str):
    assert OPT, "hlo2penguin-opt is not installed next to the interpreter"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    return subprocess.run([OPT, *args, "-"], input=stdin.encode(), capture_output=True, env=env, timeout=120)


def test_mlir_itself_takes_a_bare_bool_as_true_and_refuses_a_bare_value(capfd):
    with make_context():
        bare = str(passmanager.PassManager.parse("builtin.module(canonicalize{test-convergence})"))
        given = str(passmanager.PassManager.parse("builtin.module(canonicalize{test-convergence=true})"))
        assert bare == given and "test-convergence=true" in bare
        capfd.readouterr()
        with pytest.raises(ValueError, match="failed to add `canonicalize` with options `max-iterations`"):
            passmanager.PassManager.parse("builtin.module(canonicalize{max-iterations})")
        assert "max-iterations option: requires a value" in capfd.readouterr().err  # MLIR says why on fd 2


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_the_command_reads_a_bare_keep_attributes_as_true(dialect):
    runs = {form: _script([f"--pass-pipeline=builtin.module({MNEMONIC[dialect]}{{{form}}})"], TEXT[dialect])
            for form in ("keep-attributes", "keep-attributes=true", "keep-attributes=false")}
    for form, done in runs.items():
        assert done.returncode == 0 and done.stderr == b"", (form, done.stderr.decode())
    bare, true, false = (_call_attributes(runs[f].stdout.decode(), dialect) for f in runs)
    assert bare == true and {"has_side_effect", "backend_config"} <= bare
    assert not {"has_side_effect", "backend_config"} & false  # the default rebuild drops them


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_the_command_says_a_bare_scope_needs_a_value(dialect):
    done = _script([f"--pass-pipeline=builtin.module({MNEMONIC[dialect]}{{scope keep-attributes}})"], TEXT[dialect])
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode() == (f"hlo2penguin-opt: error: {MNEMONIC[dialect]}: scope needs a value: "
                                    "scope=main|first|all\n")


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_the_python_pass_manager_reads_bare_options_as_mlir_does(dialect):
    seen = {}
    for form in ("keep-attributes", "keep-attributes=true"):
        context = make_context()
        module = ir.Module.parse(TEXT[dialect], context=context)
        pm = opt.build_pass_manager(context, f"builtin.module({MNEMONIC[dialect]}{{{form}}})", [])
        pm.run(module.operation)
        seen[form] = _call_attributes(str(module), dialect)
    assert seen["keep-attributes"] == seen["keep-attributes=true"]
    assert {"has_side_effect", "backend_config"} <= seen["keep-attributes"]
    with pytest.raises(OptionError, match=f"^{MNEMONIC[dialect]}: scope needs a value: scope=main\\|first\\|all$"):
        opt.build_pass_manager(make_context(), f"builtin.module({MNEMONIC[dialect]}{{scope}})", [])
