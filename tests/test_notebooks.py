"""notebooks/: each runs top to bottom on a fresh kernel, with the outputs
that tell its story; and each is committed without outputs. No time budget is
asserted (speed is `python -m bench`'s business): the per-cell timeout only
stops a hung kernel."""

from __future__ import annotations

import functools
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).resolve().parent.parent
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
        "module.add_dep_edge(loop, scaled)",                         # link #4
        "%main: %loop -> %scale: rerouted",
        "main: ['zero', 'loop', 'copy.x', 'scale', 'scales', 'scaled', 'return']",  # the schedule
        # without link #1
        "4 HLO control edge(s): 0 preserved, 1 rerouted, 0 dropped, 3 lost; 0 dep edge(s)",
        "%main: %copy.x -> %scaled: lost at link #2 (XLA's importer)",
        "%main: %loop -> %scaled: rerouted (the program's data edges order them)",
        # without link #3
        "4 HLO control edge(s): 2 preserved, 1 rerouted, 0 dropped, 1 lost; 4 dep edge(s) in the Penguin program, "
        "2 spurious",
        "%main: %loop -> %scale: lost at link #3 (flatten-control-dep-tuple-operands)",
        "%main: %loop:tuple -> %scaled: spurious at link #3",
        "<Dependency loop:tuple -> scaled>   predecessor: stablehlo.tuple",
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


@functools.lru_cache(maxsize=None)
def run(name: str):
    """Execute notebooks/<name> once per test session."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    return nb


def outputs(nb) -> tuple[str, int]:
    text, figures = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out["output_type"] != "error", out
            if out["output_type"] == "stream":
                text.append(out["text"])
            data = out.get("data", {})
            text += [data.get("text/plain", ""), data.get("text/html", "")]
            figures += "image/png" in data
    return "\n".join(text), figures


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_and_shows_its_story(name):
    text, figures = outputs(run(name))
    missing = [needle for needle in EXPECTED[name] if needle not in text]
    assert not missing, missing
    assert figures >= FIGURES[name]


def test_notebook_02_matches_jax_on_every_module():
    text, _ = outputs(run("02_jax_regression.ipynb"))
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
