"""`hlo2penguin check PATH...`: a folder shaped like an XLA dump (modules
from tests/newer_xla/ and tests/pipeline_dumps/ under XLA's dump file names,
XLA's reports beside them, a module without control edges, modules XLA
refuses) against oracles the command does not control: the chain's own
report of each module computed here, the count of `control-predecessors`
entries in the text, and XLA's own message for a module it refuses."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import jaxlib._hlo as xla_hlo
import jaxlib._jax as xla_ext
import pytest

import pipeline
from jax_programs import count_control_edges
from passes.errors import ChainError
from pipeline.cli import check
from pipeline.cli import hlo2penguin as cli
from paths import TESTS

SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))
COUNTS = ("edges", "preserved", "rerouted", "dropped", "lost", "spurious")

# dump file name → where its text comes from: real XLA CPU dumps (XLA 0.12's),
# and modules in the form of XLA's GPU/TPU dumps.
MODULES = {
    "module_0001.jit_mlp_block.gpu_after_optimizations.txt": "pipeline_dumps/gpu_command_buffer_call.hlo",
    "module_0002.jit_moe_switch.gpu_after_optimizations.txt": "pipeline_dumps/gpu_conditional_branches.hlo",
    "module_0003.jit_grad_sync.gpu_after_optimizations.txt": "pipeline_dumps/gpu_combined_all_reduce.hlo",
    "module_0004.jit_while_swap_buffers.cpu_after_optimizations.txt":
        "newer_xla/while_swap_buffers.cpu_after_optimizations.hlo",
    "module_0005.jit_scan_swap_inplace.0012.copy-insertion.after_adding_copies_to_resolve_interference.txt":
        "newer_xla/scan_swap_inplace.copy-insertion.after_adding_copies_to_resolve_interference.hlo",
    "tpu/module_0006.jit_tiled.tpu_after_optimizations.txt": "pipeline_dumps/tpu_tiled_layouts.hlo",
    # A send/recv loop: edges no program can carry, lost at link #1.
    "module_0009.jit_p2p.gpu_after_optimizations.txt": "pipeline_dumps/gpu_send_recv_loop.hlo",
}
MODULES_IN_TPU = "tpu/module_0006.jit_tiled.tpu_after_optimizations.txt"
REFUSED_BY_IMPORTER = "module_0003.jit_grad_sync.gpu_after_optimizations.txt"  # XLA's importer refuses it
REFUSED_BY_PARSER = "module_0007.jit_bad.after_typo.txt"
PARSER_REFUSES = """HloModule jit_bad
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %b = f32[4]{0} frobnicate(%x)
  ROOT %s = f32[4]{0} add(%b, %x), control-predecessors={%a}
}
"""
NO_CONTROL_EDGES = """HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main.3 (Arg_0.1: f32[4]) -> f32[4] {
  %Arg_0.1 = f32[4]{0} parameter(0)
  ROOT %negate.2 = f32[4]{0} negate(%Arg_0.1)
}
"""
# What XLA writes beside the modules: text, but no HLO module.
NOT_HLO = {
    "module_0004.jit_while_swap_buffers.cpu_after_optimizations-buffer-assignment.txt":
        "BufferAssignment:\nallocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:\n"
        " value: <3 Arg_0.1 @0> (size=16,offset=0): f32[4]{0}\n",
    "module_0004.jit_while_swap_buffers.cpu_after_optimizations-memory-usage-report.txt":
        "Total bytes used: 48 (48B)\n\nAllocations sorted by size:\n\ncumulative_size; total_size - ...\n",
}
NOT_CANDIDATES = {"module_0008.jit_f.ir-no-opt.ll": "; ModuleID = '__compute_module'\n",
                  "module_0008.jit_f.obj-file.__compute_module.o": "\x7fELF\x02\x01"}


def make_dump_folder(root: Path) -> Path:
    """The folder `hlo2penguin check` reads: see MODULES and the constants above."""
    folder = root / "xla_dump"
    for name, source in MODULES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(TESTS / source, folder / name)
    (folder / REFUSED_BY_PARSER).write_text(PARSER_REFUSES)
    (folder / "module_0008.jit_f.before_optimizations.txt").write_text(NO_CONTROL_EDGES)
    for name, text in {**NOT_HLO, **NOT_CANDIDATES}.items():
        (folder / name).write_text(text)
    return folder


def modules_with_edges(folder: Path) -> list[str]:
    """The paths `check` must run, in sorted order: the HLO modules this test wrote with control edges."""
    return sorted(str(folder / name) for name in [*MODULES, REFUSED_BY_PARSER])


def module_name(text: str) -> str:
    return text.split()[1].rstrip(",")


def xla_importer_says(text: str) -> str:
    """XLA's own refusal of a module its parser reads, its importer not."""
    proto = xla_hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto()
    with pytest.raises(Exception) as refused:
        xla_ext.mlir.hlo_to_stablehlo(proto)
    return str(refused.value).splitlines()[0]


