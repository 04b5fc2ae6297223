"""Test support for link #1 (`passes.hlo.preserve_control_deps`): run it the
way the chain does (XLA's parse, link #1's view, the write-back into XLA's
proto), and read its output the way XLA reads it.

The oracle, `XlaModule`, never looks at link #1's view: XLA reads the
serialized output back (`HloModule.from_serialized_hlo_module_proto`,
refusing what it cannot build), writes its own proto of it, which is read
here by id, and prints it, which XLA's text parser must read again. Names
are XLA's (the test inputs name every instruction once, so XLA keeps them).
"""

from __future__ import annotations

import collections
import textwrap
from dataclasses import dataclass
from functools import cached_property

import jaxlib._hlo as xla_hlo

from passes.control_dep import CONTROL_DEP_TARGET, HAS_CONTROL_DEPS, HAS_CONTROL_DEPS_VALUE
from passes.hlo import proto as hlo_proto
from pipeline.reading.parsed import Parsed
from passes.hlo.preserve_control_deps import PreserveControlDeps
from passes.hlo.view import view_of
from pipeline.xla.native import parse_with_xla, print_options
from pipeline.xla import native


def hlo(text: str) -> str:
    """A test input: dedented, and real XLA syntax (XLA's parser reads it)."""
    text = textwrap.dedent(text).strip() + "\n"
    native.read(text)
    return text


def tuple_elements(shape) -> list:
    """The element ShapeProtos of a tuple ShapeProto."""
    return list(shape.tuple_shapes)


@dataclass(frozen=True)
class XlaInstruction:
    computation: str
    name: str
    opcode: str
    operands: tuple[str, ...]
    control_predecessors: tuple[str, ...]
    shape: object  # ShapeProto, as XLA wrote it back
    target: str    # custom_call_target ("" for other ops)
    has_side_effect: bool
    api_version: int

    @property
    def is_control_dep(self) -> bool:
        return self.opcode == "custom-call" and self.target == CONTROL_DEP_TARGET


class XlaModule:
    """XLA's reading of a serialized HloModuleProto: its own proto of the
    module (`proto`), its instructions by computation in XLA's order, and
    its printing (`text`), which XLA's text parser reads again."""

    def __init__(self, data: bytes):
        module = xla_hlo.HloModule.from_serialized_hlo_module_proto(data)  # raises if XLA refuses it
        self.text = module.to_string(print_options())
        parse_with_xla(self.text, "XLA's printing of link #1's output")  # the printing is valid HLO too
        self.proto = hlo_proto.HloModuleProto.FromString(module.as_serialized_hlo_module_proto())
        self.computations: dict[str, list[XlaInstruction]] = {}
        self.entry = next(c.name for c in self.proto.computations if c.id == self.proto.entry_computation_id)
        for comp in self.proto.computations:
            names = {i.id: i.name for i in comp.instructions}
            self.computations[comp.name] = [XlaInstruction(
                comp.name, i.name, i.opcode, tuple(names[o] for o in i.operand_ids),
                tuple(names[p] for p in i.control_predecessor_ids), i.shape, i.custom_call_target,
                i.custom_call_has_side_effect, i.custom_call_api_version) for i in comp.instructions]

    @classmethod
    def of_text(cls, text: str, source: str | None = None) -> XlaModule:
        """XLA's reading of an input text (`%t#i` made explicit where this jaxlib needs it)."""
        from pipeline.xla.isolated import parse

        return cls(parse(text, source).serialized())

    @property
    def frontend_attributes(self) -> dict[str, str]:
        return dict(self.proto.frontend_attributes.map)

    def instructions(self):
        for instrs in self.computations.values():
            yield from instrs

    def computation(self, name: str) -> dict[str, XlaInstruction]:
        return {i.name: i for i in self.computations[name]}

    def instruction(self, computation: str, name: str) -> XlaInstruction:
        return self.computation(computation)[name]

    def order(self, computation: str) -> list[str]:
        """The instructions of `computation` in the order XLA prints them."""
        lines = self.text.split(f"%{computation} ", 1)[1].split("\n}", 1)[0].splitlines()[1:]
        return [line.strip().removeprefix("ROOT ").split(" = ", 1)[0].lstrip("%") for line in lines]

    def control_edges(self) -> collections.Counter:
        """(computation, predecessor, successor) for each control predecessor."""
        return collections.Counter((i.computation, p, i.name) for i in self.instructions()
                                   for p in i.control_predecessors)

    def calls(self, computation: str | None = None) -> list[XlaInstruction]:
        """The AwsNeuronControlDep custom-calls (of one computation, or all)."""
        instrs = self.computations[computation] if computation else self.instructions()
        return [i for i in instrs if i.is_control_dep]

    def reified_edges(self, bundle: bool) -> collections.Counter:
        """(computation, predecessor, successor) read back from the custom-calls:
        every operand but the last is a predecessor (with `bundle`, the elements
        of the one tuple operand); the ops that read the call (through chained
        calls that take it as their data operand) are its successors."""
        readers = collections.defaultdict(list)
        for i in self.instructions():
            for operand in dict.fromkeys(i.operands):
                readers[(i.computation, operand)].append(i)

        def successors(call: XlaInstruction) -> list[str]:
            names = []
            for reader in readers[(call.computation, call.name)]:
                if reader.is_control_dep:
                    if reader.operands[-1] == call.name:
                        names += successors(reader)
                else:
                    names.append(reader.name)
            return names

        edges: collections.Counter = collections.Counter()
        for call in self.calls():
            preds = list(call.operands[:-1])
            by_name = self.computation(call.computation)
            if bundle and preds and by_name[preds[0]].opcode == "tuple":
                # the bundle; a collective start (a future, which no tuple holds) stays beside it
                preds[:1] = by_name[preds[0]].operands
            for succ in successors(call):
                edges.update((call.computation, p, succ) for p in preds)
        return edges


