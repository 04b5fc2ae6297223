"""printer/penguin/drawing/: a Penguin program's dependency graph as DOT text
and as a PNG/SVG drawn with matplotlib alone; and the CLI's --emit dot / --plot."""

from __future__ import annotations

import io
import os
import re
import shutil
import struct
import subprocess

import pytest

import pipeline
from jax_programs import PROGRAMS, capture_dumps
from pipeline.cli import hlo2penguin as cli
from pipeline.chain.example import EXAMPLE_HLO
from printer.penguin import drawing as draw
from printer.penguin.drawing import layout
from printer.penguin import Module, T

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def example():
    return pipeline.run(EXAMPLE_HLO, isolate=False).module()


@pytest.fixture(scope="module")
def real():
    """A module XLA wrote (copy insertion's edges sit in a while body)."""
    name, fn, args = next(p for p in PROGRAMS if p[0] == "while_rotate_three")
    text = next(t for n, t in capture_dumps(fn, args) if "resolve_interference" in n)
    return pipeline.run(text, isolate=False).module()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def dot_edges(text: str) -> list[tuple[str, str, str]]:
    return re.findall(r'^\s*"([^"]+)" -> "([^"]+)"(.*);$', text, re.M)


# ---------------------------------------------------------------------- DOT


@pytest.mark.parametrize("which", ["example", "real"])
def test_dot_has_every_dep_edge_dashed_between_hlo_names(which, request):
    module = request.getfixturevalue(which)
    edges = dot_edges(draw.to_dot(module))
    dashed = {(a, b) for a, b, attrs in edges if "style=dashed" in attrs}
    assert module.dependencies
    for dep in module.dependencies:
        assert (dep.predecessor.name, dep.successor.name) in dashed, dep
    assert len(dashed) == len(module.dependencies)


def test_dot_data_edges_are_solid_and_name_every_hlo_instruction(example):
    text = draw.to_dot(example)
    edges = dot_edges(text)
    solid = [(a, b) for a, b, attrs in edges if "dashed" not in attrs]
    assert ("twice", "copy.twice") in solid and ("scale", "scales") in solid
    assert ("loop", "scaled") in solid  # reads %loop's result #1
    assert '"loop" -> "scaled" [taillabel="#1"' in text
    for instr in example.instructions():
        if instr.computation is not None:
            assert re.search(rf'^\s*"{re.escape(instr.name)}" \[label="{re.escape(instr.name)}\\n', text, re.M)


def test_dot_nested_blocks_are_clusters_and_ids_are_unique(example):
    text = draw.to_dot(example)
    assert 'subgraph "cluster_main" {' in text
    assert 'subgraph "cluster_main/loop/cond" {' in text
    assert 'subgraph "cluster_main/loop/body" {' in text
    ids = re.findall(r'^\s*"([^"]+)" \[label=', text, re.M)
    assert len(ids) == len(set(ids)) == len(list(example.instructions())) + 5  # x, two args per region
    # The regions' arguments and the returns are not HLO instructions: qualified ids.
    assert "main/loop/body/loop#arg1" in ids and "main/loop/body/return" in ids and "main/return" in ids


def test_dot_of_one_function_and_unknown_function(example):
    assert draw.to_dot(example, function="main") == draw.to_dot(example)
    with pytest.raises(ValueError, match="no function 'nope'.*main"):
        draw.to_dot(example, function="nope")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz not installed (optional)")
def test_graphviz_accepts_the_dot(real, tmp_path):
    out = subprocess.run(["dot", "-Tsvg"], input=draw.to_dot(real), capture_output=True, text=True, check=True)
    assert "<svg" in out.stdout


# ---------------------------------------------------------------------- plot


@pytest.mark.parametrize("which", ["example", "real"])
def test_plot_writes_a_png(which, request, tmp_path):
    path = tmp_path / "graph.png"
    draw.plot(request.getfixturevalue(which), path, function=None)
    data = path.read_bytes()
    width, height = png_size(data)
    assert len(data) > 1000 and width > 300 and height > 300


def test_plot_writes_an_svg_with_the_hlo_names_as_text(example, tmp_path):
    path = tmp_path / "graph.svg"
    draw.plot(example, str(path))
    data = path.read_bytes()
    assert data.startswith(b"<?xml") and b"<svg" in data and data.rstrip().endswith(b"</svg>")
    for name in ("copy.buf", "copy.twice", "scaled", "loop"):
        assert f">{name}<".encode() in data