def xla_parser_says(text: str) -> tuple[str, str]:
    """XLA's parser's position and complaint: `was parsing L:C: error: MESSAGE`."""
    with pytest.raises(Exception) as refused:
        xla_hlo.hlo_module_from_text(text)
    m = re.search(r"was parsing (\d+:\d+): error: (.*)", str(refused.value))
    return m.group(1), m.group(2)


@pytest.fixture(autouse=True)
def no_columns(monkeypatch):
    """The tables checked in this process are as wide as with stdout on a pipe
    and COLUMNS unset (the user's terminal or pytest-xdist may set it)."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return make_dump_folder(tmp_path_factory.mktemp("check"))


@pytest.fixture(scope="module")
def oracle(folder) -> dict[str, dict]:
    """Each module's row as the chain itself reports it (run here, one module at a time)."""
    rows = {}
    for path in modules_with_edges(folder):
        text = Path(path).read_text()
        row = {"path": path, "module": module_name(text)}
        if path.endswith(REFUSED_BY_IMPORTER):
            row["refused"] = xla_importer_says(text)
        elif path.endswith(REFUSED_BY_PARSER):
            row["refused"] = xla_parser_says(text)
        else:
            row.update(pipeline.run(path).report.totals())
            assert row["edges"] == count_control_edges(text)  # the text's own count
        rows[path] = row
    return rows


def assert_row_is_the_chains(row: dict, expected: dict) -> None:
    assert (row["path"], row["module"]) == (expected["path"], expected["module"])
    if "refused" not in expected:
        assert row["error"] == "" and {k: row[k] for k in COUNTS} == {k: expected[k] for k in COUNTS}
        return
    assert "\n" not in row["error"] and row["error"].startswith(f"{row['path']}:")
    assert all(row[k] == 0 for k in COUNTS)
    if isinstance(expected["refused"], tuple):  # the parser: XLA's position and words
        position, message = expected["refused"]
        assert row["error"].startswith(f"{row['path']}:{position}: ") and row["error"].endswith(message)
    else:
        assert row["error"].endswith(expected["refused"])


def test_json_has_a_row_per_module_as_the_chain_reports_it_and_their_sums(folder, oracle, capfd):
    status = cli.main(["check", str(folder), "--json", "--jobs", "2"])
    out, err = capfd.readouterr()
    assert status == 1  # two modules refused
    assert err == ""  # no terminal: no progress bar, nothing else
    summary = json.loads(out)
    assert set(summary) == {"modules", "totals", "skipped", "twins"}
    assert [r["path"] for r in summary["modules"]] == modules_with_edges(folder)  # sorted, refused ones included
    for row in summary["modules"]:
        assert list(row) == ["path", "module", "file", "stage", *COUNTS, "error"]
        assert_row_is_the_chains(row, oracle[row["path"]])
        assert row["file"] == os.path.relpath(row["path"], folder)  # the folder named holds them all
        assert row["stage"] == stage_in(row["file"])
    good = [r for r in oracle.values() if "refused" not in r]
    assert summary["totals"] == {**{k: sum(r[k] for r in good) for k in COUNTS}, "errors": 2}
    texts = [Path(r["path"]).read_text() for r in good]
    assert summary["totals"]["edges"] == sum(count_control_edges(t) for t in texts) > 20
    assert summary["totals"]["lost"] > 0  # the send/recv loop's
    assert summary["skipped"] == {"not_hlo": len(NOT_HLO), "no_control_edges": 1}


def stage_in(file: str) -> str | None:
    """The stage in an XLA dump name: after `module_NNNN.<module>.` and the pass counter."""
    m = re.fullmatch(r"(?:.*/)?module_\d+\.jit_\w+\.(?:\d{4}\.)?(.+)\.txt", file)
    return m and m.group(1)


def names(shown: str, name: str) -> bool:
    """The table's cell names `name`: the whole name, or its end after `…`."""
    head, cut, tail = shown.partition("…")
    return shown == name or (cut and not head and name.endswith(tail) and len(tail) >= 7)


