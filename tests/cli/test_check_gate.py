"""`hlo2penguin check` as a CI gate (issue 26, item 3), run as a user runs
it: the console script in a subprocess, on real XLA dump folders made here by
JAX with XLA_FLAGS, on a binary file, on tests/xla_style. The oracles are
not the command's: XLA's parser says which files are HLO modules, the text's
`control-predecessors=` entries count the edges, XLA's dump file names say
the stage, the terminal width is the one given in COLUMNS."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jaxlib._hlo as xla_hlo
import pytest

from jax_programs import count_control_edges
from paths import TESTS

SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))
COUNTS = ("edges", "preserved", "rerouted", "dropped", "lost", "spurious")

NO_EDGES_PROGRAM = "import jax, jax.numpy as jnp; jax.jit(lambda x: jnp.sin(x) * 2)(jnp.ones(4))"
# A loop that swaps its two buffers: copy insertion orders the copies it adds with control edges.
SWAP_LOOP_PROGRAM = """
import jax, jax.numpy as jnp
def f(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: (c[1], c[0]), (x, x + 1))
jax.jit(f)(jnp.ones(4))
"""
# XLA's dump names: module_NNNN.<module>.[NNNN.]<stage>.txt
DUMP_NAME = re.compile(r"^module_(\d+)\.(jit_f|jit__lambda)\.(?:\d{4}\.)?(.+)\.txt$")


def xla_dump(folder: Path, program: str, *flags: str) -> Path:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": " ".join([f"--xla_dump_to={folder}", *flags])}
    subprocess.run([sys.executable, "-c", program], env=env, check=True, capture_output=True)
    return folder


def check(*argv: str, columns: int | None = None) -> tuple[int, str, str]:
    """`hlo2penguin check ARGV`, stdout and stderr on pipes (no terminal), COLUMNS as given."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    done = subprocess.run([SCRIPT, "check", *argv], capture_output=True, text=True, env=env)
    return done.returncode, done.stdout, done.stderr


def xla_reads(path: Path) -> bool:
    try:
        xla_hlo.hlo_module_from_text(path.read_text(errors="strict"))
        return True
    except Exception:
        return False


def candidates(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".txt", ".hlo"))


@pytest.fixture(scope="module")
def no_edges_dump(tmp_path_factory) -> Path:
    return xla_dump(tmp_path_factory.mktemp("gate") / "sin", NO_EDGES_PROGRAM)


@pytest.fixture(scope="module")
def swap_dump(tmp_path_factory) -> Path:
    return xla_dump(tmp_path_factory.mktemp("gate") / "swap", SWAP_LOOP_PROGRAM,
                    "--xla_dump_hlo_pass_re=copy-insertion")


def test_a_real_dump_without_control_edges_passes_and_says_so_in_one_line(no_edges_dump):
    files = candidates(no_edges_dump)
    hlo = [p for p in files if xla_reads(p)]
    assert hlo and all(count_control_edges(p.read_text()) == 0 for p in hlo)  # JAX's sin: no control edges
    said = (f"hlo2penguin check: no HLO module with control edges in {len(files)} files ({len(hlo)} HLO modules "
            f"without control-predecessors, {len(files) - len(hlo)} not HLO); nothing to check; XLA adds control "
            f"edges in copy insertion and later passes, so an earlier dump stage has none\n")
    assert check(str(no_edges_dump)) == (0, "", said)
    status, out, err = check(str(no_edges_dump), "--json")
    assert (status, err) == (0, said)
    summary = json.loads(out)  # still JSON on stdout, for a script that reads it
    assert summary["modules"] == [] and summary["totals"] == {**dict.fromkeys(COUNTS, 0), "errors": 0}
    assert summary["skipped"] == {"not_hlo": len(files) - len(hlo), "no_control_edges": len(hlo)}


def test_a_folder_with_no_hlo_module_passes_a_path_that_is_not_there_is_bad_input(tmp_path):
    (tmp_path / "empty").mkdir()
    assert check(str(tmp_path / "empty")) == (
        0, "", f"hlo2penguin check: no .txt or .hlo file in '{tmp_path / 'empty'}'; nothing to check\n")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "module_0001.jit_f.cpu_after_optimizations-memory-usage-report.txt").write_text(
        "Total bytes used: 48 (48B)\n")
    assert check(str(tmp_path / "reports")) == (
        0, "", "hlo2penguin check: no HLO module in 1 file (1 not HLO); nothing to check\n")
    status, out, err = check(str(tmp_path / "nope"))
    assert (status, out) == (2, "") and err == (
        f"hlo2penguin check: error: cannot read input '{tmp_path / 'nope'}': No such file or directory; "
        "give HLO text files or XLA dump folders (--xla_dump_to)\n")
    os.mkfifo(tmp_path / "fifo")  # neither a file nor a folder: not read (it would wait for a writer)
    status, out, err = check(str(tmp_path / "fifo"))
    assert (status, out) == (2, "") and err == (
        f"hlo2penguin check: error: cannot read input '{tmp_path / 'fifo'}': not a file or a folder; "
        "give HLO text files or XLA dump folders (--xla_dump_to)\n")


