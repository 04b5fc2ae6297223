"""The one entry to the reading room: what an input is, and what the chain
takes of it.

    found = identify(source)      # Input: data, where, name, kind ("text", "proto", "jax.export")
    loaded = load(source)         # Loaded: XLA's parse of it (`Parsed`), its name, its text or binary
    text, where, name = text_of(source)   # the module's text, as XLA prints a binary one

A source is a path, HLO text (str, or bytes), the bytes of a binary module
(`pipeline.reading.binary`: XLA's protos and snapshots, a jax.export
artifact) or a captured module (`pipeline.reading.dumps.CapturedModule`).
What it is is told by content, never by a file's name, and here only
(`kind_of`): the chain (`pipeline.run`), the commands (`hlo2penguin`,
`check`, `regress`, `verify`), the verifier and the test helpers all ask
this module. A jax.export artifact is the module `capture.export_module`
picks; a proto is XLA's module as it is, its names the proto's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pipeline.reading.capture import export_module
from pipeline.reading.parsed import Parsed
from pipeline.reading.text import decode, names_a_file, read_path
from pipeline.xla.isolated import parse, read_proto

__all__ = ["Input", "Loaded", "identify", "kind_of", "load", "raw_of", "text_of"]


def kind_of(data: bytes | str) -> str:
    """What the data of an input is: "text", "proto" (a module's proto, or
    a broken one: `binary.read_binary` says why) or "jax.export", by its
    content (`binary.sniff`). Blank data is text (the text's own error says so)."""
    if isinstance(data, str) or not data.strip():
        return "text"
    from pipeline.reading.binary import sniff  # protobuf's descriptors: only for bytes

    return sniff(data)


@dataclass(frozen=True)
class Input:
    """An input, identified: its data (bytes undecoded), the name errors give
    it, the module's name if the input gives one, and what it is."""

    data: str | bytes
    where: str
    name: str | None
    kind: str  # "text", "proto" or "jax.export"


def identify(source, source_name: str | None = None) -> Input:
    """`source` (a path, HLO text or binary, a captured module) read and told
    apart: an `Input`. `UnreadableInput` for a path that cannot be read."""
    data, where, name = raw_of(source, source_name)
    return Input(data, where, name, kind_of(data))


@dataclass
class Loaded:
    """An input, read: XLA's parse of it (`Parsed`), its name, the name
    errors give the input, and the text read (None for a binary input:
    `binary` is what it held)."""

    parsed: Parsed
    name: str
    where: str
    text: str | None
    binary: object = None  # a pipeline.reading.binary.BinaryModule


def raw_of(source, source_name: str | None = None) -> tuple[str | bytes, str, str | None]:
    """(data, where, name) of a path, HLO text or binary (str or bytes) or a
    captured module, as `text_of`, with a file's or a bytes input's bytes undecoded."""
    if names_a_file(source):
        path = os.fspath(source)
        return read_path(path), source_name or path, path
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), source_name or "<hlo input>", None
    if isinstance(source, str):
        return source, source_name or "<hlo text>", None
    text = getattr(source, "hlo_text", None)  # a CapturedModule
    if isinstance(text, str):
        name = getattr(source, "name", "<captured>")
        return text, source_name or name, name
    raise TypeError(f"cannot read HLO from {type(source).__name__}: give a path, HLO text or a captured module "
                    f"(or the bytes of a binary module: a proto, a jax.export artifact)")


def text_of(source, source_name: str | None = None) -> tuple[str, str, str | None]:
    """(text, where, name) of a source: the text decoded
    (`pipeline.reading.text.decode`), `where` the name errors give the
    input, `name` the module's name if the input gives one. A binary input
    is the text of the module it holds as XLA prints it, or of the module a
    jax.export artifact compiles to."""
    found = identify(source, source_name)
    if found.kind == "proto":
        from pipeline.reading.binary import read_binary
        from pipeline.xla.native import print_proto

        return print_proto(read_binary(found.data, found.where).module), found.where, found.name
    if found.kind == "jax.export":
        module = export_module(found.data, found.where)
        return module.hlo_text, found.where, found.name or module.name
    where = _text_where(found, source_name)
    return decode(found.data, where), where, found.name


def load(source, source_name: str | None = None, *, isolate: bool = True, worker=None) -> Loaded:
    """A source read by XLA (in a child process with `isolate`: `worker`, or
    one started here). A str is a path unless it reads as HLO (a line break,
    or a `{`: every module has a computation body). `source_name` names the
    input in errors."""
    found = identify(source, source_name)
    data, where, name = found.data, found.where, found.name
    if found.kind == "proto":
        from pipeline.reading.binary import read_binary

        module = read_binary(data, where)
        read_proto(module.module, where, isolate=isolate, worker=worker)  # XLA's verdict on it
        parsed = Parsed.from_serialized(module.module, None, where)
        return Loaded(parsed, name or parsed.proto.name, where, None, module)
    if found.kind == "jax.export":  # its module's text, named as the artifact is
        module = export_module(data, where)
        data, name = module.hlo_text, name or module.name
    else:
        where = _text_where(found, source_name)
    text = decode(data, where)
    parsed = parse(text, where, isolate=isolate, worker=worker)
    return Loaded(parsed, name or parsed.proto.name, where, text)


def _text_where(found: Input, source_name: str | None) -> str:
    """Bytes given without a name that hold text are named as text is."""
    if isinstance(found.data, bytes) and found.where == "<hlo input>":
        return source_name or "<hlo text>"
    return found.where
