"""`hlo2penguin`: what a user sees on stdout, stderr and in the exit status.

Most cases call `pipeline.cli.hlo2penguin.main([...])` in-process; a few run the
installed console script, to prove that nothing (no traceback, no XLA log
line) reaches stderr beyond what the CLI itself says.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field

import jaxlib._hlo as xla_hlo
import pytest

from jax_programs import count_control_edges
from passes.control_dep import CONTROL_DEP_TARGET
from pipeline.reading.parsed import Parsed
from pipeline.cli import hlo2penguin as cli
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.xla import native

SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))
SUMMARY = re.compile(
    r"^hlo2penguin: preserve-control-deps: (\d+) control edge\(s\): "
    r"(\d+) preserved, (\d+) rerouted, (\d+) dropped$")
ERROR = "hlo2penguin: error: "


def valid(text: str) -> str:
    text = textwrap.dedent(text).lstrip("\n")
    xla_hlo.hlo_module_from_text(text)  # real XLA syntax
    return text


def locate(text: str, needle: str) -> tuple[int, int]:
    index = text.index(needle)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def with_hlo_stage(argv) -> list[str]:
    """These tests are about link #1's stage; the default stage is the program."""
    return list(argv) if "--emit" in argv else [*argv, "--emit", "hlo"]


def run_main(argv, capsys):
    status = cli.main(with_hlo_stage(argv))
    out, err = capsys.readouterr()
    return status, out, err


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(ERROR), err
    assert "Traceback" not in err
    return lines[0][len(ERROR):]


def leftovers(directory) -> list[str]:
    return [n for n in os.listdir(directory) if n.startswith(".hlo2penguin-")]


@dataclass
class Instr:
    """One instruction of XLA's parse of a module: its name as the text
    writes it, its opcode, XLA's ShapeProto, its custom-call target, its operands."""

    name: str
    opcode: str
    shape: object
    target: str
    operands: list = field(default_factory=list)


def read_back(text: str) -> dict[str, dict[str, Instr]]:
    """XLA's parse of `text` (what `--emit hlo` printed): computation → name → instruction."""
    parsed = native.read(text)
    computations = {}
    for comp in parsed.proto.computations:
        by_id = {i.id: Instr(parsed.name(comp.name, i.name), i.opcode, i.shape, i.custom_call_target)
                 for i in comp.instructions}
        for i in comp.instructions:
            by_id[i.id].operands = [by_id[o] for o in i.operand_ids]
        computations[comp.name] = {i.name: i for i in by_id.values()}
    return computations


def control_dep_calls(text: str) -> list[tuple[str, Instr]]:
    return [(comp, i) for comp, instructions in read_back(text).items() for i in instructions.values()
            if i.opcode == "custom-call" and i.target == CONTROL_DEP_TARGET]


def xla_parser_says(text: str) -> tuple[str, str]:
    """XLA's parser's own position and first complaint: `was parsing L:C: error: MESSAGE`
    (with the next at the same place when the first is a lead-in ending in `:`)."""
    with pytest.raises(Exception) as refused:
        xla_hlo.hlo_module_from_text(text)
    errors = re.findall(r"was parsing (\d+:\d+): error: (.*)", str(refused.value))
    position, said = errors[0][0], errors[0][1].strip()
    if said.endswith(":") and len(errors) > 1 and errors[1][0] == position:
        said += " " + errors[1][1].strip()
    return position, said


SIMPLE = valid("""
    HloModule simple
    ENTRY %main (x: f32[4]) -> f32[4] {
      %x = f32[4]{0} parameter(0)
      %a = f32[4]{0} negate(%x)
      %b = f32[4]{0} exponential(%x)
      ROOT %s = f32[4]{0} add(%b, %x), control-predecessors={%a}
    }
""")

UNKNOWN_OPCODE = """\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %n = f32[] frobnicate(%a)
}
"""

UNDEFINED_OPERAND = """\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %n = f32[] add(%a, %nope)
}
"""


# --------------------------------------------------------------------------
# Success
# --------------------------------------------------------------------------


