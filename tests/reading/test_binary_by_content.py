"""Binary or text is decided by what the bytes are, never by a word in them.
The modules are XLA's: its parser's own serialized HloModuleProto
(`jaxlib._hlo`), wrapped here by hand in an HloProto and an HloSnapshot
(XLA's field numbers, written out in this file, not taken from the reader),
with names and metadata that hold `HloModule`, `ENTRY` and bytes that are
not UTF-8. The oracle for what the chain reads from a proto is what it
reads from the text XLA's parser was given; for a snapshot's arguments, the
numpy arrays written into it here."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from jaxlib import _hlo as xla_hlo

import pipeline
from passes.errors import ChainError
from pipeline.reading import binary
from pipeline.reading.source import kind_of
from pipeline.reading.literals import BadArgument
from pipeline.cli import hlo2penguin as cli
from pipeline.testing import assert_round_trip

GIVE = "give HLO text, XLA's *.hlo.pb or snapshot, a serialized HloModuleProto, or a jax.export artifact"

MODULE = """\
HloModule {name}

ENTRY main {{
  p = {shape} parameter(0)
  a = {shape} negate(p), metadata={{op_name="{op}"}}
  ROOT b = {shape} not(p), control-predecessors={{a}}
}}
"""
# Names and metadata as a proto holds them: words of HLO text, bytes that are not UTF-8, or neither.
NAMED = [("HloModule_x", "HloModule ENTRY"), ("ENTRY_x", "jit(f)/ENTRY main {"), ("m", "jit(f)/\u00e9\u00a9"),
         ("HloModule_ENTRY", "\u4e2d HloModule m"), ("m", "x")]


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int64 is ten bytes, as protobuf writes it
    out = bytearray()
    while True:
        out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def text_of(name: str, op: str, shape: str = "s32[4]") -> str:
    return MODULE.format(name=name, op=op, shape=shape)


def module_proto(text: str) -> bytes:
    return xla_hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto()


def hlo_proto(module: bytes) -> bytes:
    return field(1, module)  # HloProto.hlo_module


def snapshot(module: bytes, *arguments: bytes) -> bytes:
    return field(1, hlo_proto(module)) + b"".join(field(2, a) for a in arguments)  # HloSnapshot.hlo, .arguments


def literal(element_type: int, dims, values: bytes = b"", values_field: int = 16, minor_to_major=None) -> bytes:
    """A LiteralProto: shape (element_type 2, dimensions 3 packed, layout 5: minor_to_major 1), then values."""
    layout = list(range(len(dims)))[::-1] if minor_to_major is None else minor_to_major
    shape = (varint(2 << 3) + varint(element_type) + field(3, b"".join(map(varint, dims)))
             + field(5, field(1, b"".join(map(varint, layout)))))
    return field(1, shape) + (field(values_field, values) if values else b"")


def forms(text: str) -> dict[str, bytes]:
    module = module_proto(text)
    return {"HloModuleProto": module, "HloProto": hlo_proto(module), "HloSnapshot": snapshot(module)}


def edges(result) -> list[str]:
    return [str(e) for e in result.report.edges]


@pytest.mark.parametrize("name,op", NAMED, ids=[f"{n}-{o.encode('unicode_escape').decode()}" for n, o in NAMED])
def test_every_proto_is_read_whatever_its_names_hold(name, op, tmp_path, capfd):
    """Each kind, whatever its names: read as a proto, its edges those XLA's parser gives the text, its names
    the proto's; `hlo2penguin FILE` converts it; `check DIR` counts it as a module with an edge."""
    text = text_of(name, op)
    want = edges(pipeline.run(text))
    assert want == ["func @main: %a -> %b: preserved"]  # the entry, as the report names a function
    for kind, data in forms(text).items():
        assert kind_of(data) == "proto", kind
        assert binary.read_binary(data, kind).kind == kind
        result = pipeline.run(data)
        assert edges(result) == want and result.report.ok, kind
        path = tmp_path / kind / "in.pb"
        path.parent.mkdir()
        path.write_bytes(data)
        assert cli.main([str(path), "-o", str(tmp_path / f"{kind}.py"), "-q"]) == 0, capfd.readouterr().err
        assert cli.main(["check", str(path.parent), "--json", "--jobs", "1"]) == 0
        (row,) = json.loads(capfd.readouterr().out)["modules"]
        assert row["module"] == name and not row.get("error"), row


def test_a_jax_export_artifact_is_read_whatever_its_names_hold():
    def HloModule_ENTRY(x):  # noqa: N802 - the artifact holds this name
        return x * 2

    data = jax.export.export(jax.jit(HloModule_ENTRY), platforms=("cpu",))(
        jax.ShapeDtypeStruct((4,), np.float32)).serialize()
    assert b"HloModule" in data[:4096]
    assert kind_of(data) == "jax.export"


def test_text_is_text_whatever_comments_come_first(tmp_path, capfd):
    """A 1 MB comment line, and a block comment, before `HloModule`: text, as XLA's parser reads it; `check DIR`
    finds the module."""
    module = text_of("m", "x")
    want = edges(pipeline.run(module))
    for comment in ("// " + "x" * (1 << 20) + "\n", "/* " + "*x" * (1 << 19) + " */\n"):
        data = (comment + module).encode()
        assert kind_of(data) == "text"
        assert edges(pipeline.run(data)) == want
        folder = tmp_path / str(len(comment))
        folder.mkdir()
        (folder / "module_0001.m.after_optimizations.txt").write_bytes(data)
        assert cli.main(["check", str(folder), "--json", "--jobs", "1"]) == 0
        found = json.loads(capfd.readouterr().out)
        assert len(found["modules"]) == 1 and not found["modules"][0].get("error"), found


