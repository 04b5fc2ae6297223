"""Run the lit/FileCheck tests of links #1, #3 and #4 under pytest.

Each tests/lit/link3/*.mlir file runs `hlo2penguin-opt` on itself (link #3),
each tests/lit/link1/*.hlo and tests/lit/link4/*.hlo file `hlo2penguin`
(links #1 and #4), and checks the output with `filecheck`; lit.cfg.py puts this
interpreter's bin/ (the venv) on PATH.
"""

from __future__ import annotations

import re
import subprocess
import sys

from paths import REPO

LIT_DIR = REPO / "tests" / "lit"

# `python -m lit` does not exist (lit ships no __main__); this is what the
# `lit` console script runs.
LIT = [sys.executable, "-c", "import sys, lit.main; sys.argv[0] = 'lit'; sys.exit(lit.main.main())"]


def test_lit_suite_passes():
    cases = sorted(LIT_DIR.rglob("*.mlir")) + sorted(LIT_DIR.rglob("*.hlo"))
    assert cases, f"no .mlir tests in {LIT_DIR}"
    for link, suffix in (("link1", "*.hlo"), ("link3", "*.mlir"), ("link4", "*.hlo")):  # one folder a link
        assert len(list((LIT_DIR / link).glob(suffix))) >= 6, f"tests/lit/{link}: fewer cases than expected"
    proc = subprocess.run([*LIT, "-v", str(LIT_DIR)], cwd=REPO, capture_output=True, text=True, timeout=600)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"lit failed (exit {proc.returncode}):\n{output}"
    # A lit that discovers nothing also exits 0: every file must have passed.
    passed = re.search(r"^\s*Passed\s*:\s*(\d+)", output, re.M)
    assert passed, f"no 'Passed:' summary in lit's output:\n{output}"
    assert int(passed.group(1)) == len(cases), (
        f"{passed.group(1)} lit tests passed, {len(cases)} .mlir and .hlo files exist:\n{output}")