def test_built_in_example(capsys):
    status, out, err = run_main([], capsys)
    assert status == 0
    xla_hlo.hlo_module_from_text(out)
    assert CONTROL_DEP_TARGET in out
    assert "control-predecessors" not in out  # every edge now lives in data
    assert 'has_control_deps="1"' in out  # as the decompiled pass stamps it
    lines = err.splitlines()
    assert len(lines) == 1, err
    total, preserved, rerouted, dropped = map(int, SUMMARY.match(lines[0]).groups())
    assert total == count_control_edges(EXAMPLE_HLO) == preserved + rerouted + dropped
    assert dropped == 0 and preserved >= 1


def test_quiet_prints_nothing_on_stderr(capsys):
    status, out, err = run_main(["--quiet"], capsys)
    assert status == 0 and err == "" and CONTROL_DEP_TARGET in out


def test_file_input_and_output_file(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text(SIMPLE)
    dst = tmp_path / "out.txt"
    status, out, err = run_main([str(src), "--emit", "hlo", "-o", str(dst)], capsys)
    assert status == 0
    assert out == ""  # the module went to the file
    assert SUMMARY.match(err.strip())
    written = dst.read_text()
    xla_hlo.hlo_module_from_text(written)
    [(_, cc)] = control_dep_calls(written)
    assert [o.name for o in cc.operands] == ["a", "b"]  # predecessor, then data
    assert leftovers(tmp_path) == []
    # The same text as on stdout.
    status, out, _ = run_main([str(src)], capsys)
    assert status == 0 and out == written


def test_output_file_gets_the_mode_a_plain_write_would(tmp_path, capsys):
    old = os.umask(0o027)
    try:
        dst = tmp_path / "new.txt"
        assert run_main(["-o", str(dst)], capsys)[0] == 0
        assert dst.stat().st_mode & 0o777 == 0o640  # 0666 under the umask, not mkstemp's 0600
    finally:
        os.umask(old)
    existing = tmp_path / "existing.txt"
    existing.write_text("old")
    existing.chmod(0o604)
    assert run_main(["-o", str(existing)], capsys)[0] == 0
    assert existing.stat().st_mode & 0o777 == 0o604  # a replaced file keeps its mode


def test_output_is_written_atomically(tmp_path, capsys, monkeypatch):
    dst = tmp_path / "out.txt"
    dst.write_text("previous contents\n")
    seen = []
    real_replace = os.replace

    def replace(src, target):
        # At the moment of the swap: the target still holds the old text and
        # the complete new text sits in a temporary file beside it.
        seen.append((os.path.dirname(src), dst.read_text(), open(src).read()))
        return real_replace(src, target)

    monkeypatch.setattr(cli.os, "replace", replace)
    assert run_main(["-o", str(dst)], capsys)[0] == 0
    [(directory, before, new)] = seen
    assert directory == str(tmp_path)
    assert before == "previous contents\n"
    assert new == dst.read_text() and CONTROL_DEP_TARGET in new
    assert leftovers(tmp_path) == []


def test_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(SIMPLE.encode())))
    status, out, err = run_main(["-"], capsys)
    assert status == 0
    [(_, cc)] = control_dep_calls(out)
    assert [o.name for o in cc.operands] == ["a", "b"]
    assert SUMMARY.match(err.strip()).group(1) == "1"


def test_bundle_feeds_a_tuple_of_predecessors_to_the_custom_call(capsys):
    status, out, _ = run_main(["--bundle"], capsys)
    assert status == 0
    xla_hlo.hlo_module_from_text(out)
    calls = control_dep_calls(out)
    assert calls
    for _, cc in calls:
        assert len(cc.operands) == 2  # (tuple of predecessors, data)
        bundle = cc.operands[0]
        assert bundle.opcode == "tuple" and len(bundle.shape.tuple_shapes) == len(bundle.operands) >= 1
        # XLA's element shapes are the predecessors' own.
        assert list(bundle.shape.tuple_shapes) == [p.shape for p in bundle.operands]
    # The example's two-predecessor successor gets both, in its order, in one tuple.
    scaled = read_back(out)["main"]["scaled"]
    cc = scaled.operands[0]
    assert cc.opcode == "custom-call" and cc.target == CONTROL_DEP_TARGET
    assert [o.name for o in cc.operands[0].operands] == ["loop", "copy.x"]
    assert cc.operands[1].name == "result"
    # Without --bundle the predecessors are the custom-call's own operands.
    status, flat, _ = run_main([], capsys)
    assert status == 0
    flat_calls = control_dep_calls(flat)
    assert len(flat_calls) == len(calls)
    assert all(o.opcode != "tuple" for _, cc in flat_calls for o in cc.operands)


