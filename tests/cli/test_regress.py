"""`hlo2penguin regress`: the corpus through both dialects, against goldens."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from pipeline.cli import hlo2penguin as cli

from pipeline.cli import regress

from pipeline.xla import versions
import paths

CORPUS = str(paths.CORPUS)


@pytest.fixture(scope="module")
def corpus_run():
    """One parallel run over the whole corpus (the CI job the README names)."""
    return regress.run(CORPUS, jobs=2)


def test_corpus_passes_with_no_regression(corpus_run):
    totals = corpus_run.totals()
    assert totals["regressions"] == 0, regress.table(corpus_run)
    assert totals["lost"] == 0 and totals["edges"] > 0
    assert len({r.program for r in corpus_run.rows}) >= 15
    assert {r.dialect for r in corpus_run.rows} == {"stablehlo", "mhlo"}


def test_every_row_agrees_with_jax_and_its_golden(corpus_run):
    """Every module in both dialects: numerics equal JAX's outputs, golden unchanged.
    An "unsupported: <op>" row (an executor rule gone) fails here and in `regress`."""
    bad = [(r.program, r.module, r.dialect, r.numerics, r.golden, r.error) for r in corpus_run.rows
           if r.numerics != "ok" or r.golden != "ok" or r.error]
    assert not bad, regress.table(corpus_run)
    assert corpus_run.totals()["numerics ok"] == corpus_run.totals()["rows"]
    assert corpus_run.totals()["unsupported"] == 0


def test_table_counts_every_row(corpus_run):
    text = regress.table(corpus_run)
    lines = text.splitlines()
    assert len(lines) == len(corpus_run.rows) + 4  # jax, header, rule, total
    assert lines[0] == f"jax {versions.JAX}, jaxlib {versions.JAXLIB}"
    t = corpus_run.totals()
    assert lines[-1].startswith("total") and "0 regressions" in lines[-1]
    assert f"{t['rows']} ok, 0 unsupported" in lines[-1]


@pytest.mark.parametrize("numerics", ["unsupported: sort", "FAIL: result 0 differs from JAX's"])
def test_an_unsupported_or_failing_row_is_a_regression(numerics):
    """Counted in the total and in the exit status, not only shown."""
    ok = regress.Row("p", "m", "stablehlo", edges=1, preserved=1, numerics="ok", golden="ok")
    bad = regress.Row("p", "m", "mhlo", edges=1, preserved=1, numerics=numerics, golden="ok")
    assert not ok.regressed and bad.regressed
    summary = regress.Summary([ok, bad])
    assert summary.totals()["regressions"] == 1
    assert regress.table(summary).splitlines()[-1].endswith("1 regressions")


@pytest.fixture
def one_program(tmp_path):
    """A corpus of one program, copied so its golden can be tampered with."""
    name = "while_swap_buffers"
    for sub in ("inputs", "expected", "goldens"):
        os.makedirs(tmp_path / sub)
        ext = ".json" if sub == "goldens" else ".npz"
        shutil.copy(os.path.join(CORPUS, sub, name + ext), tmp_path / sub)
    shutil.copy(os.path.join(CORPUS, name + ".jaxexport"), tmp_path)
    shutil.copytree(os.path.join(CORPUS, "goldens", name), tmp_path / "goldens" / name)  # the golden's programs
    return tmp_path, name


def test_a_changed_golden_is_a_regression_and_update_goldens_rewrites_it(one_program, capsys):
    directory, name = one_program
    golden_path = directory / "goldens" / f"{name}.json"
    golden = json.loads(golden_path.read_text())
    module = next(iter(golden))
    golden[module]["stablehlo"]["penguin_sha256"] = "0" * 64
    golden_path.write_text(json.dumps(golden))
    assert cli.main(["regress", str(directory)]) == 1
    out = capsys.readouterr().out
    assert "changed: penguin program" in out and "1 regressions" in out
    assert cli.main(["regress", str(directory), "--update-goldens"]) == 0
    capsys.readouterr()
    assert cli.main(["regress", str(directory), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and all(r["golden"] == "ok" and r["lost"] == 0 for r in rows)


def test_a_missing_golden_is_a_regression(one_program, capsys):
    directory, name = one_program
    os.remove(directory / "goldens" / f"{name}.json")
    assert cli.main(["regress", str(directory)]) == 1
    assert "missing" in capsys.readouterr().out


@pytest.mark.parametrize("argv,needle", [
    (["regress", "/nonexistent/corpus"], "cannot read corpus folder"),
    (["regress", "--jobs", "0"], "--jobs"),
])
def test_bad_usage_is_one_line_and_exit_2(argv, needle, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err


def test_an_empty_folder_says_how_to_make_a_corpus_of_ones_own(tmp_path, capsys):
    """The hint names commands a user runs on their folder, not a script of this repository."""
    assert cli.main(["regress", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "regenerate" not in err
    assert f"hlo2penguin corpus add {tmp_path} ..." in err and f"hlo2penguin regress {tmp_path} --update-goldens" in err


def test_goldens_keep_what_another_jax_changed_beside_the_record(monkeypatch):
    """A record is its own jax's; another release's update stores only the
    fields its XLA changed, and each release compares with its own."""
    base_report = {"totals": {"edges": 1}}
    monkeypatch.setattr(versions, "JAX", "0.10.2")
    record = regress._updated(None, {"report": base_report, "penguin_sha256": "a"})
    assert record == {"report": base_report, "penguin_sha256": "a", "jax": "0.10.2"}
    monkeypatch.setattr(versions, "JAX", "0.12.0.1")
    assert regress._compare({}, record, {"report": base_report, "penguin_sha256": "b"}) == "changed: penguin program"
    record = regress._updated(record, {"report": base_report, "penguin_sha256": "b"})
    assert record["penguin_sha256"] == "a" and record["by_jax"] == {"0.12.0.1": {"penguin_sha256": "b"}}
    assert regress._compare({}, record, {"report": base_report, "penguin_sha256": "b"}) == "ok"
    monkeypatch.setattr(versions, "JAX", "0.10.2")  # the record's own jax still expects its own
    assert regress._compare({}, record, {"report": base_report, "penguin_sha256": "a"}) == "ok"
    assert regress._compare({}, record, {"report": base_report, "penguin_sha256": "b"}) == "changed: penguin program"
    # Its own update keeps the other release's entry; an update that agrees with the record drops it.
    record = regress._updated(record, {"report": base_report, "penguin_sha256": "a"})
    assert record["by_jax"] == {"0.12.0.1": {"penguin_sha256": "b"}}
    monkeypatch.setattr(versions, "JAX", "0.12.0.1")
    assert "by_jax" not in regress._updated(record, {"report": base_report, "penguin_sha256": "a"})


def test_the_corpus_goldens_name_their_jax_and_hold_on_this_one(corpus_run):
    goldens = [json.load(open(os.path.join(CORPUS, "goldens", f))) for f in os.listdir(os.path.join(CORPUS, "goldens"))
               if f.endswith(".json")]
    records = [r for g in goldens for d in g.values() for r in d.values()]
    assert records and all(r["jax"] == "0.10.2" for r in records)  # JAX_RELEASE: the artifacts' jax
    # Each record's program is kept beside it, as the record's own jax wrote it.
    assert all(os.path.isfile(os.path.join(CORPUS, "goldens", r["program"])) for r in records)
    assert all(r.golden == "ok" for r in corpus_run.rows)
