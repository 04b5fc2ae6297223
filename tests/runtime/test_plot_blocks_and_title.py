"""What a picture of a real module shows by default, and its title.

By default (`drawing.svg`, `png`, `plot` and `hlo2penguin --plot`) a nested
block has a panel when it holds an end of a dep edge or leads to one (the
block of the op whose region holds it, and so on up); the oracle is the
module's own `dependencies` and each op's `parent` block. The title counts
the nested blocks left out. The title fits its picture: it wraps onto
more lines rather than run past the right edge, measured in the SVG with
DejaVu Sans's own metrics (Pillow reads the font file), in the PNG with the
measure the Pillow renderer draws with, and in matplotlib's picture with
matplotlib's own extent of the legend's title."""

from __future__ import annotations

import functools
import io
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest

import pipeline
from paths import NEWER_XLA
from printer.penguin import drawing
from printer.penguin.drawing import layout
from printer.penguin.drawing.model import graph
from printer.penguin.graph import Argument, Value
from printer.penguin.titles import title_of

STAGE = "copy-insertion.after_adding_copies_to_resolve_interference"
NESTED_SCAN = NEWER_XLA / f"nested_scan.{STAGE}.hlo"        # a scan in a scan, with fusions: 17 blocks
ATTENTION = NEWER_XLA / f"attention_scan.{STAGE}.hlo"       # a scan with two dozen fusion and reducer blocks
SWAP = NEWER_XLA / f"while_swap_buffers.{STAGE}.hlo"        # narrow panels: the title is wider than them
SVG = "{http://www.w3.org/2000/svg}"

# The control edge lives in the inner while's body alone: the outer body holds no dep edge, and leads to one.
INNER_ONLY = """HloModule inner_only

%inner_body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
  %s = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %buf = f32[4]{0} get-tuple-element(%s), index=1
  %twice = f32[4]{0} add(%buf, %buf)
  %copy.buf = f32[4]{0} copy(%buf)
  %copy.twice = f32[4]{0} copy(%twice), control-predecessors={%copy.buf}
  ROOT %out = (s32[], f32[4]{0}) tuple(%next, %copy.twice)
}

%inner_cond (s.1: (s32[], f32[4])) -> pred[] {
  %s.1 = (s32[], f32[4]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %limit = s32[] constant(3)
  ROOT %lt = pred[] compare(%i.1, %limit), direction=LT
}

%outer_body (t: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t = (s32[], f32[4]{0}) parameter(0)
  %j = s32[] get-tuple-element(%t), index=0
  %one.1 = s32[] constant(1)
  %next.1 = s32[] add(%j, %one.1)
  %zero = s32[] constant(0)
  %v = f32[4]{0} get-tuple-element(%t), index=1
  %init = (s32[], f32[4]{0}) tuple(%zero, %v)
  %inner = (s32[], f32[4]{0}) while(%init), condition=%inner_cond, body=%inner_body
  %w = f32[4]{0} get-tuple-element(%inner), index=1
  ROOT %out.1 = (s32[], f32[4]{0}) tuple(%next.1, %w)
}

%outer_cond (t.1: (s32[], f32[4])) -> pred[] {
  %t.1 = (s32[], f32[4]{0}) parameter(0)
  %j.1 = s32[] get-tuple-element(%t.1), index=0
  %limit.1 = s32[] constant(2)
  ROOT %lt.1 = pred[] compare(%j.1, %limit.1), direction=LT
}

ENTRY %main.4 (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %zero.1 = s32[] constant(0)
  %start = (s32[], f32[4]{0}) tuple(%zero.1, %x)
  %outer = (s32[], f32[4]{0}) while(%start), condition=%outer_cond, body=%outer_body
  ROOT %result = f32[4]{0} get-tuple-element(%outer), index=1
}
"""


@functools.lru_cache(maxsize=None)
def module_of(source):
    return pipeline.run(source if isinstance(source, str) else str(source), isolate=False).module()


def blocks(module) -> list:
    """Every block of the module, each function then the blocks nested in it, in program order."""
    found, stack = [], list(reversed(module.functions))
    while stack:
        block = stack.pop()
        found.append(block)
        stack += reversed([inner for instr in block.instructions for inner in instr.blocks])
    return found


def home(node):
    """The block that holds a dep edge's end: an op's parent, an argument's block."""
    if isinstance(node, Value):
        node = node.instruction
    return node.block if isinstance(node, Argument) else node.parent


def with_deps(module) -> set[int]:
    """The blocks the default draws, from the module's dependencies: each block that holds an end of
    one, and the blocks of the ops whose regions hold those, up to the function."""
    found = set()
    for dep in module.dependencies:
        for end in (dep.predecessor, dep.successor):
            block = home(end)
            while block is not None:
                found.add(id(block))
                block = block.parent.parent if block.parent is not None else None
    return found


def svg_texts(data: bytes, role: str) -> list[ElementTree.Element]:
    root = ElementTree.fromstring(data)
    return [t for t in root.iter(f"{SVG}text") if t.get("class") == role]


