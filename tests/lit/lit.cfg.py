# lit configuration for the FileCheck tests of links #1, #3 and #4 (upstream
# MLIR style): each .mlir file runs `hlo2penguin-opt` on itself (link #3),
# each .hlo file under link1/ and link4/ runs `hlo2penguin` on itself
# (`--emit hlo`: link #1's output; `--emit penguin`: link #4's program), and
# pipes the output to `filecheck`.
import os
import sys
import tempfile

import lit.formats

config.name = "hlo2penguin"
# lit's internal shell: it provides `not`, pipes, `2>&1` and `diff` on every
# platform (lit 23 rejects ShTest(True), the external shell, as deprecated).
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".hlo"]
config.test_source_root = os.path.dirname(__file__)
# lit writes each test's %t files under the exec root: keep them out of the
# source tree (one directory per user, shared by runs: a test's files are
# deterministic, so two concurrent runs write the same bytes).
config.test_exec_root = os.environ.get("HLO2PENGUIN_LIT_EXEC_ROOT") or os.path.join(
    tempfile.gettempdir(), f"hlo2penguin-lit-{os.getuid()}")

# hlo2penguin-opt and filecheck are console scripts installed next to the
# interpreter running lit (the venv's bin/), which need not be on PATH in CI.
# Not os.path.realpath: a venv's python is a symlink out of the venv.
config.environment["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
# The chain those scripts import is the one this interpreter would import: a
# PYTHONPATH that puts a checkout first holds for the RUN lines too (lit
# passes only a few variables on by default).
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
# The test suite runs the chain with its checks of each link's output on
# (conftest.py): the RUN lines' `hlo2penguin` too.
if "HLO2PENGUIN_VERIFY_EACH" in os.environ:
    config.environment["HLO2PENGUIN_VERIFY_EACH"] = os.environ["HLO2PENGUIN_VERIFY_EACH"]
