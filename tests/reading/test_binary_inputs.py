"""Binary modules, told apart by content: XLA's `*.hlo.pb` dumps (HloProto),
its HloSnapshots, a serialized HloModuleProto and a jax.export artifact go
through `pipeline.run`, `pipeline.verify` and `assert_round_trip` as text
does. The oracle is the text: for every stage XLA dumped both ways, the
chain's report and program from the proto equal those from the text (read
by XLA's parser), in both dialects; for the numbers, JAX's."""

from __future__ import annotations

import os

import jax
import numpy as np
import pytest

import pipeline
import proto_dumps
from pipeline.reading.parsed import decode_proto
from pipeline.reading import binary
from pipeline.reading.source import kind_of
from pipeline.reading.capture import from_export
from pipeline.testing import assert_round_trip
from pipeline.xla import native

DIALECTS = ("stablehlo", "mhlo")


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    return proto_dumps.dump(tmp_path_factory.mktemp("dumps") / "both", text=True, proto=True, snapshots=True)


def read(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def edges_in_text(path) -> int:
    return len(native.read(read(path).decode(), str(path)).control_edges())


def test_every_stage_reads_the_same_from_its_proto_as_from_its_text(both):
    """Each stage: the report and the program made from the .hlo.pb equal
    those made from the .txt (same name given: the program names its input),
    in both dialects where the stage has control edges."""
    stages = proto_dumps.stages(both)
    with_edges = [(t, p) for t, p in stages if edges_in_text(t)]
    assert len(stages) > 100 and len(with_edges) >= len(proto_dumps.NAMES)  # every pass, each program's copies
    for text, proto in stages:
        for dialect in DIALECTS if (text, proto) in with_edges else DIALECTS[:1]:
            want = pipeline.run(read(text), source_name="stage", dialect=dialect)
            got = pipeline.run(read(proto), source_name="stage", dialect=dialect)
            assert got.report.as_dict() == want.report.as_dict(), (proto, dialect)
            assert got.penguin_source == want.penguin_source, (proto, dialect)


def module_proto_of(text_path) -> bytes:
    """XLA's own serialized HloModuleProto of a stage (its parser's, of the text)."""
    return native.parse_to_proto(read(text_path).decode())


def test_each_kind_is_read_by_its_content_whatever_its_name(both, tmp_path):
    """The same stage as an HloModuleProto, an HloProto and (the module XLA
    ran) an HloSnapshot, under names that say nothing or mislead: each one's
    edges are the text's, the names the proto's."""
    text = next(t for t, _ in proto_dumps.stages(both)
                if "while_swap" in t and t.endswith("cpu_after_optimizations.txt"))
    want = pipeline.run(read(text), source_name="m").report.as_dict()
    snapshot = next(os.path.join(both, n) for n in os.listdir(both) if "while_swap" in n and ".snapshot." in n)
    forms = {"HloModuleProto": module_proto_of(text), "HloProto": read(text[:-len(".txt")] + ".hlo.pb"),
             "HloSnapshot": read(snapshot)}
    for kind, data in forms.items():
        assert kind_of(data) == "proto" and binary.read_binary(data, kind).kind == kind
        for name in ("module.txt", "module", "x.hlo"):
            (tmp_path / name).write_bytes(data)
            got = pipeline.run(str(tmp_path / name), source_name="m")
            assert got.report.as_dict() == want, (kind, name)
            assert got.report.edges and got.source == str(tmp_path / name)
        names = {i.name for c in decode_proto(binary.read_binary(data, kind).module).computations
                 for i in c.instructions}
        assert {n for e in want["edges"] for n in (e["predecessor"], e["successor"])} <= names


def test_a_snapshot_gives_its_arguments_as_the_inputs(both):
    """The snapshot of a run holds the arguments it ran with (those
    `proto_dumps` passed): `assert_round_trip` takes them, and XLA:CPU's
    numbers on them agree with the program's and with JAX's."""
    (_, fn, examples), = [p for p in proto_dumps.programs() if p[0] == "while_swap_buffers"]
    args = proto_dumps.run_arguments(examples)
    snapshot = next(os.path.join(both, n) for n in os.listdir(both) if "while_swap" in n and ".snapshot." in n)
    found = binary.read_binary(read(snapshot), snapshot)
    got = found.arguments()
    assert len(got) == len(args)
    for a, b in zip(got, args):
        np.testing.assert_array_equal(a, np.asarray(b))
        assert a.dtype == np.asarray(b).dtype
    result = assert_round_trip(snapshot)  # the inputs: the snapshot's
    jax_says = [np.asarray(x) for x in jax.tree_util.tree_leaves(fn(*args))]
    for a, b in zip(result.module().execute(*got), jax_says):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-5)


def test_a_literal_in_another_layout_is_read_in_logical_order():
    """A LiteralProto holds its values in its layout's order: a 2x3 array
    in the column-major layout {0,1} comes back as numpy's row-major 2x3."""
    want = np.arange(6, dtype=np.int32).reshape(2, 3)
    literal = binary.LiteralProto()
    literal.shape.element_type = 4  # S32
    literal.shape.dimensions.extend([2, 3])
    literal.shape.layout.minor_to_major.extend([0, 1])
    literal.s32s.extend(int(x) for x in want.T.reshape(-1))  # column-major: dimension 0 varies fastest
    snapshot = binary.HloSnapshot()
    snapshot.arguments.append(literal)
    found = binary.BinaryModule("HloSnapshot", b"", None, list(snapshot.arguments))
    np.testing.assert_array_equal(found.arguments()[0], want)


def test_a_jax_export_artifact_is_the_module_from_export_captures():
    """Bytes of `exported.serialize()`: `pipeline.run` takes the last module
    with control edges that `from_export` captures; assert_round_trip's
    numbers are JAX's."""
    (_, fn, args), = [p for p in proto_dumps.programs() if p[0] == "while_swap_buffers"]
    data = jax.export.export(jax.jit(fn), platforms=("cpu",))(*args).serialize()
    assert kind_of(data) == "jax.export"
    captured = from_export(data).modules
    assert captured
    got = pipeline.run(data, source_name="prog.jaxexport")
    want = pipeline.run(captured[-1], source_name="prog.jaxexport")
    assert got.source == captured[-1].name and got.report.as_dict() == want.report.as_dict()
    assert got.penguin_source == want.penguin_source
    expected = [np.asarray(x) for x in jax.tree_util.tree_leaves(fn(*args))]
    assert_round_trip(data, inputs=[np.asarray(a) for a in args], expected=expected)


def test_verify_reads_a_proto_as_its_text(both, tmp_path):
    """`pipeline.verify` of a .hlo.pb against the program made from its .txt:
    the report the text gives."""
    text, proto = next((t, p) for t, p in proto_dumps.stages(both) if edges_in_text(t))
    program = pipeline.run(read(text)).penguin_source
    want = pipeline.verify(text, program)
    got = pipeline.verify(proto, program)
    assert got.ok and got.as_dict() == want.as_dict()
