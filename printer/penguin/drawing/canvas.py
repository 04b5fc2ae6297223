"""The layout drawn with matplotlib (`plot`, `render`): to a PNG or SVG file,
to bytes, into an Axes of the caller's, or as a new Figure. matplotlib is
imported on first use only: the runtime itself needs numpy alone."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence

from printer.penguin.drawing.layout import BOX_H, FONT, TITLE_FONT, Box, Panel, Route, Sheet, route_curve, sheet
from printer.penguin.drawing.model import DATA_COLOR, DEP_COLOR, FILL, graph

# `Module` is named in annotations only (see model.py).

PLOT_FORMATS = ("png", "svg")


def plot(module: Module, path_or_ax=None, function: str | Sequence[str] | None = "main", *,
         nested: str = "deps", dpi: int = 110):
    """Draw the data and dep edges of `function` (a name, a list of names, or
    every function if None).
    Each block is a panel: the function's own first, then the nested blocks
    that hold a dep edge or lead to one (the block of the op whose region
    holds it, and so on up: `nested="deps"`, the default), every nested
    block (`nested="all"`), or none (`nested="none"`). The title counts
    the blocks left without a panel.

    `path_or_ax`: a path ending in .png or .svg (written with the Agg / SVG
    backend, no display needed), a binary file object (PNG), a matplotlib
    Axes to draw into, or None for a new Figure sized to the graph. Returns
    the Figure."""
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    fmt = None  # png or svg for a path; None for an Axes, a file object or no target
    if path_or_ax is not None and not isinstance(path_or_ax, Axes) and not hasattr(path_or_ax, "write"):
        fmt = _format_of(path_or_ax)
    laid_out = sheet(graph(module, function), nested)
    width, height = laid_out.width, laid_out.height
    if isinstance(path_or_ax, Axes):
        ax = path_or_ax
        fig = ax.figure
        Canvas(ax, laid_out, scale=_fit_scale(ax, width, height)).draw()
        return fig
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    # Pixel limits of Agg: a huge graph is drawn smaller rather than refused.
    limit = 60000 / dpi
    shrink = min(1.0, limit / width, limit / height)
    fig = Figure(figsize=(max(width * shrink, 2.0), max(height * shrink, 1.0)), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    Canvas(ax, laid_out, scale=shrink).draw()
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


def render(module: Module, fmt: str = "png", function: str | Sequence[str] | None = "main", *,
           nested: str = "deps", dpi: int = 110) -> bytes:
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


def _fit_scale(ax, width: float, height: float) -> float:
    fig_w, fig_h = ax.figure.get_size_inches()
    pos = ax.get_position()
    return max(min(pos.width * fig_w / width, pos.height * fig_h / height), 0.05)


class Canvas:
    """A Sheet drawn on a matplotlib Axes, in the sheet's own coordinates
    (inches, y down). `scale` is how large one of those inches is on the
    Axes (1.0 on a figure sized to the sheet); text and arrow heads follow it."""

    def __init__(self, ax, laid_out: Sheet, scale: float):
        self.ax = ax
        self.sheet = laid_out
        self.scale = scale
        self.font = FONT * scale
        deps = laid_out.graph.dep_edges
        self.on_dep = {id(e.source) for e in deps} | {id(e.target) for e in deps}

    def draw(self) -> None:
        """Every panel, then the legend above them."""
        ax, s = self.ax, self.sheet
        ax.set_xlim(0, s.width)
        ax.set_ylim(s.height, 0)  # y grows downwards, like the text
        ax.set_aspect("equal", adjustable="box")
        ax.set_axis_off()
        for p in s.panels:
            self.panel(p)
        self.legend()

    def panel(self, p: Panel) -> None:
        """Its frame and title, its boxes, then its edges."""
        from matplotlib.patches import FancyBboxPatch

        self.ax.add_artist(FancyBboxPatch((0.08, p.top), self.sheet.width - 0.16, p.height,
                                          boxstyle="round,pad=0,rounding_size=0.1",
                                          facecolor="#fafafa", edgecolor="#bbbbbb", linewidth=0.8, zorder=0))
        self.ax.text(0.2, p.top + 0.08, p.title, fontsize=self.font * 1.1, fontweight="bold", va="top",
                     ha="left", color="#333333", zorder=1)
        top = p.top + p.rows_top
        for b in p.boxes:
            self.node(b, top)
        for r in p.routes:
            self.edge(r, top)
        self.tags(p, top)

    def node(self, b: Box, top: float) -> None:
        """A box (red-edged on a dep edge, dashed for a ghost), its name and its opcode."""
        from matplotlib.patches import FancyBboxPatch

        ax, fs = self.ax, self.font
        kind = "ghost" if b.ghost else b.node.kind
        edge = DEP_COLOR if (id(b.node) in self.on_dep and not b.ghost) else ("#999999" if b.ghost else "#444444")
        ax.add_artist(FancyBboxPatch((b.x - b.w / 2, top + b.y - BOX_H / 2), b.w, BOX_H,
                                     boxstyle="round,pad=0,rounding_size=0.06", facecolor=FILL[kind],
                                     edgecolor=edge, linewidth=1.4 if edge == DEP_COLOR else 0.8,
                                     linestyle="--" if b.ghost else "-", zorder=3))
        name = ("^" if b.ghost else "") + b.node.name
        ax.text(b.x, top + b.y - 0.055, name, fontsize=fs, family="monospace", ha="center", va="center",
                color="#777777" if b.ghost else "#000000", zorder=4)
        ax.text(b.x, top + b.y + 0.105, b.node.opcode, fontsize=fs * 0.8, ha="center", va="center",
                color="#666666", style="italic", zorder=4)

    def edge(self, r: Route, top: float) -> None:
        """An arrow (dashed red for a dep edge), tagged with the result it reads."""
        from matplotlib.patches import FancyArrowPatch

        style = dict(color=DEP_COLOR, linestyle=(0, (4, 2.5)), linewidth=1.4, zorder=2) if r.edge.dep else \
            dict(color=DATA_COLOR, linestyle="-", linewidth=0.8, zorder=1.5)
        s, d = r.source, r.target
        if r.backward:  # only with a cycle: leave the box from below, come back round
            arrow = FancyArrowPatch((s.x, top + s.y + BOX_H / 2), (d.x, top + d.y + BOX_H / 2),
                                    connectionstyle="arc3,rad=0.4", **style)
        else:
            arrow = FancyArrowPatch(path=_route_path(r, top), **style)
        arrow.set_arrowstyle("-|>", head_length=0.45, head_width=0.22)
        arrow.set_mutation_scale(10 * self.scale)
        self.ax.add_artist(arrow)

    def tags(self, p, top: float) -> None:
        """Which result each data edge reads, where it leaves its box (`layout.tags`)."""
        from printer.penguin.drawing.layout import TAG_FONT, tags
        from printer.penguin.drawing.vector import Vector

        for t in tags(p, Vector.text_width):
            self.ax.text(t.x, top + t.y, t.text, fontsize=self.font * TAG_FONT / FONT, color=DATA_COLOR,
                         ha="left", va="center", zorder=4,
                         bbox=dict(boxstyle="square,pad=0.05", facecolor="#fafafa", edgecolor="none"))

    def legend(self) -> None:
        """What the lines and fills mean, under a title counting nodes and edges."""
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        fs = self.font
        handles = [
            Line2D([], [], color=DATA_COLOR, linewidth=0.9, label="data edge (operand)"),
            Line2D([], [], color=DEP_COLOR, linewidth=1.4, linestyle=(0, (4, 2.5)), label="dep edge (add_dep_edge)"),
            Patch(facecolor=FILL["instruction"], edgecolor=DEP_COLOR, linewidth=1.4, label="on a dep edge"),
            Patch(facecolor=FILL["region"], edgecolor="#444444",
                  label="op with regions" + (" (panels below)" if self.sheet.nested != "none" else "")),
            Patch(facecolor=FILL["argument"], edgecolor="#444444", label="argument"),
            Patch(facecolor=FILL["ghost"], edgecolor="#999999", linestyle="--", label="^value of an enclosing block"),
        ]
        title = "\n".join(self.sheet.title)  # wrapped by the layout to the picture's width
        self.ax.legend(handles=handles, loc="upper left",
                       bbox_to_anchor=(0.08 / self.sheet.width, 1 - 0.05 / self.sheet.height),
                       ncol=3, fontsize=fs * 0.9, title=title, title_fontsize=fs * TITLE_FONT / FONT, frameon=False,
                       alignment="left", handlelength=3)


def _route_path(r: Route, top: float):
    """The route's curve (`layout.route_curve`) as a matplotlib Path."""
    from matplotlib.path import Path

    verts, codes = route_curve(r, top)
    return Path(verts, [{"M": Path.MOVETO, "L": Path.LINETO, "C": Path.CURVE4}[c] for c in codes])
