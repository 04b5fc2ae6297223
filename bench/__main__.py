"""Benchmarks, each a ratio against a real anchor measured in the same run.

    python -m bench [--sizes 30000,300000] [--predecessors 10000] [--repeat 3] [--json]
    python -m bench --fan-in [--fan-in-sizes 4000,16000] [--fan-in-module 200000]

P1  link #3 (both twins) vs jaxlib's C++ mhlo-flatten-tuple, same MHLO module
P2  link #1 including XLA's parse of the text (read, names, link #1 on
    XLA's proto, the edited proto serialized) vs XLA's parse of the same
    text to the proto its importer takes: at least 1.0, since the anchor
    is part of ours ("P2 predecessors": the same on one successor with
    --predecessors control predecessors, the scale test's module; "P2
    floor": XLA's parse, the proto decoded, each instruction's name, id and
    control predecessors read once, encoded back: no edit, no target)
P3  HLO text → Penguin source, end to end, vs XLA's parser + importer alone
    ("P3 floor": the anchor plus one walk of every op through the MLIR
    bindings reading its name, operands, result types and attributes'
    text, what any printer must read: no link #1, #3, naming or printing)
P4  each stage's growth from the smallest size to the largest, over the
    growth of P3's anchor in the same run
M   peak memory (max RSS) of a fresh process that runs the chain as P3
    does, vs a fresh process that only parses and imports the same text
R1  `assert_round_trip` with its defaults in a warm process, on a module
    of --small instructions, vs XLA's parse + import of it in-process
R2  the same with `inputs=` on a module not compiled before, vs XLA's own
    compile + run of it in-process; "R2 again": the same module with new
    inputs, vs R1's call plus XLA's run of the module it compiled
P5  what a user waits for: `hlo2penguin FILE -o OUT` with its defaults, as
    a whole process (children included), vs the same parse + import process:
    wall time, and peak memory beside it ("P5 small": the same on a module
    of --small instructions, the two processes run --small-repeat times);
    under it, its steps as the command's --timings reports them (the chain,
    each link, the proof, writing the output) and the rest of the process
    ("start and end": the interpreter, imports, the child's start, exit)
F   a fan-in: F control edges into one successor (`bench.synthetic.fan_in`)
    at two sizes, the growth of the chain with its check ("F check", as
    `hlo2penguin --check` runs it, in-process) and of the verifier alone
    ("F verify", as `hlo2penguin verify` runs it) over the growth of XLA's
    parse of the same two modules, measured in the same run; beside it the
    growth over the edges' (linear: 1.0). With --fan-in-module N, "F module":
    the check on the larger fan-in padded to N instructions against the
    check on the same module without its control edges
    (--fan-in runs the F figures alone; --processes runs M and P5 alone)
X   Model Explorer's graphs of a chain run (`pipeline.explorer.chain_graphs`
    and the JSON the browser is sent) vs the chain run they show, with its
    proof, as `hlo2penguin --explore` runs it, in-process; "X growth": how
    the conversion grows from the smallest size to the largest over the
    chain's growth (--explorer runs the X figures alone)

These machines are noisy: every figure is a median of --repeat runs, and the
ratio is what to read, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench.synthetic import fan_in, many_predecessors, synthetic_hlo


def median_time(fn, repeat: int, setup=None) -> float:
    times = []
    for _ in range(repeat):
        arg = setup() if setup else None
        start = time.perf_counter()
        fn(arg) if setup else fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def figures_for_size(size: int, repeat: int) -> list[dict]:
    from jaxlib.mlir import ir, passmanager

    import pipeline
    from passes.dialects import FUNC_FUNC
    from pipeline.reading.parsed import decode_proto
    from passes.mlir import MHLO, STABLEHLO, FlattenControlDepTupleOperands
    from pipeline.xla import native
    from pipeline.xla.importer import import_hlo
    from pipeline.xla.mlir_context import make_context, register_passes

    text = synthetic_hlo(size)
    out = []

    def figure(name, ours, anchor, **extra):
        out.append({"figure": name, "size": size, "ratio": round(ours / anchor, 3),
                    "ours_s": round(ours, 4), "anchor_s": round(anchor, 4), **extra})

    # P2: link #1 including XLA's parse (the chain up to serializing link
    # #1's output), against XLA's parse of the text to its proto.
    def link1():
        return pipeline.run(text, isolate=False, check=False, bundle=True, stop_after="write")

    def xla_parse():
        return native.parse_to_proto(text)

    reified = link1().hlo
    p2_anchor = median_time(xla_parse, repeat)
    figure("P2", median_time(link1, repeat), p2_anchor)

    # P2 floor: what any link #1 in Python on XLA's proto pays before it
    # changes a thing: XLA's parse to its proto, protobuf's decoding of it,
    # one read of every instruction's name, id and control predecessors (the
    # names' check, the index, finding the successors), the encoding back.
    def floor():
        module = decode_proto(xla_parse())
        lists = [list(c.instructions) for c in module.computations]
        frozenset(i.name for instructions in lists for i in instructions)
        [dict(zip([i.id for i in instructions], instructions)) for instructions in lists]
        [i for instructions in lists for i in instructions if i.control_predecessor_ids]
        return module.SerializeToString()

    figure("P2 floor", median_time(floor, repeat), p2_anchor)

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
        proto = native.parse_to_proto(text)
        ir.Module.parse(native.hlo_to_stablehlo(proto), context=context)

    stages: dict[str, float] = {}

    def chain():
        pipeline.run(text, isolate=False, check=False, timings=stages)

    p3_anchor = median_time(xla_alone, repeat)
    figure("P3", median_time(chain, repeat), p3_anchor)

    # P3 floor: what any link #4 in Python over the MLIR bindings pays on
    # top of the anchor, with no link #1, #3 or naming: XLA's parse and
    # import, then one walk of every op that reads what a printer must
    # print (its name, operands, result types, each attribute's text).
    def printer_floor():
        proto = native.parse_to_proto(text)
        module = ir.Module.parse(native.hlo_to_stablehlo(proto), context=context)
        types: dict = {}
        blocks = [module.body]
        while blocks:
            for op in blocks.pop().operations:
                op = op.operation
                op.name, list(op.operands)
                for t in op.results.types:
                    if t not in types:
                        types[t] = str(t)
                attributes = op.attributes
                [str(attributes[a]) for a in attributes]
                blocks += [b for region in op.regions for b in region.blocks]

    figure("P3 floor", median_time(printer_floor, repeat), p3_anchor)
    for stage, seconds in stages.items():
        out.append({"figure": "stage", "size": size, "stage": stage, "ours_s": round(seconds, 4)})
    return out


def many_predecessors_figure(predecessors: int, repeat: int) -> dict:
    """P2 on one successor with `predecessors` control predecessors: link #1
    (read, rewrite, write) against XLA's parser on the same text."""
    import pipeline
    from pipeline.xla import native

    text = many_predecessors(predecessors)

    def link1():
        return pipeline.run(text, isolate=False, check=False, stop_after="write")

    ours = median_time(link1, repeat)
    anchor = median_time(lambda: native.parse_to_proto(text), repeat)
    return {"figure": "P2 predecessors", "size": predecessors, "ratio": round(ours / anchor, 3),
            "ours_s": round(ours, 4), "anchor_s": round(anchor, 4), "anchor": "XLA's parse to its proto, same text"}


