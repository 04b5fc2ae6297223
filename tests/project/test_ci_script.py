"""`.ci/run` finds Python 3.13 the way this machine has it (pyenv's
versions folder), and without one it stops at once with one clear line,
before building anything."""

from __future__ import annotations

import subprocess

from paths import REPO


def run_ci(tmp_path, pyenv_versions: list[str]) -> subprocess.CompletedProcess:
    root = tmp_path / "pyenv"
    for version in pyenv_versions:
        (root / "versions" / version / "bin").mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYENV_ROOT": str(root)}
    # A copy of the script in an empty tree: were it to go on, it would find no project to install.
    (tmp_path / "tree" / ".ci").mkdir(parents=True)
    script = tmp_path / "tree" / ".ci" / "run"
    script.write_text((REPO / ".ci" / "run").read_text())
    return subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)


def test_without_python_3_13_it_says_so_in_one_line_and_builds_nothing(tmp_path):
    done = run_ci(tmp_path, ["3.11.7", "3.12.1", "3.13.0-dev"])  # no runnable 3.13.x
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        ".ci/run: Python 3.13 not found (no 3.13.x under pyenv's versions, no python3.13 on PATH): "
        "install it, e.g. 'pyenv install 3.13'"]
    assert not (tmp_path / "tree" / ".ci-venv").exists()


def test_it_runs_both_ends_of_the_supported_range():
    script = (REPO / ".ci" / "run").read_text()
    assert "run_suite python3 .ci-venv" in script and 'run_suite "$PY313" .ci-venv313' in script
    # The README's test command, verbatim, is what each environment runs.
    readme_test_command = (REPO / "README.md").read_text().splitlines()[4]
    assert readme_test_command.endswith("pip install -e '.[test]' && python -m pytest -q")
    assert "pip install --quiet -e '.[test]' && python -m pytest -q" in script
