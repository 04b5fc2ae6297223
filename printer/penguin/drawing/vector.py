"""The layout written as SVG text (`svg`): the picture `hlo2penguin --plot
OUT.svg` writes. The same Sheet as canvas.py and raster.py, the same boxes,
curves, colours and legend, written directly as XML: matplotlib's figure
machinery takes about a third of a second to import, more than the whole
drawing, and a command-line run would pay that on every call.

Units are points (72 to the sheet's inch), so font sizes and line widths
are the ones canvas.py gives matplotlib. The curves are `route_curve`'s
own Bézier segments as path commands, not flattened; each ends at the base
of its arrow head, a triangle whose tip is the route's end. Text stays text
(names stay searchable); its baseline is placed from DejaVu's metrics rather
than `dominant-baseline`, which viewers honour unevenly."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from printer.penguin.drawing.layout import (BOX_H, FONT, TAG_FONT, TAG_PAD, Box, Route, Sheet, Tag, route_curve,
                                            sans_width, sheet)
from printer.penguin.drawing.model import DATA_COLOR, DEP_COLOR, FILL, graph
from printer.penguin.drawing.painter import Painter

# `Module` is named in annotations only (see model.py).

PT = 72.0  # points to the sheet's inch
FAMILY = {"mono": "'DejaVu Sans Mono', monospace", "sans": "'DejaVu Sans', sans-serif",
          "bold": "'DejaVu Sans', sans-serif", "italic": "'DejaVu Sans', sans-serif"}
STYLE = {"bold": ' font-weight="bold"', "italic": ' font-style="italic"'}
# DejaVu's ascender and descender (em): Pillow's "a" (top) and "m" (middle) vertical anchors.
ASCENT, DESCENT = 0.928, 0.236
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def svg(module: Module, function: str | Sequence[str] | None = "main", *, nested: str = "deps") -> bytes:
    """The SVG bytes of the picture `canvas.plot` draws of `function` (a
    name, several, or every function if None) and the nested blocks of
    `nested` (deps, the default, all or none), written without matplotlib."""
    return Vector(sheet(graph(module, function), nested)).draw()


def escape(text: str) -> str:
    """`text` as XML character data or an attribute value (either quote)."""
    text = _NOT_XML.sub("\ufffd", text)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


def _n(v: float) -> str:
    """A coordinate in points, short: two decimals, no trailing zeros."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