def test_the_table_has_a_row_per_module_a_total_and_the_skipped(folder, oracle, capfd):
    status = cli.main(["check", str(folder), "--jobs", "1"])  # in this process
    out, err = capfd.readouterr()
    assert status == 1 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["module", "stage", *COUNTS, "error"] and set(lines[1]) <= {"-", " "}
    at = next(i for i, line in enumerate(lines) if line.startswith("total:"))
    rows, (total, files, skipped, hint) = lines[2:at], lines[at:]
    assert hint == "each edge and its fate: hlo2penguin MODULE --emit report"  # some edges are lost
    assert files == f"files under {folder}"  # each module once: the totals add distinct modules
    assert len(rows) == len(oracle)
    for line, path in zip(rows, modules_with_edges(folder)):  # in sorted order
        expected = oracle[path]
        cells = line.split()
        # The module after `HloModule` and the stage XLA's dump name says (each module once here).
        assert cells[0] == expected["module"] and str(folder) not in line
        assert names(cells[1], stage_in(os.path.basename(path)) or "-")
        if "refused" in expected:  # `-` for each count, then the error after the path the row names
            assert cells[2:2 + len(COUNTS)] == ["-"] * len(COUNTS)
            said = expected["refused"][1] if isinstance(expected["refused"], tuple) else expected["refused"]
            assert line.endswith(said)
        else:
            assert cells[2:] == [str(expected[k]) for k in COUNTS]
    good = [r for r in oracle.values() if "refused" not in r]
    assert total.startswith(f"total: {len(oracle)} rows, 2 errors")
    assert total.split()[-len(COUNTS):] == [str(sum(r[k] for r in good)) for k in COUNTS]
    assert skipped == f"skipped {len(NOT_HLO) + 1} file(s): {len(NOT_HLO)} not an HLO module, 1 without control edges"


def test_a_lost_edge_is_exit_1_and_the_python_api_counts_it(folder, capfd):
    """gpu_command_buffer_call has a tuple-shaped predecessor: without link #3 its edge is lost."""
    path = str(folder / "module_0001.jit_mlp_block.gpu_after_optimizations.txt")
    lost = len(pipeline.run(path, flatten=False).report.lost)
    assert lost >= 1 and not pipeline.run(path).report.lost
    assert cli.main(["check", path, "-q"]) == 0
    totals = pipeline.run(path).report.totals()
    assert capfd.readouterr().out.splitlines()[2].split()[2:] == [str(totals[k]) for k in COUNTS]
    assert cli.main(["check", path, "-q", "--no-flatten"]) == 1
    out, err = capfd.readouterr()
    assert out.splitlines()[2].split()[6] == str(lost) and err == ""
    assert out.splitlines()[-1] == "each edge and its fate: hlo2penguin MODULE --emit report"
    assert check.check([path], jobs=1, flatten=False).totals()["lost"] == lost


def test_the_chain_options_reach_the_chain(folder):
    """`--dialect mhlo` over a sub-folder: the rows are the chain's own in MHLO."""
    path = str(folder / MODULES_IN_TPU)
    summary = check.check([folder / "tpu"], jobs=1, dialect="mhlo", bundle=True)
    expected = pipeline.run(path, dialect="mhlo", bundle=True).report.totals()
    assert [(r.path, r.error) for r in summary.modules] == [(path, "")]
    assert summary.totals() == {**expected, "errors": 0} and summary.ok
    with pytest.raises(ChainError, match="unknown dialect 'stablhlo'"):  # before any module is read
        check.check(["/nonexistent"], dialect="stablhlo")


@pytest.mark.parametrize("argv,needle", [
    (["check", "{tmp}/nope"], "cannot read input '{tmp}/nope': No such file or directory"),
    (["check", "{tmp}/no_hlo", "--dialect", "stablhlo"], "argument --dialect: invalid choice: 'stablhlo'"),
    (["check", "{tmp}/no_hlo", "--jobs", "0"], "--jobs takes a whole number of at least 1"),
    (["check"], "the following arguments are required: PATH"),
])
def test_bad_input_is_one_line_on_stderr_and_exit_2(tmp_path, capfd, argv, needle):
    (tmp_path / "no_hlo").mkdir()
    (tmp_path / "empty").mkdir()
    for name, text in NOT_HLO.items():
        (tmp_path / "no_hlo" / name).write_text(text)
    (tmp_path / "no_hlo" / "before_optimizations.hlo").write_text(NO_CONTROL_EDGES)
    assert cli.main([a.format(tmp=tmp_path) for a in argv]) == 2
    out, err = capfd.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("hlo2penguin check: error: ") and needle.format(tmp=tmp_path) in err


