"""A tiny run of the benchmarks, so they cannot rot. No timing is asserted:
speed is judged by `python -m bench` at real sizes, as a ratio to its anchors."""

from __future__ import annotations

import json

from bench.__main__ import main
from bench.synthetic import fan_in, synthetic_hlo
from pipeline.reading.parsed import Parsed
from pipeline.xla import native


def test_synthetic_modules_are_real_hlo_with_control_edges():
    text = synthetic_hlo(1000)
    parsed = native.read(text)  # XLA's parser
    edges = parsed.control_edges()
    [entry] = [c for c in parsed.proto.computations if c.id == parsed.proto.entry_computation_id]
    assert 900 <= len(entry.instructions) <= 1100
    assert len({s for _, _, s in edges}) >= 60  # about 10% of instructions are successors
    assert any(p.startswith(("w", "init")) for _, p, _ in edges)  # tuple-shaped predecessors


def test_the_fan_in_module_is_real_hlo_with_its_edges_into_one_successor():
    edges = native.read(fan_in(300, 1000)).control_edges()  # XLA's parser
    assert len(edges) == 300 and {s for _, _, s in edges} == {"succ"}
    parsed = native.read(fan_in(300, 1000, control=False))
    assert not parsed.control_edges() and 990 <= sum(len(c.instructions) for c in parsed.proto.computations) <= 1010


def test_every_figure_is_reported_as_json(capsys):
    assert main(["--sizes", "200,400", "--fan-in-sizes", "50,200", "--repeat", "1", "--small-repeat", "1", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    figures = {r["figure"] for r in rows}
    # The figures of issue 16, each a ratio against an anchor measured in the same run.
    assert {"P1 mhlo", "P1 stablehlo", "P2", "P2 floor", "P3", "P3 floor", "P4", "M", "P5", "P2 predecessors", "P5 small", "R1", "stage",
            "F check", "F verify", "R2", "R2 again"} <= figures
    for r in rows:
        if r["figure"] in ("P1 mhlo", "P1 stablehlo", "P2", "P2 floor", "P3", "P3 floor", "P5", "P2 predecessors", "P5 small",
                           "R1", "R2", "R2 again"):
            assert r["ours_s"] > 0 and r["anchor_s"] > 0 and r["ratio"] > 0
        if r["figure"] in ("M", "P5", "P5 small"):
            assert r["ours_mib"] > 0 and r["anchor_mib"] > 0
    p3 = {r["size"]: r["anchor_s"] for r in rows if r["figure"] == "P3"}
    stage = {(r["size"], r["stage"]): r["ours_s"] for r in rows if r["figure"] == "stage"}
    for r in rows:
        if r["figure"] == "P4":  # growth of the stage over growth of XLA's parse + import
            want = stage[(400, r["stage"])] / stage[(200, r["stage"])] / (p3[400] / p3[200])
            assert abs(r["ratio"] - want) <= 0.01 + 0.01 * want
    assert {r["stage"] for r in rows if r["figure"] == "stage"} >= {"link #1", "link #2", "link #3", "link #4"}


def test_the_fan_in_figures_alone(capsys):
    """`--fan-in`: the check's and the verifier's growth from the smaller fan-in
    to the larger, over the growth of XLA's parse of the same two modules;
    with --fan-in-module, the check with the fan-in against the same module without it."""
    assert main(["--fan-in", "--fan-in-sizes", "50,200", "--fan-in-module", "300", "--repeat", "1", "--small-repeat", "1", "--json"]) == 0
    rows = {r["figure"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(rows) == {"F check", "F verify", "F module"}
    for name in ("F check", "F verify"):
        r = rows[name]
        assert (r["small"], r["size"]) == (50, 200) and r["growth"] > 0 and r["anchor_growth"] > 0
        assert abs(r["ratio"] - r["growth"] / r["anchor_growth"]) <= 0.01 + 0.01 * r["ratio"]
        assert abs(r["linear"] - r["growth"] / 4) <= 0.01 + 0.01 * r["linear"]
    module = rows["F module"]
    assert module["size"] == 300 and module["edges"] == 200 and module["ours_s"] > 0 and module["anchor_s"] > 0
    assert main(["--fan-in", "--fan-in-sizes", "50,200", "--repeat", "1"]) == 0  # the table prints them
    table = capsys.readouterr().out
    assert "F check" in table and "F verify" in table and "50 → 200 edges" in table


def test_the_round_trip_figures_alone(capsys):
    """`--round-trip`: R1, R2 (a module not compiled before, against XLA's own
    compile + run) and "R2 again" (new inputs, against R1's call plus XLA's run)."""
    assert main(["--round-trip", "--repeat", "1", "--json"]) == 0
    rows = {r["figure"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(rows) == {"R1", "R2", "R2 again"}
    for r in rows.values():
        assert r["size"] == 20 and r["ours_s"] > 0 and r["anchor_s"] > 0
        assert abs(r["ratio"] - r["ours_s"] / r["anchor_s"]) <= 0.01 + 0.01 * r["ratio"] + 1e-5 / r["anchor_s"]


def test_the_explorer_figures_alone(capsys):
    """`--explorer`: X at each size (the conversion against the chain run it shows) and X growth."""
    assert main(["--explorer", "--sizes", "300,1200", "--repeat", "1", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["figure"], r["size"]) for r in rows] == [("X", 300), ("X", 1200), ("X growth", 1200)]
    x_small, x_large, growth = rows
    for r in (x_small, x_large):
        assert r["ours_s"] > 0 and r["anchor_s"] > 0
    assert abs(growth["growth"] - x_large["ours_s"] / x_small["ours_s"]) <= 0.01 * growth["growth"] + 0.01


def test_the_process_figures_alone_with_p5_step_by_step(capsys):
    """`--processes`: M and P5 at each size, and P5's steps as the command
    reports them (`--timings`), which with the process's start and end make
    up its wall time."""
    assert main(["--processes", "--sizes", "300", "--repeat", "1", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    [p5] = [r for r in rows if r["figure"] == "P5"]
    assert {r["figure"] for r in rows} == {"M", "P5", "P5 step"}
    assert p5["ours_mib"] > 0 and p5["anchor_mib"] > 0
    steps = {r["stage"]: r["ours_s"] for r in rows if r["figure"] == "P5 step"}
    assert list(steps)[:2] == ["chain", "  read"] and {"proof", "output", "start and end"} <= set(steps)
    links = sum(v for k, v in steps.items() if k.startswith("  "))
    assert abs(steps["chain"] - links) <= 0.001 * len(steps)
    whole = steps["chain"] + steps["proof"] + steps["output"] + steps["start and end"]
    assert abs(whole - p5["ours_s"]) <= 0.01 + 0.01 * p5["ours_s"]