def test_text_with_no_control_character_is_text_even_if_it_is_not_utf8():
    """Latin-1 text: the text's own error says where it is not UTF-8, not a proto's."""
    data = text_of("m", "jit(f)/\u00e9").encode("latin-1")
    assert kind_of(data) == "text"
    with pytest.raises(ChainError, match=r"^<hlo text>:5:\d+: input is not UTF-8 text \(byte 0xe9\)"):
        pipeline.run(data)


CORRUPTIONS = {"cut in half": lambda d: d[:len(d) // 2], "cut by one byte": lambda d: d[:-1],
               "cut in its first computation": lambda d: d[:d.index(b"\x1a") + 3], "words after it": lambda d: d + b"garbage",
               "zeros after it": lambda d: d + b"\x00" * 4, "bytes after it": lambda d: d + b"\xff\xfe\x00\x01"}


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_a_module_cut_short_or_followed_by_garbage_is_corrupted(how, tmp_path, capfd):
    """Every kind, names that are text's words or not: one line that calls it truncated or corrupted and says
    what to do, from the API and the CLI (exit 2)."""
    for name, op in NAMED[:3]:
        for kind, data in forms(text_of(name, op)).items():
            bad = CORRUPTIONS[how](data)
            assert kind_of(bad) == "proto", (kind, name)
            with pytest.raises(binary.BadBinary) as info:
                pipeline.run(bad, source_name="in.pb")
            said = str(info.value)
            assert said.startswith("in.pb: a truncated or corrupted ") and "\n" not in said, said
            assert said.endswith(f"dump it again, or {GIVE}") and info.value.broken, said
            (tmp_path / "in.pb").write_bytes(bad)
            assert cli.main([str(tmp_path / "in.pb"), "-q"]) == 2
            out, err = capfd.readouterr()
            assert err.splitlines() == [f"hlo2penguin: error: {tmp_path / 'in.pb'}: {said[len('in.pb: '):]}"]


def test_garbage_after_a_module_says_where_the_module_ends():
    data = module_proto(text_of("m", "x"))
    with pytest.raises(binary.BadBinary, match=f"corrupted HloModuleProto: a whole module ends at byte {len(data)} "
                                               f"of {len(data) + 7} bytes, and the 7 bytes after it"):
        binary.read_binary(data + b"garbage", "in.pb")


def test_text_with_a_stray_control_character_is_for_xla_to_judge():
    """UTF-8 that does not start as a module's message does: XLA's parser says where it fails."""
    for data in (b"\x00\x01\x02PK\x03\x04 garbage", ("HloModule m\x1b[0m\n" + text_of("m", "x")).encode()):
        assert kind_of(data) == "text"
        with pytest.raises(ChainError, match=r"^<hlo text>:\d+:\d+: XLA's parser"):
            pipeline.run(data)


# --------------------------------------------------------------------------
# A snapshot's arguments
# --------------------------------------------------------------------------

U16 = 7  # xla.PrimitiveType U16


def test_a_u16_argument_is_read_unsigned(tmp_path):
    """Values above 32767, in XLA's default layout and the other one: the arrays written into the snapshot;
    the round trip runs on them."""
    want = np.array([[0, 1, 32767], [32768, 40000, 65535]], dtype=np.uint16)
    module = module_proto(text_of("u", "x", "u16[2,3]"))
    for layout, order in (([1, 0], want), ([0, 1], want.T)):
        data = snapshot(module, literal(U16, [2, 3], order.astype("<u2").tobytes(), minor_to_major=layout))
        (got,) = binary.read_binary(data, "s.pb").arguments("s.pb")
        assert got.dtype == np.uint16
        np.testing.assert_array_equal(got, want)
    result = assert_round_trip(data)
    np.testing.assert_array_equal(np.asarray(result.module().execute(want)[0]), ~want)


BAD_SHAPES = [([2 ** 40, 2 ** 40], b"", "holds 0 values for shape [1099511627776, 1099511627776] "
                                        "(1208925819614629174706176 elements)"),
              ([100000, 100000], b"", "holds 0 values for shape [100000, 100000] (10000000000 elements)"),
              ([-1, -3], b"", "has shape [-1, -3], with a negative dimension"),
              ([2 ** 63 - 1, 2], b"\x01\x00" * 2, "holds 2 values for shape [9223372036854775807, 2]"),
              ([4], b"\x01\x00" * 3, "holds 3 values for shape [4] (4 elements)"),
              ([2], b"\x01\x00\x02", "holds 3 bytes, not a whole number of its 2-byte values")]


@pytest.mark.parametrize("dims,values,said", BAD_SHAPES, ids=[str(d) + str(len(v)) for d, v, _ in BAD_SHAPES])
def test_an_argument_whose_shape_its_values_do_not_fill_is_one_line(dims, values, said, tmp_path):
    """Checked before anything is allocated: one line naming the input and the argument, and what to do,
    from `arguments` and from `assert_round_trip`, which takes the snapshot's arguments as its inputs."""
    data = snapshot(module_proto(text_of("u", "x", "u16[2,3]")), literal(U16, dims, values))
    path = tmp_path / "s.pb"
    path.write_bytes(data)
    want = f"{path}: argument 0 of the snapshot {said}"
    with pytest.raises(BadArgument) as info:
        binary.read_binary(data, str(path)).arguments(str(path))
    assert str(info.value).startswith(want) and "inputs=" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ChainError) as info:
        assert_round_trip(str(path))
    assert str(info.value).startswith(want)