def test_render_and_file_objects(example):
    assert draw.render(example, "png")[:8] == PNG_MAGIC
    assert b"<svg" in draw.render(example, "svg")
    buffer = io.BytesIO()
    draw.plot(example, buffer)
    assert buffer.getvalue()[:8] == PNG_MAGIC
    with pytest.raises(ValueError, match="png, svg"):
        draw.render(example, "pdf")


def test_plot_into_an_axes_and_as_a_figure(example):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    assert draw.plot(example, ax, nested="none") is fig
    assert ax.get_legend() is not None
    texts = {t.get_text() for t in ax.texts}
    assert {"copy.x", "scaled", "loop"} <= texts and "copy.buf" not in texts  # no panel for the body
    new = draw.plot(example)
    assert isinstance(new, Figure) and new.get_size_inches()[0] >= layout.MIN_WIDTH


def test_plot_rejects_a_bad_name_and_writes_nothing(example, tmp_path):
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        draw.plot(example, tmp_path / "graph.pdf")
    with pytest.raises(ValueError, match="no function"):
        draw.plot(example, tmp_path / "graph.png", function="body")
    with pytest.raises(ValueError, match="nested="):
        draw.plot(example, tmp_path / "graph.png", nested="some")
    with pytest.raises(OSError):
        draw.plot(example, tmp_path / "missing" / "graph.png")
    assert os.listdir(tmp_path) == []


def test_layout_is_layered_left_to_right_without_overlaps(real):
    g = draw.graph(real, None)
    panels = layout._panels(g, "all")
    assert len(panels) == 1 + sum(len(i.blocks) for i in real.instructions())
    drawn_deps = 0
    for p in panels:
        for r in p.routes:
            assert r.source.layer < r.target.layer and r.source.x < r.target.x
            assert [w.layer for w in r.waypoints] == list(range(r.source.layer + 1, r.target.layer))
            drawn_deps += r.edge.dep
        by_layer: dict[int, list] = {}
        for b in p.boxes:
            by_layer.setdefault(b.layer, []).append(b)
        for column in by_layer.values():
            ys = sorted(b.y for b in column)
            assert all(b - a >= layout.ROW - 1e-9 for a, b in zip(ys, ys[1:]))
    assert drawn_deps == len(real.dependencies)
    assert len(layout._panels(g, "none")) == 1
    deps_panels = layout._panels(g, "deps")
    assert 1 < len(deps_panels) < len(panels)
    assert all(any(r.edge.dep for r in p.routes) for p in deps_panels[1:])


def test_values_from_an_enclosing_block_are_ghost_nodes():
    module = Module("captures")
    fn = module.function("main", [("x", T("tensor<f32>"))])
    x = fn.args[0]
    c = fn.op("stablehlo.constant", "c", [], ["tensor<f32>"], computation="main")
    loop = fn.op("stablehlo.while", "loop", [x], ["tensor<f32>"], computation="main")
    body = loop.block("body", [("loop", T("tensor<f32>"))])
    add = body.op("stablehlo.add", "add", [body.args[0], c], ["tensor<f32>"], computation="body")
    body.op("stablehlo.return", "return", [add])
    fn.op("func.return", "return", [loop])
    module.add_dep_edge(c, add)  # crosses into the body
    panels = {p.title: p for p in layout._panels(draw.graph(module), "all")}
    outer, inner = panels["func @main"], panels["%loop (while): body"]
    assert [b.node.name for b in inner.boxes if b.ghost] == ["c"]
    assert {(r.source.node.name, r.target.node.name, r.edge.dep) for r in inner.routes} >= {
        ("c", "add", False), ("c", "add", True)}
    # Outside, the while stands for its body: c orders before it twice over.
    assert {(r.source.node.name, r.target.node.name, r.edge.dep) for r in outer.routes} >= {
        ("c", "loop", False), ("c", "loop", True)}
    assert draw.render(module)[:8] == PNG_MAGIC


def test_a_cycle_is_still_drawn():
    module = Module("cycle")
    fn = module.function("main", [("x", T("tensor<f32>"))])
    a = fn.op("stablehlo.negate", "a", [fn.args[0]], ["tensor<f32>"], computation="main")
    b = fn.op("stablehlo.negate", "b", [a], ["tensor<f32>"], computation="main")
    module.add_dep_edge(b, a)  # a must run after b, which reads a
    (panel,) = layout._panels(draw.graph(module), "all")
    assert [r.edge.dep for r in panel.routes if r.backward] == [True]
    assert draw.render(module)[:8] == PNG_MAGIC
    assert '"b" -> "a" [style=dashed' in draw.to_dot(module)