def test_tuple_element_operands_from_newer_xla_are_accepted(tmp_path, capsys):
    text = """\
HloModule m
ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %t = (f32[4]{0}, f32[4]{0}) tuple(%a, %a)
  %c = f32[4]{0} copy(%a)
  ROOT %r = f32[4]{0} add(%t#0, %t#1), control-predecessors={%c}
}
"""
    src = tmp_path / "hash.txt"
    src.write_text(text)
    status, out, err = run_main([str(src)], capsys)
    assert status == 0, err
    xla_hlo.hlo_module_from_text(out)
    [(_, cc)] = control_dep_calls(out)
    # The get-tuple-element made for `%t#0` is named as XLA 0.12 names it.
    assert [o.name for o in cc.operands] == ["c", "t_0"]


# --------------------------------------------------------------------------
# Failure: exit 2, one line on stderr, nothing on stdout, no file left
# --------------------------------------------------------------------------


def test_missing_input_file(tmp_path, capsys):
    missing = tmp_path / "nope.txt"
    status, out, err = run_main([str(missing)], capsys)
    assert status == 2 and out == ""
    message = one_error_line(err)
    assert str(missing) in message and "No such file" in message


def test_non_utf8_input(tmp_path, capsys):
    src = tmp_path / "module.txt"
    src.write_bytes(b"HloModule m\n\xff\xfebinary")
    status, out, err = run_main([str(src)], capsys)
    assert status == 2 and out == ""
    message = one_error_line(err)
    assert message.startswith(f"{src}:2:1: ") and "not UTF-8" in message


def test_bytes_with_control_characters_are_binary_whatever_words_they_hold(tmp_path, capsys):
    src = tmp_path / "module.pb"
    src.write_bytes(b"HloModule m\n\x08\xff\x01binary")
    status, out, err = run_main([str(src)], capsys)
    assert status == 2 and out == ""
    message = one_error_line(err)
    assert message.startswith(f"{src}: ") and "truncated or corrupted" in message


def test_unknown_opcode_is_rejected_by_xla(tmp_path, capsys):
    src = tmp_path / "unknown.txt"
    src.write_text(UNKNOWN_OPCODE)
    status, out, err = run_main([str(src)], capsys)
    assert status == 2 and out == ""
    message = one_error_line(err)
    line, column = locate(UNKNOWN_OPCODE, "frobnicate")
    assert message.startswith(f"{src}:{line}:{column}: XLA's parser: ")
    assert "frobnicate" in message


def test_undefined_operand(tmp_path, capsys):
    src = tmp_path / "undefined.txt"
    src.write_text(UNDEFINED_OPERAND)
    status, out, err = run_main([str(src)], capsys)
    assert status == 2 and out == ""
    message = one_error_line(err)
    position, said = xla_parser_says(UNDEFINED_OPERAND)  # XLA's own words and place
    assert message == f"{src}:{position}: XLA's parser: {said}"


def test_bad_emit_choice(capsys):
    status, out, err = run_main(["--emit", "pengiun"], capsys)
    assert status == 2 and out == ""
    message = one_error_line(err)
    assert "--emit" in message and "'pengiun'" in message and "penguin" in message


