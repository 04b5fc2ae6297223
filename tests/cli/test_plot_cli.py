"""`hlo2penguin FILE --plot OUT` on real XLA dumps, run as a user runs it:
by default the picture shows the functions and blocks that carry dep edges
(the entry function alone when there is none); --plot-function and
--plot-nested ask for the rest; a bad function name is a usage error."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
from xml.etree import ElementTree

from children import plot_in_a_child
from paths import PIPELINE_DUMPS as DUMPS


SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))
# copy__2, copy__1 and main; every dep edge is in main (a scan's while body among them)
SCAN = DUMPS / "gpu_all_gather_scan_offload.hlo"
# command_buffer and main both carry dep edges
CALL = DUMPS / "gpu_command_buffer_call.hlo"
# one function, a while nested in a while: ten blocks, dep edges in three of them
NESTED = DUMPS / "gpu_nested_while_collectives.hlo"


def hlo2penguin(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([SCRIPT, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=300)


def plot(dump: pathlib.Path, tmp_path: pathlib.Path, *flags, ext: str = "svg") -> pathlib.Path:
    out = tmp_path / f"graph.{ext}"
    done = hlo2penguin(dump, "-o", tmp_path / "out.py", "-q", "--plot", out, *flags, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return out


def panel_titles(svg: pathlib.Path) -> list[str]:
    """The panels' titles, top to bottom, without XLA's computation names: an
    SVG keeps its text as text, and a title is `func @NAME [%COMPUTATION]` or
    `%OP (KIND): BLOCK [%COMPUTATION]` (the brackets where XLA's name differs)."""
    texts = ["".join(t.itertext()) for t in ElementTree.parse(svg).iter() if t.tag.endswith("text")]
    titles = [re.fullmatch(r"(func @\S+|%\S+ \(\S+\): \S+)(?: \[%\S+\])?", t) for t in texts]
    return [m.group(1) for m in titles if m]


def test_the_default_draws_only_the_function_with_dep_edges(tmp_path):
    titles = panel_titles(plot(SCAN, tmp_path))
    assert titles[0] == "func @main"
    assert "func @copy__1" not in titles and "func @copy__2" not in titles
    assert all(t.startswith("%") for t in titles[1:])  # main's nested blocks with a dep edge


def test_the_default_draws_every_function_with_dep_edges(tmp_path):
    assert [t for t in panel_titles(plot(CALL, tmp_path)) if t.startswith("func")] == [
        "func @command_buffer", "func @main"]


def test_the_default_draws_only_the_nested_blocks_with_dep_edges(tmp_path):
    default = panel_titles(plot(NESTED, tmp_path))
    every = panel_titles(plot(NESTED, tmp_path, "--plot-nested", "all"))
    assert default[0] == every[0] == "func @main"
    assert len(every) == 10 and len(default) == 3
    assert set(default) < set(every)
    assert panel_titles(plot(NESTED, tmp_path, "--plot-nested", "none")) == ["func @main"]


def test_the_default_png_is_a_fraction_of_every_block(tmp_path):
    from PIL import Image

    with Image.open(plot(NESTED, tmp_path, ext="png")) as image:
        width, height = image.size
    with Image.open(plot(NESTED, tmp_path, "--plot-nested", "all", ext="png")) as image:
        every_height = image.size[1]
    assert height < every_height / 2
    assert height < 1500 and width < 2000  # 2990 px high before: ten panels


def test_plot_function_draws_the_named_functions(tmp_path):
    assert panel_titles(plot(SCAN, tmp_path, "--plot-function", "copy__1")) == ["func @copy__1"]
    titles = panel_titles(plot(SCAN, tmp_path, "--plot-function", "copy__2", "--plot-function", "main"))
    assert titles[:2] == ["func @copy__2", "func @main"]
    assert "func @copy__1" not in titles


def test_plot_function_without_dep_edges_and_every_nested_block(tmp_path):
    only = panel_titles(plot(SCAN, tmp_path, "--plot-function", "main", "--plot-nested", "none"))
    assert only == ["func @main"]
    every = panel_titles(plot(SCAN, tmp_path, "--plot-function", "main", "--plot-nested", "all"))
    assert len(every) > len(panel_titles(plot(SCAN, tmp_path, "--plot-function", "main")))


def test_a_bad_function_name_is_a_usage_error_naming_the_valid_ones(tmp_path):
    out, png = tmp_path / "out.py", tmp_path / "graph.png"
    done = hlo2penguin(SCAN, "-o", out, "--plot", png, "--plot-function", "nosuch", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("hlo2penguin: error: ")
    assert "'nosuch'" in done.stderr
    for name in ("copy__2", "copy__1", "main"):
        assert name in done.stderr
    assert os.listdir(tmp_path) == []  # neither the program nor the picture


def test_help_documents_the_plot_flags():
    done = subprocess.run([SCRIPT, "--help"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=120)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for word in ("--plot-function NAME", "--plot-nested {deps,all,none}"):
        assert word in text


def test_a_png_plot_is_drawn_without_matplotlib(tmp_path):
    """Pillow draws the PNG: matplotlib's import alone would cost more than the drawing."""
    out = tmp_path / "graph.png"
    done = plot_in_a_child(NESTED, out, tmp_path)
    assert done.stdout.split() == ["0", "False"], done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_pillow_png_has_the_size_of_the_matplotlib_one(tmp_path):
    import io

    from PIL import Image

    import pipeline
    from printer.penguin import drawing

    module = pipeline.run(NESTED.read_bytes(), isolate=False).module()
    for nested in ("deps", "all"):
        ours = Image.open(io.BytesIO(drawing.png(module, "main", nested=nested))).size
        theirs = Image.open(io.BytesIO(drawing.render(module, "png", "main", nested=nested))).size
        assert abs(ours[0] - theirs[0]) <= 1 and abs(ours[1] - theirs[1]) <= 1, (ours, theirs)
