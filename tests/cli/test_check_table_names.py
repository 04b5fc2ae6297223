"""`hlo2penguin check`'s table names each row by its module and its stage
(the JSON's `module` and `stage`), cut from the front where the width asks,
never so that two rows read the same. On a real dump folder made here by JAX
with `--xla_dump_hlo_pass_re=.*` (two programs, `jit_loop` and `jit_scan`,
whose names share their start; stages that share a long end). The oracle is
the command's JSON (XLA's dump names, read by the chain's own reader) and the
width given in COLUMNS."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))
COUNTS = ("edges", "preserved", "rerouted", "dropped", "lost", "spurious")
PROGRAM = """
import jax, jax.numpy as jnp
def loop(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: (c[1], c[0]), (x, x + 1))
def scan(x):
    return jax.lax.scan(lambda c, _: ((c[1], c[0]), None), (x, x + 1), None, length=3)[0]
jax.jit(loop)(jnp.ones(4)); jax.jit(scan)(jnp.ones(4)); jax.jit(loop)(jnp.ones(5))
"""


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("names") / "dump"
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"--xla_dump_to={folder} --xla_dump_hlo_pass_re=.*"}
    subprocess.run([sys.executable, "-c", PROGRAM], env=env, check=True, capture_output=True)
    # Newer XLA numbers a pass that runs once per compilation by its runs in the process
    # (`…before_apply-xla-transforms-12.txt`), so its stages no longer share their end; the name
    # without that count is the stage as jaxlib 0.10.2 dumps it (where no two files would collide).
    for path in sorted(folder.glob("*.txt")):
        plain = path.with_name(re.sub(r"-\d+\.txt$", ".txt", path.name))
        if plain != path and not plain.exists():
            path.rename(plain)
    return folder


def check(*argv: str, columns: int) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["COLUMNS"] = str(columns)
    done = subprocess.run([SCRIPT, "check", "-q", "--jobs", "2", *argv], capture_output=True, text=True, env=env)
    return done.returncode, done.stdout, done.stderr


def prefix(row: dict) -> str:
    """The dump name up to the stage: `module_0004.jit_loop`."""
    return re.sub(r"\.\d{4}$", "", row["file"][:-len(f".{row['stage']}.txt")])


def common_end(a: str, b: str) -> int:
    return len(os.path.commonprefix([a[::-1], b[::-1]]))


def names(shown: str, name: str) -> bool:
    """A cell names `name`: whole, or its end after a leading `…`."""
    return shown == name or (shown.startswith("…") and len(shown) > 1 and name.endswith(shown[1:]))


@pytest.mark.parametrize("columns", [80, 100])
def test_rows_that_differ_late_in_their_names_never_read_the_same(dump, columns):
    status, out, err = check(str(dump), "--json", columns=columns)
    assert (status, err) == (0, "")
    rows = json.loads(out)["modules"]
    # What makes the case: two modules whose names share their start, stages that share a long end.
    assert {r["module"] for r in rows} == {"jit_loop", "jit_scan"}
    stages = sorted({r["stage"] for r in rows})
    assert max(common_end(a, b) for i, a in enumerate(stages) for b in stages[i + 1:]) >= 20
    status, out, err = check(str(dump), columns=columns)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["module", "stage", *COUNTS]
    body = lines[2:2 + len(rows)]
    assert lines[2 + len(rows)].startswith("total:")
    for line, row in zip(body, rows):
        cells = line.split()
        assert len(cells) == 2 + len(COUNTS)
        assert names(cells[0], row["module"]) or names(cells[0], prefix(row)), (line, row)
        assert names(cells[1], row["stage"]), (line, row)
        assert cells[2:] == [str(row[k]) for k in COUNTS]  # the numbers whole
    shown = [tuple(line.split()[:2]) for line in body]
    assert len(set(shown)) == len(shown), out  # no two rows read the same
    # jit_loop compiled twice: its rows are named by their dump prefix (module_NNNN.jit_loop), the rest by module.
    assert len({(r["module"], r["stage"]) for r in rows}) < len(rows)
    for line, row in zip(body, rows):
        module, stage = line.split()[:2]
        assert row["module"] in module  # the program's name whole
        for shown, name in ((module, prefix(row)), (stage, row["stage"])):
            if shown.startswith("…"):  # cut where a word starts
                assert name[len(name) - len(shown) + 1 - 1] in "/._-", (shown, name)
    # A line is wider than the terminal only where a name column could not be cut further.
    for line in lines[:2 + len(rows)]:
        if len(line) > columns:
            assert all(not c.startswith("…") or len(c) > 8 for c in line.split()[:2])
