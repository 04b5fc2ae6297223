"""`hlo2penguin-opt` (link #3, and any registered MLIR pass, on MLIR) and the
MLIR stages of `hlo2penguin` (`--emit mlir|flat-mlir --dialect …`).

In-process runs use `capfd`, not `capsys`: MLIR and XLA write diagnostics
from C++ straight to file descriptor 2, and a user sees those too. A few
runs go through the installed console script.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys

import pytest
from jaxlib.mlir import ir

from mlir_ops import function, ops
from passes.control_dep import CONTROL_DEP_TARGET, is_control_dep
from pipeline.cli import hlo2penguin as cli
from pipeline.cli import opt
from pipeline.xla.mlir_context import make_context

OPT = shutil.which("hlo2penguin-opt", path=os.path.dirname(sys.executable))
ERROR = "hlo2penguin-opt: error: "
T2 = "tuple<tensor<f32>, tensor<i32>>"

STABLEHLO_MODULE = f"""\
func.func private @helper(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = stablehlo.tuple %a, %b : {T2}
  %c = stablehlo.custom_call @AwsNeuronControlDep(%t, %d) {{has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32> loc("helper.cc")
  return %c : tensor<4xf32>
}}
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {{
  %t = stablehlo.tuple %a, %b : {T2}
  %g = stablehlo.get_tuple_element %t[0] : ({T2}) -> tensor<f32>
  %c = stablehlo.custom_call @AwsNeuronControlDep(%t, %d) {{backend_config = "", has_side_effect = true}} : ({T2}, tensor<4xf32>) -> tensor<4xf32> loc("main.cc")
  %c2 = stablehlo.custom_call @AwsNeuronControlDep(%g, %c) {{has_side_effect = true}} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32> loc("main.cc2")
  %r = func.call @helper(%a, %b, %c2) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}}
"""
MHLO_MODULE = STABLEHLO_MODULE.replace("stablehlo.", "mhlo.")
FLAG = {"stablehlo": "--stablehlo-flatten-control-dep-tuple-operands", "mhlo": "--flatten-control-dep-tuple-operands"}


def parse(text: str) -> ir.Module:
    module = ir.Module.parse(text, context=make_context())
    assert module.operation.verify()
    return module


def tupleish_operands(root) -> int:
    n = 0
    for op in ops(root):
        if is_control_dep(op):
            for v in op.operands:
                owner = v.owner
                if not isinstance(owner, ir.Block) and owner.operation.name.rsplit(".", 1)[-1] in (
                        "tuple", "get_tuple_element"):
                    n += 1
    return n


def flat_in(module, name: str) -> bool:
    return tupleish_operands(function(module, name)) == 0


def run_opt(argv, capfd):
    status = opt.main(argv)
    out, err = capfd.readouterr()
    return status, out, err


def one_error_line(err: str, prefix: str = ERROR) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(prefix), err
    assert "Traceback" not in err
    return lines[0][len(prefix):]


@pytest.fixture
def stablehlo_file(tmp_path):
    path = tmp_path / "in.mlir"
    path.write_text(STABLEHLO_MODULE)
    return path


def set_stdin(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


# --------------------------------------------------------------------------
# hlo2penguin-opt: inputs and outputs
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_text_input_flattens_main(tmp_path, capfd, dialect):
    src = tmp_path / "in.mlir"
    src.write_text(STABLEHLO_MODULE if dialect == "stablehlo" else MHLO_MODULE)
    status, out, err = run_opt([str(src), FLAG[dialect]], capfd)
    assert (status, err) == (0, "")
    module = parse(out)
    assert flat_in(module, "main") and not flat_in(module, "helper")  # default scope: main
    c, c2 = [op for op in ops(function(module, "main")) if is_control_dep(op)]
    assert [str(v.type) for v in c.operands] == ["tensor<f32>", "tensor<i32>", "tensor<4xf32>"]
    assert len(c2.operands) == 3  # GTE(tuple) → every element, then the data operand
    assert not any(op.name == f"{dialect}.tuple" for op in ops(function(module, "main")))
    assert "loc(" not in out  # no locations unless asked


def test_the_wrong_twin_is_a_usage_error_that_names_the_right_one(stablehlo_file, tmp_path, capfd):
    # The MHLO pass would change nothing on StableHLO calls: said, not silently exit 0.
    out_file = tmp_path / "out.mlir"
    status, out, err = run_opt([str(stablehlo_file), FLAG["mhlo"], "-o", str(out_file)], capfd)
    assert (status, out) == (2, "") and not out_file.exists()
    calls = STABLEHLO_MODULE.count("@AwsNeuronControlDep")
    assert err == ("hlo2penguin-opt: error: --flatten-control-dep-tuple-operands flattens mhlo.custom_call "
                   f"@AwsNeuronControlDep calls, and the module has none (it has {calls} stablehlo.custom_call ones): "
                   "use --stablehlo-flatten-control-dep-tuple-operands\n")


def test_a_module_without_control_dep_calls_passes_through_either_twin(tmp_path, capfd):
    plain = tmp_path / "plain.mlir"
    plain.write_text("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n")
    for flag in FLAG.values():
        status, out, err = run_opt([str(plain), flag], capfd)
        assert (status, err) == (0, "") and "func.func @main" in out


def test_no_pass_prints_the_module_back(stablehlo_file, capfd):
    status, out, err = run_opt([str(stablehlo_file)], capfd)
    assert (status, err) == (0, "")
    assert out.rstrip("\n") == str(parse(STABLEHLO_MODULE)).rstrip("\n")


def test_bytecode_input(tmp_path, capfd):
    buffer = io.BytesIO()
    parse(STABLEHLO_MODULE).operation.write_bytecode(buffer)
    src = tmp_path / "in.mlirbc"
    src.write_bytes(buffer.getvalue())
    assert buffer.getvalue().startswith(b"ML\xefR")
    status, out, err = run_opt([str(src), FLAG["stablehlo"]], capfd)
    assert (status, err) == (0, "")
    assert flat_in(parse(out), "main")


def test_bytecode_and_text_give_the_same_output(tmp_path, stablehlo_file, capfd):
    buffer = io.BytesIO()
    parse(STABLEHLO_MODULE).operation.write_bytecode(buffer)
    bc = tmp_path / "in.mlirbc"
    bc.write_bytes(buffer.getvalue())
    _, from_text, _ = run_opt([str(stablehlo_file), FLAG["stablehlo"]], capfd)
    _, from_bytecode, _ = run_opt([str(bc), FLAG["stablehlo"]], capfd)
    assert from_text == from_bytecode


@pytest.mark.parametrize("argv", [[], ["-"]], ids=["implicit", "dash"])
def test_stdin(capfd, monkeypatch, argv):
    set_stdin(monkeypatch, STABLEHLO_MODULE.encode())
    status, out, err = run_opt(argv + [FLAG["stablehlo"]], capfd)
    assert (status, err) == (0, "")
    assert flat_in(parse(out), "main")


def test_stdin_bytecode(capfd, monkeypatch):
    buffer = io.BytesIO()
    parse(STABLEHLO_MODULE).operation.write_bytecode(buffer)
    set_stdin(monkeypatch, buffer.getvalue())
    status, out, err = run_opt([FLAG["stablehlo"]], capfd)
    assert (status, err) == (0, "")
    assert flat_in(parse(out), "main")


def test_output_file(tmp_path, stablehlo_file, capfd):
    dst = tmp_path / "out.mlir"
    status, out, err = run_opt([str(stablehlo_file), FLAG["stablehlo"], "-o", str(dst)], capfd)
    assert (status, out, err) == (0, "", "")
    _, stdout_text, _ = run_opt([str(stablehlo_file), FLAG["stablehlo"]], capfd)
    assert dst.read_text() == stdout_text
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".hlo2penguin-")]


def test_debug_info_keeps_locations(stablehlo_file, capfd):
    status, out, err = run_opt([str(stablehlo_file), FLAG["stablehlo"], "--debug-info"], capfd)
    assert (status, err) == (0, "")
    assert 'loc("main.cc")' in out and 'loc("main.cc2")' in out
    module = parse(out)
    calls = {str(op.location): op for op in ops(module) if is_control_dep(op)}
    assert set(calls) == {'loc("helper.cc")', 'loc("main.cc")', 'loc("main.cc2")'}
    assert len(calls['loc("main.cc")'].operands) == 3  # the rebuilt call kept its location


@pytest.mark.parametrize("scope, helper_flat, main_flat", [
    ("main", False, True), ("first", True, False), ("all", True, True)])
def test_scope(stablehlo_file, capfd, scope, helper_flat, main_flat):
    status, out, err = run_opt([str(stablehlo_file), FLAG["stablehlo"], f"--scope={scope}"], capfd)
    assert (status, err) == (0, "")
    module = parse(out)
    assert (flat_in(module, "helper"), flat_in(module, "main")) == (helper_flat, main_flat)


def test_keep_attributes(stablehlo_file, capfd):
    _, plain, _ = run_opt([str(stablehlo_file), FLAG["stablehlo"]], capfd)
    status, kept, err = run_opt([str(stablehlo_file), FLAG["stablehlo"], "--keep-attributes"], capfd)
    assert (status, err) == (0, "")
    plain_module, kept_module = parse(plain), parse(kept)  # ops live only as long as their module
    [c_plain, _] = [op for op in ops(function(plain_module, "main")) if is_control_dep(op)]
    [c_kept, _] = [op for op in ops(function(kept_module, "main")) if is_control_dep(op)]
    assert set(c_plain.attributes) == {"call_target_name"}
    assert {"call_target_name", "has_side_effect", "backend_config"} <= set(c_kept.attributes)


def test_pass_pipeline_with_options_and_textual_passes(stablehlo_file, capfd):
    pipeline = ("builtin.module(func.func(cse),"
                "stablehlo-flatten-control-dep-tuple-operands{scope=all keep-attributes=true},"
                "stablehlo-legalize-to-hlo,canonicalize)")
    status, out, err = run_opt([str(stablehlo_file), f"--pass-pipeline={pipeline}"], capfd)
    assert (status, err) == (0, "")
    module = parse(out)
    assert flat_in(module, "helper") and flat_in(module, "main")
    assert not any(op.name.startswith("stablehlo.") for op in ops(module))
    calls = [op for op in ops(module) if is_control_dep(op)]
    assert calls and all(op.name == "mhlo.custom_call" and "has_side_effect" in op.attributes for op in calls)


def test_pass_pipeline_both_twins_across_legalization(stablehlo_file, capfd):
    pipeline = "builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands{scope=first})"
    status, out, err = run_opt([str(stablehlo_file), "--pass-pipeline", pipeline], capfd)
    assert (status, err) == (0, "")
    module = parse(out)
    assert flat_in(module, "helper") and not flat_in(module, "main")


# --------------------------------------------------------------------------
# hlo2penguin-opt: bad input and usage: exit 2, one line, no traceback
# --------------------------------------------------------------------------

BAD_CASES = {
    "syntax-error": (b"func.func @main( {\n", [], "in.mlir: cannot parse MLIR: 1:"),
    "unknown-dialect-op": (b'func.func @main() {\n  "frob.nicate"() : () -> ()\n  return\n}\n', [],
                           "in.mlir: cannot parse MLIR: 2:"),
    "does-not-verify": (b"func.func @main(%a: tensor<f32>) -> tensor<i32> {\n  return %a : tensor<f32>\n}\n", [],
                        "in.mlir: cannot parse MLIR:"),
    "empty": (b"", [], "in.mlir: input is empty"),
    "blank": (b"  \n\n", [], "in.mlir: input is empty"),
    "binary-garbage": (bytes(range(128, 256)) * 4, [], "in.mlir: input is neither MLIR text"),
    "nul-bytes": (b"\x00\x01\x02\x03", [], "in.mlir: cannot parse MLIR:"),
    "truncated-bytecode": (None, [], "in.mlir: cannot parse MLIR:"),
    "unknown-pass": (STABLEHLO_MODULE.encode(), ["--pass-pipeline=builtin.module(no-such-pass)"],
                     "pass pipeline: "),
    "flags-and-pipeline": (STABLEHLO_MODULE.encode(),
                           [FLAG["stablehlo"], "--pass-pipeline=builtin.module(canonicalize)"],
                           "give either pass flags or --pass-pipeline, not both"),
    "unknown-option": (STABLEHLO_MODULE.encode(),
                       ["--pass-pipeline=builtin.module(stablehlo-flatten-control-dep-tuple-operands{bogus=1})"],
                       "stablehlo-flatten-control-dep-tuple-operands: unknown option(s) bogus"),
    "bad-scope-option": (STABLEHLO_MODULE.encode(),
                         ["--pass-pipeline=builtin.module(flatten-control-dep-tuple-operands{scope=everything})"],
                         "unknown scope 'everything'"),
    "unanchored-pipeline": (STABLEHLO_MODULE.encode(), ["--pass-pipeline=canonicalize"],
                            "--pass-pipeline must be anchored on the module"),
    "no-main": (STABLEHLO_MODULE.replace("@main", "@entry").encode(), [FLAG["stablehlo"]],
                "stablehlo-flatten-control-dep-tuple-operands: the module has no function named 'main'"),
    "bad-scope-flag": (STABLEHLO_MODULE.encode(), ["--scope=everything"], "argument --scope: invalid choice"),
    "unknown-flag": (STABLEHLO_MODULE.encode(), ["--frobnicate"], "unrecognized arguments: --frobnicate"),
}


def truncated_bytecode() -> bytes:
    buffer = io.BytesIO()
    parse(STABLEHLO_MODULE).operation.write_bytecode(buffer)
    return buffer.getvalue()[:40]


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_exits_2_with_one_line(tmp_path, capfd, monkeypatch, case):
    data, argv, expected = BAD_CASES[case]
    src = tmp_path / "in.mlir"
    src.write_bytes(truncated_bytecode() if data is None else data)
    dst = tmp_path / "out.mlir"
    monkeypatch.chdir(tmp_path)  # messages name the input as given: "in.mlir"
    status, out, err = run_opt([src.name, *argv, "-o", str(dst)], capfd)
    assert status == 2
    assert out == ""
    assert expected in one_error_line(err)
    assert not dst.exists()


def test_missing_file(tmp_path, capfd):
    status, out, err = run_opt([str(tmp_path / "nope.mlir")], capfd)
    assert (status, out) == (2, "")
    assert one_error_line(err) == f"cannot read input '{tmp_path / 'nope.mlir'}': No such file or directory"


def test_a_directory_as_input(tmp_path, capfd):
    status, _, err = run_opt([str(tmp_path)], capfd)
    assert status == 2
    assert "cannot read input" in one_error_line(err)


def test_empty_stdin(capfd, monkeypatch):
    set_stdin(monkeypatch, b"")
    status, out, err = run_opt([FLAG["mhlo"]], capfd)
    assert (status, out) == (2, "")
    assert one_error_line(err) == "<stdin>: input is empty; expected an MLIR module"


def test_syntax_error_position(tmp_path, capfd):
    src = tmp_path / "in.mlir"
    src.write_text("module {\n  func.func @main() {\n    return %nope : tensor<f32>\n  }\n}\n")
    status, _, err = run_opt([str(src)], capfd)
    assert status == 2
    message = one_error_line(err)
    assert message == f"{src}: cannot parse MLIR: 3:12: use of undeclared SSA value name"


# --------------------------------------------------------------------------
# The console script
# --------------------------------------------------------------------------


def script(*args, stdin: bytes | None = None, cwd=None):
    assert OPT, "hlo2penguin-opt is not installed next to the interpreter"
    return subprocess.run([OPT, *args], input=stdin, capture_output=True, cwd=cwd, timeout=120)


def test_script_text_file_to_stdout(stablehlo_file):
    done = script(str(stablehlo_file), FLAG["stablehlo"], "--debug-info")
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    module = parse(done.stdout.decode())
    assert flat_in(module, "main")
    assert b'loc("main.cc")' in done.stdout


def test_script_bytecode_on_stdin_to_a_file(tmp_path):
    buffer = io.BytesIO()
    parse(MHLO_MODULE).operation.write_bytecode(buffer)
    dst = tmp_path / "out.mlir"
    done = script(FLAG["mhlo"], "--scope=all", "-o", str(dst), stdin=buffer.getvalue())
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    module = parse(dst.read_text())
    assert flat_in(module, "main") and flat_in(module, "helper")


def test_script_survives_mhlo_flatten_tuple_before_link_3(tmp_path):
    """mhlo-flatten-tuple splits the call's tuple result in two and leaves a
    GTE of an argument as predecessor; link #3 then rebuilt the call with one
    result and erased it while the other was in use: a segfault."""
    src = tmp_path / "in.mlir"
    src.write_text("""\
func.func @main(%x: tuple<tensor<f32>, tensor<i32>>, %w: tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32> {
  %g = mhlo.get_tuple_element %x[1] : (tuple<tensor<f32>, tensor<i32>>) -> tensor<i32>
  %c = mhlo.custom_call @AwsNeuronControlDep(%g, %w) : (tensor<i32>, tuple<tensor<i32>, tensor<4xf32>>) -> tuple<tensor<i32>, tensor<4xf32>>
  %r = mhlo.get_tuple_element %c[1] : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
""")
    done = script(str(src), "--pass-pipeline=builtin.module(func.func(mhlo-flatten-tuple),"
                            "flatten-control-dep-tuple-operands)")
    assert done.returncode == 0, done.stderr
    module = parse(done.stdout.decode())
    [call] = [op for op in ops(module) if is_control_dep(op)]
    assert len(call.results) == 2


@pytest.mark.parametrize("stdin, args", [
    (b"func.func @main( {\n", []),
    (b'func.func @main() {\n  "frob.nicate"() : () -> ()\n  return\n}\n', []),
    (STABLEHLO_MODULE.encode(), ["--pass-pipeline=builtin.module(no-such-pass)"]),
], ids=["syntax", "unknown-op", "unknown-pass"])
def test_script_failure_is_one_line_on_stderr(stdin, args):
    """Nothing from MLIR's C++ diagnostics or Python reaches stderr but the line."""
    done = script(*args, stdin=stdin)
    assert done.returncode == 2
    assert done.stdout == b""
    one_error_line(done.stderr.decode())


# --------------------------------------------------------------------------
# hlo2penguin --emit mlir | flat-mlir
# --------------------------------------------------------------------------


def run_cli(argv, capfd):
    status = cli.main(argv)
    out, err = capfd.readouterr()
    return status, out, err


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_emit_mlir_has_the_tuple_artifact(capfd, dialect):
    status, out, err = run_cli(["--emit", "mlir", "--dialect", dialect, "-q"], capfd)
    assert (status, err) == (0, "")
    module = parse(out)
    calls = [op for op in ops(module) if is_control_dep(op)]
    assert calls and all(op.name == f"{dialect}.custom_call" for op in calls)
    assert tupleish_operands(module) > 0  # the while predecessor, as a tuple op
    other = "mhlo" if dialect == "stablehlo" else "stablehlo"
    if dialect == "mhlo":
        assert not any(op.name.startswith(f"{other}.") for op in ops(module))


@pytest.mark.parametrize("bundle", [[], ["--bundle"]], ids=["flat", "bundle"])
@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_emit_flat_mlir_has_no_tuple_operand(capfd, dialect, bundle):
    status, out, err = run_cli(["--emit", "flat-mlir", "--dialect", dialect, "--debug-info", *bundle], capfd)
    assert status == 0
    [summary] = err.splitlines()  # the edge summary, nothing else
    assert summary.startswith("hlo2penguin: ") and "error" not in summary and "warning" not in summary
    module = parse(out)
    calls = [op for op in ops(module) if is_control_dep(op)]
    assert len(calls) == 3
    assert tupleish_operands(module) == 0
    assert all(op.name == f"{dialect}.custom_call" for op in calls)
    # Rebuilt calls carry call_target_name only. Without --bundle the body's
    # call (a plain copy as predecessor) was flat already and is untouched.
    rebuilt = [op for op in calls if set(op.attributes) == {"call_target_name"}]
    assert len(rebuilt) == (3 if bundle else 2)
    # --debug-info: HLO names in link #2's locations, the call's own among them.
    assert '#loc' in out and 'loc("scaled.control-dep")' in out
    [scaled] = [op for op in calls if str(op.location) == 'loc(fused<"main">["scaled.control-dep"])']
    loop = next(op for op in ops(module) if op.name == f"{dialect}.while")
    assert list(scaled.operands)[:2] == list(loop.results)


def test_emit_flat_mlir_keep_attributes(capfd):
    status, out, _ = run_cli(["--emit", "flat-mlir", "--keep-attributes", "-q"], capfd)
    assert status == 0
    calls = [op for op in ops(parse(out)) if is_control_dep(op)]
    assert all("has_side_effect" in op.attributes for op in calls)
    assert CONTROL_DEP_TARGET in out


def test_emit_mlir_and_flat_mlir_differ_only_by_link_3(capfd):
    _, imported, _ = run_cli(["--emit", "mlir", "--dialect", "mhlo", "-q"], capfd)
    _, flat, _ = run_cli(["--emit", "flat-mlir", "--dialect", "mhlo", "-q"], capfd)
    from passes.mlir import MHLO, FlattenControlDepTupleOperands
    module = parse(imported)
    FlattenControlDepTupleOperands(MHLO).run(module)
    assert str(module) == str(parse(flat))


def test_emit_flat_mlir_from_a_file(tmp_path, capfd):
    from pipeline.chain.example import EXAMPLE_HLO
    src = tmp_path / "example.hlo"
    src.write_text(EXAMPLE_HLO)
    dst = tmp_path / "flat.mlir"
    status, out, _ = run_cli([str(src), "--emit", "flat-mlir", "--dialect", "mhlo", "-o", str(dst), "-q"], capfd)
    assert (status, out) == (0, "")
    assert tupleish_operands(parse(dst.read_text())) == 0


def test_bad_dialect_choice(capfd):
    status, out, err = run_cli(["--emit", "mlir", "--dialect", "tosa"], capfd)
    assert (status, out) == (2, "")
    assert "argument --dialect: invalid choice: 'tosa'" in one_error_line(err, "hlo2penguin: error: ")


def test_version_names_the_package_and_the_jax_it_runs_with():
    from importlib import metadata

    done = subprocess.run([OPT, "--version"], capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == (f"hlo2penguin-opt {metadata.version('hlo2penguin')} "
                                    f"(jax {metadata.version('jax')}, jaxlib {metadata.version('jaxlib')})\n")
