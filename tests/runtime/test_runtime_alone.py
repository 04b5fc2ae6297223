"""A program emitted by the chain needs only the Penguin runtime: it runs,
schedules, executes and draws in a process where jax and jaxlib cannot be
imported (issue 14: the runtime stands alone)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

import pipeline
from children import NO_JAX
from pipeline.chain.example import EXAMPLE_HLO

def test_an_emitted_program_runs_schedules_executes_and_draws_without_jaxlib(tmp_path):
    result = pipeline.run(EXAMPLE_HLO, isolate=False)
    program = tmp_path / "program.py"
    program.write_text(result.penguin_source)
    x = np.arange(4, dtype=np.float32)
    expected = result.module().execute(x)
    script = NO_JAX + textwrap.dedent(f"""
        import runpy, sys
        import numpy as np
        try:
            import jaxlib  # noqa: F401
        except ImportError:
            pass
        else:
            raise SystemExit("the blocker let jaxlib in")
        module = runpy.run_path({str(program)!r})["module"]
        print(len(module.dependencies))
        print([i.name for i in module.schedule()["main"]])
        outputs = module.execute(np.arange(4, dtype=np.float32))
        np.save(sys.argv[1], np.stack([np.asarray(o, np.float32) for o in outputs]))
        from printer.penguin.drawing import to_dot
        print(to_dot(module).count("->") > 0)
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib", "printer", "passes")))
    """)
    out = tmp_path / "out.npy"
    run = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True, text=True,
                         timeout=120, cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run.returncode == 0, run.stderr[-2000:]
    deps, schedule, drew, modules = run.stdout.splitlines()
    assert int(deps) == len(result.module().dependencies) > 0
    assert schedule == str([i.name for i in result.module().schedule()["main"]])
    assert drew == "True"
    assert not [m for m in eval(modules) if m.split(".")[0] in ("jax", "jaxlib")]
    assert "printer.python_printer" not in eval(modules)
    # `Module` lives above the graph and the executor; of the passes, the runtime
    # reads the table of dialect op names (pure data), not the passes themselves.
    assert "printer.penguin.module" in eval(modules) and "passes.dialects" in eval(modules)
    assert not [m for m in eval(modules) if m.startswith(("passes.hlo", "passes.mlir"))]
    np.testing.assert_allclose(np.load(out), np.stack([np.asarray(o, np.float32) for o in expected]),
                               rtol=1e-6)
