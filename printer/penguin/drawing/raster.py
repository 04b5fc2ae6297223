"""The layout drawn with Pillow alone, as PNG bytes (`png`): the picture
`hlo2penguin --plot OUT.png` writes. The same Sheet as canvas.py, the same
boxes, curves, colours and legend, without matplotlib: Pillow is imported
in milliseconds where matplotlib's figure machinery takes about a third of
a second, more than the whole drawing, and a command-line run pays that on
every call. Lines are drawn at twice the size and scaled down (antialiased);
text is DejaVu, the fonts matplotlib ships (Pillow's own font without them)."""

from __future__ import annotations

import importlib.util
import io
import math
import os
from collections.abc import Sequence
from functools import lru_cache

from printer.penguin.drawing.layout import BOX_H, FONT, TAG_FONT, TAG_PAD, Box, Route, Sheet, Tag, route_curve, sheet
from printer.penguin.drawing.model import DATA_COLOR, DEP_COLOR, FILL, graph
from printer.penguin.drawing.painter import Painter

# `Module` is named in annotations only (see model.py).

FONT_FILES = {"mono": "DejaVuSansMono.ttf", "sans": "DejaVuSans.ttf", "bold": "DejaVuSans-Bold.ttf",
              "italic": "DejaVuSans-Oblique.ttf"}
MAX_PIXELS = 40_000_000  # supersampled, at most this many pixels (120 MB); else drawn at the final size


def png(module: Module, function: str | Sequence[str] | None = "main", *, nested: str = "deps",
        dpi: int = 110) -> bytes:
    """The PNG bytes of the picture `canvas.plot` draws of `function` (a
    name, several, or every function if None) and the nested blocks of
    `nested` (deps, the default, all or none), drawn with Pillow."""
    return Raster(sheet(graph(module, function), nested), dpi).draw()


