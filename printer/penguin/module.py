"""The Penguin module that the emitted program builds: its functions and dependencies.

A `Module` holds functions (printer.penguin.graph); a function (and every
nested block of an op with regions) holds instructions in program order.
`add_dep_edge(pred, succ)` records a `Dependency`: an ordering without data,
which `schedule()` honours together with the data edges (the "BIR" order).
`Module.execute` runs a function on numpy arrays in that order
(printer.penguin.execute).

This module sits above the graph and the executor: it imports both, and
neither imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from printer.penguin.execute import execute
from printer.penguin.graph import Argument, Dependency, Function, Instruction, Node, T, Value


@dataclass(eq=False)
class Module:
    name: str
    functions: list[Function] = field(default_factory=list)
    dependencies: list[Dependency] = field(default_factory=list)

    def function(self, name: str, arguments: list[tuple[str, T]] = ()) -> Function:
        fn = Function(name, module=self)
        fn.arguments = [Argument(n, t if isinstance(t, T) else T(t), fn, i) for i, (n, t) in enumerate(arguments)]
        self.functions.append(fn)
        return fn

    def add_dep_edge(self, predecessor: Node, successor: Instruction) -> Dependency:
        if isinstance(predecessor, Value):
            predecessor = predecessor.instruction
        dep = Dependency(predecessor, successor)
        self.dependencies.append(dep)
        return dep

    def instructions(self):
        for fn in self.functions:
            yield from fn.walk()

    def schedule(self) -> dict[str, list[Instruction]]:
        """The BIR order of every function (nested blocks are scheduled by `Block.schedule`)."""
        return {fn.name: fn.schedule() for fn in self.functions}

    def execute(self, *arrays, function: str = "main") -> tuple:
        """Run `function` on numpy arrays in schedule order: its results, a tuple
        of arrays (tuples among them flattened). See printer.penguin.execute."""
        return execute(self, *arrays, function=function)

    def dep_edges(self) -> set[tuple[str | None, str, str]]:
        """(computation, predecessor name, successor name) of every dependency."""
        return {(d.successor.computation, d.predecessor.name, d.successor.name) for d in self.dependencies}
