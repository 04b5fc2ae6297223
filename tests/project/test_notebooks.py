"""notebooks/: each runs top to bottom on a fresh kernel, with the outputs
that tell its story; and each is committed without outputs. No time budget is
asserted (speed is `python -m bench`'s business): the per-cell timeout only
stops a hung kernel."""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import pytest

from paths import REPO as ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = ROOT / "notebooks"
CELL_TIMEOUT = 600  # seconds per cell: a hang, not a budget

# What each notebook must show (searched in its text and HTML outputs).
EXPECTED = {
    "01_the_chain.ipynb": [
        "4 HLO control edge(s): 3 preserved, 1 rerouted, 0 dropped, 0 lost; 4 dep edge(s)",
        'custom_call_target="AwsNeuronControlDep"',                   # link #1
        "= stablehlo.tuple %0#0, %0#1",                              # link #2's artifact
        "@AwsNeuronControlDep(%1, %2, %0#1)",                        # ... as an operand
        "@AwsNeuronControlDep(%0#0, %0#1, %1, %0#1)",                # link #3 flattened it
        "scaled.add_dep_edge(Dependency.DependencyEdge(src=loop, dst=scaled, idx_map=[], kind=Dependency.EdgeKind.ORDERED, predicates=[]))",                         # link #4
        "func @main: %loop -> %scale: rerouted",
        "main: ['zero', 'loop', 'copy.x', 'scale', 'scales', 'scaled', 'return']",  # the schedule
        # without link #1
        "4 HLO control edge(s): 0 preserved, 1 rerouted, 0 dropped, 3 lost; 0 dep edge(s)",
        "func @main: %copy.x -> %scaled: lost at link #2 (XLA's importer)",
        "func @main: %loop -> %scaled: rerouted (the program's data edges order them)",
        # without link #3
        "4 HLO control edge(s): 2 preserved, 1 rerouted, 0 dropped, 1 lost; 4 dep edge(s) in the Penguin program, "
        "2 spurious",
        "func @main: %loop -> %scale: lost at link #3 (flatten-control-dep-tuple-operands)",
        "func @main: %loop:tuple -> %scaled: spurious at link #3",
        "<DependencyEdge loop:tuple -> scaled>   predecessor: stablehlo.tuple",
    ],
    "02_jax_regression.ipynb": [
        "copy-insertion.after_adding_copies_to_resolve_interference",
        "edges lost: 0",
        "modules match JAX",
        "copy(get-tuple-element)",
        "7 HLO control edge(s): 7 preserved, 0 rerouted, 0 dropped, 0 lost",
    ],
}
FIGURES = {"01_the_chain.ipynb": 2, "02_jax_regression.ipynb": 2}
# The displays (issue 17): the report tables each notebook shows (`ChainResult`
# and `Report._repr_html_`) and the (computation, predecessor, successor) rows
# they mark as lost. Each also shows the graph of its first table's module
# (`Module._repr_svg_`), which must name both ends of every edge in that table.
REPORT_TABLES = {"01_the_chain.ipynb": 2, "02_jax_regression.ipynb": 1}
LOST_ROWS = {"01_the_chain.ipynb": [("func @main", "%loop", "%scale")], "02_jax_regression.ipynb": []}
SVG = "{http://www.w3.org/2000/svg}"


@functools.lru_cache(maxsize=None)
def run(name: str):
    """Execute notebooks/<name> once per test session."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    return nb


@dataclass
class Shown:
    text: str = ""                                    # streams, text/plain and text/html
    figures: int = 0                                  # image/png
    reports: list = field(default_factory=list)       # each report table: its rows, as cell texts
    marked: list = field(default_factory=list)        # rows shown as lost: class, colour and bold fate
    svgs: list = field(default_factory=list)          # each image/svg+xml, parsed


def outputs(nb) -> Shown:
    shown, text = Shown(), []
    for cell in nb.cells:
        cell_streams: list[tuple[str, list[str]]] = []
        for out in cell.get("outputs", []):
            assert out["output_type"] != "error", out
            if out["output_type"] == "stream":
                # A busy kernel can send one print as several stream messages:
                # glue them back, so a needle is not cut at a message border.
                if cell_streams and cell_streams[-1][0] == out["name"]:
                    cell_streams[-1][1].append(out["text"])
                else:
                    cell_streams.append((out["name"], [out["text"]]))
                continue
            data = out.get("data", {})
            text += [data.get("text/plain", ""), data.get("text/html", "")]
            shown.figures += "image/png" in data
            if 'class="hlo2penguin-report"' in data.get("text/html", ""):
                page = ET.fromstring(f"<div>{data['text/html']}</div>")  # well-formed, or this raises
                for table in page.iter("table"):
                    rows = table.findall("./tbody/tr")
                    shown.reports.append([tuple("".join(td.itertext()) for td in tr.findall("td")) for tr in rows])
                    shown.marked += [tuple("".join(td.itertext()) for td in tr.findall("td"))[:3] for tr in rows
                                     if tr.get("class") == "fate-lost" and "background" in tr.get("style", "")
                                     and tr.findall("td")[3].find("strong") is not None]
            if "image/svg+xml" in data:
                shown.svgs.append(ET.fromstring(data["image/svg+xml"]))
        text += ["".join(parts) for _, parts in cell_streams]
    shown.text = "\n".join(text)
    return shown


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_and_shows_its_story(name):
    shown = outputs(run(name))
    missing = [needle for needle in EXPECTED[name] if needle not in shown.text]
    assert not missing, missing
    assert shown.figures >= FIGURES[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_displays_reports_and_graphs(name):
    shown = outputs(run(name))
    assert len(shown.reports) == REPORT_TABLES[name]
    assert all(shown.reports), "a report table with no row"
    assert shown.marked == LOST_ROWS[name]
    assert len(shown.svgs) == 1 and shown.svgs[0].tag == f"{SVG}svg"
    words = {"".join(t.itertext()).strip() for t in shown.svgs[0].iter(f"{SVG}text")}
    ends = {cell.lstrip("%") for row in shown.reports[0] for cell in row[1:3]}
    assert ends and not ends - words, sorted(ends - words)


def test_notebook_02_matches_jax_on_every_module():
    text = outputs(run("02_jax_regression.ipynb")).text
    line = next(line for line in text.splitlines() if line.endswith("modules match JAX"))
    matched, total = line.split()[0].split("/")
    assert matched == total and int(total) >= 3, line


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebooks_are_committed_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


def test_every_notebook_is_tested():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECTED)


def test_notebook_02_opens_the_jax_program_in_model_explorer():
    """The served app, shown in the notebook: an iframe of the address the kernel's server gave."""
    nb = run("02_jax_regression.ipynb")
    shown = [out["data"]["text/html"] for cell in nb.cells for out in cell.get("outputs", [])
             if "<iframe" in out.get("data", {}).get("text/html", "")]
    assert len(shown) == 1, len(shown)
    assert re.search(r'<iframe src="http://localhost:\d+/\?data=', shown[0]) and "Model Explorer at" in shown[0]
