"""The layered layout of a picture: one panel per block, stacked under the
legend. In a panel, x is the depth of a node in the block's DAG of data and
dep edges (an op with regions stands for everything inside it, as in
`Block.schedule`), y its place in its layer, in schedule order; an edge that
skips layers runs through waypoints, and a value captured from an enclosing
block is a ghost box. Pure geometry, in inches: canvas.py draws it."""

from __future__ import annotations

from dataclasses import dataclass, field

from printer.penguin.drawing.model import GEdge, GNode, Graph
from printer.penguin.graph import Argument, Block, ScheduleError
from printer.penguin.titles import Titles, every_block


# Lengths are in inches: a file's figure is sized so that one data unit is one inch.
FONT = 8.0                      # points, node names
CHAR = FONT * 0.6 / 72          # width of a monospace character
ROW = 0.62                      # vertical pitch of nodes in a layer
BOX_H = 0.42
GAP = 0.55                      # horizontal space between layers (room for arrows)
PANEL_PAD = 0.25
TITLE_H = 0.3
HEADER_H = 0.75                 # the legend, above the panels (with a title of one line)
MIN_WIDTH = 7.0                 # room for the legend
TITLE_FONT = FONT * 1.05        # points, the picture's title
TITLE_X = 0.12                  # the title's left end; it keeps as far from the right edge
TITLE_LINE = TITLE_FONT * 1.2 / 72  # between the lines of a title that wraps (matplotlib's line spacing)
# A renderer draws text at a whole number of pixels (Pillow's 8.4 points at 220 pixels an inch: 25.7 → 26):
# a title's line keeps this much of its room free.
TITLE_SLACK = 1.04


@dataclass(eq=False)
class Box:
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
class Route:
    source: Box
    target: Box
    edge: GEdge
    backward: bool = False      # only with a cycle (schedule impossible)
    waypoints: list[Box] = field(default_factory=list)
    out_port: float = 0.0       # y offsets where it leaves its source and reaches its target,
    in_port: float = 0.0        # so that edges sharing a box stay apart


@dataclass(eq=False)
class Panel:
    block: Block
    title: str
    boxes: list[Box] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    top: float = 0.0  # y of the panel's upper edge
    rows_top: float = 0.0  # y of the first row's upper edge, inside the panel


@dataclass(eq=False)
class Sheet:
    """A whole picture: the panels of a graph, stacked under the legend."""

    graph: Graph
    nested: str                 # which nested blocks have a panel (NESTED)
    panels: list[Panel]
    width: float
    height: float
    hidden: int = 0             # the nested blocks of the functions drawn that have no panel
    title: list[str] = field(default_factory=list)  # the title's lines (`legend_title`), each within the width

    @property
    def title_extra(self) -> float:
        """How much lower than a one-line title's the legend sits: the lines the title wraps onto."""
        return max(len(self.title) - 1, 0) * TITLE_LINE


def _width(node: GNode, ghost: bool) -> float:
    name = ("^" if ghost else "") + node.name
    return max(len(name), len(node.opcode) * 0.8, 4) * CHAR + 0.18


NESTED = ("deps", "all", "none")  # the first is the default


def blocks_with_deps(g: Graph) -> set[int]:
    """id() of each block of `g` that holds an end of a dep edge, and of
    each block on the way down to one from its function (the block of the
    op whose region holds it, and so on up): the blocks `nested="deps"` draws."""
    found: set[int] = set()
    for e in g.dep_edges:
        for end in (e.source, e.target):
            block = end.block
            while id(block) not in found:  # up to the function, or to a block found already
                found.add(id(block))
                if block.parent is None:
                    break
                block = block.parent.parent
    return found


def _blocks(g: Graph) -> list[Block]:
    """Each function of `g`, then the blocks nested in it, in program order."""
    return every_block(g.functions)


def _panels(g: Graph, nested: str = "deps") -> list[Panel]:
    """A panel for each function of `g` and for the nested blocks `nested`
    names: every one (all), those that hold or lead to a dep edge (deps,
    `blocks_with_deps`), none; in program order, each titled as
    `titles.Titles` names it (as the report and Model Explorer do)."""
    if nested not in NESTED:
        raise ValueError(f"nested={nested!r}: give one of {', '.join(NESTED)}")
    with_deps = blocks_with_deps(g) if nested == "deps" else set()
    titles = Titles(every_block(g.module.functions))
    return [_layout(g, block, titles.of(block)) for block in _blocks(g)
            if block.parent is None or nested == "all" or id(block) in with_deps]


