"""Bad binary input, one row per case, each made from a real XLA dump
(`proto_dumps`): a truncated and a corrupted `*.hlo.pb`, a message of
another type (the BufferAssignmentProto an HloProto holds, the
memory-usage report XLA writes beside it), an HloSnapshot without its
module, a module XLA's proto reader refuses. Each one: `hlo2penguin FILE`
and `hlo2penguin verify FILE PROGRAM.py` say one line (what, where: the byte
where decoding fails, the message type; what to do), exit 2, no traceback,
nothing written; `pipeline.run` raises the same line; `check FILE` makes it
an error row; in a dump folder a broken module is an error row and another
message type is skipped as not an HLO module.

The expected bytes and names come from protobuf and XLA, not from the
reader under test: lengths from protobuf's own parse of the dump, field
numbers from its unknown-field set, the corrupted byte where the test puts
it, XLA's words from jaxlib itself."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Callable

import pytest
from google.protobuf import empty_pb2, unknown_fields

import pipeline
import proto_dumps
from passes.errors import ChainError
from pipeline.reading.parsed import decode_proto
from pipeline.reading import binary
from pipeline.cli import hlo2penguin as cli
from pipeline.xla import native

GIVE = ("give HLO text, XLA's *.hlo.pb or snapshot, a serialized HloModuleProto, or a jax.export artifact")
BAD = "in.pb"


@pytest.fixture(scope="module")
def dumped(tmp_path_factory):
    return proto_dumps.dump(tmp_path_factory.mktemp("dumps") / "both", text=True, proto=True, snapshots=True)


def named(folder, *parts: str) -> str:
    (found,) = [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if all(p in n for p in parts)]
    return found


def read(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def stage_with_edges(folder) -> str:
    return named(folder, "while_swap", "after_adding_copies_to_resolve_interference.hlo.pb")


# --------------------------------------------------------------------------
# The rows: each makes its bytes from the dump, and the line the chain must say
# --------------------------------------------------------------------------


def truncated(folder) -> tuple[bytes, str]:
    """The HloProto cut in half: its field 1 (the module) runs past the end."""
    data = read(stage_with_edges(folder))
    module = binary.HloProto.FromString(data).hlo_module  # protobuf's parse: the module's length
    header = len(data) - len(module)
    cut = data[:len(data) // 2]
    return cut, (f"a truncated or corrupted proto (and no jax.export artifact): protobuf decoding fails at byte 0 "
                 f"of {len(cut)} bytes: field 1 needs {len(module)} bytes, {len(cut) - header} remain (truncated); "
                 f"dump it again, or {GIVE}")


def corrupted(folder) -> tuple[bytes, str]:
    """One byte changed: the tag of an instruction's name (field 1, 0x0a)
    becomes 0x07, a field numbered 0, which protobuf never writes."""
    path = stage_with_edges(folder)
    data = bytearray(read(path))
    text = read(path[:-len(".hlo.pb")] + ".txt").decode()
    name = native.read(text).proto.computations[0].instructions[0].name  # XLA's parse of the same stage
    at = bytes(data).index(b"\n" + bytes([len(name)]) + name.encode())
    data[at] = 0x07
    return bytes(data), (f"a truncated or corrupted HloProto: decoding its module fails at byte {at} of "
                         f"{len(data)} bytes: a field numbered 0; dump it again, or {GIVE}")


def buffer_assignment(folder) -> tuple[bytes, str]:
    """The BufferAssignmentProto the after_optimizations HloProto holds (its field 3)."""
    hlo = binary.HloProto.FromString(read(named(folder, "while_swap", "cpu_after_optimizations.hlo.pb")))
    assert hlo.buffer_assignment
    return hlo.buffer_assignment, f"a BufferAssignmentProto (XLA's buffer assignment), not an HLO module: {GIVE}"


def memory_usage_report(folder) -> tuple[bytes, str]:
    data = read(named(folder, "while_swap", "-memory-usage-report.pb"))
    numbers = sorted({f.field_number for f in unknown_fields.UnknownFieldSet(empty_pb2.Empty.FromString(data))})
    return data, (f"a protobuf message of another type (fields {', '.join(map(str, numbers))}), not an HLO module: "
                  f"XLA writes memory-usage reports and options beside its modules, as *.pb too; {GIVE}")


def snapshot_without_module(folder) -> tuple[bytes, str]:
    snapshot = binary.HloSnapshot.FromString(read(named(folder, "while_swap", ".snapshot.")))
    assert snapshot.arguments
    snapshot.ClearField("hlo")
    return snapshot.SerializeToString(), ("an HloSnapshot without a module (its hlo.hlo_module is empty): give a "
                                          "snapshot that holds its module, or the module's *.hlo.pb dump")


def refused_by_xla(folder) -> tuple[bytes, str]:
    """An operand id no instruction has: protobuf reads it, XLA's proto reader refuses it, in its words."""
    hlo = binary.HloProto.FromString(read(stage_with_edges(folder)))
    module = decode_proto(hlo.hlo_module)
    module.computations[-1].instructions[-1].operand_ids.append(99999)
    hlo.hlo_module = module.SerializeToString()
    try:
        native.read_proto(hlo.hlo_module)
    except Exception as err:  # jaxlib's own error type
        said = str(err).strip().splitlines()[0]
    else:
        pytest.fail("XLA reads a module with an operand id no instruction has")
    return hlo.SerializeToString(), f"XLA refuses the module: {said}"