@pytest.mark.parametrize("where", ["missing_directory", "a_directory"])
def test_unwritable_output_path(tmp_path, capsys, where):
    dst = tmp_path / "no" / "such" / "out.txt" if where == "missing_directory" else tmp_path
    status, out, err = run_main(["-o", str(dst)], capsys)
    assert status == 2 and out == ""
    message = one_error_line(err)  # the edge summary is not printed either
    assert f"cannot write output '{dst}'" in message
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("bad", [UNKNOWN_OPCODE, UNDEFINED_OPERAND, b"\xff"], ids=["unknown-opcode", "undefined-operand", "bytes"])
def test_failing_run_leaves_no_output_file(tmp_path, capsys, bad):
    src = tmp_path / "bad.txt"
    src.write_bytes(bad if isinstance(bad, bytes) else bad.encode())
    fresh = tmp_path / "fresh.txt"
    status, _, err = run_main([str(src), "-o", str(fresh)], capsys)
    assert status == 2 and not fresh.exists()
    one_error_line(err)
    existing = tmp_path / "existing.txt"
    existing.write_text("keep me\n")
    status, _, _ = run_main([str(src), "-o", str(existing)], capsys)
    assert status == 2 and existing.read_text() == "keep me\n"
    assert leftovers(tmp_path) == []


def test_failed_write_leaves_neither_temporary_nor_partial_file(tmp_path, capsys, monkeypatch):
    def refuse(src, target):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli.os, "replace", refuse)
    dst = tmp_path / "out.txt"
    status, out, err = run_main(["-o", str(dst)], capsys)
    assert status == 2
    assert one_error_line(err) == f"cannot write output '{dst}': Permission denied"
    assert not dst.exists() and leftovers(tmp_path) == []


# --------------------------------------------------------------------------
# The installed console script
# --------------------------------------------------------------------------


def script(*args, stdin: bytes | None = None, cwd=None):
    assert SCRIPT, "the hlo2penguin console script is not installed next to this Python"
    return subprocess.run([SCRIPT, *with_hlo_stage(args)], input=stdin, capture_output=True, cwd=cwd,
                          timeout=120)


def test_script_runs_the_built_in_example():
    done = script()
    assert done.returncode == 0
    err = done.stderr.decode()
    assert SUMMARY.match(err.strip()), err
    out = done.stdout.decode()
    xla_hlo.hlo_module_from_text(out)
    assert CONTROL_DEP_TARGET in out


def test_script_reads_stdin_and_writes_a_file(tmp_path):
    dst = tmp_path / "out.txt"
    done = script("-", "-o", str(dst), stdin=SIMPLE.encode())
    assert done.returncode == 0 and done.stdout == b""
    assert SUMMARY.match(done.stderr.decode().strip())
    [(_, cc)] = control_dep_calls(dst.read_text())
    assert [o.name for o in cc.operands] == ["a", "b"]


@pytest.mark.parametrize("case", ["missing_file", "non_utf8", "unknown_opcode", "undefined_operand",
                                  "bad_emit", "unwritable_output"])
def test_script_failures_say_one_line_and_exit_2(tmp_path, case):
    src = tmp_path / "in.txt"
    args = [str(src)]
    if case == "non_utf8":
        src.write_bytes(b"\xfe\xff\x00H\x00l\x00o")
    elif case == "unknown_opcode":
        src.write_text(UNKNOWN_OPCODE)
    elif case == "undefined_operand":
        src.write_text(UNDEFINED_OPERAND)
    elif case == "bad_emit":
        args = ["--emit", "nonsense"]
    elif case == "unwritable_output":
        args = ["-o", str(tmp_path / "missing" / "out.txt")]
    done = script(*args, "-o", str(tmp_path / "out.txt")) if case not in ("bad_emit", "unwritable_output") \
        else script(*args)
    assert done.returncode == 2
    assert done.stdout == b""
    one_error_line(done.stderr.decode())
    assert not (tmp_path / "out.txt").exists()
    assert leftovers(tmp_path) == []


def test_version_names_the_package_and_the_jax_it_runs_with():
    from importlib import metadata

    done = subprocess.run([SCRIPT, "--version"], capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == (f"hlo2penguin {metadata.version('hlo2penguin')} "
                                    f"(jax {metadata.version('jax')}, jaxlib {metadata.version('jaxlib')})\n")
