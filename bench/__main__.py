"""Benchmarks, each a ratio against a real anchor measured in the same run.

    python -m bench [--sizes 30000,300000] [--predecessors 10000] [--repeat 3] [--json]

P1  link #3 (both twins) vs jaxlib's C++ mhlo-flatten-tuple, same MHLO module
P2  link #1 with reading and writing the text vs XLA's parser on that text
P3  HLO text → Penguin source, end to end, vs XLA's parser + importer alone
P4  each stage's time at the largest size over its time at the smallest
P5  link #1 with reading and writing the text, on one successor with
    --predecessors control predecessors (the scale test's module), vs XLA's
    parser on that text
    peak memory (max RSS) of one end-to-end run, in a fresh process

These machines are noisy: every figure is a median of --repeat runs, and the
ratio is what to read, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from bench.synthetic import many_predecessors, synthetic_hlo


def median_time(fn, repeat: int, setup=None) -> float:
    times = []
    for _ in range(repeat):
        arg = setup() if setup else None
        start = time.perf_counter()
        fn(arg) if setup else fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def figures_for_size(size: int, repeat: int) -> list[dict]:
    import jaxlib._hlo as xla_hlo
    import jaxlib._jax as xla_ext
    from jaxlib.mlir import ir, passmanager

    import pipeline
    from passes.dialects import FUNC_FUNC
    from passes.mlir import MHLO, STABLEHLO, FlattenControlDepTupleOperands
    from pipeline.importer import import_hlo
    from pipeline.mlir_context import make_context, register_passes

    text = synthetic_hlo(size)
    out = []

    def figure(name, ours, anchor, **extra):
        out.append({"figure": name, "size": size, "ratio": round(ours / anchor, 3),
                    "ours_s": round(ours, 4), "anchor_s": round(anchor, 4), **extra})

    # P2: link #1 with its text I/O (the chain up to writing link #1's
    # output), against XLA's own parser.
    def link1():
        return pipeline.run(text, isolate=False, check=False, bundle=True, stop_after="write").hlo

    reified = link1()
    figure("P2", median_time(link1, repeat), median_time(lambda: xla_hlo.hlo_module_from_text(text), repeat))

    # P1: link #3 against mhlo-flatten-tuple on the same imported module.
    register_passes()
    context = make_context()
    mhlo_bytes = _bytecode(import_hlo(reified, "mhlo", context=context, isolate=False))
    stablehlo_bytes = _bytecode(import_hlo(reified, "stablehlo", context=context, isolate=False))

    def fresh(data):
        return lambda: ir.Module.parse(data, context=context)

    def anchor_pass(module):
        with context:
            passmanager.PassManager.parse(f"builtin.module({FUNC_FUNC}(mhlo-flatten-tuple))").run(module.operation)

    anchor = median_time(anchor_pass, repeat, fresh(mhlo_bytes))
    for dialect, data, name in ((MHLO, mhlo_bytes, "P1 mhlo"), (STABLEHLO, stablehlo_bytes, "P1 stablehlo")):
        flatten = FlattenControlDepTupleOperands(dialect, scope="all")
        figure(name, median_time(flatten.run, repeat, fresh(data)), anchor)

    # P3: the whole chain to Penguin source, against XLA parse + import alone.
    def xla_alone():
        proto = xla_hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto()
        ir.Module.parse(xla_ext.mlir.hlo_to_stablehlo(proto), context=context)

    stages: dict[str, float] = {}

    def chain():
        pipeline.run(text, isolate=False, check=False, timings=stages)

    figure("P3", median_time(chain, repeat), median_time(xla_alone, repeat))
    for stage, seconds in stages.items():
        out.append({"figure": "stage", "size": size, "stage": stage, "ours_s": round(seconds, 4)})
    return out


def many_predecessors_figure(predecessors: int, repeat: int) -> dict:
    """P5: link #1 (read, rewrite, write) on one successor with `predecessors`
    control predecessors, against XLA's parser on the same text."""
    import jaxlib._hlo as xla_hlo

    import pipeline

    text = many_predecessors(predecessors)

    def link1():
        return pipeline.run(text, isolate=False, check=False, stop_after="write").hlo

    ours = median_time(link1, repeat)
    anchor = median_time(lambda: xla_hlo.hlo_module_from_text(text), repeat)
    return {"figure": "P5", "size": predecessors, "ratio": round(ours / anchor, 3),
            "ours_s": round(ours, 4), "anchor_s": round(anchor, 4), "anchor": "XLA's parser, same text"}


def _bytecode(module) -> bytes:
    import io

    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def peak_memory(size: int) -> float:
    """Max RSS (MiB) of one end-to-end run in a fresh interpreter."""
    code = ("import resource, pipeline; from bench.synthetic import synthetic_hlo; "
            f"pipeline.run(synthetic_hlo({size}), isolate=False, check=False); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1]) / 1024


def scaling(rows: list[dict], small: int, large: int) -> list[dict]:
    """P4: how each measured time grows from the smallest size to the largest."""
    def times(size):
        found = {}
        for r in rows:
            if r["size"] == size and "ours_s" in r:
                key = r.get("stage") or r["figure"]
                found[key] = r["ours_s"]
        return found

    a, b = times(small), times(large)
    return [{"figure": "P4", "size": large, "stage": k, "ratio": round(b[k] / a[k], 2),
             "ours_s": b[k], "anchor_s": a[k], "anchor": f"same stage at {small}"}
            for k in a if k in b and a[k] > 0]


def table(rows: list[dict]) -> str:
    lines = [f"{'figure':20} {'size':>8} {'ours (s)':>10} {'anchor (s)':>11} {'ratio':>8}  target"]
    targets = {"P1": "<= 0.5", "P2": "<= 1.0", "P3": "<= 2.0", "P4": "<= 11"}
    for r in rows:
        name = r["figure"] + (f" {r['stage']}" if "stage" in r and r["figure"] != "stage" else "")
        if r["figure"] == "stage":
            name = f"  {r['stage']}"
        if r["figure"] == "memory":
            lines.append(f"{'peak memory':20} {r['size']:>8} {r['mib']:>10.0f} MiB")
            continue
        ratio = f"{r['ratio']:>8.2f}" if "ratio" in r else " " * 8
        anchor = f"{r['anchor_s']:>11.3f}" if "anchor_s" in r else " " * 11
        lines.append(f"{name:20} {r['size']:>8} {r['ours_s']:>10.3f} {anchor} {ratio}  "
                     f"{targets.get(r['figure'].split()[0], '')}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="30000,300000", help="instruction counts, comma-separated")
    parser.add_argument("--predecessors", type=int, default=10_000,
                        help="control predecessors of the one successor in P5")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is kept")
    parser.add_argument("--json", action="store_true", help="one JSON object per line per figure")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory runs")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    rows: list[dict] = []
    for size in sizes:
        rows += figures_for_size(size, args.repeat)
        if not args.no_memory:
            rows.append({"figure": "memory", "size": size, "mib": round(peak_memory(size), 1)})
    if len(sizes) > 1:
        rows += scaling(rows, sizes[0], sizes[-1])
    rows.append(many_predecessors_figure(args.predecessors, args.repeat))
    if args.json:
        sys.stdout.write("".join(json.dumps(r) + "\n" for r in rows))
    else:
        sys.stdout.write(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