@dataclass(frozen=True)
class Row:
    id: str
    make: Callable
    broken: bool  # a module's proto, broken: an error row in a folder (else: skipped, not an HLO module)


ROWS = [Row("truncated-hlo-proto", truncated, True), Row("corrupted-hlo-proto", corrupted, True),
        Row("buffer-assignment-proto", buffer_assignment, False),
        Row("memory-usage-report", memory_usage_report, False),
        Row("snapshot-without-module", snapshot_without_module, True),
        Row("refused-by-xla", refused_by_xla, True)]


def one_line(prog: str, message: str, status: int, out: str, err: str) -> None:
    assert "Traceback" not in err, err
    assert err.splitlines() == [f"{prog}: error: {BAD}: {message}"], err
    assert (status, out) == (2, "")


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_a_bad_binary_is_one_line_and_exit_2(row, dumped, tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data, message = row.make(dumped)
    (tmp_path / BAD).write_bytes(data)
    (tmp_path / "prog.py").write_text(pipeline.run(read(stage_with_edges(dumped))).penguin_source)
    before = sorted(os.listdir(tmp_path))
    capfd.readouterr()
    one_line("hlo2penguin", message, cli.main([BAD, "-o", "out.py"]), *capfd.readouterr())
    one_line("hlo2penguin verify", message, cli.main(["verify", BAD, "prog.py"]), *capfd.readouterr())
    assert sorted(os.listdir(tmp_path)) == before  # nothing written
    for isolate in (True, False) if row.id != "refused-by-xla" else (True,):
        with pytest.raises(ChainError) as info:
            pipeline.run(BAD, isolate=isolate)
        assert str(info.value) == f"{BAD}: {message}"
    # check: a broken module is an error row, named or in a folder; another message named is bad input, and skipped
    # in a folder
    if row.broken:
        assert cli.main(["check", BAD, "--json", "--jobs", "1"]) == 1
        (got,) = json.loads(capfd.readouterr().out)["modules"]
        assert got["error"] == f"{BAD}: {message}"
    else:
        one_line("hlo2penguin check", message, cli.main(["check", BAD, "--json", "--jobs", "1"]), *capfd.readouterr())
    folder = tmp_path / "dump"
    folder.mkdir()
    (folder / "module_0001.jit_f.cpu_after_optimizations.hlo.pb").write_bytes(data)
    status = cli.main(["check", str(folder), "--json", "--jobs", "1"])
    found = json.loads(capfd.readouterr().out)
    if row.broken:
        assert status == 1 and len(found["modules"]) == 1 and found["modules"][0]["error"].endswith(message)
    else:
        assert status == 0 and found["modules"] == [] and found["skipped"]["not_hlo"] == 1


def test_the_rows_are_made_from_modules_the_chain_reads(dumped):
    """Unbroken, the dumps the rows break go through the chain: each row's failure is its own change."""
    for path in (stage_with_edges(dumped), named(dumped, "while_swap", "cpu_after_optimizations.hlo.pb"),
                 named(dumped, "while_swap", ".snapshot.")):
        assert pipeline.run(path).report.ok


def test_a_proto_xla_reads_but_its_importer_aborts_on_is_one_line(dumped, tmp_path, capfd, monkeypatch):
    """A get-tuple-element index past its tuple: XLA's proto reader does not
    check it, its importer aborts on it, in the chain's child: one line that
    names link #2 and XLA's reason (the index planted), exit 2, nothing written."""
    monkeypatch.chdir(tmp_path)
    hlo = binary.HloProto.FromString(read(named(dumped, "while_swap", "cpu_after_optimizations.hlo.pb")))
    module = decode_proto(hlo.hlo_module)
    gte = next(i for c in module.computations for i in c.instructions if i.opcode == "get-tuple-element")
    gte.tuple_index = 77
    hlo.hlo_module = module.SerializeToString()
    (tmp_path / BAD).write_bytes(hlo.SerializeToString())
    native.read_proto(hlo.hlo_module)  # XLA reads it
    capfd.readouterr()
    status = cli.main([BAD, "-o", "out.py"])
    out, err = capfd.readouterr()
    assert (status, out) == (2, "") and "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith(f"hlo2penguin: error: {BAD}: link #2 (XLA's importer) aborted (signal ") and " 77 " in line
    assert not (tmp_path / "out.py").exists()
