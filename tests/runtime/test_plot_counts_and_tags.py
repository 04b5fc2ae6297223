"""`hlo2penguin --plot OUT.svg` (the console script) on a while loop that
carries five buffers: the title counts what the picture draws (the oracle:
the SVG's own node groups and edge paths) and says what it leaves out (the
program's whole graph, `drawing.graph`); the while's result tags (`#0`…`#4`)
are readable at the default size and no two overlap (computed from the
SVG's coordinates)."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import pipeline
from printer.penguin import drawing

TESTS = Path(__file__).parent.parent
SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))
LOOP = TESTS / "newer_xla" / "while_many_buffers.copy-insertion.after_adding_copies_to_resolve_interference.hlo"
READABLE = 6.5  # points: the smallest text the tags may have (the node names are 8)
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def svg(tmp_path_factory) -> ET.Element:
    out = tmp_path_factory.mktemp("plot") / "loop.svg"
    done = subprocess.run([SCRIPT, str(LOOP), "-q", "-o", os.devnull, "--plot", str(out)],
                          capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    return ET.parse(out).getroot()


def classes(e: ET.Element) -> list[str]:
    return (e.get("class") or "").split()


def test_the_title_counts_what_is_drawn_and_what_is_left_out(svg):
    title = " ".join(e.text for e in svg.iter(f"{SVG}text") if "legend-title" in classes(e))  # its lines
    drawn_nodes = sum(1 for g in svg.iter(f"{SVG}g") if classes(g)[:1] == ["node"] and "ghost" not in classes(g))
    paths = [p for p in svg.iter(f"{SVG}path") if "edge" in classes(p)]
    drawn_data = sum("data" in classes(p) for p in paths)
    drawn_deps = sum("dep" in classes(p) for p in paths)
    program = pipeline.run(str(LOOP), isolate=False).module()
    whole = drawing.graph(program, function=drawing.functions_with_deps(program))
    assert drawn_nodes < len(whole.nodes)  # the case: the nested blocks without a dep edge have no panel
    m = re.search(r": (\d+) of (\d+) nodes, (\d+) of (\d+) data edges, (\d+)(?: of (\d+))? dep edges drawn; "
                  r"(\d+) nested blocks without a dep edge not drawn$", title)
    assert m, title
    assert [int(m.group(i)) for i in (1, 3, 5)] == [drawn_nodes, drawn_data, drawn_deps]
    assert [int(m.group(2)), int(m.group(4))] == [len(whole.nodes), len(whole.data_edges)]
    assert drawn_deps == len(whole.dep_edges) and m.group(6) is None  # every dep edge is drawn
    # The blocks left out: every nested block of the program's functions drawn, but the panels'.
    panels = sum(1 for g in svg.iter(f"{SVG}g") if classes(g) == ["panel"])
    nested = sum(len(i.blocks) for f in program.functions if f.name in drawing.functions_with_deps(program)
                 for i in f.walk())
    assert int(m.group(7)) == nested - (panels - len(drawing.functions_with_deps(program))) > 0


def tag_boxes(svg: ET.Element) -> list[tuple[str, float, tuple[float, float, float, float]]]:
    """Each tag: its text, its font size, the background rect drawn just before it (x0, y0, x1, y1)."""
    found, previous = [], None
    for e in svg.iter():
        if e.tag == f"{SVG}text" and "tag" in classes(e):
            assert previous is not None and previous.tag == f"{SVG}rect"
            x, y, w, h = (float(previous.get(k)) for k in ("x", "y", "width", "height"))
            found.append((e.text, float(e.get("font-size")), (x, y, x + w, y + h)))
        previous = e
    return found


def test_the_result_tags_are_readable_and_apart(svg):
    tags = tag_boxes(svg)
    assert {"#0", "#1", "#2", "#3", "#4"} <= {text for text, _, _ in tags}  # the while's five results
    assert all(size >= READABLE for _, size, _ in tags)
    for (a_text, _, a), (b_text, _, b) in itertools.combinations(tags, 2):
        apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
        assert apart, (a_text, a, b_text, b)
    for _, size, (x0, y0, x1, y1) in tags:  # each rect holds its text: as tall as the font, or taller
        assert y1 - y0 >= size and x1 - x0 >= size