class Vector(Painter):
    """A Sheet written as SVG elements, in points, y down as in the sheet."""

    def __init__(self, laid_out: Sheet):
        super().__init__(laid_out)
        self.out: list[str] = []

    # ---------------------------------------------------------------- units

    @staticmethod
    def pt(inches: float) -> float:
        return inches * PT

    # ---------------------------------------------------------------- drawing

    def draw(self) -> bytes:
        """Every panel, then the legend; the SVG document's bytes."""
        w, h = self.pt(self.sheet.width), self.pt(self.sheet.height)
        self.out.append('<?xml version="1.0" encoding="utf-8"?>\n'
                        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(w)}pt" height="{_n(h)}pt" '
                        f'viewBox="0 0 {_n(w)} {_n(h)}" version="1.1">\n'
                        f'<rect width="{_n(w)}" height="{_n(h)}" fill="#ffffff"/>\n')
        for p in self.sheet.panels:
            self.panel(p)
        self.legend()
        self.out.append("</svg>\n")
        return "".join(self.out).encode("utf-8")

    def group(self, kind: str) -> None:
        self.out.append(f'<g class="{kind}">\n')

    def end_group(self) -> None:
        self.out.append("</g>\n")

    def node(self, b: Box, top: float) -> None:
        """A box (red-edged on a dep edge, dashed for a ghost), its name and its opcode."""
        kind = "ghost" if b.ghost else b.node.kind
        dep = id(b.node) in self.on_dep and not b.ghost
        edge = DEP_COLOR if dep else ("#999999" if b.ghost else "#444444")
        self.out.append(f'<g class="node {kind}">')
        self.box((b.x - b.w / 2, top + b.y - BOX_H / 2, b.x + b.w / 2, top + b.y + BOX_H / 2), 0.06, FILL[kind],
                 edge, 1.4 if dep else 0.8, dashed=b.ghost, newline=False)
        name = ("^" if b.ghost else "") + b.node.name
        self.text((b.x, top + b.y - 0.055), name, "mono", FONT, "#777777" if b.ghost else "#000000", "mm",
                  "name", newline=False)
        self.text((b.x, top + b.y + 0.105), b.node.opcode, "italic", FONT * 0.8, "#666666", "mm", "opcode",
                  newline=False)
        self.out.append("</g>\n")

    def edge(self, r: Route, top: float) -> None:
        """A path with an arrow head (dashed red for a dep edge): the route's
        own curve, ending at the head's base; the head's tip is the route's end."""
        color, width = (DEP_COLOR, 1.4) if r.edge.dep else (DATA_COLOR, 0.8)
        s, d = r.source, r.target
        if r.backward:  # only with a cycle: leave the box from below, come back round (arc3, rad 0.4)
            a, b = (s.x, top + s.y + BOX_H / 2), (d.x, top + d.y + BOX_H / 2)
            mid = ((a[0] + b[0]) / 2 - 0.4 * (b[1] - a[1]), (a[1] + b[1]) / 2 + 0.4 * (b[0] - a[0]))
            verts, codes = [a, mid, b], ["M", "Q", "Q"]
        else:
            verts, codes = route_curve(r, top)
        verts = [(self.pt(x), self.pt(y)) for x, y in verts]
        head_len, head_w = 4.5, 2.2  # points, as raster.py
        tip = verts[-1]
        (x0, y0) = next((v for v in reversed(verts[:-1]) if v != tip), (tip[0] - 1, tip[1]))
        length = math.hypot(tip[0] - x0, tip[1] - y0) or 1.0
        ux, uy = (tip[0] - x0) / length, (tip[1] - y0) / length
        base = (tip[0] - ux * head_len, tip[1] - uy * head_len)
        verts[-1] = base  # the curve's last segment keeps its tangent: the line meets the head's base
        dash = f' stroke-dasharray="{_n(4 * width)} {_n(2.5 * width)}"' if r.edge.dep else ""
        kind = "dep" if r.edge.dep else "data"
        self.out.append(f'<path class="edge {kind}" d="{_path(verts, codes)}" fill="none" stroke="{color}" '
                        f'stroke-width="{_n(width)}"{dash}/>'
                        f'<polygon class="head {kind}" points="{_n(tip[0])},{_n(tip[1])} '
                        f'{_n(base[0] - uy * head_w)},{_n(base[1] + ux * head_w)} '
                        f'{_n(base[0] + uy * head_w)},{_n(base[1] - ux * head_w)}" fill="{color}"/>\n')

    def tag(self, t: Tag, top: float) -> None:
        """Which result a data edge reads, where it leaves its box (`layout.tags`)."""
        x, y, text = t.x, top + t.y, t.text
        size = TAG_FONT
        pad = size * TAG_PAD
        w = _text_width(text, size)
        self.out.append(f'<rect x="{_n(self.pt(x) - pad)}" y="{_n(self.pt(y) - size * (ASCENT + DESCENT) / 2 - pad)}" '
                        f'width="{_n(w + 2 * pad)}" height="{_n(size * (ASCENT + DESCENT) + 2 * pad)}" '
                        'fill="#fafafa"/>')
        self.text((x, y), text, "sans", size, DATA_COLOR, "lm", "tag")

    def legend_mark(self, e) -> None:
        """A <line>, not a <path>: every path of the picture is a route."""
        width, dash = (1.4, ' stroke-dasharray="5.6 3.5"') if e.what == "dash" else (0.9, "")
        self.out.append(f'<line x1="{_n(self.pt(e.x))}" y1="{_n(self.pt(e.y))}" '
                        f'x2="{_n(self.pt(e.x + e.handle))}" y2="{_n(self.pt(e.y))}" stroke="{e.style}" '
                        f'stroke-width="{_n(width)}"{dash}/>\n')

    @staticmethod
    def text_width(label: str, points: float) -> float:
        """`label`'s width in inches, from DejaVu Sans's advances (`layout.sans_width`)."""
        return sans_width(label, points)

    # ---------------------------------------------------------------- primitives

    def box(self, corners, radius: float, fill: str, edge: str, width: float, dashed: bool = False,
            newline: bool = True) -> None:
        x0, y0, x1, y1 = (self.pt(v) for v in corners)
        rounded = f' rx="{_n(self.pt(radius))}"' if radius else ""
        dash = f' stroke-dasharray="{_n(3.7 * width)} {_n(1.6 * width)}"' if dashed else ""
        self.out.append(f'<rect x="{_n(x0)}" y="{_n(y0)}" width="{_n(x1 - x0)}" height="{_n(y1 - y0)}"{rounded} '
                        f'fill="{fill}" stroke="{edge}" stroke-width="{_n(width)}"{dash}/>'
                        + ("\n" if newline else ""))

    def text(self, inches, text: str, style: str, points: float, color: str, anchor: str, role: str = "",
             newline: bool = True) -> None:
        """`anchor` as Pillow's: l(eft) or m(iddle) across, a(scender) or m(iddle) down."""
        x, y = self.pt(inches[0]), self.pt(inches[1])
        y += points * (ASCENT if anchor[1] == "a" else (ASCENT - DESCENT) / 2)  # to the baseline
        across = ' text-anchor="middle"' if anchor[0] == "m" else ""
        cls = f' class="{role}"' if role else ""
        self.out.append(f'<text{cls} x="{_n(x)}" y="{_n(y)}"{across} font-family="{FAMILY[style]}"'
                        f'{STYLE.get(style, "")} font-size="{_n(points)}" fill="{color}">{escape(text)}</text>'
                        + ("\n" if newline else ""))


def _path(verts, codes) -> str:
    """Vertices and codes (M, L, C as route_curve gives them; Q for a
    quadratic's control and end) as SVG path data: a C or Q takes its
    points three or two at a time."""
    parts = []
    i = 0
    while i < len(verts):
        code = codes[i]
        take = 3 if code == "C" else 2 if code == "Q" else 1
        points = " ".join(f"{_n(x)},{_n(y)}" for x, y in verts[i:i + take])
        parts.append(f"{code}{points}")
        i += take
    return " ".join(parts)


def _text_width(text: str, points: float) -> float:
    """The width of `text` in DejaVu Sans at `points`, in points: no font is read (`layout.sans_width`)."""
    return sans_width(text, points) * PT