def fan_in_figures(sizes: list[int], repeat: int, module: int = 0) -> list[dict]:
    """F: the check and the verifier on a fan-in of each of `sizes` edges
    (the smallest and the largest), their growth over the growth of XLA's
    parse of the same modules; "F module" with `module` instructions."""
    import pipeline
    from pipeline.xla import native

    small, large = sizes[0], sizes[-1]
    seconds: dict[tuple[str, int], float] = {}
    for edges in (small, large):
        text = fan_in(edges)
        program = pipeline.run(text, isolate=False).penguin_source
        seconds["anchor", edges] = median_time(
            lambda: native.parse_to_proto(text), repeat)
        seconds["F check", edges] = median_time(lambda: pipeline.run(text, isolate=False, check=True), repeat)
        seconds["F verify", edges] = median_time(lambda: pipeline.verify(text, program), repeat)
    anchor_growth = seconds["anchor", large] / seconds["anchor", small]
    rows = []
    for name in ("F check", "F verify"):
        growth = seconds[name, large] / seconds[name, small]
        rows.append({"figure": name, "size": large, "small": small, "ratio": round(growth / anchor_growth, 2),
                     "growth": round(growth, 2), "anchor_growth": round(anchor_growth, 2),
                     "linear": round(growth / (large / small), 2), "ours_s": round(seconds[name, large], 4),
                     "anchor_s": round(seconds["anchor", large], 4),
                     "anchor": f"XLA's parse of the same modules, {small} → {large} edges"})
    if module:
        with_edges, without = fan_in(large, module), fan_in(large, module, control=False)
        ours = median_time(lambda: pipeline.run(with_edges, isolate=False, check=True), repeat)
        anchor = median_time(lambda: pipeline.run(without, isolate=False, check=True), repeat)
        rows.append({"figure": "F module", "size": module, "edges": large, "ratio": round(ours / anchor, 2),
                     "ours_s": round(ours, 3), "anchor_s": round(anchor, 3),
                     "anchor": "the check on the same module without its control edges"})
    return rows