# ---------------------------------------------------------------------- CLI


def test_cli_emit_dot(capsys):
    assert cli.main(["--emit", "dot"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith('digraph "example" {')
    dashed = {(a, b) for a, b, attrs in dot_edges(out) if "style=dashed" in attrs}
    assert dashed == {("copy.buf", "copy.twice"), ("loop", "scaled"), ("copy.x", "scaled"), ("loop", "scales")}
    assert "4 dep edge(s) in the Penguin program" in err


@pytest.mark.parametrize("emit", ["penguin", "dot", "hlo", "report"])
@pytest.mark.parametrize("ext", ["png", "svg"])
def test_cli_plot_in_addition_to_the_emitted_stage(tmp_path, capsys, emit, ext):
    plot, out = tmp_path / f"graph.{ext}", tmp_path / "out.txt"
    assert cli.main(["--emit", emit, "--plot", str(plot), "-o", str(out), "-q"]) == 0
    assert capsys.readouterr() == ("", "")
    data = plot.read_bytes()
    assert data[:8] == PNG_MAGIC if ext == "png" else b"<svg" in data
    text = out.read_text()
    assert {"penguin": "add_dep_edge", "dot": "digraph", "hlo": "AwsNeuronControlDep",
            "report": "preserved"}[emit] in text
    assert sorted(os.listdir(tmp_path)) == sorted([plot.name, out.name])  # no temporary left


def test_cli_plot_to_standard_output_run(tmp_path, capsys):
    plot = tmp_path / "g.png"
    assert cli.main(["--plot", str(plot)]) == 0
    out, err = capsys.readouterr()
    assert "scaled.add_dep_edge(Dependency.DependencyEdge(src=loop, dst=scaled, idx_map=[], kind=Dependency.EdgeKind.ORDERED, predicates=[]))" in out
    assert err.count("\n") == 1 and "4 dep edge(s)" in err
    assert plot.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("bad, message", [
    ("graph.pdf", "cannot plot to '{p}': give a .png or .svg file name"),
    ("graph", "cannot plot to '{p}': give a .png or .svg file name"),
    ("missing/graph.png", "cannot write plot '{p}': No such file or directory"),
    ("adir.png", "cannot write plot '{p}': Is a directory"),
])
def test_cli_bad_plot_path_says_one_line_exits_2_and_writes_nothing(tmp_path, capsys, bad, message):
    (tmp_path / "adir.png").mkdir()
    plot, out = tmp_path / bad, tmp_path / "out.py"
    assert cli.main(["--plot", str(plot), "-o", str(out)]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == ""
    assert err == f"hlo2penguin: error: {message.format(p=plot)}\n"
    assert sorted(os.listdir(tmp_path)) == ["adir.png"]


def test_cli_unwritable_plot_directory_leaves_no_output(tmp_path, capsys, monkeypatch):
    import tempfile

    def refuse(*args, **kwargs):
        if kwargs.get("prefix", "").startswith(".hlo2penguin-plot-"):
            raise PermissionError(13, "Permission denied")
        return real_mkstemp(*args, **kwargs)

    real_mkstemp = tempfile.mkstemp
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    out = tmp_path / "out.py"
    assert cli.main(["--plot", str(tmp_path / "g.png"), "-o", str(out)]) == 2
    plot = tmp_path / "g.png"
    assert capsys.readouterr().err == f"hlo2penguin: error: cannot write plot '{plot}': Permission denied\n"
    assert os.listdir(tmp_path) == []


def test_cli_failed_output_write_removes_the_staged_plot(tmp_path, capsys):
    plot = tmp_path / "g.png"
    assert cli.main(["--plot", str(plot), "-o", str(tmp_path / "missing" / "out.py")]) == 2
    assert "cannot write output" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_crossings_are_counted_as_inversions():
    import random

    rng = random.Random(7)
    for _ in range(200):
        values = [rng.randrange(6) for _ in range(rng.randrange(12))]
        brute = sum(1 for i in range(len(values)) for j in range(i + 1, len(values)) if values[i] > values[j])
        assert layout._inversions(values) == brute