class Raster(Painter):
    """A Sheet drawn on a Pillow image: `scale` pixels to the sheet's inch."""

    def __init__(self, laid_out: Sheet, dpi: float):
        from PIL import Image, ImageDraw

        super().__init__(laid_out)
        # Pixel limits as in canvas.plot: a huge graph is drawn smaller rather than refused.
        limit = 60000 / dpi
        shrink = min(1.0, limit / laid_out.width, limit / laid_out.height)
        self.dpi = dpi * shrink
        self.factor = 2 if 4 * laid_out.width * laid_out.height * self.dpi ** 2 <= MAX_PIXELS else 1
        self.size = (max(round(laid_out.width * self.dpi), 1), max(round(laid_out.height * self.dpi), 1))
        self.scale = self.dpi * self.factor
        self.image = Image.new("RGB", (self.size[0] * self.factor, self.size[1] * self.factor), "white")
        self.ink = ImageDraw.Draw(self.image)

    # ---------------------------------------------------------------- units

    def px(self, inches: float) -> float:
        return inches * self.scale

    def pt(self, points: float) -> float:
        """A length in points (a line width, a font size) in pixels."""
        return points * self.scale / 72

    def font(self, style: str, points: float):
        return _font(style, max(round(self.pt(points)), 1))

    # ---------------------------------------------------------------- drawing

    def draw(self) -> bytes:
        """Every panel, then the legend; the PNG bytes."""
        for p in self.sheet.panels:
            self.panel(p)
        self.legend()
        image = self.image if self.factor == 1 else self.image.reduce(self.factor)  # a box filter: quick
        buffer = io.BytesIO()
        dpi = round(self.dpi)
        image.save(buffer, format="PNG", dpi=(dpi, dpi), compress_level=6)
        return buffer.getvalue()

    def node(self, b: Box, top: float) -> None:
        """A box (red-edged on a dep edge, dashed for a ghost), its name and its opcode."""
        kind = "ghost" if b.ghost else b.node.kind
        dep = id(b.node) in self.on_dep and not b.ghost
        edge = DEP_COLOR if dep else ("#999999" if b.ghost else "#444444")
        self.box((b.x - b.w / 2, top + b.y - BOX_H / 2, b.x + b.w / 2, top + b.y + BOX_H / 2), 0.06, FILL[kind],
                 edge, 1.4 if dep else 0.8, dashed=b.ghost)
        name = ("^" if b.ghost else "") + b.node.name
        self.text((b.x, top + b.y - 0.055), name, "mono", FONT, "#777777" if b.ghost else "#000000", "mm")
        self.text((b.x, top + b.y + 0.105), b.node.opcode, "italic", FONT * 0.8, "#666666", "mm")

    def edge(self, r: Route, top: float) -> None:
        """A line with an arrow head (dashed red for a dep edge)."""
        color, width = (DEP_COLOR, 1.4) if r.edge.dep else (DATA_COLOR, 0.8)
        s, d = r.source, r.target
        if r.backward:  # only with a cycle: leave the box from below, come back round (arc3, rad 0.4)
            a, b = (s.x, top + s.y + BOX_H / 2), (d.x, top + d.y + BOX_H / 2)
            mid = ((a[0] + b[0]) / 2 - 0.4 * (b[1] - a[1]), (a[1] + b[1]) / 2 + 0.4 * (b[0] - a[0]))
            points = _quadratic(a, mid, b)
        else:
            points = _flatten(*route_curve(r, top))
        pixels = [(self.px(x), self.px(y)) for x, y in points]
        # The line stops at the head's base; the head's tip is the route's end.
        head_len, head_w = self.pt(4.5), self.pt(2.2)
        (x0, y0), (x1, y1) = _last_direction(pixels)
        length = math.hypot(x1 - x0, y1 - y0) or 1.0
        ux, uy = (x1 - x0) / length, (y1 - y0) / length
        base = (x1 - ux * head_len, y1 - uy * head_len)
        line = _trim_end(pixels, head_len)
        lw = max(self.pt(width), 1.0)
        if r.edge.dep:
            self.dashed(line, color, lw, self.pt(4 * width), self.pt(2.5 * width))
        else:
            self.ink.line(line, fill=color, width=round(lw), joint="curve")
        self.ink.polygon([(x1, y1), (base[0] - uy * head_w, base[1] + ux * head_w),
                          (base[0] + uy * head_w, base[1] - ux * head_w)], fill=color)

    def tag(self, t: Tag, top: float) -> None:
        """Which result a data edge reads, where it leaves its box (`layout.tags`)."""
        xy = (self.px(t.x), self.px(top + t.y))
        font = self.font("sans", TAG_FONT)
        text = t.text
        pad = self.pt(TAG_FONT * TAG_PAD)
        x0, y0, x1, y1 = self.ink.textbbox(xy, text, font=font, anchor="lm")
        self.ink.rectangle((x0 - pad, y0 - pad, x1 + pad, y1 + pad), fill="#fafafa")
        self.ink.text(xy, text, fill=DATA_COLOR, font=font, anchor="lm")

    def legend_mark(self, e) -> None:
        line = [(self.px(e.x), self.px(e.y)), (self.px(e.x + e.handle), self.px(e.y))]
        if e.what == "dash":
            self.dashed(line, e.style, self.pt(1.4), self.pt(5.6), self.pt(3.5))
        else:
            self.ink.line(line, fill=e.style, width=max(round(self.pt(0.9)), 1))

    def text_width(self, label: str, points: float) -> float:
        """`label`'s width in inches, as Pillow measures it."""
        return self.ink.textlength(label, font=self.font("sans", points)) / self.scale

    # ---------------------------------------------------------------- primitives

    def box(self, corners, radius: float, fill: str, edge: str, width: float, dashed: bool = False) -> None:
        x0, y0, x1, y1 = (self.px(v) for v in corners)
        lw = max(round(self.pt(width)), 1)
        if not dashed:
            self.ink.rounded_rectangle((x0, y0, x1, y1), radius=self.px(radius), fill=fill, outline=edge, width=lw)
            return
        self.ink.rounded_rectangle((x0, y0, x1, y1), radius=self.px(radius), fill=fill)
        self.dashed([(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)], edge, lw, self.pt(3.7 * width),
                    self.pt(1.6 * width))

    def text(self, inches, text: str, style: str, points: float, color: str, anchor: str, role: str = "") -> None:
        self.ink.text((self.px(inches[0]), self.px(inches[1])), text, fill=color, font=self.font(style, points),
                      anchor=anchor)

    def dashed(self, points, color: str, width: float, on: float, off: float) -> None:
        """A polyline drawn as dashes `on` long, `off` apart (pixels)."""
        w = max(round(width), 1)
        draw, left = True, on
        current = [points[0]]
        for (ax, ay), (bx, by) in zip(points, points[1:]):
            seg = math.hypot(bx - ax, by - ay)
            pos = 0.0
            while seg - pos > left:
                pos += left
                t = pos / seg
                p = (ax + (bx - ax) * t, ay + (by - ay) * t)
                if draw:
                    current.append(p)
                    self.ink.line(current, fill=color, width=w)
                current = [p]
                draw, left = not draw, (on if not draw else off)
            left -= seg - pos
            if draw:
                current.append((bx, by))
            else:
                current = [(bx, by)]
        if draw and len(current) > 1:
            self.ink.line(current, fill=color, width=w)


