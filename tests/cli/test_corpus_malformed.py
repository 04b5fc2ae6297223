"""A malformed corpus, or a malformed input to `corpus add`: one line that
names the file and says what to do, exit 2, and nothing written."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from pipeline.cli import hlo2penguin as cli

NAME = "prefix_double"


def prefix_double(x):
    import jax

    return jax.lax.fori_loop(1, x.shape[0], lambda i, x: x.at[i].set(x[i - 1] * 2.0), x)


X = np.array([1.0, 0, 0, 0], dtype=np.float32)


def artifact(platforms=("cpu",)) -> bytes:
    import jax

    return bytes(jax.export.export(jax.jit(prefix_double), platforms=platforms)(
        jax.ShapeDtypeStruct(X.shape, X.dtype)).serialize())


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A corpus `corpus add` made, from an artifact and numpy inputs."""
    folder = tmp_path_factory.mktemp("good")
    (folder / "p.jaxexport").write_bytes(artifact())
    np.savez(folder / "x.npz", arg_0=X)
    assert cli.main(["corpus", "add", str(folder / "corpus"), str(folder / "p.jaxexport"), "--inputs",
                     str(folder / "x.npz"), "--name", NAME, "-q"]) == 0
    return folder / "corpus"


def files(folder) -> dict:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def one_line(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def npz_bytes(**arrays) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


# (file under the corpus, its new bytes or None to delete, what the line says)
BREAKS = {
    "missing artifact": (f"{NAME}.jaxexport", None, [f"inputs/{NAME}.npz has no artifact", "corpus add"]),
    "wrong keys": (f"inputs/{NAME}.npz", npz_bytes(a=X), [f"inputs/{NAME}.npz has keys a", "arg_0"]),
    "too many inputs": (f"inputs/{NAME}.npz", npz_bytes(arg_0=X, arg_1=X),
                        [f"inputs/{NAME}.npz holds 2 array(s)", "float32[4]"]),
    "input shape": (f"inputs/{NAME}.npz", npz_bytes(arg_0=X[:3]), [f"inputs/{NAME}.npz: arg_0 is float32[3]"]),
    "input dtype": (f"inputs/{NAME}.npz", npz_bytes(arg_0=X.astype(np.int32)), ["arg_0 is int32[4]"]),
    "expected dtype": (f"expected/{NAME}.npz", npz_bytes(out_0=X.astype(np.float64)),
                       [f"expected/{NAME}.npz: out_0 is float64[4]", "outputs"]),
    "unreadable npz": (f"expected/{NAME}.npz", b"not a zip", [f"cannot read", f"expected/{NAME}.npz", "savez"]),
    "unreadable artifact": (f"{NAME}.jaxexport", b"\x00garbage", [f"cannot read", f"{NAME}.jaxexport"]),
    "cuda artifact": (f"{NAME}.jaxexport", "cuda", [f"{NAME}.jaxexport is exported for cuda", "platforms=('cpu',)"]),
    "unreadable golden": (f"goldens/{NAME}.json", b"{", [f"goldens/{NAME}.json", "--update-goldens"]),
}


@pytest.mark.parametrize("case", list(BREAKS))
def test_regress_on_a_malformed_corpus_says_one_line_and_writes_nothing(case, good, tmp_path, capsys):
    corpus = tmp_path / "corpus"
    shutil.copytree(good, corpus)
    where, data, needles = BREAKS[case]
    if data is None:
        (corpus / where).unlink()
    else:
        (corpus / where).write_bytes(artifact(("cuda",)) if data == "cuda" else data)
    before = files(corpus)
    assert cli.main(["regress", str(corpus), "--update-goldens", "--jobs", "1", "-q"]) == 2
    one_line(capsys, "hlo2penguin regress: error: ", *needles)
    assert files(corpus) == before


def test_the_good_corpus_passes(good, capsys):
    assert cli.main(["regress", str(good), "--jobs", "1", "-q"]) == 0


# (the --inputs file's and the artifact's bytes, what the line says)
ADD_BREAKS = {
    "wrong keys": (npz_bytes(a=X), None, ["x.npz has keys a", "arg_0"]),
    "input shape": (npz_bytes(arg_0=X[:2]), None, ["x.npz: arg_0 is float32[2]", "float32[4]"]),
    "too few inputs": (npz_bytes(), None, ["x.npz holds 0 array(s)"]),
    "unreadable npz": (b"PK\x03\x04 broken", None, ["cannot read", "x.npz"]),
    "unreadable artifact": (None, b"\x00garbage", ["cannot read", "p.jaxexport"]),
    "cuda artifact": (None, "cuda", ["p.jaxexport is exported for cuda"]),
}


@pytest.mark.parametrize("case", list(ADD_BREAKS))
def test_add_with_a_malformed_input_says_one_line_and_writes_nothing(case, good, tmp_path, capsys):
    inputs, data, needles = ADD_BREAKS[case]
    (tmp_path / "x.npz").write_bytes(inputs if inputs is not None else npz_bytes(arg_0=X))
    (tmp_path / "p.jaxexport").write_bytes(artifact(("cuda",)) if data == "cuda" else data or artifact())
    corpus = tmp_path / "corpus"
    shutil.copytree(good, corpus)
    before = files(corpus)
    for target in (corpus, tmp_path / "new"):  # an existing corpus, and one the command would make
        assert cli.main(["corpus", "add", str(target), str(tmp_path / "p.jaxexport"), "--inputs",
                         str(tmp_path / "x.npz")]) == 2
        one_line(capsys, "hlo2penguin corpus: error: ", *needles)
    assert files(corpus) == before and not (tmp_path / "new").exists()


def test_add_to_a_corpus_with_a_file_beside_no_artifact_says_so(good, tmp_path, capsys):
    corpus = tmp_path / "corpus"
    shutil.copytree(good, corpus)
    (corpus / "goldens" / "lost.json").write_text("{}")
    (tmp_path / "p.jaxexport").write_bytes(artifact())
    np.savez(tmp_path / "x.npz", arg_0=X)
    before = files(corpus)
    assert cli.main(["corpus", "add", str(corpus), str(tmp_path / "p.jaxexport"), "--inputs",
                     str(tmp_path / "x.npz")]) == 2
    one_line(capsys, "goldens/lost.json has no artifact")
    assert files(corpus) == before


@pytest.mark.parametrize("argv,needle", [
    (["p.jaxexport"], "give its example inputs with --inputs"),
    (["p.jaxexport", "--inputs", "x.npz", "--example", "f"], "not --example"),
    (["nomodule_here:f"], "cannot import 'nomodule_here'"),
    (["justaname"], "neither module:function"),
    (["p.jaxexport", "--inputs", "x.npz", "--name", ".hidden"], "cannot name a corpus program"),
])
def test_add_usage_errors(argv, needle, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.jaxexport").write_bytes(artifact())
    np.savez(tmp_path / "x.npz", arg_0=X)
    assert cli.main(["corpus", "add", "corpus", *argv]) == 2
    one_line(capsys, needle)
    assert not (tmp_path / "corpus").exists()
