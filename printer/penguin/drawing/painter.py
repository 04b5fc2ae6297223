"""The order in which a `Sheet` is drawn, shared by the two backends that
draw it without matplotlib: `raster.py` (Pillow, PNG) and `vector.py` (SVG
text). Each panel: its frame and title, its data edges, then its dep
edges over them, its boxes, then the result tags; then the legend under the
picture's title. A backend gives the primitives (`box`, `text`, `edge`,
`node`, `tag`, `legend_mark`, `text_width`) and may mark groups."""

from __future__ import annotations

from printer.penguin.drawing.layout import (FONT, LEGEND_FONT, TITLE_FONT, TITLE_LINE, TITLE_X, Panel, Sheet,
                                            legend_entries, tags)
from printer.penguin.drawing.model import DEP_COLOR


class Painter:
    def __init__(self, laid_out: Sheet):
        self.sheet = laid_out
        deps = laid_out.graph.dep_edges
        self.on_dep = {id(e.source) for e in deps} | {id(e.target) for e in deps}  # boxes drawn red

    def group(self, kind: str) -> None:
        """Where a panel or the legend starts (an SVG <g>; nothing on a raster)."""

    def end_group(self) -> None:
        """Where it ends."""

    def panel(self, p: Panel) -> None:
        """Its frame and title, its data edges, dep edges, boxes, then the texts."""
        self.group("panel")
        self.box((0.08, p.top, self.sheet.width - 0.08, p.top + p.height), 0.1, "#fafafa", "#bbbbbb", 0.8)
        self.text((0.2, p.top + 0.08), p.title, "bold", FONT * 1.1, "#333333", "la", "title")
        top = p.top + p.rows_top
        for r in p.routes:
            if not r.edge.dep:
                self.edge(r, top)
        for r in p.routes:
            if r.edge.dep:
                self.edge(r, top)
        for b in p.boxes:
            self.node(b, top)
        for t in tags(p, self.text_width):
            self.tag(t, top)
        self.end_group()

    def legend(self) -> None:
        """What the lines and fills mean, under a title counting nodes and edges (as canvas's legend),
        line by line as the layout wrapped it (`Sheet.title`)."""
        self.group("legend")
        for i, line in enumerate(self.sheet.title):
            self.text((TITLE_X, 0.08 + i * TITLE_LINE), line, "sans", TITLE_FONT, "#000000", "la", "legend-title")
        for e in legend_entries(self.sheet, self.text_width):
            if e.what == "patch":
                fill, edge, dashed = e.style
                self.box((e.x, e.y - 0.04, e.x + e.handle, e.y + 0.04), 0, fill, edge,
                         1.4 if edge == DEP_COLOR else 0.8, dashed=dashed)
            else:
                self.legend_mark(e)
            self.text((e.label_x, e.y), e.label, "sans", LEGEND_FONT, "#000000", "lm")
        self.end_group()
