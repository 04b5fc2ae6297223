"""Pictures of a Penguin program: its data and dependency edges.

    from printer.penguin import drawing
    text = drawing.to_dot(result.module())              # Graphviz DOT, for those who have it
    drawing.plot(result.module(), "graph.png")          # PNG or SVG, matplotlib only
    drawing.plot(result.module(), ax, function="main")  # into an Axes of your own
    fig = drawing.plot(result.module())                 # a new Figure (Jupyter shows it)
    drawing.plot(m, "g.png", function=drawing.functions_with_deps(m))  # hlo2penguin --plot's picture
    drawing.plot(m, "g.svg", nested="all")              # every nested block a panel (none: the functions alone)
    data = drawing.png(m, function=None)                # PNG bytes drawn with Pillow alone: no matplotlib import
    text = drawing.svg(m, function=None)                # SVG bytes written as text: no matplotlib import

Nodes are named by their HLO instruction names (an argument or a `return`,
which have no HLO instruction of their own, or a name used twice, gets a
qualified id such as `main/loop/body/loop#arg1`). Data edges are solid, dep
edges (`Module.dependencies`, one per `add_dep_edge`) dashed and red.

`to_dot` draws a nested block (a while's cond and body, a branch) as a
cluster inside its function. `plot` lays each block out as its own panel,
stacked under the function's own: x is the depth of a node in the block's
DAG of data and dep edges (an op with regions stands for everything inside
it, as in `Block.schedule`), y its place in its layer, in schedule order. A
value captured from an enclosing block appears in the inner panel as a ghost
node (`^name`, dashed). No Graphviz is needed.

Which nested blocks get a panel (`nested`, in `plot`, `render`, `png` and
`svg`): by default (`"deps"`) those that hold an end of a dep edge and those
on the way down to one (the block of the op whose region holds it, and so
on up to the function), so a picture of a real module shows its dep edges
without the dozens of fusion and reducer blocks around them; `"all"` draws
every one, `"none"` the functions alone. The picture's title counts what it
draws and how many nested blocks it leaves out (`…; 15 nested blocks without
a dep edge not drawn`), wrapped onto as many lines as the picture's width
needs. A panel, a DOT cluster and a line of the verifier's report name a
block alike (`printer.penguin.titles.block_title`): `func @main [%main.5]`,
`%while.16 (while): body [%region_2.10]`, XLA's computation in brackets.

By role: `model` (the graph both pictures draw), `dot` (Graphviz DOT),
`layout` (the layered layout: panels, boxes, routes), `canvas` (matplotlib,
imported on first use: the runtime needs numpy alone), `raster` (the
same layout as a PNG with Pillow alone, which imports in milliseconds:
`hlo2penguin --plot OUT.png`) and `vector` (the same layout written as SVG
text, no library at all: `hlo2penguin --plot OUT.svg`). A
Module draws itself with this package (`_repr_svg_`), so no module here
imports `printer.penguin.module` (an import ring, tests/project/test_imports.py).
"""

from printer.penguin.drawing.dot import to_dot
from printer.penguin.drawing.model import Graph, entry_function, functions_with_deps, graph
from printer.penguin.drawing.canvas import PLOT_FORMATS, plot, render
from printer.penguin.drawing.raster import png
from printer.penguin.drawing.vector import svg

__all__ = ["to_dot", "plot", "render", "png", "svg", "graph", "Graph", "PLOT_FORMATS", "entry_function",
           "functions_with_deps"]
