"""`hlo2penguin regress` with no folder runs the repository's corpus from any
working directory (the package finds tests/corpus from its own files), and
where there is no corpus its error says where it looked and what to give."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())


def test_the_default_corpus_is_the_repositorys_whatever_the_working_directory(tmp_path, monkeypatch):
    from pipeline.cli import regress

    monkeypatch.chdir(tmp_path)  # no tests/corpus here
    args = regress.build_parser().parse_args([])
    assert Path(args.directory) == ROOT / "tests" / "corpus"
    programs = regress.programs(args.directory)
    assert programs == sorted(p.name[:-len(".jaxexport")] for p in (ROOT / "tests" / "corpus").glob("*.jaxexport"))


def test_without_a_corpus_the_error_says_where_it_looked_and_what_to_give(tmp_path):
    # A copy of the package without the repository around it: an install from a wheel.
    for package in ("pipeline", "passes", "printer"):
        subprocess.run(["cp", "-r", str(ROOT / package), str(tmp_path / package)], check=True)
    done = subprocess.run([sys.executable, "-c", "import sys; from pipeline.cli.hlo2penguin import main; "
                           "sys.exit(main(['regress']))"], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"hlo2penguin regress: error: cannot read corpus folder '{tmp_path / 'tests' / 'corpus'}': No such file or "
        "directory; this install has no corpus (it lives in a clone of the repository, under tests/corpus): "
        "give its folder as DIR"]
