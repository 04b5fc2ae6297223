"""Pictures of a Penguin program: its data and dependency edges.

    from printer import draw
    text = draw.to_dot(result.module())                 # Graphviz DOT, for those who have it
    draw.plot(result.module(), "graph.png")             # PNG or SVG, matplotlib only
    draw.plot(result.module(), ax, function="main")     # into an Axes of your own
    fig = draw.plot(result.module())                    # a new Figure (Jupyter shows it)

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
"""

from __future__ import annotations

import io
import os
from collections import Counter
from dataclasses import dataclass, field

from passes.dialects import kind
from printer.penguin.graph import Argument, Block, Instruction, ScheduleError, Value

# `Module` (printer.penguin.module) is named in annotations only, never imported:
# a Module draws itself with this file in Jupyter (`_repr_svg_`), and importing
# it here would close an import ring (tests/test_imports.py).

__all__ = ["to_dot", "plot", "render", "graph", "Graph", "PLOT_FORMATS"]

PLOT_FORMATS = ("png", "svg")

# Colours shared by DOT and matplotlib.
DEP_COLOR = "#d62728"
DATA_COLOR = "#555555"
FILL = {"instruction": "#ffffff", "region": "#dbe9f8", "argument": "#e3f4e1", "return": "#eeeeee",
        "ghost": "#ffffff"}


# --------------------------------------------------------------------------
# The graph both pictures draw
# --------------------------------------------------------------------------


@dataclass(eq=False)
class GNode:
    id: str            # unique in the picture; the HLO name wherever that is unique
    name: str          # the HLO name (or the argument's / op's own name)
    kind: str          # instruction | region | argument | return
    opcode: str        # short: "while", "copy", "argument 0"
    block: Block       # the block that holds it
    obj: object        # the Instruction or Argument


@dataclass
class GEdge:
    source: GNode
    target: GNode
    dep: bool          # a dependency (add_dep_edge), else a data edge
    result: int | None = None  # the result index a data edge reads (Value operand), if any


@dataclass
class Graph:
    """The nodes and edges of one or more functions of a Penguin Module."""

    module: Module
    functions: list[Block]
    nodes: list[GNode] = field(default_factory=list)
    edges: list[GEdge] = field(default_factory=list)
    _by_obj: dict[int, GNode] = field(default_factory=dict)

    def node(self, obj) -> GNode | None:
        if isinstance(obj, Value):
            obj = obj.instruction
        return self._by_obj.get(id(obj))

    @property
    def data_edges(self) -> list[GEdge]:
        return [e for e in self.edges if not e.dep]

    @property
    def dep_edges(self) -> list[GEdge]:
        return [e for e in self.edges if e.dep]


def _short(opcode: str) -> str:
    return kind(opcode) if "." in opcode else opcode


def _block_path(block: Block) -> str:
    parts = []
    while block.parent is not None:
        parts.append(block.name)
        parts.append(block.parent.name)
        block = block.parent.parent
    parts.append(block.name)
    return "/".join(reversed(parts))


def _select(module: Module, function: str | None) -> list[Block]:
    if function is None:
        return list(module.functions)
    chosen = [f for f in module.functions if f.name == function]
    if not chosen:
        have = ", ".join(f.name for f in module.functions) or "none"
        raise ValueError(f"module {module.name} has no function {function!r} (functions: {have})")
    return chosen


def graph(module: Module, function: str | None = None) -> Graph:
    """The nodes (arguments and instructions, nested blocks included) and the
    data and dep edges of `function` (every function if None)."""
    g = Graph(module, _select(module, function))

    def visit(block: Block):
        for arg in block.arguments:
            g.nodes.append(GNode("", arg.name, "argument", f"argument {arg.index}", block, arg))
        for instr in block.instructions:
            if instr.blocks:
                kind = "region"
            elif instr.computation is None and _short(instr.opcode) == "return":
                kind = "return"
            else:
                kind = "instruction"
            g.nodes.append(GNode("", instr.name, kind, _short(instr.opcode), block, instr))
            for inner in instr.blocks:
                visit(inner)

    for fn in g.functions:
        visit(fn)
    _assign_ids(g.nodes)
    g._by_obj = {id(n.obj): n for n in g.nodes}
    for n in g.nodes:
        if not isinstance(n.obj, Instruction):
            continue
        for operand in n.obj.operands:
            source = g.node(operand)
            if source is not None:
                g.edges.append(GEdge(source, n, False, operand.index if isinstance(operand, Value) else None))
    for dep in module.dependencies:
        pred, succ = g.node(dep.predecessor), g.node(dep.successor)
        if pred is not None and succ is not None:
            g.edges.append(GEdge(pred, succ, True))
    return g


