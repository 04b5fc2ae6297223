"""A user's own corpus, made here from a tiny JAX program with jax.export:
`regress --update-goldens` writes its goldens and program files, and after
the program changes, `regress` shows which rows changed with the diff of
their Penguin programs."""

from __future__ import annotations

import io
import json
import re

import numpy as np

from pipeline.cli import hlo2penguin as cli


def _swap(a, b):
    import jax

    def body(_, ab):
        x, y = ab
        return y * 2.0, x + 1.0
    return jax.lax.fori_loop(0, 3, body, (a, b))


def _rotate(a, b):
    import jax

    def body(_, ab):
        x, y = ab
        return y - 1.0, x * 3.0
    return jax.lax.fori_loop(0, 4, body, (a, b))


def _write(corpus, fn, with_inputs=True):
    """`mine` in the corpus layout: the artifact, its inputs and JAX's outputs."""
    import jax

    fn.__name__ = "mine"  # the module's name, jit_mine, stays across versions
    args = [np.arange(4, dtype=np.float32), np.ones(4, np.float32)]
    exported = jax.export.export(jax.jit(fn))(*[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args])
    (corpus / "mine.jaxexport").write_bytes(exported.serialize())
    for sub, arrays, key in (("inputs", args, "arg"), ("expected", jax.jit(fn)(*args), "out")):
        (corpus / sub).mkdir(exist_ok=True)
        buffer = io.BytesIO()
        np.savez(buffer, **{f"{key}_{i}": np.asarray(a) for i, a in enumerate(arrays)})
        (corpus / sub / "mine.npz").write_bytes(buffer.getvalue())


def test_a_changed_program_of_ones_own_corpus_shows_which_rows_changed_and_how(tmp_path, capsys):
    _write(tmp_path, _swap)
    assert cli.main(["regress", str(tmp_path), "--jobs", "1"]) == 1  # no goldens yet: each row is missing
    assert f"hlo2penguin regress {tmp_path} --update-goldens" in capsys.readouterr().err
    assert cli.main(["regress", str(tmp_path), "--jobs", "1", "--update-goldens"]) == 0
    golden = json.loads((tmp_path / "goldens" / "mine.json").read_text())
    records = [r for d in golden.values() for r in d.values()]
    assert records and all((tmp_path / "goldens" / r["program"]).is_file() for r in records)
    capsys.readouterr()
    assert cli.main(["regress", str(tmp_path), "--jobs", "1", "--require-numbers"]) == 0
    capsys.readouterr()

    _write(tmp_path, _rotate)
    assert cli.main(["regress", str(tmp_path), "--jobs", "1", "--json"]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    changed = [r for r in rows if r["golden"].startswith("changed")]
    assert changed and all(r["numerics"] == "ok" for r in rows)  # the new program's numbers are JAX's
    assert any(r["diff"] for r in changed)
    for row in changed:
        if row["diff"]:  # the golden's lines out, this run's in
            assert row["diff"].startswith("--- goldens/mine/")
            assert re.search(r"^-[^-]", row["diff"], re.M) and re.search(r"^\+[^+]", row["diff"], re.M)
        assert all(re.fullmatch(r"(%\S+: )?%\S+ -> %\S+: [\w #]+ → [\w #]+", line) for line in row["changes"])