@pytest.mark.parametrize("argv,said", [
    (["check", "{tmp}/no_hlo"], "no HLO module with control edges in 3 files (1 HLO module without "
                                "control-predecessors, 2 not HLO); nothing to check; XLA adds control edges in copy "
                                "insertion and later passes, so an earlier dump stage has none"),
    (["check", "{tmp}/empty"], "no .txt or .hlo file in '{tmp}/empty'; nothing to check"),
])
def test_nothing_to_check_is_one_line_on_stderr_and_exit_0(tmp_path, capfd, argv, said):
    """A CI gate on a program without control edges passes, and says what it found."""
    (tmp_path / "no_hlo").mkdir()
    (tmp_path / "empty").mkdir()
    for name, text in NOT_HLO.items():
        (tmp_path / "no_hlo" / name).write_text(text)
    (tmp_path / "no_hlo" / "before_optimizations.hlo").write_text(NO_CONTROL_EDGES)
    assert cli.main([a.format(tmp=tmp_path) for a in argv]) == 0
    assert capfd.readouterr() == ("", f"hlo2penguin check: {said.format(tmp=tmp_path)}\n")


def run_on_a_terminal(argv: list[str]) -> tuple[int, str, str]:
    """The console script with stderr on a pseudo-terminal (80 columns), stdout on a pipe."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen([SCRIPT, *argv], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out = process.stdout.read()
    process.wait()
    os.close(master)
    return process.returncode, out.decode(), err.decode("utf-8", "replace")


def test_progress_bar_on_a_terminal_and_not_with_q(folder):
    path = str(folder / "module_0002.jit_moe_switch.gpu_after_optimizations.txt")
    status, out, err = run_on_a_terminal(["check", path])
    assert status == 0 and re.search(r"\b[01]/1 \[", err)  # tqdm's bar (`0/1 [00:00<?, ?module/s]`), on stderr only
    assert "/1 [" not in out and out.splitlines()[0].split()[0] == "module"
    status, out_q, err_q = run_on_a_terminal(["check", path, "-q"])
    assert status == 0 and err_q == "" and out_q == out


# As XLA's own unit tests write HLO: no HloModule line, shapes left out of operands.
UNIT_TEST_STYLE = """\
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %a = f32[4] negate(%p)
  %b = f32[4] exponential(%p)
  ROOT %c = f32[4] add(%a, %b), control-predecessors={%b, %a}
}
"""


def test_modules_written_as_xla_s_unit_tests_write_them_are_checked(tmp_path, capfd):
    """No `HloModule` line: XLA's parser reads it, so check does, in a folder or named."""
    xla_hlo.hlo_module_from_text(UNIT_TEST_STYLE)  # XLA reads it
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "negate_exp.hlo").write_text(UNIT_TEST_STYLE)
    (tmp_path / "d" / "notes.txt").write_text("BufferAssignment:\nallocation 0: size 16\n")
    expected = pipeline.run(UNIT_TEST_STYLE).report.totals()
    assert expected["edges"] == count_control_edges(UNIT_TEST_STYLE) == 2
    for where in (tmp_path / "d", tmp_path / "d" / "negate_exp.hlo"):
        assert cli.main(["check", str(where), "--json", "--jobs", "1"]) == 0
        out = json.loads(capfd.readouterr().out)
        assert [r["path"] for r in out["modules"]] == [str(tmp_path / "d" / "negate_exp.hlo")]
        assert {k: out["totals"][k] for k in COUNTS} == {k: expected[k] for k in COUNTS}
    assert out["skipped"]["not_hlo"] == 0  # named alone
    assert cli.main(["check", str(tmp_path / "d"), "--json", "--jobs", "1"]) == 0
    assert json.loads(capfd.readouterr().out)["skipped"]["not_hlo"] == 1  # the report beside it


# A module that already holds a control-dep call (link #1's output, or the
# real hlo-opt's, that a later XLA pass gave a new control edge): the call
# orders %a before %c although no HLO control edge says so, a spurious dep
# edge in the program, while the one control edge (%b -> %s) is carried.
ALREADY_REIFIED = """\
HloModule already_reified

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %b = f32[4]{0} exponential(%x)
  %cc = f32[4]{0} custom-call(%a, %b), custom_call_target="AwsNeuronControlDep", custom_call_has_side_effect=true
  %c = f32[4]{0} abs(%cc)
  ROOT %s = f32[4]{0} add(%c, %x), control-predecessors={%b}
}
"""