def round_trip_figure(size: int, repeat: int) -> dict:
    """R1: what a round-trip test pays per call once its process is warm."""
    from jaxlib.mlir import ir

    from pipeline.testing import assert_round_trip
    from pipeline.xla import native
    from pipeline.xla.mlir_context import make_context

    text = synthetic_hlo(size)
    context = make_context()

    def xla_alone():
        proto = native.parse_to_proto(text)
        ir.Module.parse(native.hlo_to_stablehlo(proto), context=context)

    def ours():
        assert_round_trip(text)

    ours(), xla_alone()  # warm: the child started, the modules imported
    anchor, chain = [], []
    for _ in range(max(repeat, 1) * 10):  # interleaved: both see the same machine
        anchor.append(median_time(xla_alone, 1))
        chain.append(median_time(ours, 1))
    a, o = statistics.median(anchor), statistics.median(chain)
    return {"figure": "R1", "size": size, "ratio": round(o / a, 2), "ours_s": round(o, 5), "anchor_s": round(a, 5),
            "anchor": "XLA's parse + import in-process"}


def numbers_figures(size: int, repeat: int) -> list[dict]:
    """R2: a round-trip test with inputs, on a module this process has not
    compiled (each call a module of its own name: XLA compiles it), against
    XLA's own compile + run of the same module in-process. "R2 again": the
    same module with new inputs (as a parametrized test feeds it), against
    R1's call plus XLA's run of the module it compiled."""
    import numpy as np

    from pipeline.testing import assert_round_trip
    from pipeline.xla import native

    text = synthetic_hlo(size)
    rng = np.random.default_rng(0)
    fresh = iter(range(1 << 30))

    def renamed() -> str:
        return text.replace("HloModule synthetic", f"HloModule synthetic_{next(fresh)}", 1)

    def xla_compile_and_run(module: str) -> None:
        native.run_cpu(native.compile_cpu(native.parse_to_proto(module)), [rng.standard_normal(8, np.float32)])

    def ours_new(module: str) -> None:
        assert_round_trip(module, inputs=[rng.standard_normal(8, np.float32)])

    executable = native.compile_cpu(native.parse_to_proto(text))

    def r1_plus_run() -> None:
        assert_round_trip(text)
        native.run_cpu(executable, [rng.standard_normal(8, np.float32)])

    def ours_again() -> None:
        assert_round_trip(text, inputs=[rng.standard_normal(8, np.float32)])

    ours_new(renamed()), xla_compile_and_run(renamed()), r1_plus_run(), ours_again()  # warm
    samples: dict[str, list[float]] = {k: [] for k in ("anchor", "ours", "anchor again", "ours again")}
    for _ in range(max(repeat, 1) * 10):  # interleaved: both see the same machine
        samples["anchor"].append(median_time(xla_compile_and_run, 1, renamed))
        samples["ours"].append(median_time(ours_new, 1, renamed))
        samples["anchor again"].append(median_time(r1_plus_run, 1))
        samples["ours again"].append(median_time(ours_again, 1))
    m = {k: statistics.median(v) for k, v in samples.items()}
    return [{"figure": "R2", "size": size, "ratio": round(m["ours"] / m["anchor"], 2), "ours_s": round(m["ours"], 5),
             "anchor_s": round(m["anchor"], 5), "anchor": "XLA's parse + import + compile + run in-process"},
            {"figure": "R2 again", "size": size, "ratio": round(m["ours again"] / m["anchor again"], 2),
             "ours_s": round(m["ours again"], 5), "anchor_s": round(m["anchor again"], 5),
             "anchor": "R1's call + XLA's run of the compiled module"}]