def assert_only_edges_changed(before: XlaModule, after: XlaModule, bundle: bool = False) -> None:
    """`after` (link #1's output) is `before` (its input) with its control
    edges made data, and nothing else changed: the same computations and
    instructions (opcode, shape), each reading what it read, once every
    AwsNeuronControlDep call is seen through to its data operand; the only
    new instructions are such calls (and, with `bundle`, the tuples they
    take); no control predecessor left; one new frontend attribute if a
    call was made."""
    assert list(after.computations) == list(before.computations)
    for name, instrs in before.computations.items():
        old, new = before.computation(name), after.computation(name)
        made = [new[n] for n in new if n not in old]
        assert all(m.is_control_dep or (bundle and m.opcode == "tuple") for m in made), made
        assert all(m.is_control_dep and m.has_side_effect and m.api_version == 1 for m in made if m.opcode != "tuple")

        def data(operand: str) -> str:
            while new[operand].is_control_dep and operand not in old:
                operand = new[operand].operands[-1]
            return operand

        for instr in instrs:
            out = new[instr.name]
            assert (out.opcode, out.shape) == (instr.opcode, instr.shape), instr.name
            assert tuple(data(o) for o in out.operands) == instr.operands, instr.name
            assert out.control_predecessors == ()
        for call in made:
            if call.is_control_dep:
                assert call.shape == new[call.operands[-1]].shape  # shaped as its data operand
    expected = before.frontend_attributes
    if after.calls():
        expected[HAS_CONTROL_DEPS] = HAS_CONTROL_DEPS_VALUE
    assert after.frontend_attributes == expected


@dataclass
class Link1Run:
    """Link #1 run on one input: XLA's parse (`parsed`, its proto now link
    #1's output), the view link #1 edited (`module`), its report (`result`)."""

    parsed: Parsed
    module: object
    result: object

    @cached_property
    def xla(self) -> XlaModule:
        """XLA's reading of the output (raises if XLA refuses it)."""
        return XlaModule(self.parsed.serialized())

    def written_order(self, computation: str) -> list[str]:
        """The output proto's instructions of `computation`, in order, names as written."""
        [comp] = [c for c in self.parsed.proto.computations if c.name == computation]
        return [self.parsed.name(computation, i.name) for i in comp.instructions]

    def scheduled_order(self, computation: str) -> list[str]:
        """The output's schedule of `computation`, names as written."""
        [comp] = [c for c in self.parsed.proto.computations if c.name == computation]
        names = {i.id: self.parsed.name(computation, i.name) for i in comp.instructions}
        return [names[i] for i in self.parsed.proto.schedule.sequences[comp.id].instruction_ids]

    def reified_edges(self, bundle: bool) -> collections.Counter:
        """`XlaModule.reified_edges` of the output, names as written."""
        return collections.Counter({(c, self.parsed.name(c, p), self.parsed.name(c, s)): n
                                    for (c, p, s), n in self.xla.reified_edges(bundle).items()})

    def imported(self, **kwargs):
        """Link #2 (XLA's importer) on the output."""
        from pipeline.xla.importer import import_hlo

        return import_hlo(self.parsed, **kwargs)


def run(text: str, bundle: bool = False, source: str | None = None, parse=native.read) -> Link1Run:
    """Link #1 as the chain runs it; XLA must read its output back."""
    parsed = parse(text, source)
    module = view_of(parsed)
    result = PreserveControlDeps(bundle=bundle).run(module)
    done = Link1Run(parsed, module, result)
    done.xla  # every output is a module XLA reads and prints
    return done