def test_a_spurious_dep_edge_alone_is_exit_1(tmp_path, capfd):
    """check's promise: exit 1 on a spurious dep edge, even with no edge lost and no module refused."""
    xla_hlo.hlo_module_from_text(ALREADY_REIFIED)  # XLA reads it
    path = tmp_path / "module_0001.jit_f.after_preserve.txt"
    path.write_text(ALREADY_REIFIED)
    assert count_control_edges(ALREADY_REIFIED) == 1
    assert cli.main(["check", str(path), "--json", "-q"]) == 1
    out, err = capfd.readouterr()
    (row,) = json.loads(out)["modules"]
    assert (row["edges"], row["preserved"], row["lost"], row["spurious"], row["error"]) == (1, 1, 0, 1, "")
    assert cli.main(["check", str(path), "-q"]) == 1
    assert capfd.readouterr().out.splitlines()[-1] == "each edge and its fate: hlo2penguin MODULE --emit report"
    assert not check.check([path], jobs=1).ok


def test_a_module_named_twice_or_inside_a_folder_also_named_is_one_row(tmp_path, capfd):
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "negate_exp.hlo"
    path.write_text(UNIT_TEST_STYLE)
    other = tmp_path / "other.hlo"
    other.write_text(UNIT_TEST_STYLE)
    argv = ["check", str(path), str(tmp_path / "d"), str(path), str(other), "--json", "--jobs", "1"]
    assert cli.main(argv) == 0
    out = json.loads(capfd.readouterr().out)
    assert [r["path"] for r in out["modules"]] == [str(path), str(other)]  # the one after the repeats too
    assert out["totals"]["edges"] == 2 * count_control_edges(UNIT_TEST_STYLE)


def test_every_folder_named_is_read_and_every_skipped_file_counted(tmp_path, capfd):
    """Two dump folders: both folders' modules, in order; a binary `.txt` and
    XLA's reports are "not an HLO module", each module without control edges counted."""
    first, second = tmp_path / "run1", tmp_path / "run2"
    for folder in (first, second):
        folder.mkdir()
        (folder / "module_0001.jit_f.after_copy_insertion.txt").write_text(UNIT_TEST_STYLE)
        (folder / "module_0002.jit_g.before_optimizations.txt").write_text(NO_CONTROL_EDGES)
    (second / "module_0003.jit_f.hlo_module_proto.txt").write_bytes(b"\x08\x01\xff\xfe\x80 not text")
    for name, text in NOT_HLO.items():
        (second / name).write_text(text)
    assert cli.main(["check", str(first), str(second), "--json", "--jobs", "1"]) == 0
    out = json.loads(capfd.readouterr().out)
    assert [r["path"] for r in out["modules"]] == [str(first / "module_0001.jit_f.after_copy_insertion.txt"),
                                                    str(second / "module_0001.jit_f.after_copy_insertion.txt")]
    assert out["skipped"] == {"not_hlo": 1 + len(NOT_HLO), "no_control_edges": 2}


def test_a_file_named_is_read_as_hlo_whatever_it_starts_with(tmp_path, capfd):
    """A block comment before the first computation: XLA reads it; named, check does."""
    text = "/* from XLA's copy insertion tests */\n" + UNIT_TEST_STYLE
    xla_hlo.hlo_module_from_text(text)
    path = tmp_path / "commented.hlo"
    path.write_text(text)
    assert cli.main(["check", str(path), "--json", "--jobs", "1"]) == 0
    (row,) = json.loads(capfd.readouterr().out)["modules"]
    assert (row["path"], row["error"], row["edges"]) == (str(path), "", count_control_edges(text))


def test_a_bug_in_the_chain_is_its_module_s_row_and_the_others_still_run(tmp_path, capfd, monkeypatch):
    """check's promise for a chain bug (not a ChainError): an `internal error`
    row asking for a report, the other modules' rows as usual, exit 1."""
    (tmp_path / "a.hlo").write_text(UNIT_TEST_STYLE)
    (tmp_path / "b.hlo").write_text(UNIT_TEST_STYLE)
    real_run = pipeline.run

    def buggy_run(source, **options):
        if options.get("source_name", "").endswith("a.hlo"):
            raise KeyError("planted")
        return real_run(source, **options)

    monkeypatch.setattr(pipeline, "run", buggy_run)
    assert cli.main(["check", str(tmp_path), "--json", "--jobs", "1"]) == 1
    a, b = json.loads(capfd.readouterr().out)["modules"]
    assert a["error"] == "internal error (KeyError: 'planted'); please report it with the input"
    assert b["error"] == "" and b["edges"] == count_control_edges(UNIT_TEST_STYLE)
