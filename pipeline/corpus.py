"""The layout of a regression corpus: where each file of a program goes, and
reading one back with every check a corpus file can fail.

    CORPUS/<name>.jaxexport      the program: `jax.export` serialized, for the CPU
    CORPUS/inputs/<name>.npz     its example inputs, arg_0, arg_1, … (flat, in order)
    CORPUS/expected/<name>.npz   JAX's outputs on them, out_0, out_1, … (the flattened pytree)
    CORPUS/goldens/<name>.json   the edge reports and Penguin hashes `regress` compares with

A file beside no artifact, an `.npz` with other keys, arrays that do not
match the artifact's input or output shapes and dtypes, an artifact this
machine cannot run: each is a `CorpusError`, one line that names the file
and says what to do. Inputs, expected outputs and goldens may be missing
(no numerics; a missing golden is a regression until `--update-goldens`).
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from dataclasses import dataclass

from passes.errors import ChainError, first_line

ARTIFACT = ".jaxexport"
INPUTS, EXPECTED, GOLDENS = "inputs", "expected", "goldens"
ARG, OUT = "arg", "out"  # the .npz keys: arg_0, arg_1, … and out_0, out_1, …
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")  # a program's name is a file name, never hidden


class CorpusError(ChainError):
    """A corpus file that cannot be used as it is: one line, exit 2."""


@dataclass(frozen=True)
class Paths:
    """Where each file of program `name` goes in a corpus folder."""

    artifact: str
    inputs: str
    expected: str
    golden: str

    def all(self) -> tuple[str, ...]:
        return (self.artifact, self.inputs, self.expected, self.golden)


def paths(directory: str, name: str) -> Paths:
    return Paths(os.path.join(directory, name + ARTIFACT), os.path.join(directory, INPUTS, name + ".npz"),
                 os.path.join(directory, EXPECTED, name + ".npz"), os.path.join(directory, GOLDENS, name + ".json"))


def check_name(name: str) -> str:
    if not NAME.fullmatch(name) or name.endswith(ARTIFACT):
        raise CorpusError(f"'{name}' cannot name a corpus program: give --name with letters, digits, '_', '-' "
                          "or '.' (not first)")
    return name


def names(directory: str) -> list[str]:
    """The programs of a corpus folder (its artifacts), sorted. OSError if
    the folder cannot be listed; CorpusError for an inputs, expected or
    golden file whose artifact is missing."""
    found = sorted(f[: -len(ARTIFACT)] for f in os.listdir(directory) if f.endswith(ARTIFACT))
    for sub, suffix in ((INPUTS, ".npz"), (EXPECTED, ".npz"), (GOLDENS, ".json")):
        try:
            files = sorted(os.listdir(os.path.join(directory, sub)))
        except FileNotFoundError:
            continue
        for f in files:
            if f.endswith(suffix) and f[: -len(suffix)] not in found:
                name = f[: -len(suffix)]
                raise CorpusError(f"{os.path.join(directory, sub, f)} has no artifact "
                                  f"{os.path.join(directory, name + ARTIFACT)}: add the program again "
                                  f"('hlo2penguin corpus add {directory} SOURCE --name {name} --replace') "
                                  "or delete the file")
    return found


def read_npz(path: str, key: str) -> list | None:
    """The arrays of an .npz whose keys are `key`_0, `key`_1, … (all of
    them, no other), in order; None if there is no file."""
    import numpy as np

    if not os.path.exists(path):
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            keys = list(data.files)
            wanted = [f"{key}_{i}" for i in range(len(keys))]
            if sorted(keys) != sorted(wanted):
                shown = ", ".join(sorted(keys)) or "none"
                raise CorpusError(f"{path} has keys {shown}: name its arrays {key}_0, {key}_1, … in order "
                                  f"(np.savez(FILE, {key}_0=..., {key}_1=...))")
            return [data[k] for k in wanted]
    except CorpusError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise CorpusError(f"cannot read {path} ({first_line(err)}): write it with numpy.savez") from None


def read_golden(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            golden = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise CorpusError(f"cannot read {path} ({first_line(err)}): delete it and write it again with "
                          "'hlo2penguin regress --update-goldens'") from None
    if not isinstance(golden, dict):
        raise CorpusError(f"{path} is not a golden (a JSON object): delete it and write it again with "
                          "'hlo2penguin regress --update-goldens'")
    return golden


def read_artifact(path: str, data: bytes | None = None):
    """The `jax.export.Exported` in the artifact at `path` (or its bytes
    `data`), checked to run on this machine's CPU."""
    from jax import export as jax_export

    try:
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
        exported = jax_export.deserialize(bytearray(data))
    except Exception as err:  # flatbuffers says little about a file that is not one
        raise CorpusError(f"cannot read {path} ({first_line(err, with_type=True)}): write it with "
                          "jax.export.export(...).serialize(), or add the program again") from None
    platforms = tuple(p.lower() for p in exported.platforms)
    if "cpu" not in platforms:
        raise CorpusError(f"{path} is exported for {', '.join(platforms)}, and the chain runs it on the cpu: "
                          "export it again with jax.export.export(jax.jit(fn), platforms=('cpu',))")
    return exported


def check_arrays(path: str, arrays: list | None, avals, what: str) -> None:
    """`arrays` (read from `path`) are what the artifact's `avals` say, in
    count, shape and dtype; `what` is "inputs" or "outputs"."""
    if arrays is None:
        return
    if len(arrays) != len(avals):
        raise CorpusError(f"{path} holds {len(arrays)} array(s), and the artifact's {what} are {len(avals)}: "
                          f"{_avals(avals)}: write them again")
    for i, (array, aval) in enumerate(zip(arrays, avals)):
        if tuple(array.shape) != tuple(aval.shape) or array.dtype != aval.dtype:
            key = f"{ARG if what == 'inputs' else OUT}_{i}"
            raise CorpusError(f"{path}: {key} is {array.dtype}{list(array.shape)}, and the artifact's {what} "
                              f"are {_avals(avals)}: write it again")


def _avals(avals) -> str:
    return ", ".join(f"{a.dtype}{list(a.shape)}" for a in avals)


@dataclass
class Entry:
    """One program of a corpus, read and checked."""

    name: str
    artifact: bytes
    inputs: list | None
    expected: list | None
    golden: dict | None


def read(directory: str, name: str) -> Entry:
    """Program `name` of the corpus at `directory`, every file checked
    against its artifact."""
    where = paths(directory, name)
    try:
        with open(where.artifact, "rb") as f:
            artifact = f.read()
    except OSError as err:
        raise CorpusError(f"cannot read {where.artifact}: {err.strerror}: add the program again") from None
    exported = read_artifact(where.artifact, artifact)
    inputs = read_npz(where.inputs, ARG)
    expected = read_npz(where.expected, OUT)
    check_arrays(where.inputs, inputs, exported.in_avals, "inputs")
    check_arrays(where.expected, expected, exported.out_avals, "outputs")
    return Entry(name, artifact, inputs, expected, read_golden(where.golden))


def npz_bytes(arrays: list, key: str) -> bytes:
    """An .npz of `arrays` as `key`_0, `key`_1, …, with fixed timestamps
    (np.savez stamps the time): the same arrays give the same bytes."""
    import numpy as np

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for i, array in enumerate(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(array, order="C"), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}_{i}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, member.getvalue())
    return buffer.getvalue()
