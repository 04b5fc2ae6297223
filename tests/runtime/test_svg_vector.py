"""printer/penguin/drawing/vector.py: the SVG of `hlo2penguin --plot OUT.svg`,
written as text from the layout raster.py draws. Read back as XML and
checked against the layout (a title per panel, a path per route, every
label) and, as an oracle outside the drawing code, against the Penguin
module itself: each of `module.dependencies` is a dashed red path that
leaves the box named by its predecessor and reaches the box named by its
successor, found by geometry alone."""

from __future__ import annotations

import functools
import pathlib
import re
from xml.etree import ElementTree

import pytest

import pipeline
from printer.penguin import Module, T
from printer.penguin import drawing
from printer.penguin.drawing import layout
from children import plot_in_a_child
from paths import PIPELINE_DUMPS as DUMPS

NESTED = DUMPS / "gpu_nested_while_collectives.hlo"   # a while in a while: ten panels under nested="all"
BRANCHES = DUMPS / "gpu_conditional_branches.hlo"     # branches that read outer values: ghost boxes
# Dumps the chain imports, each with dep edges (three others stop in XLA's importer, before any drawing).
ORACLE_DUMPS = [NESTED, BRANCHES, DUMPS / "gpu_all_gather_scan_offload.hlo", DUMPS / "gpu_command_buffer_call.hlo",
                DUMPS / "gpu_tokens_barriers_rng.hlo", DUMPS / "tpu_tiled_layouts.hlo"]
SVG = "{http://www.w3.org/2000/svg}"
RED = "#d62728"  # model.DEP_COLOR, spelled out: the test says what red is
HEAD = 4.5 + 0.05  # points: a route's line stops at its arrow head's base, at most this far before the box


@functools.lru_cache(maxsize=None)
def module_of(path: pathlib.Path):
    return pipeline.run(str(path), isolate=False).module()


def parse(data: bytes) -> ElementTree.Element:
    root = ElementTree.fromstring(data)
    assert root.tag == f"{SVG}svg"
    return root


def texts(root) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def points(d: str) -> list[tuple[float, float]]:
    """Every x,y pair of a path's data, in order: the first is where it starts, the last where it ends."""
    return [(float(x), float(y)) for x, y in re.findall(r"(-?[\d.]+),(-?[\d.]+)", d)]


def is_dep(path) -> bool:
    return path.get("stroke") == RED and bool(path.get("stroke-dasharray"))


def named_boxes(root) -> list[tuple[str, tuple[float, float, float, float]]]:
    """(label, (x, y, w, h)) of each node: a monospace text and the smallest rect around its anchor."""
    rects = [tuple(float(r.get(k)) for k in ("x", "y", "width", "height")) for r in root.iter(f"{SVG}rect")
             if r.get("x") is not None]
    boxes = []
    for t in root.iter(f"{SVG}text"):
        if "Mono" not in (t.get("font-family") or ""):
            continue
        x, y = float(t.get("x")), float(t.get("y"))
        around = [r for r in rects if r[0] <= x <= r[0] + r[2] and r[1] <= y <= r[1] + r[3]]
        assert around, t.text
        boxes.append(("".join(t.itertext()), min(around, key=lambda r: r[2] * r[3])))
    return boxes


def drawn_dep_edges(root) -> set[tuple[str, str]]:
    """(source label, target label) of each dashed red path, read from where it starts and ends."""
    boxes = named_boxes(root)

    def at(point, side: str, slack: float) -> set[str]:
        px, py = point
        return {name for name, (x, y, w, h) in boxes
                if (0 <= (x - px) <= slack if side == "left" else abs(px - (x + w)) <= slack) and y <= py <= y + h}

    found = set()
    for p in root.iter(f"{SVG}path"):
        if is_dep(p):
            pts = points(p.get("d"))
            found |= {(s, t) for s in at(pts[0], "right", 0.02) for t in at(pts[-1], "left", HEAD)}
    return found


def laid_out(module, function, nested) -> layout.Sheet:
    return layout.sheet(drawing.graph(module, function), nested)


# ---------------------------------------------------------------------- against the layout


@pytest.mark.parametrize("nested", ["all", "deps", "none"])
def test_one_title_per_panel_in_the_layouts_order(nested):
    module = module_of(NESTED)
    root = parse(drawing.svg(module, "main", nested=nested))
    titles = ["".join(t.itertext()) for t in root.iter(f"{SVG}text") if t.get("font-weight") == "bold"]
    assert titles == [p.title for p in laid_out(module, "main", nested).panels]
    assert len(titles) == {"all": 10, "deps": 3, "none": 1}[nested]


@pytest.mark.parametrize("path", [NESTED, BRANCHES])
def test_one_path_per_route_dep_routes_dashed_red_data_routes_solid(path):
    module = module_of(path)
    sheet = laid_out(module, None, "all")
    routes = [r for p in sheet.panels for r in p.routes]
    paths = list(parse(drawing.svg(module, None, nested="all")).iter(f"{SVG}path"))
    assert len(paths) == len(routes)
    # Data routes are drawn first in each panel, then its dep routes.
    expected = [dep for p in sheet.panels for dep in sorted(r.edge.dep for r in p.routes)]
    assert [is_dep(p) for p in paths] == expected
    assert sum(expected) > 0
    for p in paths:
        if not is_dep(p):
            assert p.get("stroke-dasharray") is None and p.get("stroke") != RED