@lru_cache(maxsize=None)
def _font(style: str, pixels: int):
    from PIL import ImageFont

    path = os.path.join(_fonts_dir(), FONT_FILES[style])
    try:
        return ImageFont.truetype(path, pixels)
    except OSError:  # no DejaVu where matplotlib keeps it
        return ImageFont.load_default(pixels)


@lru_cache(maxsize=None)
def _fonts_dir() -> str:
    """matplotlib's bundled fonts, found without importing matplotlib."""
    spec = importlib.util.find_spec("matplotlib")
    where = list(spec.submodule_search_locations or []) if spec else []
    return os.path.join(where[0], "mpl-data", "fonts", "ttf") if where else ""


def _flatten(verts, codes, steps: int = 12) -> list[tuple[float, float]]:
    """A path of M / L / C codes (route_curve) as a polyline."""
    points = [verts[0]]
    i = 1
    while i < len(verts):
        if codes[i] == "C":
            a, b, c, d = points[-1], verts[i], verts[i + 1], verts[i + 2]
            for k in range(1, steps + 1):
                t = k / steps
                u = 1 - t
                points.append((u ** 3 * a[0] + 3 * u * u * t * b[0] + 3 * u * t * t * c[0] + t ** 3 * d[0],
                               u ** 3 * a[1] + 3 * u * u * t * b[1] + 3 * u * t * t * c[1] + t ** 3 * d[1]))
            i += 3
        else:
            points.append(verts[i])
            i += 1
    return points


def _quadratic(a, c, b, steps: int = 16) -> list[tuple[float, float]]:
    return [((1 - t) ** 2 * a[0] + 2 * (1 - t) * t * c[0] + t * t * b[0],
             (1 - t) ** 2 * a[1] + 2 * (1 - t) * t * c[1] + t * t * b[1])
            for t in (k / steps for k in range(steps + 1))]


def _last_direction(points):
    """The last two distinct points: the direction the line ends in."""
    end = points[-1]
    for p in reversed(points[:-1]):
        if p != end:
            return p, end
    return (end[0] - 1, end[1]), end


def _trim_end(points, length: float):
    """The polyline without its last `length` pixels (where the arrow head goes)."""
    points = list(points)
    while len(points) > 1 and length > 0:
        (ax, ay), (bx, by) = points[-2], points[-1]
        seg = math.hypot(bx - ax, by - ay)
        if seg > length:
            t = (seg - length) / seg
            points[-1] = (ax + (bx - ax) * t, ay + (by - ay) * t)
            break
        points.pop()
        length -= seg
    return points if len(points) > 1 else points * 2
