"""Run mutmut's mutants of one module, each in a fresh interpreter.

mutmut's own runner forks, for every mutant, a process that has already run
the tests once. Where those tests ran XLA:CPU (`assert_round_trip`, the
executor's and the chain's tests), XLA's thread pools do not survive the
fork and every mutant hangs until its timeout. This runs each mutant as
`MUTANT_UNDER_TEST=<name> python -m pytest -x <tests>` in `mutants/` (which
`mutmut run` writes) instead, two at a time, and prints one line a mutant
and the score:

    mutmut run --max-children 2 "pipeline.testing.x_differences__mutmut_1"   # writes mutants/
    python tests/run_mutants.py pipeline.testing tests/chain/test_round_trip_helper.py tests/cli/test_regress.py

A mutant is killed when the tests fail, survives when they pass, and times
out after --timeout seconds (counted apart). `mutmut show NAME` shows one.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
from pathlib import Path


def mutant_names(module: str, root: Path) -> list[str]:
    """Every mutant mutmut wrote for `module` (functions and methods alike)."""
    source = (root / (module.replace(".", "/") + ".py")).read_text()
    return [f"{module}.{m.group(1)}" for m in re.finditer(r"^\s*def (x[^\s(]*__mutmut_\d+)\(", source, re.M)]


def run_one(name: str, tests: list[str], root: Path, timeout: float) -> tuple[str, str]:
    env = {**os.environ, "MUTANT_UNDER_TEST": name}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                              cwd=root, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return name, "timeout"
    return name, "survived" if done.returncode == 0 else "killed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", help="the mutated module, e.g. pipeline.testing")
    parser.add_argument("tests", nargs="+", help="test files, relative to the repo root")
    parser.add_argument("--root", default="mutants", help="where mutmut wrote the mutants (default: mutants)")
    parser.add_argument("--only", default="", help="a regular expression the mutant names must match")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args(argv)
    root = Path(args.root)
    names = [n for n in mutant_names(args.module, root) if re.search(args.only, n)]
    counts = {"killed": 0, "survived": 0, "timeout": 0}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, verdict in pool.map(lambda n: run_one(n, args.tests, root, args.timeout), names):
            counts[verdict] += 1
            print(f"{verdict:8} {name}", flush=True)
    score = counts["killed"] / len(names) if names else 0.0
    print(f"{args.module}: {counts['killed']}/{len(names)} killed ({score:.0%}), "
          f"{counts['survived']} survived, {counts['timeout']} timed out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
