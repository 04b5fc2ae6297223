"""`hlo2penguin check` and `hlo2penguin FILE` on XLA's binary dumps: a
folder dumped as protos alone gives every module with control edges and
every edge as the same programs dumped as text; a folder dumped both ways
checks each stage once and says so; XLA's other *.pb files are skipped; a
jax.export artifact goes through both commands; `--emit hlo-proto` writes
link #1's output as XLA reads it."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys

import jax
import pytest

import pipeline
import proto_dumps
from pipeline.reading.capture import from_export
from pipeline.cli import hlo2penguin as cli
from pipeline.reading.parsed import decode_proto
from pipeline.xla import native

COUNTS = ("edges", "preserved", "rerouted", "dropped", "lost", "spurious")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("dumps")
    return {"text": proto_dumps.dump(root / "text", text=True, proto=False),
            "proto": proto_dumps.dump(root / "proto", text=False, proto=True),
            "both": proto_dumps.dump(root / "both", text=True, proto=True, snapshots=True)}


def check_json(capfd, *paths) -> tuple[int, dict]:
    capfd.readouterr()
    status = cli.main(["check", *map(str, paths), "--json", "--jobs", "1"])
    out, err = capfd.readouterr()
    assert err == "", err
    return status, json.loads(out)


def rows(summary: dict) -> list[tuple]:
    # A stage without the count newer XLA appends to a pass run once per compilation
    # (`before_apply-xla-transforms-12`): it goes on across a process's compilations.
    return [(r["module"], r["stage"] and re.sub(r"-\d+$", "", r["stage"]), *(r[k] for k in COUNTS), r["error"])
            for r in summary["modules"]]


def test_check_over_protos_alone_reports_what_it_reports_over_text(folders, capfd):
    """The Done-when: the same modules, stages, edges and fates, row by row."""
    status, text = check_json(capfd, folders["text"])
    assert status == 0 and len(text["modules"]) >= len(proto_dumps.NAMES) and text["totals"]["edges"]
    status, proto = check_json(capfd, folders["proto"])
    assert status == 0
    assert rows(proto) == rows(text)
    assert all(r["path"].endswith(".hlo.pb") for r in proto["modules"])
    assert proto["totals"] == text["totals"]
    # What XLA writes beside the modules as *.pb (memory-usage reports) is no module, and no error.
    reports = [n for n in os.listdir(folders["proto"]) if n.endswith("-memory-usage-report.pb")]
    assert reports and proto["skipped"]["not_hlo"] >= len(reports)


def test_a_stage_dumped_both_ways_is_checked_once_and_the_table_says_so(folders, capfd):
    status, text = check_json(capfd, folders["text"])
    status, both = check_json(capfd, folders["both"])
    assert status == 0 and rows(both) == rows(text)  # the .txt of each stage, and nothing twice
    twins = {t["path"]: t["checked_as"] for t in both["twins"]}
    stages = proto_dumps.stages(folders["both"])
    for text_path, proto_path in stages:
        assert twins[str(proto_path)] == str(text_path)
    snapshots = [n for n in os.listdir(folders["both"]) if ".snapshot." in n]
    assert len(snapshots) == len(proto_dumps.NAMES)  # one run each
    for name in snapshots:
        assert twins[os.path.join(str(folders["both"]), name)].endswith("cpu_after_optimizations.txt")
    assert len(twins) == len(stages) + len(snapshots)
    capfd.readouterr()
    assert cli.main(["check", str(folders["both"]), "--jobs", "1"]) == 0
    out = capfd.readouterr().out
    assert f"{len(stages)} stages dumped both as text and as proto: checked once, as the .txt" in out
    assert f"{len(snapshots)} snapshots (the module XLA ran): checked once" in out


def test_a_snapshot_alone_is_a_row_with_its_modules_edges(folders, capfd, tmp_path):
    """Without its compilation's other dumps a snapshot is checked, as the
    module XLA compiled (its after_optimizations stage): the same counts."""
    snapshot = next(n for n in os.listdir(folders["both"]) if "while_swap" in n and ".snapshot." in n)
    final = snapshot.split(".snapshot.")[0] + ".cpu_after_optimizations.txt"
    (tmp_path / snapshot).write_bytes((folders["both"] / snapshot).read_bytes())
    status, alone = check_json(capfd, tmp_path)
    status, text = check_json(capfd, folders["both"] / final)
    (row,), (want,) = alone["modules"], text["modules"]
    assert row["stage"] == "snapshot" and row["module"] == want["module"]
    assert [row[k] for k in COUNTS] == [want[k] for k in COUNTS] and row["edges"]


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    (_, fn, args), = [p for p in proto_dumps.programs() if p[0] == "while_swap_buffers"]
    path = tmp_path_factory.mktemp("export") / "prog.jaxexport"
    path.write_bytes(jax.export.export(jax.jit(fn), platforms=("cpu",))(*args).serialize())
    return path


def test_a_jax_export_artifact_goes_through_hlo2penguin_and_check(artifact, capfd, tmp_path):
    captured = from_export(artifact.read_bytes())
    assert captured.modules
    status, summary = check_json(capfd, artifact)
    assert status == 0
    assert [(r["module"], r["stage"]) for r in summary["modules"]] == \
        [(m.name.split(":")[0], m.stage) for m in captured.modules]
    for r, m in zip(summary["modules"], captured.modules):
        assert r["edges"] == len(native.read(m.hlo_text).control_edges()) and r["preserved"] == r["edges"]
    capfd.readouterr()
    out = tmp_path / "prog.py"
    assert cli.main([str(artifact), "-o", str(out)]) == 0
    err = capfd.readouterr().err
    assert f"the program is of {captured.modules[-1].name}," in err
    assert out.read_text() == pipeline.run(captured.modules[-1], source_name=str(artifact)).penguin_source


def shape_of(serialized: bytes) -> list:
    """A module as XLA holds it, names and metadata aside (newer XLA names a proto's
    get-tuple-elements after their tuple when it reads one back): per computation, each
    instruction's opcode, shape, custom-call target and how many operands and control
    predecessors it has, in order."""
    module = decode_proto(serialized)
    return [[(i.opcode, str(i.shape), i.custom_call_target, len(i.operand_ids), len(i.control_predecessor_ids))
             for i in c.instructions] for c in module.computations]


def test_emit_hlo_proto_is_link1s_output_as_xla_reads_it(folders, tmp_path, capfd):
    """`--emit hlo-proto`: XLA prints the proto written as `--emit hlo`
    prints link #1's output; the proto goes through the chain again. From
    standard input, as a pipe gives it."""
    text, proto = next((t, p) for t, p in proto_dumps.stages(folders["both"]) if "while_swap" in t
                       and t.endswith("cpu_after_optimizations.txt"))
    out = tmp_path / "after_link1.pb"
    assert cli.main([proto, "--emit", "hlo-proto", "-o", str(out), "-q"]) == 0
    assert cli.main([text, "--emit", "hlo", "-o", str(tmp_path / "after_link1.txt"), "-q"]) == 0
    # The module's config (the text's header attributes) is not in a proto: the header aside, the same module.
    from_text = native.canonical_text((tmp_path / "after_link1.txt").read_text())
    read_back = native.parse_to_proto(native.print_proto(out.read_bytes()))  # XLA reads the proto and prints it
    assert shape_of(native.parse_to_proto(from_text)) == shape_of(read_back)
    assert "custom-call" in from_text and "control-predecessors" not in from_text  # link #1's output
    script = os.path.join(os.path.dirname(sys.executable), "hlo2penguin")
    done = subprocess.run([script, "-", "--emit", "hlo-proto", "-q"], input=open(proto, "rb").read(),
                          capture_output=True, timeout=300)
    assert done.returncode == 0 and done.stdout == out.read_bytes(), done.stderr


def test_emit_hlo_proto_to_a_terminal_is_refused(folders, tmp_path):
    proto = proto_dumps.stages(folders["both"])[0][1]
    script = os.path.join(os.path.dirname(sys.executable), "hlo2penguin")
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([script, proto, "--emit", "hlo-proto"], stdout=follower, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, timeout=300)
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "hlo2penguin: error: --emit hlo-proto writes a binary proto, not for a terminal: give -o FILE, "
        "or redirect standard output"]
