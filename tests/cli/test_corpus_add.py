"""`hlo2penguin corpus add`: a corpus in one command, from a JAX function or
an artifact, that `regress` then passes in both dialects."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from paths import REPO
from pipeline.cli import hlo2penguin as cli

# A loop that updates its buffer in place: XLA's copy insertion orders the
# copy of x[i-1] against the write of x[i] with control edges.
LOOP = '''
import jax
import numpy as np


def prefix_double(x):
    return jax.lax.fori_loop(1, x.shape[0], lambda i, x: x.at[i].set(x[i - 1] * 2.0), x)


def example_inputs():
    return (np.array([3.0, 0, 0, 0, 0, 0], dtype=np.float32),)


def other_inputs():
    return (np.array([-1.5, 7, 7, 7], dtype=np.float32),)
'''


def doubled(first: float, n: int) -> np.ndarray:
    """The loop's output, by hand: x[i] = x[0] * 2**i."""
    return (first * 2.0 ** np.arange(n)).astype(np.float32)


def add(*argv: str) -> int:
    return cli.main(["corpus", "add", *argv])


def regress_in_child(corpus) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", "regress", str(corpus), "--json", "--jobs", "1"],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)


def npz(path) -> dict:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture
def program(tmp_path, monkeypatch):
    (tmp_path / "loop.py").write_text(LOOP)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "loop", raising=False)
    return tmp_path


def test_a_function_becomes_a_corpus_that_regress_passes_in_both_dialects(program, capsys):
    assert add("corpus", "loop:prefix_double") == 0
    corpus = program / "corpus"
    golden = json.loads((corpus / "goldens" / "prefix_double.json").read_text())
    programs = sorted(f"goldens/{r['program']}" for module in golden.values() for r in module.values())
    assert programs and all(p.endswith(".py") for p in programs)  # each record's Penguin program, for its diff
    assert sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*") if p.is_file()) == sorted([
        "expected/prefix_double.npz", "goldens/prefix_double.json", "inputs/prefix_double.npz",
        "prefix_double.jaxexport", *programs])
    assert list(npz(corpus / "inputs" / "prefix_double.npz")) == ["arg_0"]
    np.testing.assert_array_equal(npz(corpus / "inputs" / "prefix_double.npz")["arg_0"], [3, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(npz(corpus / "expected" / "prefix_double.npz")["out_0"], doubled(3.0, 6))
    golden = json.loads((corpus / "goldens" / "prefix_double.json").read_text())
    assert {d for module in golden.values() for d in module} == {"stablehlo", "mhlo"}
    assert "added prefix_double" in capsys.readouterr().err

    done = regress_in_child(corpus)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert {r["dialect"] for r in rows} == {"stablehlo", "mhlo"}
    assert all(r["edges"] > 0 and r["lost"] == 0 and r["numerics"] == "ok" and r["golden"] == "ok" for r in rows)


def test_a_file_path_and_an_example_function_and_a_name(program):
    os.mkdir(program / "elsewhere")
    os.chdir(program / "elsewhere")
    assert add("../c", "../loop.py:prefix_double", "--example", "other_inputs", "--name", "short") == 0
    np.testing.assert_allclose(npz(program / "c" / "expected" / "short.npz")["out_0"], doubled(-1.5, 4))


def test_an_artifact_with_its_inputs(program, tmp_path):
    import jax

    x = np.array([0.5, 1, 1, 1, 1], dtype=np.float32)
    np.savez(tmp_path / "x.npz", arg_0=x)
    import loop

    exported = jax.export.export(jax.jit(loop.prefix_double), platforms=("cpu",))(
        jax.ShapeDtypeStruct(x.shape, x.dtype))
    (tmp_path / "mine.jaxexport").write_bytes(exported.serialize())
    assert add("corpus", "mine.jaxexport", "--inputs", "x.npz", "-q") == 0
    assert (program / "corpus" / "mine.jaxexport").read_bytes() == exported.serialize()
    np.testing.assert_allclose(npz(program / "corpus" / "expected" / "mine.npz")["out_0"], doubled(0.5, 5))
    assert regress_in_child(program / "corpus").returncode == 0


def test_a_program_of_the_same_name_is_kept_unless_replace(program, capsys):
    assert add("corpus", "loop:prefix_double", "-q") == 0
    corpus = program / "corpus"
    before = {p: p.read_bytes() for p in corpus.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert add("corpus", "loop:prefix_double", "--example", "other_inputs") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "prefix_double.jaxexport exists" in err and "--replace" in err
    assert {p: p.read_bytes() for p in corpus.rglob("*") if p.is_file()} == before

    assert add("corpus", "loop:prefix_double", "--example", "other_inputs", "--replace", "-q") == 0
    np.testing.assert_allclose(npz(corpus / "expected" / "prefix_double.npz")["out_0"], doubled(-1.5, 4))
    assert regress_in_child(corpus).returncode == 0


def test_a_program_without_control_edges_is_not_added(program, capsys):
    (program / "flat.py").write_text("import numpy as np\n\ndef twice(x):\n    return x * 2\n\n"
                                     "def example_inputs():\n    return (np.ones(3, np.float32),)\n")
    assert add("corpus", "flat:twice") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no module XLA compiles from it carries control edges" in err
    assert not (program / "corpus").exists()