def sheet(g: Graph, nested: str = "deps") -> Sheet:
    """Lay out every panel of `g` (see `_panels`) and stack them under the
    title and the legend: each panel's top, the picture's width (the widest
    panel's, or the legend's) and height; the title wraps onto as many
    lines as that width needs, and the header grows with it."""
    panels = _panels(g, nested)
    width = max([MIN_WIDTH] + [p.width for p in panels])
    s = Sheet(g, nested, panels, width, 0.0, hidden=len(_blocks(g)) - len(panels))
    s.title = wrap(legend_title(s), width - 2 * TITLE_X, TITLE_FONT)
    y = HEADER_H + s.title_extra
    for p in panels:
        p.top = y
        y += p.height + PANEL_PAD
    s.height = y
    return s


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


def _layout(g: Graph, block: Block, title: str) -> Panel:
    """A layered (Sugiyama-style) layout of one block: layers by depth in the
    data/dep DAG, waypoints for edges that skip layers, order within a layer
    from the schedule, then barycentre sweeps that keep the order with the
    fewest crossings, then rows placed as close to their neighbours as the
    order allows."""
    panel = Panel(block, title)
    here = _representatives(g, block)
    try:
        order = block.schedule()
    except ScheduleError:
        order = list(block.instructions)  # a cycle: keep program order, draw the back edges curved
    boxes: dict[int, Box] = {}
    for arg in block.arguments:
        boxes[id(arg)] = Box(g.node(arg))
    for instr in order:
        boxes[id(instr)] = Box(g.node(instr))
    ghosts: dict[int, Box] = {}
    routes: list[Route] = []
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
                ghosts[id(e.source.obj)] = Box(e.source, ghost=True)
            src_box = ghosts[id(e.source.obj)]
        else:
            src_box = boxes[id(src.obj)]
        key = (id(src_box), id(boxes[id(dst.obj)]), e.dep, e.result)
        if key not in seen:
            seen.add(key)
            routes.append(Route(src_box, boxes[id(dst.obj)], e))
    real = list(ghosts.values()) + list(boxes.values())
    for i, b in enumerate(real):
        b.rank = float(i)
        b.w = _width(b.node, b.ghost)
    for r in routes:
        r.backward = not (r.source.ghost or r.source.rank < r.target.rank)
    forward = [r for r in routes if not r.backward]

    # Layers: longest path from the block's inputs, in schedule order.
    incoming: dict[int, list[Box]] = {id(b): [] for b in real}
    outgoing: dict[int, list[Box]] = {id(b): [] for b in real}
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
    up: dict[int, list[Box]] = {id(b): [] for b in real}     # neighbours in the layer before
    down: dict[int, list[Box]] = {id(b): [] for b in real}   # neighbours in the layer after
    for r in forward:
        chain = [r.source]
        for layer in range(r.source.layer + 1, r.target.layer):
            w = Box(None, layer=layer, rank=r.source.rank + 0.5)
            items.append(w)
            up[id(w)], down[id(w)] = [], []
            r.waypoints.append(w)
            chain.append(w)
        chain.append(r.target)
        for a, b in zip(chain, chain[1:]):
            down[id(a)].append(b)
            up[id(b)].append(a)
    depth = max((b.layer for b in items), default=0) + 1
    layers: list[list[Box]] = [[] for _ in range(depth)]
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


def _assign_ports(routes: list[Route]) -> None:
    """Spread the ends of the edges on one side of a box over its height, in
    the order of where they come from (or go), data before dep on a tie."""
    span = BOX_H * 0.75
    # (box, leaving): the edges leave a box on its right and reach it on its left, each side spread apart
    ends: dict[tuple[int, bool], list[tuple[float, int, Route, bool]]] = {}
    for r in routes:
        first = r.waypoints[0] if r.waypoints else r.target
        last = r.waypoints[-1] if r.waypoints else r.source
        ends.setdefault((id(r.source), True), []).append((first.y, r.edge.dep, r, True))
        ends.setdefault((id(r.target), False), []).append((last.y, r.edge.dep, r, False))
    for side in ends.values():
        side.sort(key=lambda t: (t[0], t[1]))
        n = len(side)
        for i, (_, _, r, leaving) in enumerate(side):
            offset = 0.0 if n == 1 else -span / 2 + span * i / (n - 1)
            if leaving:
                r.out_port = offset
            else:
                r.in_port = offset


def _crossings(layers: list[list[Box]], down: dict[int, list[Box]]) -> int:
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


def _isotonic(column: list[Box], desired: list[float]) -> None:
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


