"""What the commands say of a module whose constants XLA's dump elided
(`constant({...})`): `hlo2penguin check` names them under its table (and in
its JSON row) and says the numbers cannot be compared, `hlo2penguin FILE`
warns on stderr, `hlo2penguin verify` notes them in its report. The edges
are checked as ever: the exit status is the edges' (0 when they hold)."""

from __future__ import annotations

import json

import pytest

from pipeline.cli import hlo2penguin as cli

VALUES = "{" + ", ".join(str(i) for i in range(12)) + "}"
MODULE = f"""\
HloModule elided

ENTRY main {{
  x = f32[12] parameter(0)
  w = f32[12] constant({VALUES})
  n = f32[12] negate(x)
  a = f32[12] add(x, w)
  ROOT r = f32[12] multiply(a, n), control-predecessors={{w}}
}}
"""
ELIDED = MODULE.replace(VALUES, "{...}")
FLAG = "--xla_dump_large_constants"


@pytest.fixture
def dump(tmp_path):
    folder = tmp_path / "dump"
    folder.mkdir()
    (folder / "module_0001.elided.copy-insertion.txt").write_text(ELIDED)
    (folder / "module_0002.full.copy-insertion.txt").write_text(MODULE.replace("HloModule elided", "HloModule full"))
    return folder


def test_check_names_the_elided_constants_under_its_table_and_exits_on_the_edges(dump, capfd):
    assert cli.main(["check", str(dump), "--jobs", "1", "-q"]) == 0
    out = capfd.readouterr().out.splitlines()
    [line] = [x for x in out if "XLA's dump elided" in x]
    assert line.startswith("module_0001.elided.copy-insertion.txt: XLA's dump elided the values of 1 constant(s)")
    assert "%w (in %main)" in line and "numbers cannot be compared" in line and FLAG in line


def test_check_s_json_row_lists_them(dump, capfd):
    assert cli.main(["check", str(dump), "--jobs", "1", "--json", "-q"]) == 0
    elided, full = json.loads(capfd.readouterr().out)["modules"]
    assert elided["elided_constants"] == [{"computation": "main", "name": "w"}]
    assert "elided_constants" not in full and (elided["edges"], elided["preserved"]) == (1, 1)


def test_the_chain_s_command_warns_and_writes_the_program(tmp_path, capfd):
    path = tmp_path / "elided.hlo"
    path.write_text(ELIDED)
    out_file = tmp_path / "program.py"
    assert cli.main([str(path), "--check", "-o", str(out_file)]) == 0
    err = capfd.readouterr().err.splitlines()
    [warning] = [x for x in err if x.startswith("hlo2penguin: warning: XLA's dump elided")]
    assert "%w (in %main)" in warning and FLAG in warning
    assert err[-1].endswith("; 1 constant(s) elided by XLA's dump: its numbers cannot be compared")
    assert "module.elided = [('main', 'w')]" in out_file.read_text()


def test_verify_notes_them_in_its_report(tmp_path, capfd):
    path = tmp_path / "elided.hlo"
    path.write_text(ELIDED)
    program = tmp_path / "program.py"
    assert cli.main([str(path), "-o", str(program), "-q"]) == 0
    capfd.readouterr()
    assert cli.main(["verify", str(path), str(program)]) == 0
    out = capfd.readouterr().out.splitlines()
    assert any(x.startswith("note: XLA's dump elided the values of 1 constant(s)") and "%w (in %main)" in x
               for x in out)