@pytest.mark.parametrize("path", [NESTED, BRANCHES])
def test_every_node_label_and_opcode_is_text(path):
    module = module_of(path)
    sheet = laid_out(module, None, "all")
    drawn = texts(parse(drawing.svg(module, None, nested="all")))
    for p in sheet.panels:
        for b in p.boxes:
            assert ("^" if b.ghost else "") + b.node.name in drawn
            assert b.node.opcode in drawn
    # And the legend, which says what the lines mean.
    assert "dep edge (add_dep_edge)" in drawn and "^value of an enclosing block" in drawn
    assert any(t.startswith(f"{module.name} @") and t.endswith(" dep edges") for t in drawn)


def test_the_size_is_the_layouts_in_points():
    module = module_of(NESTED)
    sheet = laid_out(module, "main", "deps")
    root = parse(drawing.svg(module, "main", nested="deps"))
    assert root.get("width") == f"{round(sheet.width * 72, 2):g}pt"
    assert root.get("height") == f"{round(sheet.height * 72, 2):g}pt"


def test_ghost_boxes_are_dashed_and_no_other_is():
    root = parse(drawing.svg(module_of(BRANCHES), None, nested="all"))
    rects = {tuple(float(r.get(k)) for k in ("x", "y", "width", "height")): r for r in root.iter(f"{SVG}rect")
             if r.get("x") is not None}
    boxes = named_boxes(root)
    assert any(name.startswith("^") for name, _ in boxes)
    for name, where in boxes:
        assert bool(rects[where].get("stroke-dasharray")) == name.startswith("^"), name


# ---------------------------------------------------------------------- against the module


@pytest.mark.parametrize("path", ORACLE_DUMPS, ids=lambda p: p.stem)
def test_every_dep_edge_of_the_module_is_a_dashed_red_path_between_its_boxes(path):
    module = module_of(path)
    assert module.dependencies
    drawn = drawn_dep_edges(parse(drawing.svg(module, None, nested="all")))
    for dep in module.dependencies:
        pred, succ = dep.predecessor.name, dep.successor.name
        # From another block, the predecessor is a ghost (^name) in the successor's panel.
        assert (pred, succ) in drawn or (f"^{pred}", succ) in drawn, (pred, succ, sorted(drawn))


def test_the_oracle_sees_a_dep_edge_drawn_solid_as_missing():
    """The oracle itself: the same picture with one dep path made solid lacks that edge."""
    module = module_of(NESTED)
    root = parse(drawing.svg(module, None, nested="all"))
    before = drawn_dep_edges(root)
    first = next(p for p in root.iter(f"{SVG}path") if is_dep(p))
    del first.attrib["stroke-dasharray"]
    assert len(drawn_dep_edges(root)) == len(before) - 1


# ---------------------------------------------------------------------- text and odd shapes


def test_names_are_escaped_for_xml():
    module = Module('odd <&> "names"')
    fn = module.function("main", [("x", T("tensor<f32>"))])
    a = fn.op("stablehlo.negate", "a<b>&'c\"", [fn.args[0]], ["tensor<f32>"], computation="main")
    b = fn.op("stablehlo.negate", "b]]>", [a], ["tensor<f32>"], computation="main")
    fn.op("func.return", "return", [b])
    module.add_dep_edge(a, b)
    drawn = texts(parse(drawing.svg(module)))
    assert "a<b>&'c\"" in drawn and "b]]>" in drawn
    assert any(t.startswith('odd <&> "names" @main') for t in drawn)
    assert ("a<b>&'c\"", "b]]>") in drawn_dep_edges(parse(drawing.svg(module)))


def test_a_cycle_draws_its_back_edge_as_a_dashed_red_curve():
    module = Module("cycle")
    fn = module.function("main", [("x", T("tensor<f32>"))])
    a = fn.op("stablehlo.negate", "a", [fn.args[0]], ["tensor<f32>"], computation="main")
    b = fn.op("stablehlo.negate", "b", [a], ["tensor<f32>"], computation="main")
    module.add_dep_edge(b, a)
    root = parse(drawing.svg(module))
    (back,) = [p for p in root.iter(f"{SVG}path") if is_dep(p)]
    assert re.fullmatch(r"M\S+ Q\S+ \S+", back.get("d"))


# ---------------------------------------------------------------------- the CLI


def test_an_svg_plot_is_written_without_matplotlib(tmp_path):
    """Text is written directly: matplotlib's import alone would cost more than the drawing."""
    out = tmp_path / "graph.svg"
    done = plot_in_a_child(NESTED, out, tmp_path)
    assert done.stdout.split() == ["0", "False"], done.stderr
    module = module_of(NESTED)
    root = parse(out.read_bytes())
    expected = laid_out(module, drawing.functions_with_deps(module), "deps")
    assert [t for t in texts(root) if t in {p.title for p in expected.panels}] == [p.title for p in expected.panels]
