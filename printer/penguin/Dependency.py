"""Dependency edges, spelled as Penguin's IR spells them (its module
`Dependency`, which the real printer imports as `m6`):

    succ.add_dep_edge(Dependency.DependencyEdge(src=pred, dst=succ, idx_map=[],
                                                kind=Dependency.EdgeKind.ORDERED, predicates=[]))

says that `succ` runs after `pred`, no data flowing: the statement link #4
emits for each control edge, on the successor, as neuronx-cc's
`printControlDeps` does. `Module.add_dep_edge(pred, succ)` is the shorthand
for people writing a program by hand; both record the same `DependencyEdge`
in `Module.dependencies`, which the schedule and the verifier read.

The module is named as Penguin names it, capital D and all, so that a
program written for the real runtime reads the same here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from printer.penguin.graph import Instruction, Node, Value


class EdgeKind(enum.Enum):
    """What a dependency edge orders. Only ORDERED is known to be emitted:
    the successor starts after the predecessor ends."""

    ORDERED = "ordered"


@dataclass(eq=False)
class DependencyEdge:
    """`dst` runs after `src`; no data flows. `idx_map` and `predicates`
    (empty in every edge the printer emits) are kept as given."""

    src: Node
    dst: Instruction
    idx_map: list = field(default_factory=list)
    kind: EdgeKind = EdgeKind.ORDERED
    predicates: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if isinstance(self.src, Value):  # one result of an instruction: the instruction is what runs
            self.src = self.src.instruction
        if not isinstance(self.src, Node):
            raise TypeError(f"DependencyEdge: src must be an instruction or an argument, not {self.src!r}")
        if not isinstance(self.dst, Instruction):
            raise TypeError(f"DependencyEdge: dst must be an instruction, not {self.dst!r}")
        if not isinstance(self.kind, EdgeKind):
            raise TypeError(f"DependencyEdge: kind must be a Dependency.EdgeKind, not {self.kind!r}")

    @property
    def predecessor(self) -> Node:
        return self.src

    @property
    def successor(self) -> Instruction:
        return self.dst

    def __repr__(self) -> str:
        return f"<DependencyEdge {self.src.name} -> {self.dst.name}>"