@pytest.mark.parametrize("source", [NESTED_SCAN, ATTENTION, INNER_ONLY], ids=["nested_scan", "attention", "inner"])
def test_the_default_draws_exactly_the_blocks_with_or_on_the_way_to_a_dep_edge(source):
    module = module_of(source)
    assert module.dependencies
    default = ["".join(t.itertext()) for t in svg_texts(drawing.svg(module, function=None), "title")]
    every = ["".join(t.itertext()) for t in svg_texts(drawing.svg(module, function=None, nested="all"), "title")]
    shown = with_deps(module)
    want = [title_of(b) for b in blocks(module) if b.parent is None or id(b) in shown]
    assert default == want
    assert len(default) < len(every) == len(blocks(module))
    # The title counts the nested blocks left out.
    title = " ".join(t.text for t in svg_texts(drawing.svg(module, function=None), "legend-title"))
    left_out = len(every) - len(default)
    assert title.endswith(f"; {left_out} nested block{'s' if left_out > 1 else ''} without a dep edge not drawn")


def test_a_block_that_only_leads_to_a_dep_edge_has_a_panel():
    module = module_of(INNER_ONLY)
    holders = {id(home(end)) for dep in module.dependencies for end in (dep.predecessor, dep.successor)}
    titles = [p.title for p in layout.sheet(graph(module, None)).panels]
    assert titles == ["func @main [%main.4]", "%outer (while): body [%outer_body]",
                      "%inner (while): body [%inner_body]"]
    outer_body = next(b for b in blocks(module) if b.name == "body" and b.parent.name == "outer")
    assert id(outer_body) not in holders  # it has a panel because the inner body's edge is inside it


def test_every_and_none_still_draw_what_they_say():
    module = module_of(INNER_ONLY)
    assert len(layout.sheet(graph(module, None), "all").panels) == len(blocks(module)) == 5
    none = layout.sheet(graph(module, None), "none")
    assert [p.title for p in none.panels] == ["func @main [%main.4]"]
    assert " ".join(none.title).endswith("; 4 nested blocks not drawn")


# ------------------------------------------------------------------ the title fits its picture


# Pictures of the modules' functions with dep edges: narrow panels (SWAP), many panels (ATTENTION, all).
PICTURES = [(SWAP, "deps"), (SWAP, "all"), (ATTENTION, "deps"), (ATTENTION, "all")]
WIDE_TITLES = {(SWAP, "deps")}  # one line of its title is wider than the picture


def dejavu(points: float):
    """DejaVu Sans at `points` (one point a pixel), read from the font file matplotlib ships."""
    from PIL import ImageFont

    from printer.penguin.drawing.raster import _fonts_dir

    return ImageFont.truetype(str(Path(_fonts_dir()) / "DejaVuSans.ttf"), points)


@pytest.mark.parametrize("source, nested", PICTURES)
def test_the_svg_title_is_within_the_picture(source, nested):
    module = module_of(source)
    data = drawing.svg(module, function=drawing.functions_with_deps(module), nested=nested)
    width = float(re.search(rb'viewBox="0 0 ([\d.]+) ', data).group(1))  # points
    lines = svg_texts(data, "legend-title")
    for line in lines:
        size = float(line.get("font-size"))
        extent = float(line.get("x")) + dejavu(size * 100).getlength(line.text) / 100  # the font's own advances
        assert extent <= width, (line.text, extent, width)
    whole = " ".join(line.text for line in lines)
    too_wide = float(lines[0].get("x")) + dejavu(float(lines[0].get("font-size")) * 100).getlength(whole) / 100 > width
    assert too_wide == ((source, nested) in WIDE_TITLES)  # the case: one line would run past the right edge
    assert len(lines) >= 2 if too_wide else len(lines) == 1
    ys = [float(line.get("y")) for line in lines]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)  # one under the other
    # The legend sits under the last line, the first panel under the legend.
    legend = [float(t.get("y")) for t in ElementTree.fromstring(data).iter(f"{SVG}text")
              if t.get("class") is None and t.text in ("data edge (operand)", "argument")]
    panels = [float(t.get("y")) for t in svg_texts(data, "title")]
    assert max(ys) < min(legend) and max(legend) < min(panels)


@pytest.mark.parametrize("source, nested", PICTURES)
def test_the_png_title_is_within_the_picture(source, nested):
    from PIL import Image

    from printer.penguin.drawing.raster import Raster

    module = module_of(source)
    functions = drawing.functions_with_deps(module)
    laid_out = layout.sheet(graph(module, functions), nested)
    painter = Raster(laid_out, 110)
    image = Image.open(io.BytesIO(drawing.png(module, function=functions, nested=nested)))
    assert image.size == painter.size
    for line in laid_out.title:
        # Where the renderer puts the line and how wide its font draws it, in its own pixels.
        extent = painter.px(layout.TITLE_X) + painter.text_width(line, layout.TITLE_FONT) * painter.scale
        assert extent / painter.factor <= image.size[0], (line, extent / painter.factor, image.size[0])
    assert " ".join(laid_out.title) == layout.legend_title(laid_out)


def test_matplotlibs_title_is_within_the_picture():
    pytest.importorskip("matplotlib")
    module = module_of(SWAP)
    fig = drawing.plot(module, function=drawing.functions_with_deps(module))
    fig.canvas.draw()
    legend = fig.axes[0].get_legend()
    box = legend.get_title().get_window_extent(fig.canvas.get_renderer())
    assert legend.get_title().get_text().count("\n") >= 1
    assert 0 <= box.x0 and box.x1 <= fig.bbox.width, (box, fig.bbox.width)
