"""The layers of the project: no import in `pipeline/` runs back up a layer.

From the bottom: `passes` (links #1 and #3), `printer` (link #4), then the
pipeline's rooms. Reading a module has two tiers around `pipeline.xla`: what
reads without XLA (the lexical rules, the text checks, the binary kinds and
their wire walk), then the loaders that ask XLA (the one entry `source`, dump
folders, captures, the folder walk). The verifier sits above reading and
below the chain: it proves a program against XLA's parse of its input and
takes nothing the chain computed. The front ends (the commands, and the
pytest plugin that runs a corpus as the `regress` command does) are on top.
A module may import its own layer and any
layer below it, lazily or not (`test_imports.import_edges` counts both).
"""

from __future__ import annotations

import pytest
from test_imports import Edge, import_edges, project_modules

from paths import REPO as ROOT

_READING_WITHOUT_XLA = ("lexical", "text", "names", "elided", "tuple_operands", "parsed", "parameters",
                        "hints", "binary", "wire", "literals")
_READING_WITH_XLA = ("source", "dumps", "capture", "walk")

# Bottom first: (layer name, module prefixes). A module is in the first layer with a prefix of it.
LAYERS = [
    ("passes", ("passes",)),
    ("printer", ("printer",)),
    ("reading without XLA", ("pipeline.reading",) + tuple(f"pipeline.reading.{m}" for m in _READING_WITHOUT_XLA)),
    ("xla", ("pipeline.xla",)),
    ("reading with XLA", tuple(f"pipeline.reading.{m}" for m in _READING_WITH_XLA)),
    ("verifier", ("pipeline.verifier",)),
    ("explorer", ("pipeline.explorer",)),  # a chain run's graphs in Model Explorer (ChainResult.explore)
    ("chain", ("pipeline.chain",)),
    ("top", ("pipeline", "pipeline.testing", "pipeline.sources", "pipeline.corpus")),
    ("explorer adapter", ("pipeline.explorer.main",)),  # Model Explorer's extension: runs the chain
    ("front ends", ("pipeline.cli", "pipeline.pytest_plugin")),  # the commands, and pytest running a corpus
    ("bench", ("bench",)),
]


def layer_of(module: str) -> int:
    """The index in LAYERS of `module`: the layer with the longest prefix of it."""
    best, length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    if best is None:
        raise LookupError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best


def upward(edges: list[Edge]) -> list[str]:
    """Each import that runs up a layer, as `where: a (layer) imports b (layer)`."""
    found = []
    for e in edges:
        a, b = layer_of(e.source), layer_of(e.target)
        if b > a:
            found.append(f"{e.where}: {e.source} ({LAYERS[a][0]}) imports {e.target} ({LAYERS[b][0]})"
                         f"{' inside a function' if e.lazy else ''}")
    return sorted(found)


def test_every_module_is_in_a_layer():
    for module in project_modules(ROOT):
        layer_of(module)


def test_no_import_runs_up_a_layer():
    found = upward(import_edges())
    assert not found, "imports that run up a layer:\n" + "\n".join(found)


def test_the_verifier_takes_nothing_from_the_chain():
    edges = [e for e in import_edges() if e.source.startswith("pipeline.verifier")]
    assert edges, "the verifier imports no project module: the scan is broken"
    assert not [e for e in edges if e.target.startswith("pipeline.chain")]


@pytest.mark.parametrize("source, target, up", [
    ("pipeline.verifier.verify", "pipeline.chain.steps", True),
    ("pipeline.reading.names", "pipeline.xla.isolated", True),
    ("pipeline.reading.source", "pipeline.xla.isolated", False),
    ("printer.python_printer", "pipeline.reading.text", True),
    ("pipeline.cli.check", "pipeline.reading.walk", False),
])
def test_an_upward_import_is_found(source, target, up):
    assert bool(upward([Edge(source, target, "x.py:1", lazy=True)])) is up
