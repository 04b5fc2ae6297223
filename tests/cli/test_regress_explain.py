"""A regression row of `regress` explains itself: the edges whose fate
changed since the golden, and a diff of the Penguin program against the
golden's program file. The oracle is the real chain's report and program on
a corpus artifact; the golden is changed by hand, as an older chain's."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

import paths
from pipeline.cli import hlo2penguin as cli
from pipeline.xla import versions

NAME = "while_swap_buffers"
STAGE = "cpu_after_optimizations"


@pytest.fixture
def corpus(tmp_path):
    """A corpus of one program of the repository's, its golden with it."""
    for sub, ext in (("inputs", ".npz"), ("expected", ".npz"), ("goldens", ".json")):
        (tmp_path / sub).mkdir()
        shutil.copy(paths.CORPUS / sub / f"{NAME}{ext}", tmp_path / sub)
    shutil.copy(paths.CORPUS / f"{NAME}.jaxexport", tmp_path)
    shutil.copytree(paths.CORPUS / "goldens" / NAME, tmp_path / "goldens" / NAME)
    return tmp_path


def _golden(corpus):
    path = corpus / "goldens" / f"{NAME}.json"
    return path, json.loads(path.read_text())


def _record(golden, dialect="stablehlo"):
    return next(d[dialect] for m, d in golden.items() if m.endswith(":" + STAGE))


def _edit_program(corpus, golden_path, golden, old: str, new: str) -> str:
    """As an older chain's program: one line changed, and the hash with it
    (this jax's own hash too, where the record keeps one under `by_jax`)."""
    record = _record(golden)
    program = corpus / "goldens" / record["program"]
    text = program.read_text()
    assert old in text
    text = text.replace(old, new, 1)
    program.write_text(text)
    record["penguin_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    record.get("by_jax", {}).get(versions.JAX, {}).pop("penguin_sha256", None)
    golden_path.write_text(json.dumps(golden))
    return record["program"]


def _regress(corpus, capsys, *flags):
    code = cli.main(["regress", str(corpus), "--jobs", "1", *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_changed_program_prints_its_diff_against_the_golden_program(corpus, capsys):
    golden_path, golden = _golden(corpus)
    path = _edit_program(corpus, golden_path, golden, "module = Module(", "module = OldModule(")
    code, out, err = _regress(corpus, capsys)
    assert code == 1
    table, _, below = out.partition("\nchanged goldens:\n")
    assert "changed: penguin program" in table and "1 regressions" in table
    assert f"{NAME} jit_{NAME}:{STAGE} stablehlo: changed: penguin program" in below
    assert f"--- goldens/{path} (jax {_record(golden)['jax']})" in below and f"+++ this run (jax {versions.JAX})" in below
    assert "\n-module = OldModule('jit_while_swap_buffers')\n+module = Module('jit_while_swap_buffers')\n" in below
    assert f"hlo2penguin regress {corpus} --update-goldens" in err  # the hint names the user's own folder
    # --json carries the same: no fate changed, the diff
    code, out, _ = _regress(corpus, capsys, "--json")
    [row] = [r for r in map(json.loads, out.splitlines()) if r["golden"] != "ok"]
    assert row["changes"] == [] and "+module = Module(" in row["diff"] and "-module = OldModule(" in row["diff"]


def test_a_changed_fate_names_the_edge_before_and_after_with_the_link(corpus, capsys):
    """The golden's report as a chain that lost an edge at link #2 wrote it."""
    golden_path, golden = _golden(corpus)
    record = _record(golden)
    edge = record["report"]["edges"][0]
    assert edge["fate"] == "preserved"  # what the real chain says, the oracle
    edge.update(fate="lost", lost_at="link #2")
    golden_path.write_text(json.dumps(golden))
    code, out, _ = _regress(corpus, capsys)
    assert code == 1 and "changed: edge report" in out
    line = f"  %{edge['computation']}: %{edge['predecessor']} -> %{edge['successor']}: lost at link #2 → preserved\n"
    assert line in out.partition("\nchanged goldens:\n")[2]
    code, out, _ = _regress(corpus, capsys, "--json")
    changed = [r for r in map(json.loads, out.splitlines()) if r.get("changes")]
    assert [r["changes"] for r in changed] == [[line.strip()]]
    assert changed[0]["diff"] == ""  # the program is the golden's: only the report changed


def test_another_jax_diffs_against_the_records_program_and_says_whose_it_is(corpus, capsys, monkeypatch):
    golden_path, golden = _golden(corpus)
    _edit_program(corpus, golden_path, golden, "module = Module(", "module = OldModule(")
    recorded = _record(golden)["jax"]
    monkeypatch.setattr(versions, "JAX", "9.9.9")  # in this process: --jobs 1
    code, out, _ = _regress(corpus, capsys)
    below = out.partition("\nchanged goldens:\n")[2]
    assert code == 1
    assert f"the golden program is jax {recorded}'s (this run is jax 9.9.9's, whose goldens keep only a hash)" in below
    assert "+module = Module(" in below and "+++ this run (jax 9.9.9)" in below


def test_update_goldens_writes_the_program_files_and_drops_stale_ones(corpus, capsys):
    golden_path, golden = _golden(corpus)
    path = _edit_program(corpus, golden_path, golden, "module = Module(", "module = OldModule(")
    stale = corpus / "goldens" / NAME / "gone.stablehlo.py"
    stale.write_text("# a stage XLA no longer dumps\n")
    recorded = _record(golden)["jax"]
    assert _regress(corpus, capsys, "--update-goldens")[0] == 0
    assert not stale.exists()
    _, golden = _golden(corpus)
    assert "penguin" not in json.dumps(_record(golden)).replace("penguin_sha256", "")  # the text is the file's only
    if recorded == versions.JAX:  # the record's own jax rewrites its program file
        assert "module = Module(" in (corpus / "goldens" / path).read_text()
    else:  # another keeps the record's program and its own hash under by_jax
        assert "module = OldModule(" in (corpus / "goldens" / path).read_text()
        assert "penguin_sha256" in _record(golden)["by_jax"][versions.JAX]
    assert _regress(corpus, capsys)[0] == 0


def test_a_golden_without_a_program_file_says_so(corpus, capsys):
    golden_path, golden = _golden(corpus)
    record = _record(golden)
    record["penguin_sha256"] = "0" * 64
    golden_path.write_text(json.dumps(golden))
    (corpus / "goldens" / record["program"]).unlink()
    code, out, _ = _regress(corpus, capsys)
    assert code == 1
    assert f"the golden keeps no program text (goldens/{record['program']} is missing), only its hash" in out


def test_a_caller_that_reads_no_golden_programs_is_told_what_to_call(corpus):
    """`check_program` without the golden's program files (a pytest plugin's
    call) says which function reads them, not that the golden has none."""
    from pipeline.cli import goldens, regress

    golden_path, golden = _golden(corpus)
    path = _edit_program(corpus, golden_path, golden, "module = Module(", "module = OldModule(")
    program = regress.read_program(str(corpus), NAME)
    rows, _ = regress.check_program(program, False)
    [row] = [r for r in rows if r.golden != "ok"]
    assert row.diff == f"no diff: goldens/{path} was not read (pipeline.cli.goldens.read_programs reads it)\n"
    rows, _ = regress.check_program(program, False, goldens.read_programs(str(corpus), program.golden))
    [row] = [r for r in rows if r.golden != "ok"]
    assert "+module = Module(" in row.diff