# DejaVu Sans's advance of each printable ASCII character (space to `~`), in ems, read from the font
# (DejaVuSans.ttf, as matplotlib ships it): the sans-serif text of every renderer here is DejaVu Sans.
_SANS = [float(v) for v in """
0.318 0.401 0.46 0.838 0.636 0.95 0.78 0.275 0.39 0.39 0.5 0.838 0.318 0.361 0.318 0.337 0.636 0.636 0.636
0.636 0.636 0.636 0.636 0.636 0.636 0.636 0.337 0.337 0.838 0.838 0.838 0.531 1 0.684 0.686 0.698 0.77 0.632
0.575 0.775 0.752 0.295 0.295 0.656 0.557 0.863 0.748 0.787 0.603 0.787 0.695 0.635 0.611 0.732 0.684 0.989
0.685 0.611 0.685 0.39 0.337 0.39 0.838 0.5 0.5 0.613 0.635 0.55 0.635 0.615 0.352 0.635 0.634 0.278 0.278
0.579 0.278 0.974 0.634 0.612 0.635 0.635 0.411 0.521 0.392 0.634 0.592 0.818 0.592 0.592 0.525 0.636 0.337
0.636 0.838""".split()]
SANS_ADVANCE = {chr(32 + i): v for i, v in enumerate(_SANS)}
WIDE = 1.0  # ems: a character outside the table, as wide as DejaVu's widest letters


def sans_width(text: str, points: float) -> float:
    """The width of `text` in DejaVu Sans at `points`, in inches (its
    advances added up; kerning, which only narrows, left out)."""
    return sum(SANS_ADVANCE.get(c, WIDE) for c in text) * points / 72


def wrap(text: str, width: float, points: float) -> list[str]:
    """`text` broken into lines no wider than `width` inches in DejaVu Sans
    at `points` (`sans_width`, with TITLE_SLACK to spare): at spaces, and
    inside a word only where the word alone is wider than a line."""
    room = width / TITLE_SLACK
    space = sans_width(" ", points)
    lines: list[str] = []
    line, used = "", 0.0
    for word in text.split(" "):
        size = sans_width(word, points)
        if line and used + space + size <= room:
            line, used = f"{line} {word}", used + space + size
            continue
        if line:
            lines.append(line)
        line, used = "", 0.0
        for c in word:  # the word on new lines, cut where a line is full
            step = sans_width(c, points)
            if line and used + step > room:
                lines.append(line)
                line, used = "", 0.0
            line, used = line + c, used + step
    lines.append(line)
    return lines


def route_curve(r: Route, top: float) -> tuple[list[tuple[float, float]], list[str]]:
    """A forward route's vertices and their codes (M move, L line, C a cubic
    Bézier's control or end point): source's right side → across each
    waypoint's column → target's left side, with horizontal tangents, a
    smooth left-to-right curve. `top`: the y of the panel's first row."""
    s, d = r.source, r.target
    points = [(s.x + s.w / 2, top + s.y + r.out_port)]
    for w in r.waypoints:
        points += [(w.x - w.w / 2, top + w.y), (w.x + w.w / 2, top + w.y)]
    points.append((d.x - d.w / 2, top + d.y + r.in_port))
    verts, codes = [points[0]], ["M"]
    for i, (a, b) in enumerate(zip(points, points[1:])):
        if i % 2 == 1:  # across a waypoint's column: straight
            verts.append(b)
            codes.append("L")
            continue
        mid = (b[0] - a[0]) / 2
        verts += [(a[0] + mid, a[1]), (b[0] - mid, b[1]), b]
        codes += ["C"] * 3
    return verts, codes


# --------------------------------------------------------------------------
# The legend, placed (what raster.py and vector.py draw under the title)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LegendEntry:
    """One mark of the legend and its label: `what` is line, dash or patch;
    `style` a colour (line, dash) or (fill, edge, dashed) for a patch; the
    mark runs from (x, y) for `handle` inches, the label starts at `label_x`."""

    what: str
    style: object
    label: str
    x: float
    y: float
    handle: float
    label_x: float


LEGEND_FONT = FONT * 0.9  # points, the legend's labels


