"""A module as XLA's parser read it: XLA's `HloModuleProto`, and the names
the user wrote (`pipeline.reading.names`: XLA renames a name reused across
computations, reports and programs keep it as written).

This is the one reading of HLO in the chain. Link #1 edits `proto`
(`passes.hlo.view`), link #2 imports it, the verifier reads its edges.

    parsed = pipeline.xla.native.read(text, "module.hlo")   # XLA's parser, in this process
    parsed.proto.computations[0].instructions[0].name   # XLA's name
    parsed.name(computation, xla_name)                  # the name as written
"""

from __future__ import annotations

from dataclasses import dataclass, field

from passes.hlo import proto as hlo_proto
from pipeline.reading.names import WrittenNames, names_of


def decode_proto(data: bytes) -> hlo_proto.HloModuleProto:
    """A serialized `HloModuleProto` (XLA's `as_serialized_hlo_module_proto()`) in our schema."""
    return hlo_proto.HloModuleProto.FromString(data)


@dataclass
class Parsed:
    proto: hlo_proto.HloModuleProto
    names: WrittenNames
    text: str | None = None   # what XLA read (None: a proto given as it is)
    source: str | None = None  # the input's name in errors
    # Each computation's instruction protos as Python objects, in the proto's
    # order, until link #1 edits the proto (`take_instruction_lists`): the
    # first touch of a message costs twice the next, so the readers before
    # link #1 (the names' check, link #1's view) share one.
    _lists: list[list] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_serialized(cls, data: bytes, text: str | None = None, source: str | None = None) -> Parsed:
        """XLA's serialized proto of `text` (or of no text: XLA's names are the names)."""
        module = decode_proto(data)
        lists = [list(c.instructions) for c in module.computations]
        names = names_of(text, module, lists) if text is not None else WrittenNames(same=True)
        return cls(module, names, text, source, lists)

    def without_proto(self) -> Parsed:
        """The input's names, text and source alone (`proto` None): what the
        readers after link #2 read of a parse link #2 consumed (it keys the
        proto in place for XLA's importer), without holding the proto."""
        return Parsed(None, self.names, self.text, self.source)

    def take_instruction_lists(self) -> list[list]:
        """Each computation's instruction protos in the proto's order (see `_lists`),
        for the one reader that goes on to edit the proto: later readers read it afresh."""
        lists, self._lists = self._lists, None
        return lists if lists is not None else [list(c.instructions) for c in self.proto.computations]

    def name(self, computation: str, xla_name: str) -> str:
        """The instruction's name as the input wrote it."""
        return self.names.name(computation, xla_name)

    def line(self, computation: str, xla_name: str) -> int | None:
        """The line of the instruction's definition in the input, if known."""
        return self.names.line(computation, xla_name) if self.text is not None else None

    def line_as_written(self, computation: str, name: str) -> int | None:
        """The line of the instruction the input names `name` in `computation`."""
        for (c, xla_name), written in self.names.names.items():
            if c == computation and written == name:
                return self.line(c, xla_name)
        return self.line(computation, name)

    def control_edges(self) -> list[tuple[str, str, str]]:
        """Every control edge as (computation, predecessor, successor), names as
        written, in the order the text defines the successors."""
        edges = []
        for comp in self.proto.computations:
            names = None
            for instr in sorted(comp.instructions, key=lambda i: hlo_proto.local_id(i.id)):  # the text's order
                if instr.control_predecessor_ids:
                    if names is None:
                        names = {i.id: i.name for i in comp.instructions}
                    succ = self.name(comp.name, instr.name)
                    edges += [(comp.name, self.name(comp.name, names[p]), succ) for p in instr.control_predecessor_ids]
        return edges

    def serialized(self) -> bytes:
        return self.proto.SerializeToString()
