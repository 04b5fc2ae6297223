"""The Penguin module that the emitted program builds: its functions and dependencies.

A `Module` holds functions (printer.penguin.graph); a function (and every
nested block of an op with regions) holds instructions in program order.
A dependency edge (`printer.penguin.Dependency.DependencyEdge`: an ordering
without data) is recorded by `succ.add_dep_edge(Dependency.DependencyEdge(
src=pred, dst=succ, …))`, the form link #4 emits, or by the shorthand
`module.add_dep_edge(pred, succ)`; `schedule()` honours the edges together
with the data edges (the "BIR" order).
`Module.execute` runs a function on numpy arrays in that order
(printer.penguin.execute).

This module sits above the graph and the executor: it imports both, and
neither imports it.
"""

from __future__ import annotations

import re
from itertools import islice
from dataclasses import dataclass, field

from printer.penguin.Dependency import DependencyEdge
from printer.penguin.execute import execute
from printer.penguin.graph import Argument, Function, Instruction, Node, T


@dataclass(eq=False)
class Module:
    name: str
    functions: list[Function] = field(default_factory=list)
    dependencies: list[DependencyEdge] = field(default_factory=list)
    # (computation, name) of each constant XLA's dump printed without its values
    # (`constant({...})`): `execute` refuses the module.
    elided: list[tuple[str, str]] = field(default_factory=list)

    def function(self, name: str, arguments: list[tuple[str, T]] = (), computation: str | None = None) -> Function:
        """A function; `computation`: the HLO computation of its instructions unless one says otherwise."""
        fn = Function(name, module=self, computation=computation)
        fn.arguments = [Argument(n, t if isinstance(t, T) else T(t), fn, i) for i, (n, t) in enumerate(arguments)]
        self.functions.append(fn)
        return fn

    def add_dep_edge(self, predecessor: Node, successor: Instruction) -> DependencyEdge:
        """The shorthand for `successor.add_dep_edge(Dependency.DependencyEdge(src=predecessor,
        dst=successor, idx_map=[], kind=Dependency.EdgeKind.ORDERED, predicates=[]))`."""
        dep = DependencyEdge(predecessor, successor)
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
        of arrays (tuples among them flattened). See printer.penguin.execute.
        A module with constants XLA's dump elided (`elided`) is refused
        (`ElidedConstants`, one line that names them and the flag that keeps them)."""
        return execute(self, *arrays, function=function)

    def dep_edges(self) -> set[tuple[str | None, str, str]]:
        """(computation, predecessor name, successor name) of every dependency."""
        return {(d.successor.computation, d.predecessor.name, d.successor.name) for d in self.dependencies}

    def explore(self, *, port: int | None = None):
        """Model Explorer on localhost showing this module's graph, every dep
        edge an overlay (`printer.penguin.explorer`; the `explorer` extra): a
        `Served`, which Jupyter shows in the notebook; `.close()` stops it."""
        from printer.penguin.explorer import module_graph
        from printer.penguin.explorer.serve import model_name, serve

        graph, _ = module_graph(self, "Penguin program")
        return serve({"graphCollections": [{"label": self.name, "graphs": [graph]}]}, model_name(self.name),
                     port=port)

    def _repr_svg_(self) -> str | None:
        """Jupyter's view: the graph of every function, and of the nested blocks
        that hold a dep edge or lead to one (the rest counted in the title),
        as `printer.penguin.drawing.svg` writes it (the picture `plot` draws), at most _SVG_WIDTH_PT wide (it scales down, text with it).
        None (Jupyter shows the text repr) past _SVG_INSTRUCTIONS instructions:
        1,000 take seconds and megabytes; `drawing.plot(module, "graph.svg")` still
        draws them. No PNG as well: Jupyter would draw that too on every
        display, and picks SVG."""
        if next(islice(self.instructions(), _SVG_INSTRUCTIONS, None), None) is not None:
            return None
        from printer.penguin import drawing  # on first display only

        svg = drawing.svg(self, function=None).decode()  # written as text: no matplotlib
        svg = svg[svg.index("<svg"):]  # the root alone, as IPython.display.SVG keeps it
        return _fit_width(svg, _SVG_WIDTH_PT)


_SVG_INSTRUCTIONS = 500
_SVG_WIDTH_PT = 720.0  # 960 px: about the width of a notebook's output area
_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)pt"\s+height="([\d.]+)pt"')


def _fit_width(svg: str, limit: float) -> str:
    """Scale the root's width and height down to `limit` points wide; its
    viewBox keeps the drawing's own coordinates."""
    found = _SIZE.search(svg)
    if found is None:
        return svg
    width, height = float(found.group(1)), float(found.group(2))
    if width <= limit:
        return svg
    scale = limit / width
    sized = found.group(0).replace(f'width="{found.group(1)}pt"', f'width="{limit:g}pt"', 1)
    sized = sized.replace(f'height="{found.group(2)}pt"', f'height="{height * scale:.6g}pt"', 1)
    return svg[:found.start()] + sized + svg[found.end():]