def legend_title(s: Sheet) -> str:
    """The title above the legend, whole (`Sheet.title` holds it in lines):
    the module, its functions drawn, and what the picture draws (its boxes,
    its data and dep edges); where nested blocks have no panel, how much of
    the functions that leaves out and how many blocks."""
    g = s.graph
    fns = ", ".join(f"@{f.name}" for f in g.functions)
    nodes = len({id(b.node) for p in s.panels for b in p.boxes if b.node is not None and not b.ghost})
    # One route draws every edge between the same two boxes (results 0 and 1 of one op into one reader).
    routed = {(r.edge.source.id, r.edge.target.id, r.edge.dep) for p in s.panels for r in p.routes}
    data = sum((e.source.id, e.target.id, False) in routed for e in g.data_edges)
    deps = sum((e.source.id, e.target.id, True) in routed for e in g.dep_edges)
    counts = [(nodes, len(g.nodes), "nodes"), (data, len(g.data_edges), "data edges"),
              (deps, len(g.dep_edges), "dep edges")]
    if all(drawn == whole for drawn, whole, _ in counts) and not s.hidden:
        return f"{g.module.name} {fns}: " + ", ".join(f"{drawn} {what}" for drawn, _, what in counts)
    text = (f"{g.module.name} {fns}: " + ", ".join(f"{drawn}" + (f" of {whole}" if drawn != whole else "")
                                                   + f" {what}" for drawn, whole, what in counts) + " drawn")
    if s.hidden:
        text += (f"; {s.hidden} nested block{'s' if s.hidden != 1 else ''}"
                 + (" without a dep edge" if s.nested == "deps" else "") + " not drawn")
    return text


TAG_FONT = FONT * 0.85  # points, the result tags (`#1`) where an edge leaves a box: readable at the default size
TAG_PAD = 0.05          # of the tag's font size, round its text


@dataclass
class Tag:
    """Which result a data edge reads (`#1`), where it leaves its box: its
    text's left end and middle (inches, in the panel's rows), no two tags
    of a box overlapping."""

    text: str
    x: float
    y: float
    width: float   # inches, with its pad
    height: float


def tags(p: Panel, text_width) -> list[Tag]:
    """The tags of a panel: one per result a box's data edges read (its
    first edge's port), moved right past a tag of the same box they would
    overlap. `text_width(label, points)` measures a label in inches."""
    placed: dict[int, list[Tag]] = {}
    said: set[tuple[int, int]] = set()
    height = TAG_FONT * (1.0 + 2 * TAG_PAD) * 1.17 / 72  # DejaVu's ascent and descent, in inches
    for r in sorted(p.routes, key=lambda r: r.out_port):
        if r.edge.result is None or r.edge.dep or (id(r.source), r.edge.result) in said:
            continue
        said.add((id(r.source), r.edge.result))
        s = r.source
        text = f"#{r.edge.result}"
        width = text_width(text, TAG_FONT) + 2 * TAG_PAD * TAG_FONT / 72
        tag = Tag(text, s.x + s.w / 2 + 0.03, s.y + r.out_port, width, height)
        mine = placed.setdefault(id(s), [])
        while True:  # right of every tag of this box it would overlap (each move is rightwards: it ends)
            hit = [o for o in mine if abs(o.y - tag.y) < height and tag.x < o.x + o.width and o.x < tag.x + width]
            if not hit:
                break
            tag.x = max(o.x + o.width for o in hit) + 0.02
        mine.append(tag)
    return [t for ts in placed.values() for t in ts]


def legend_entries(s: Sheet, text_width) -> list[LegendEntry]:
    """The legend's six entries, in three columns of two, placed as
    canvas's matplotlib legend places them; `text_width(label, points)`
    measures a label in inches (each renderer measures its own text)."""
    from printer.penguin.drawing.model import DATA_COLOR, DEP_COLOR, FILL

    region = "op with regions" + (" (panels below)" if s.nested != "none" else "")
    marks = [("line", DATA_COLOR, "data edge (operand)"), ("dash", DEP_COLOR, "dep edge (add_dep_edge)"),
             ("patch", (FILL["instruction"], DEP_COLOR, False), "on a dep edge"),
             ("patch", (FILL["region"], "#444444", False), region),
             ("patch", (FILL["argument"], "#444444", False), "argument"),
             ("patch", (FILL["ghost"], "#999999", True), "^value of an enclosing block")]
    handle = 3 * LEGEND_FONT / 72  # handlelength 3 (font sizes), in inches
    placed, x = [], 0.12
    for column in range(3):
        widest = 0.0
        for row in range(2):
            what, style, label = marks[column * 2 + row]
            placed.append(LegendEntry(what, style, label, x, 0.3 + s.title_extra + row * 0.17, handle,
                                      x + handle + 0.11))
            widest = max(widest, text_width(label, LEGEND_FONT))
        x += handle + 0.11 + widest + 0.28
    return placed