def _bytecode(module) -> bytes:
    import io

    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


# A fresh process that only parses and imports a file: the anchor of M and P5.
_PARSE_AND_IMPORT = (
    "import sys; from jaxlib.mlir import ir; from pipeline.xla import native; "
    "from pipeline.xla.mlir_context import make_context; "
    "proto = native.parse_to_proto(open(sys.argv[1]).read()); "
    "ir.Module.parse(native.hlo_to_stablehlo(proto), context=make_context())")
_CHAIN_AS_P3 = "import sys, pipeline; pipeline.run(open(sys.argv[1]).read(), isolate=False, check=False)"
# Runs a command and prints its wall seconds and the peak RSS (KiB) of it and
# its children (the largest of them); the command's stderr passes through.
_MEASURE = ("import resource, subprocess, sys, time; start = time.perf_counter(); "
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def reported_steps(stderr: str) -> dict[str, float]:
    """The seconds per step that `hlo2penguin --timings` writes on stderr."""
    lines = stderr.splitlines()
    marks = [i for i, line in enumerate(lines) if line.endswith(": seconds per step")]
    if not marks:
        return {}
    steps = {}
    for line in lines[marks[-1] + 1:]:
        if not line.startswith("  "):
            break
        name, _, seconds = line.strip().rpartition(" ")
        steps[name.strip()] = float(seconds)
    return steps


def whole_processes(commands: dict[str, list[str]], repeat: int,
                    steps: dict[str, dict[str, float]] | None = None) -> dict[str, tuple[float, float]]:
    """Median wall seconds and median peak MiB of each of `commands` as a
    process, run in turns (one of each, `repeat` times, after one round not
    counted): a noisy spell of the machine falls on all of them alike.
    `steps`, if given, receives the median of each step a command reported
    (`--timings`), by command.
    Bytecode is written and reused as on a user's install
    (PYTHONDONTWRITEBYTECODE, set in some sandboxes, would charge every run
    ~40 ms of compiling the chain's sources)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    reported: dict[str, list[dict[str, float]]] = {}
    for i in range(repeat + 1):
        for name, command in commands.items():
            done = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True,
                                  check=True, env=env)
            if i:
                seconds, kib = done.stdout.split()
                runs[name].append((float(seconds), int(kib) / 1024))
                reported.setdefault(name, []).append(reported_steps(done.stderr))
    if steps is not None:
        for name, each in reported.items():
            if each and all(each):
                steps[name] = {step: statistics.median(r[step] for r in each) for step in each[0]}
    return {name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
            for name, rs in runs.items()}


def process_figures(size: int, repeat: int, memory: bool = True, name: str = "P5") -> list[dict]:
    """M (with `memory`) and P5 at `size`, each against a fresh process that
    only parses and imports the same file, the processes run in turns."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path, out = f"{folder}/module.hlo", f"{folder}/program.py"
        with open(path, "w", encoding="utf-8") as f:
            f.write(synthetic_hlo(size))
        commands = {"anchor": [sys.executable, "-c", _PARSE_AND_IMPORT, path],
                    "cli": [sys.executable, "-m", "pipeline.cli", path, "-o", out, "-q", "--timings"]}
        if memory:
            commands["chain"] = [sys.executable, "-c", _CHAIN_AS_P3, path]
        steps: dict[str, dict[str, float]] = {}
        measured = whole_processes(commands, repeat, steps)
    (anchor_s, anchor_mib), (cli_s, cli_mib) = measured["anchor"], measured["cli"]
    rows = []
    if memory:
        chain_mib = measured["chain"][1]
        rows.append({"figure": "M", "size": size, "ratio": round(chain_mib / anchor_mib, 3),
                     "ours_mib": round(chain_mib, 1), "anchor_mib": round(anchor_mib, 1),
                     "anchor": "a process that parses and imports"})
    rows.append({"figure": name, "size": size, "ratio": round(cli_s / anchor_s, 3), "ours_s": round(cli_s, 3),
                 "anchor_s": round(anchor_s, 3), "memory_ratio": round(cli_mib / anchor_mib, 3),
                 "ours_mib": round(cli_mib, 1), "anchor_mib": round(anchor_mib, 1),
                 "anchor": "a process that parses and imports"})
    reported = steps.get("cli", {})
    if reported:  # the command's own steps (medians of each), and what the process adds around them
        total = reported.pop("total", sum(reported.values()))
        chain = {k: v for k, v in reported.items() if k not in ("proof", "output")}
        parts = [("chain", sum(chain.values()))] + [(f"  {k}", v) for k, v in chain.items()]
        parts += [(k, reported[k]) for k in ("proof", "output") if k in reported]
        parts.append(("start and end", max(cli_s - total, 0.0)))
        rows += [{"figure": f"{name} step", "size": size, "stage": stage, "ours_s": round(seconds, 4),
                  "share": round(seconds / cli_s, 3)} for stage, seconds in parts]
    return rows


def explorer_figures(sizes: list[int], repeat: int) -> list[dict]:
    """X at each size, and X growth from the first size to the last."""
    import pipeline
    from pipeline.explorer import chain_graphs

    rows = []
    for size in sizes:
        text = synthetic_hlo(size)
        results = []

        def chain():
            result = pipeline.run(text, isolate=False)
            result.module()  # what the graphs show: built once, as the chain's proof built it
            results.append(result)

        anchor = median_time(chain, repeat)
        result = results[-1]

        def conversion():
            graphs, node_data = chain_graphs(result)
            json.dumps(graphs), json.dumps(node_data)

        ours = median_time(conversion, repeat)
        rows.append({"figure": "X", "size": size, "ours_s": round(ours, 4), "anchor_s": round(anchor, 4),
                     "ratio": round(ours / anchor, 3)})
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        growth, anchor_growth = b["ours_s"] / a["ours_s"], b["anchor_s"] / a["anchor_s"]
        rows.append({"figure": "X growth", "size": b["size"], "small": a["size"], "growth": round(growth, 2),
                     "anchor_growth": round(anchor_growth, 2), "ratio": round(growth / anchor_growth, 2)})
    return rows


def scaling(rows: list[dict], small: int, large: int) -> list[dict]:
    """P4: how each stage's time grows from the smallest size to the largest,
    over how P3's anchor (XLA's parse + import) grows in the same run."""
    def times(size):
        return {r["stage"]: r["ours_s"] for r in rows if r["size"] == size and r["figure"] == "stage"}

    def anchor(size):
        return next(r["anchor_s"] for r in rows if r["size"] == size and r["figure"] == "P3")

    a, b = times(small), times(large)
    anchor_growth = anchor(large) / anchor(small)
    return [{"figure": "P4", "size": large, "stage": k, "ratio": round(b[k] / a[k] / anchor_growth, 2),
             "growth": round(b[k] / a[k], 2), "anchor_growth": round(anchor_growth, 2),
             "anchor": f"XLA's parse + import, {small} → {large}"}
            for k in a if k in b and a[k] > 0]


TARGETS = {"P1": "<= 0.5", "P2": "<= 1.5", "P3": "<= 2.5", "P4": "<= 1.2", "M": "<= 1.3", "P5": "<= 3.0",
           "P5 small": "<= 1.5", "R1": "<= 10",
           "R2": "<= 1.5", "R2 again": "<= 1.3", "F": "<= 1.0 (linear <= 1.5)", "F module": "<= 3",
           "X": "<= 0.5", "X growth": "<= 1.2"}


def table(rows: list[dict]) -> str:
    lines = [f"{'figure':22} {'size':>8} {'ours':>10} {'anchor':>11} {'ratio':>8}  target"]
    for r in rows:
        kind = r["figure"].split()[0]
        if r["figure"] == "stage":
            lines.append(f"{'  ' + r['stage']:22} {r['size']:>8} {r['ours_s']:>9.3f}s")
            continue
        if r["figure"].endswith(" step"):  # one of P5's steps, with its share of P5's wall time
            lines.append(f"{'  ' + r['stage']:22} {r['size']:>8} {r['ours_s']:>9.3f}s {'':>11} {'':>8}  "
                         f"({r['share']:.0%} of {r['figure'][:-5]})")
            continue
        if kind == "P4":
            lines.append(f"{'P4 ' + r['stage']:22} {r['size']:>8} {r['growth']:>9.2f}x {r['anchor_growth']:>10.2f}x "
                         f"{r['ratio']:>8.2f}  {TARGETS['P4']}")
            continue
        if r["figure"] == "X growth":
            lines.append(f"{r['figure']:22} {r['size']:>8} {r['growth']:>9.2f}x {r['anchor_growth']:>10.2f}x "
                         f"{r['ratio']:>8.2f}  {TARGETS['X growth']}  ({r['small']} → {r['size']} instructions)")
            continue
        if r["figure"] in ("F check", "F verify"):  # growth from r["small"] edges, over the anchor's
            lines.append(f"{r['figure']:22} {r['size']:>8} {r['growth']:>9.2f}x {r['anchor_growth']:>10.2f}x "
                         f"{r['ratio']:>8.2f}  {TARGETS['F']}  (growth over linear {r['linear']:.2f}, "
                         f"{r['small']} → {r['size']} edges)")
            continue
        unit = "MiB" if kind == "M" else "s"
        ours, anchor = (r["ours_mib"], r["anchor_mib"]) if kind == "M" else (r["ours_s"], r["anchor_s"])
        target = "(a floor)" if r["figure"].endswith("floor") else TARGETS.get(r["figure"], TARGETS.get(kind, ""))
        line = (f"{r['figure']:22} {r['size']:>8} {ours:>9.3f}{unit[0]} {anchor:>10.3f}{unit[0]} {r['ratio']:>8.2f}  "
                f"{target}")
        if kind == "P5":
            line += (f"  (peak memory {r['ours_mib']:.0f} / {r['anchor_mib']:.0f} MiB = {r['memory_ratio']:.2f}, "
                     f"{TARGETS['M']})")
        lines.append(line)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="30000,300000", help="instruction counts, comma-separated")
    parser.add_argument("--predecessors", type=int, default=10_000,
                        help="control predecessors of the one successor in 'P2 predecessors'")
    parser.add_argument("--small", type=int, default=20, help="instructions of the module of 'P5 small' and 'R1'")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is kept")
    parser.add_argument("--small-repeat", type=int, default=15,
                        help="turns of the two processes of 'P5 small' (a third of a second each, so its ratio "
                             "moves with every noisy spell of the machine); the median is kept")
    parser.add_argument("--json", action="store_true", help="one JSON object per line per figure")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the figures measured as whole processes (M and P5)")
    parser.add_argument("--fan-in", action="store_true", help="only the fan-in figures (F check, F verify)")
    parser.add_argument("--round-trip", action="store_true", help="only the round-trip figures (R1, R2, R2 again)")
    parser.add_argument("--processes", action="store_true",
                        help="only the figures measured as whole processes (M, and P5 with its steps) at --sizes")
    parser.add_argument("--explorer", action="store_true",
                        help="only the Model Explorer figures (X, X growth) at --sizes")
    parser.add_argument("--fan-in-sizes", default="4000,16000",
                        help="control edges into the one successor of the F figures, comma-separated")
    parser.add_argument("--fan-in-module", type=int, default=0,
                        help="instructions of the module of 'F module' (the largest fan-in in it); 0: no such figure")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    fan_in_sizes = sorted(int(s) for s in args.fan_in_sizes.split(","))
    if args.fan_in:
        return _write(fan_in_figures(fan_in_sizes, args.repeat, args.fan_in_module), args.json)
    if args.processes:
        return _write([row for size in sizes for row in process_figures(size, args.repeat)], args.json)
    if args.explorer:
        return _write(explorer_figures(sizes, args.repeat), args.json)
    if args.round_trip:
        return _write([round_trip_figure(args.small, args.repeat)] + numbers_figures(args.small, args.repeat),
                      args.json)
    rows: list[dict] = []
    for size in sizes:
        rows += figures_for_size(size, args.repeat)
        if not args.no_memory:
            rows += process_figures(size, args.repeat)
    if len(sizes) > 1:
        rows += scaling(rows, sizes[0], sizes[-1])
    rows.append(many_predecessors_figure(args.predecessors, args.repeat))
    rows.append(round_trip_figure(args.small, args.repeat))
    rows += numbers_figures(args.small, args.repeat)
    if not args.no_memory:
        rows += process_figures(args.small, args.small_repeat, memory=False, name="P5 small")
    rows += fan_in_figures(fan_in_sizes, args.repeat, args.fan_in_module)
    rows += explorer_figures(sizes, args.repeat)
    return _write(rows, args.json)


def _write(rows: list[dict], as_json: bool) -> int:
    if as_json:
        sys.stdout.write("".join(json.dumps(r) + "\n" for r in rows))
    else:
        sys.stdout.write(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
