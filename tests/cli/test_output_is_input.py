"""`hlo2penguin IN -o OUT` where OUT is IN (the same name, a symbolic link
to it, a hard link to it) is refused before any work: one line, exit 2, the
input untouched. The oracle for "the same file" is the file system's
(os.stat's device and inode), not the command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from pipeline.chain.example import EXAMPLE_HLO

SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))


@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
def test_an_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path, link):
    (tmp_path / "g2.hlo").write_text(EXAMPLE_HLO)
    out = {"same": "g2.hlo", "symlink": "link.hlo", "hardlink": "hard.hlo"}[link]
    if link == "symlink":
        os.symlink("g2.hlo", tmp_path / out)
    elif link == "hardlink":
        os.link(tmp_path / "g2.hlo", tmp_path / out)
    before = os.stat(tmp_path / "g2.hlo")
    assert (os.stat(tmp_path / out).st_dev, os.stat(tmp_path / out).st_ino) == (before.st_dev, before.st_ino)
    done = subprocess.run([SCRIPT, "g2.hlo", "-o", out], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("hlo2penguin: error: -o ")
    assert "is the input" in done.stderr and f"'{out}'" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "g2.hlo").read_text() == EXAMPLE_HLO  # untouched
    after = os.stat(tmp_path / "g2.hlo")
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_another_output_file_is_still_written(tmp_path):
    (tmp_path / "g2.hlo").write_text(EXAMPLE_HLO)
    done = subprocess.run([SCRIPT, "g2.hlo", "-o", "g2.py", "-q"], cwd=tmp_path, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "") and "dependencies" in (tmp_path / "g2.py").read_text()


def test_verify_refuses_an_output_that_is_its_module_or_its_program(tmp_path):
    (tmp_path / "g2.hlo").write_text(EXAMPLE_HLO)
    done = subprocess.run([SCRIPT, "g2.hlo", "-o", "g2.py", "-q"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0
    program = (tmp_path / "g2.py").read_text()
    for out in ("g2.hlo", "g2.py"):
        done = subprocess.run([SCRIPT, "verify", "g2.hlo", "g2.py", "-o", out], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
        assert done.stderr.startswith(f"hlo2penguin verify: error: -o '{out}' is the input")
    assert (tmp_path / "g2.hlo").read_text() == EXAMPLE_HLO and (tmp_path / "g2.py").read_text() == program