def test_a_binary_file_named_is_an_error_row_and_exit_1(tmp_path):
    binary = tmp_path / "module_0001.jit_f.before_optimizations.hlo.pb"
    binary.write_bytes(b"\x0a\x05jit_f\x12\xff\xfe\x80 a proto, not text")
    good = tmp_path / "good.hlo"
    good.write_text((TESTS / "xla_style" / "01_entry_only_inferred.hlo").read_text())
    status, out, err = check(str(binary), str(good), "--json")
    assert (status, err) == (1, "")
    bad_row, good_row = json.loads(out)["modules"]
    assert bad_row["path"] == str(binary) and bad_row["error"].startswith(  # field 2 (at byte 7) runs past the end
        f"{binary}: a truncated or corrupted proto (and no jax.export artifact): protobuf decoding fails at byte 7 of ")
    assert all(bad_row[k] == 0 for k in COUNTS)
    assert good_row["error"] == "" and good_row["edges"] == count_control_edges(good.read_text())
    assert json.loads(out)["skipped"] == {"not_hlo": 0, "no_control_edges": 0}
    status, out, err = check(str(binary))
    (row,) = table_rows(out)[0]
    shown = row.split()[0]  # its module: the file's name (its end, after `…`, if the width asks)
    assert shown == binary.name or (shown.startswith("…") and binary.name.endswith(shown[1:]))
    assert status == 1 and row.split()[1:2 + len(COUNTS)] == ["-"] * (1 + len(COUNTS))  # no stage, no counts
    assert "protobuf decoding fails at byte 7 of " in row and str(tmp_path) not in row


def test_json_rows_name_their_file_and_stage_from_xla_s_dump_names(swap_dump):
    with_edges = [p for p in candidates(swap_dump) if xla_reads(p) and count_control_edges(p.read_text())]
    assert len(with_edges) >= 3  # copy insertion's dumps and the optimized module
    status, out, err = check(str(swap_dump), "--json")
    assert (status, err) == (0, "")
    rows = json.loads(out)["modules"]
    assert [r["path"] for r in rows] == [str(p) for p in with_edges]
    for row, path in zip(rows, with_edges):
        assert list(row) == ["path", "module", "file", "stage", *COUNTS, "error"]
        _, module, stage = DUMP_NAME.match(path.name).groups()
        assert (row["module"], row["file"], row["stage"]) == (module, path.name, stage)
        assert row["edges"] == count_control_edges(path.read_text())
    stages = {r["stage"] for r in rows}
    assert {"copy-insertion.after_adding_copies_to_resolve_interference", "cpu_after_optimizations"} <= stages


def table_rows(out: str) -> tuple[list[str], list[str]]:
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("total:"))
    return lines[2:at], lines[at:]


@pytest.mark.parametrize("columns", [None, 80, 120])
def test_the_table_fits_the_terminal_names_files_under_the_folder_and_says_what_the_totals_add(swap_dump, columns):
    width = columns or 100  # not a terminal: 100 columns
    rows = json.loads(check(str(swap_dump), "--json")[1])["modules"]
    status, out, err = check(str(swap_dump), columns=columns)
    assert (status, err) == (0, "")
    assert all(len(line) <= width for line in out.splitlines()), out
    lines, (total, *notes) = table_rows(out)
    assert out.splitlines()[0].split() == ["module", "stage", *COUNTS]
    assert len(lines) == len(rows)
    for line, row in zip(lines, rows):
        cells = line.split()
        assert cells[2:] == [str(row[k]) for k in COUNTS]  # the numbers, never cut
        assert cells[0] == row["module"]  # one module: its name whole
        shown = cells[1]
        if "…" in shown:  # shortened from its front: its end is the stage's
            assert shown.startswith("…") and row["stage"].endswith(shown[1:]) and len(shown) >= 8
        else:
            assert shown == row["stage"]
    assert len({tuple(line.split()[:2]) for line in lines}) == len(lines)  # no two rows alike
    assert total.split()[:5] == ["total:", str(len(rows)), "rows,", "0", "errors"]
    assert total.split()[5:] == [str(sum(r[k] for r in rows)) for k in COUNTS]
    assert notes[0] == f"the totals add up {len(rows)} rows: 1 module at {len(rows)} stages"
    assert notes[1] == f"files under {swap_dump}"
    assert notes[2].startswith("skipped ")


def test_with_a_narrow_terminal_the_numbers_are_whole(swap_dump):
    rows = json.loads(check(str(swap_dump), "--json")[1])["modules"]
    status, out, _ = check(str(swap_dump), columns=30)
    lines, _ = table_rows(out)
    assert status == 0 and [line.split()[2:] for line in lines] == [[str(r[k]) for k in COUNTS] for r in rows]


def test_a_folder_of_hlo_files_rows_by_file_name_without_stage(capfd):
    folder = TESTS / "xla_style"
    with_edges = [p for p in sorted(folder.glob("*.hlo")) if count_control_edges(p.read_text())]
    status, out, err = check(str(folder), "--json")
    rows = json.loads(out)["modules"]
    assert [(r["path"], r["file"], r["stage"]) for r in rows] == [(str(p), p.name, None) for p in with_edges]
    status, out, err = check(str(folder))
    lines, (total, *notes) = table_rows(out)
    # No dump names: no stage; a module by its name, or by its file where two files have one name.
    modules = [re.search(r"^HloModule ([^\s,]+)", p.read_text(), re.M) for p in with_edges]
    modules = [m.group(1) if m else p.name for m, p in zip(modules, with_edges)]
    said = [m if modules.count(m) == 1 else p.name for m, p in zip(modules, with_edges)]
    assert [line.split()[:2] for line in lines] == [[name, "-"] for name in said]
    assert all(len(line) <= 100 for line in out.splitlines() if not line.startswith("each edge"))
    assert total.startswith(f"total: {len(rows)} rows, 0 errors")
    assert notes[0] == f"files under {folder}"  # every module once: nothing more to say of the totals