def _assign_ids(nodes: list[GNode]) -> None:
    """HLO instructions keep their bare names where unique; then any other
    node whose name is still free; the rest get their block path."""
    def is_hlo(n: GNode) -> bool:
        return isinstance(n.obj, Instruction) and n.obj.computation is not None

    hlo_count = Counter(n.name for n in nodes if is_hlo(n))
    all_count = Counter(n.name for n in nodes)
    taken: set[str] = set()
    for n in nodes:
        if is_hlo(n) and hlo_count[n.name] == 1:
            n.id = n.name
            taken.add(n.name)
    for n in nodes:
        if n.id:
            continue
        if all_count[n.name] == 1 and n.name not in taken:
            n.id = n.name
        else:
            suffix = f"#arg{n.obj.index}" if isinstance(n.obj, Argument) else ""
            n.id = f"{_block_path(n.block)}/{n.name}{suffix}"
        base, k = n.id, 1
        while n.id in taken:
            k += 1
            n.id = f"{base}~{k}"
        taken.add(n.id)


# --------------------------------------------------------------------------
# DOT
# --------------------------------------------------------------------------


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(module: Module, function: str | None = None) -> str:
    """Graphviz DOT of `function` (every function if None): nodes named by HLO
    instruction names, data edges solid, dep edges dashed red, each function
    and each nested block a cluster."""
    g = graph(module, function)
    by_block: dict[int, list[GNode]] = {}
    for n in g.nodes:
        by_block.setdefault(id(n.block), []).append(n)
    deps = len(g.dep_edges)
    lines = [f"digraph {_q(module.name)} {{",
             f"  label={_q(f'{module.name}: {len(g.data_edges)} data edge(s), {deps} dep edge(s)')};",
             "  labelloc=t;",
             "  rankdir=LR;",
             "  compound=true;",
             '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="monospace", fontsize=10];',
             f'  edge [color="{DATA_COLOR}", arrowsize=0.7];']
    on_dep = {id(e.source) for e in g.dep_edges} | {id(e.target) for e in g.dep_edges}

    def emit_block(block: Block, title: str, indent: str):
        lines.append(f"{indent}subgraph {_q('cluster_' + _block_path(block))} {{")
        lines.append(f"{indent}  label={_q(title)};")
        lines.append(f'{indent}  style=rounded; color="#999999";')
        for n in by_block.get(id(block), []):
            label = n.name if n.opcode == n.name else n.name + "\n" + n.opcode
            attrs = [f"label={_q(label)}", f'fillcolor="{FILL[n.kind]}"']
            if id(n) in on_dep:
                attrs.append(f'color="{DEP_COLOR}", penwidth=1.5')
            lines.append(f"{indent}  {_q(n.id)} [{', '.join(attrs)}];")
            if isinstance(n.obj, Instruction):
                for inner in n.obj.blocks:
                    emit_block(inner, f"%{n.name}: {inner.name}", indent + "  ")
        lines.append(f"{indent}}}")

    for fn in g.functions:
        emit_block(fn, f"func @{fn.name}", "  ")
    lines.append("  // data edges (operands)")
    for e in g.data_edges:
        extra = f" [taillabel={_q('#' + str(e.result))}, fontsize=8]" if e.result is not None else ""
        lines.append(f"  {_q(e.source.id)} -> {_q(e.target.id)}{extra};")
    lines.append("  // dep edges (Module.dependencies: add_dep_edge)")
    for e in g.dep_edges:
        lines.append(f"  {_q(e.source.id)} -> {_q(e.target.id)} "
                     f'[style=dashed, color="{DEP_COLOR}", fontcolor="{DEP_COLOR}", penwidth=1.5, label="dep"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Layout: one panel per block, layered left to right
# --------------------------------------------------------------------------

# Lengths are in inches: a file's figure is sized so that one data unit is one inch.
FONT = 8.0                      # points, node names
CHAR = FONT * 0.6 / 72          # width of a monospace character
ROW = 0.62                      # vertical pitch of nodes in a layer
BOX_H = 0.42
GAP = 0.55                      # horizontal space between layers (room for arrows)
PANEL_PAD = 0.25
TITLE_H = 0.3
HEADER_H = 0.75                 # the legend, above the panels
MIN_WIDTH = 7.0                 # room for the legend


@dataclass(eq=False)
class _Box:
    node: GNode | None          # None: a waypoint of an edge that spans several layers
    ghost: bool = False
    x: float = 0.0              # centre
    y: float = 0.0              # centre, measured down from the panel's first row
    w: float = 0.0
    layer: int = 0
    rank: float = 0.0           # schedule order

    @property
    def dummy(self) -> bool:
        return self.node is None

    @property
    def pitch(self) -> float:
        return ROW * 0.3 if self.dummy else ROW


@dataclass(eq=False)
class _Route:
    source: _Box
    target: _Box
    edge: GEdge
    backward: bool = False      # only with a cycle (schedule impossible)
    waypoints: list[_Box] = field(default_factory=list)
    out_port: float = 0.0       # y offsets where it leaves its source and reaches its target,
    in_port: float = 0.0        # so that edges sharing a box stay apart


@dataclass(eq=False)
class _Panel:
    block: Block
    title: str
    boxes: list[_Box] = field(default_factory=list)
    routes: list[_Route] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    top: float = 0.0  # y of the panel's upper edge
    rows_top: float = 0.0  # y of the first row's upper edge, inside the panel


def _width(node: GNode, ghost: bool) -> float:
    name = ("^" if ghost else "") + node.name
    return max(len(name), len(node.opcode) * 0.8, 4) * CHAR + 0.18


NESTED = ("all", "deps", "none")


def _panels(g: Graph, nested: str = "all") -> list[_Panel]:
    if nested not in NESTED:
        raise ValueError(f"nested={nested!r}: give one of {', '.join(NESTED)}")
    with_deps = {id(e.source.block) for e in g.dep_edges} | {id(e.target.block) for e in g.dep_edges}
    panels = []

    def visit(block: Block, title: str):
        if block.parent is None or nested == "all" or (nested == "deps" and id(block) in with_deps):
            panels.append(_layout(g, block, title))
        for instr in block.instructions:
            for inner in instr.blocks:
                visit(inner, f"%{instr.name} ({_short(instr.opcode)}): {inner.name}")

    for fn in g.functions:
        visit(fn, f"func @{fn.name}")
    return panels


def _representatives(g: Graph, block: Block) -> dict[int, GNode]:
    """Every node under `block` → the node of `block` that stands for it (an
    op with regions stands for everything inside them, as in Block.schedule)."""
    here: dict[int, GNode] = {id(arg): g.node(arg) for arg in block.arguments}
    for instr in block.instructions:
        top = g.node(instr)
        here[id(instr)] = top
        for inner in instr.blocks:
            for arg in inner.arguments:
                here[id(arg)] = top
            for nested in inner.walk():
                here[id(nested)] = top
                for b in nested.blocks:
                    for arg in b.arguments:
                        here[id(arg)] = top
    return here


def _layout(g: Graph, block: Block, title: str) -> _Panel:
    """A layered (Sugiyama-style) layout of one block: layers by depth in the
    data/dep DAG, waypoints for edges that skip layers, order within a layer
    from the schedule, then barycentre sweeps that keep the order with the
    fewest crossings, then rows placed as close to their neighbours as the
    order allows."""
    panel = _Panel(block, title)
    here = _representatives(g, block)
    try:
        order = block.schedule()
    except ScheduleError:
        order = list(block.instructions)  # a cycle: keep program order, draw the back edges curved
    boxes: dict[int, _Box] = {}
    for arg in block.arguments:
        boxes[id(arg)] = _Box(g.node(arg))
    for instr in order:
        boxes[id(instr)] = _Box(g.node(instr))
    ghosts: dict[int, _Box] = {}
    routes: list[_Route] = []
    seen = set()
    for e in g.edges:
        dst = here.get(id(e.target.obj))
        if dst is None:
            continue
        src = here.get(id(e.source.obj))
        if src is dst:
            continue  # inside one of this block's regions: drawn in that region's panel
        if src is None:
            if e.target.block is not block:
                continue  # a capture deeper down: the inner panel shows it
            if id(e.source.obj) not in ghosts:
                ghosts[id(e.source.obj)] = _Box(e.source, ghost=True)
            src_box = ghosts[id(e.source.obj)]
        else:
            src_box = boxes[id(src.obj)]
        key = (id(src_box), id(boxes[id(dst.obj)]), e.dep, e.result)
        if key not in seen:
            seen.add(key)
            routes.append(_Route(src_box, boxes[id(dst.obj)], e))
    real = list(ghosts.values()) + list(boxes.values())
    for i, b in enumerate(real):
        b.rank = float(i)
        b.w = _width(b.node, b.ghost)
    for r in routes:
        r.backward = not (r.source.ghost or r.source.rank < r.target.rank)
    forward = [r for r in routes if not r.backward]

    # Layers: longest path from the block's inputs, in schedule order.
    incoming: dict[int, list[_Box]] = {id(b): [] for b in real}
    outgoing: dict[int, list[_Box]] = {id(b): [] for b in real}
    for r in forward:
        incoming[id(r.target)].append(r.source)
        outgoing[id(r.source)].append(r.target)
    for b in real:
        b.layer = max((p.layer + 1 for p in incoming[id(b)]), default=0)
    # An op with no input (a constant, an iota) sits just before its first user, not at depth 0.
    for b in reversed(real):
        if not incoming[id(b)] and not b.ghost and not isinstance(b.node.obj, Argument) and outgoing[id(b)]:
            b.layer = max(b.layer, min(u.layer for u in outgoing[id(b)]) - 1)

    # Waypoints: every edge then joins adjacent layers.
    items = list(real)
    up: dict[int, list[_Box]] = {id(b): [] for b in real}     # neighbours in the layer before
    down: dict[int, list[_Box]] = {id(b): [] for b in real}   # neighbours in the layer after
    for r in forward:
        chain = [r.source]
        for layer in range(r.source.layer + 1, r.target.layer):
            w = _Box(None, layer=layer, rank=r.source.rank + 0.5)
            items.append(w)
            up[id(w)], down[id(w)] = [], []
            r.waypoints.append(w)
            chain.append(w)
        chain.append(r.target)
        for a, b in zip(chain, chain[1:]):
            down[id(a)].append(b)
            up[id(b)].append(a)
    depth = max((b.layer for b in items), default=0) + 1
    layers: list[list[_Box]] = [[] for _ in range(depth)]
    for b in sorted(items, key=lambda b: b.rank):
        layers[b.layer].append(b)

    # Full effort for the graphs people read; a huge block (thousands of ops
    # and waypoints) gets fewer sweeps, so --plot on a big dump stays quick.
    small, huge = len(items) <= 3000, len(items) > 20000
    _order_layers(layers, up, down, sweeps=6 if small else 0 if huge else 2)
    _place_rows(layers, up, down, rounds=8 if small else 2)

    widths = [max((b.w for b in column), default=0.0) for column in layers]
    x = PANEL_PAD
    for k, column in enumerate(layers):
        for b in column:
            b.x = x + widths[k] / 2
            if b.dummy:
                b.w = widths[k]  # an edge crosses the whole column at its waypoint
        x += widths[k] + GAP
    _assign_ports(forward)
    lowest = max((b.y + b.pitch / 2 for b in items), default=ROW)
    panel.boxes = real
    panel.routes = routes
    panel.rows_top = TITLE_H + PANEL_PAD / 2
    panel.width = max(x - GAP + PANEL_PAD, _text_width(title) * 1.1 + 2 * PANEL_PAD)
    panel.height = panel.rows_top + lowest + PANEL_PAD / 2
    return panel


def _assign_ports(routes: list[_Route]) -> None:
    """Spread the ends of the edges on one side of a box over its height, in
    the order of where they come from (or go), data before dep on a tie."""
    span = BOX_H * 0.75
    ends: dict[int, list[tuple[float, int, _Route, bool]]] = {}
    for r in routes:
        first = r.waypoints[0] if r.waypoints else r.target
        last = r.waypoints[-1] if r.waypoints else r.source
        ends.setdefault(id(r.source), []).append((first.y, r.edge.dep, r, True))
        ends.setdefault(id(r.target), []).append((last.y, r.edge.dep, r, False))
    for side in ends.values():
        side.sort(key=lambda t: (t[0], t[1]))
        n = len(side)
        for i, (_, _, r, leaving) in enumerate(side):
            offset = 0.0 if n == 1 else -span / 2 + span * i / (n - 1)
            if leaving:
                r.out_port = offset
            else:
                r.in_port = offset


def _crossings(layers: list[list[_Box]], down: dict[int, list[_Box]]) -> int:
    """Edge crossings between adjacent layers: inversions of the targets'
    positions once the segments are sorted by source position (O(E log E))."""
    total = 0
    for column, nxt in zip(layers, layers[1:]):
        where = {id(b): i for i, b in enumerate(nxt)}
        segments = sorted((i, where[id(t)]) for i, b in enumerate(column) for t in down[id(b)] if id(t) in where)
        total += _inversions([j for _, j in segments])
    return total


def _inversions(values: list[int]) -> int:
    """Pairs i < j with values[i] > values[j] (a Fenwick tree over the values)."""
    size = max(values, default=0) + 2
    tree = [0] * size
    count = 0
    for seen, v in enumerate(values):
        k, not_greater = v + 1, 0
        while k > 0:  # how many earlier values are <= v
            not_greater += tree[k]
            k -= k & -k
        count += seen - not_greater
        k = v + 1
        while k < size:
            tree[k] += 1
            k += k & -k
    return count


def _order_layers(layers, up, down, sweeps: int = 6) -> None:
    """Barycentre sweeps from the schedule order; keep the fewest crossings."""
    best = [list(c) for c in layers]
    best_count = _crossings(layers, down)
    for sweep in range(sweeps):
        forward = sweep % 2 == 0
        indices = range(1, len(layers)) if forward else range(len(layers) - 2, -1, -1)
        for k in indices:
            ref = layers[k - 1] if forward else layers[k + 1]
            where = {id(b): i for i, b in enumerate(ref)}
            keyed = []
            for i, b in enumerate(layers[k]):
                near = [where[id(n)] for n in (up if forward else down)[id(b)] if id(n) in where]
                keyed.append((sum(near) / len(near) if near else float(i), i, b))
            keyed.sort(key=lambda t: (t[0], t[1]))
            layers[k][:] = [b for _, _, b in keyed]
        count = _crossings(layers, down)
        if count < best_count:
            best, best_count = [list(c) for c in layers], count
    layers[:] = best


def _place_rows(layers, up, down, rounds: int = 8) -> None:
    """y of each item: as near the mean of its neighbours as the order within
    its layer and the row pitch allow (isotonic regression, per layer)."""
    for column in layers:
        y = 0.0
        for b in column:
            b.y = y + b.pitch / 2
            y += b.pitch
    tallest = max((sum(b.pitch for b in c) for c in layers), default=0.0)
    for column in layers:  # start centred
        shift = (tallest - sum(b.pitch for b in column)) / 2
        for b in column:
            b.y += shift
    for n in range(rounds):
        forward = n % 2 == 0
        for column in (layers if forward else reversed(layers)):
            desired = []
            for b in column:
                near = (up if forward else down)[id(b)] + ((down if forward else up)[id(b)] if n >= 2 else [])
                desired.append(sum(m.y for m in near) / len(near) if near else b.y)
            _isotonic(column, desired)
    lowest = min((b.y - b.pitch / 2 for c in layers for b in c), default=0.0)
    for column in layers:
        for b in column:
            b.y -= lowest


def _isotonic(column: list[_Box], desired: list[float]) -> None:
    """Minimise sum (y_i - desired_i)^2 with y_i >= y_(i-1) + (pitch_(i-1) + pitch_i) / 2."""
    offsets, acc = [], 0.0
    for i, b in enumerate(column):
        if i:
            acc += (column[i - 1].pitch + b.pitch) / 2
        offsets.append(acc)
    blocks: list[list[float]] = []  # [mean, count]
    for d, o in zip(desired, offsets):
        blocks.append([d - o, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    i = 0
    for mean, count in blocks:
        for _ in range(count):
            column[i].y = mean + offsets[i]
            i += 1


def _text_width(text: str) -> float:
    return len(text) * CHAR


# --------------------------------------------------------------------------
# Drawing with matplotlib
# --------------------------------------------------------------------------


def plot(module: Module, path_or_ax=None, function: str | None = "main", *, nested: str = "all",
         dpi: int = 110):
    """Draw the data and dep edges of `function` (every function if None).
    Each block is a panel: the function's own first, then each nested block
    (`nested="all"`), only those where a dep edge starts or ends
    (`nested="deps"`), or none (`nested="none"`).

    `path_or_ax`: a path ending in .png or .svg (written with the Agg / SVG
    backend, no display needed), a binary file object (PNG), a matplotlib
    Axes to draw into, or None for a new Figure sized to the graph. Returns
    the Figure."""
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    fmt = None  # png or svg for a path; None for an Axes, a file object or no target
    if path_or_ax is not None and not isinstance(path_or_ax, Axes) and not hasattr(path_or_ax, "write"):
        fmt = _format_of(path_or_ax)
    g = graph(module, function)
    panels = _panels(g, nested)
    width = max([MIN_WIDTH] + [p.width for p in panels])
    y = HEADER_H
    for p in panels:
        p.top = y
        y += p.height + PANEL_PAD
    height = y
    if isinstance(path_or_ax, Axes):
        ax = path_or_ax
        fig = ax.figure
        _draw(ax, g, panels, width, height, scale=_fit_scale(ax, width, height), nested=nested)
        return fig
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    # Pixel limits of Agg: a huge graph is drawn smaller rather than refused.
    limit = 60000 / dpi
    shrink = min(1.0, limit / width, limit / height)
    fig = Figure(figsize=(max(width * shrink, 2.0), max(height * shrink, 1.0)), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    _draw(ax, g, panels, width, height, scale=shrink, nested=nested)
    if path_or_ax is None:
        return fig
    if fmt is None:  # a file object
        fig.savefig(path_or_ax, format="png", dpi=dpi)
        return fig
    # Rendered in memory first: a failure never leaves a partial file behind.
    data = _render(fig, fmt, dpi)
    with open(os.fspath(path_or_ax), "wb") as f:
        f.write(data)
    return fig


def render(module: Module, fmt: str = "png", function: str | None = "main", *, nested: str = "all",
           dpi: int = 110) -> bytes:
    """The picture `plot` draws, as the bytes of a PNG or SVG file."""
    if fmt not in PLOT_FORMATS:
        raise ValueError(f"cannot plot as {fmt!r}: give one of {', '.join(PLOT_FORMATS)}")
    return _render(plot(module, None, function, nested=nested, dpi=dpi), fmt, dpi)


def _render(fig, fmt: str, dpi: int) -> bytes:
    import matplotlib

    buffer = io.BytesIO()
    # SVG keeps its text as text (names stay searchable, the file small).
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buffer, format=fmt, dpi=dpi)
    return buffer.getvalue()


def _format_of(path) -> str:
    ext = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if ext not in PLOT_FORMATS:
        raise ValueError(f"cannot plot to '{os.fspath(path)}': give a .png or .svg file name")
    return ext


def _route_path(r: _Route, top: float):
    """Source's right side → across each waypoint's column → target's left
    side, with horizontal tangents: a smooth left-to-right curve."""
    from matplotlib.path import Path

    s, d = r.source, r.target
    points = [(s.x + s.w / 2, top + s.y + r.out_port)]
    for w in r.waypoints:
        points += [(w.x - w.w / 2, top + w.y), (w.x + w.w / 2, top + w.y)]
    points.append((d.x - d.w / 2, top + d.y + r.in_port))
    verts, codes = [points[0]], [Path.MOVETO]
    for i, (a, b) in enumerate(zip(points, points[1:])):
        if i % 2 == 1:  # across a waypoint's column: straight
            verts.append(b)
            codes.append(Path.LINETO)
            continue
        mid = (b[0] - a[0]) / 2
        verts += [(a[0] + mid, a[1]), (b[0] - mid, b[1]), b]
        codes += [Path.CURVE4] * 3
    return Path(verts, codes)


def _fit_scale(ax, width: float, height: float) -> float:
    fig_w, fig_h = ax.figure.get_size_inches()
    pos = ax.get_position()
    return max(min(pos.width * fig_w / width, pos.height * fig_h / height), 0.05)


def _draw(ax, g: Graph, panels: list[_Panel], width: float, height: float, scale: float,
          nested: str = "all") -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

    fs = FONT * scale
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)  # y grows downwards, like the text
    ax.set_aspect("equal", adjustable="box")
    ax.set_axis_off()
    on_dep = {id(e.source) for e in g.dep_edges} | {id(e.target) for e in g.dep_edges}
    for p in panels:
        ax.add_artist(FancyBboxPatch((0.08, p.top), width - 0.16, p.height, boxstyle="round,pad=0,rounding_size=0.1",
                                    facecolor="#fafafa", edgecolor="#bbbbbb", linewidth=0.8, zorder=0))
        ax.text(0.2, p.top + 0.08, p.title, fontsize=fs * 1.1, fontweight="bold", va="top", ha="left",
                color="#333333", zorder=1)
        top = p.top + p.rows_top
        for b in p.boxes:
            kind = "ghost" if b.ghost else b.node.kind
            edge = DEP_COLOR if (id(b.node) in on_dep and not b.ghost) else ("#999999" if b.ghost else "#444444")
            ax.add_artist(FancyBboxPatch((b.x - b.w / 2, top + b.y - BOX_H / 2), b.w, BOX_H,
                                        boxstyle="round,pad=0,rounding_size=0.06", facecolor=FILL[kind],
                                        edgecolor=edge, linewidth=1.4 if edge == DEP_COLOR else 0.8,
                                        linestyle="--" if b.ghost else "-", zorder=3))
            name = ("^" if b.ghost else "") + b.node.name
            ax.text(b.x, top + b.y - 0.055, name, fontsize=fs, family="monospace", ha="center", va="center",
                    color="#777777" if b.ghost else "#000000", zorder=4)
            ax.text(b.x, top + b.y + 0.105, b.node.opcode, fontsize=fs * 0.8, ha="center", va="center",
                    color="#666666", style="italic", zorder=4)
        for r in p.routes:
            style = dict(color=DEP_COLOR, linestyle=(0, (4, 2.5)), linewidth=1.4, zorder=2) if r.edge.dep else \
                dict(color=DATA_COLOR, linestyle="-", linewidth=0.8, zorder=1.5)
            s, d = r.source, r.target
            if r.backward:  # only with a cycle: leave the box from below, come back round
                arrow = FancyArrowPatch((s.x, top + s.y + BOX_H / 2), (d.x, top + d.y + BOX_H / 2),
                                        connectionstyle="arc3,rad=0.4", **style)
            else:
                arrow = FancyArrowPatch(path=_route_path(r, top), **style)
            arrow.set_arrowstyle("-|>", head_length=0.45, head_width=0.22)
            arrow.set_mutation_scale(10 * scale)
            ax.add_artist(arrow)
            if r.edge.result is not None and not r.edge.dep:
                # A tag on the edge where it leaves the box: which result it reads.
                ax.text(s.x + s.w / 2 + 0.03, top + s.y + r.out_port, f"#{r.edge.result}", fontsize=fs * 0.7,
                        color=DATA_COLOR, ha="left", va="center", zorder=4,
                        bbox=dict(boxstyle="square,pad=0.05", facecolor="#fafafa", edgecolor="none"))
    handles = [
        Line2D([], [], color=DATA_COLOR, linewidth=0.9, label="data edge (operand)"),
        Line2D([], [], color=DEP_COLOR, linewidth=1.4, linestyle=(0, (4, 2.5)), label="dep edge (add_dep_edge)"),
        Patch(facecolor=FILL["instruction"], edgecolor=DEP_COLOR, linewidth=1.4, label="on a dep edge"),
        Patch(facecolor=FILL["region"], edgecolor="#444444",
              label="op with regions" + (" (panels below)" if nested != "none" else "")),
        Patch(facecolor=FILL["argument"], edgecolor="#444444", label="argument"),
        Patch(facecolor=FILL["ghost"], edgecolor="#999999", linestyle="--", label="^value of an enclosing block"),
    ]
    fns = ", ".join(f"@{f.name}" for f in g.functions)
    title = (f"{g.module.name} {fns}: {len(g.nodes)} nodes, {len(g.data_edges)} data edges, "
             f"{len(g.dep_edges)} dep edges")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.08 / width, 1 - 0.05 / height),
              ncol=3, fontsize=fs * 0.9, title=title, title_fontsize=fs * 1.05, frameon=False,
              alignment="left", handlelength=3)
