"""Test support: what tests run in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Refuses every import of jax or jaxlib, as on a machine with only numpy.
NO_JAX = textwrap.dedent("""
    import importlib.abc, sys

    class NoJax(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("jax", "jaxlib"):
                raise ImportError(f"{name} is not installed here")
            return None

    sys.meta_path.insert(0, NoJax())
""")


def plot_in_a_child(hlo, out, tmp_path) -> subprocess.CompletedProcess:
    """`hlo2penguin HLO -o … -q --plot OUT` in a fresh interpreter, which prints
    its exit status and whether matplotlib was imported."""
    code = ("import sys; from pipeline.cli.hlo2penguin import main; "
            f"status = main([{str(hlo)!r}, '-o', {str(tmp_path / 'out.py')!r}, '-q', '--plot', {str(out)!r}]); "
            "print(status, 'matplotlib' in sys.modules)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
