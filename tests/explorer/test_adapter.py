"""The adapter extension, as Model Explorer's app runs it: served with the
extension loaded, asked over the app's own API to convert files of every
kind the chain reads, and a Penguin program."""

from __future__ import annotations

import json
import urllib.request

import jaxlib._hlo as xla_hlo
import pytest

import pipeline
from paths import CORPUS
from pipeline import explorer
from pipeline.chain.example import EXAMPLE_HLO
from printer.penguin.drawing.model import DEP_COLOR
from printer.penguin.explorer import cut, module_graph
from printer.penguin.module import Module
from test_graphs import program_nodes, xla_printed


@pytest.fixture(scope="module")
def app(model_explorer):
    with explorer.explore(pipeline.run(EXAMPLE_HLO)) as served:
        yield served


def convert(app, path) -> dict:
    """What the app's page gets when it opens `path` with the adapter."""
    command = {"extensionId": "hlo2penguin", "cmdId": "convert", "modelPath": str(path), "settings": {},
               "deleteAfterConversion": False}
    request = urllib.request.Request(app.base + "/apipost/v1/send_command", data=json.dumps(command).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as r:
        return json.loads(r.read())


def test_the_app_lists_the_adapter_for_the_chain_s_inputs(app):
    with urllib.request.urlopen(app.base + "/api/v1/get_extensions") as r:
        found = {e["id"]: e for e in json.loads(r.read())}
    assert {"hlo", "pb", "jaxexport", "py"} <= set(found["hlo2penguin"]["fileExts"])


def _counts(answer: dict) -> dict[str, int]:
    (collection,) = answer["graphCollections"]
    return {g["id"]: len(g["nodes"]) for g in collection["graphs"]}


@pytest.mark.parametrize("kind", ["text", "proto", "jax.export"])
def test_the_adapter_opens_what_the_chain_reads(app, tmp_path, kind):
    if kind == "text":
        path = tmp_path / "example.hlo"
        path.write_text(EXAMPLE_HLO)
    elif kind == "proto":
        path = tmp_path / "example.pb"
        path.write_bytes(xla_hlo.hlo_module_from_text(EXAMPLE_HLO).as_serialized_hlo_module_proto())
    else:
        path = CORPUS / "while_rotate_three.jaxexport"
    result = pipeline.run(str(path))
    from test_graphs import _read_text

    names, _ = xla_printed(_read_text(result))
    assert _counts(convert(app, path)) == {explorer.HLO_GRAPH: len(names),
                                           explorer.PENGUIN_GRAPH: program_nodes(result.module())}


def test_the_adapter_opens_a_penguin_program_in_the_sandbox(app, tmp_path):
    result = pipeline.run(EXAMPLE_HLO)
    path = tmp_path / "program.py"
    path.write_text(result.penguin_source)
    answer = convert(app, path)
    assert _counts(answer) == {explorer.PENGUIN_GRAPH: program_nodes(result.module())}
    (graph,) = answer["graphCollections"][0]["graphs"]
    (every,) = graph["tasksData"]["edgeOverlaysDataListLeftPane"][0]["overlays"]
    assert len(every["edges"]) == len(result.module().dependencies)


def test_a_file_the_chain_refuses_is_one_line_on_the_page(app, tmp_path):
    path = tmp_path / "broken.hlo"
    path.write_text("HloModule broken\n\nENTRY %main () -> f32[] {\n  ROOT %x = f32[] nonsense()\n}\n")
    answer = convert(app, path)
    assert "graphCollections" not in answer
    assert "\n" not in answer["error"].strip() and "broken.hlo" in answer["error"]


def test_a_long_attribute_is_cut_before_the_browser():
    module = Module("m")
    fn = module.function("main")
    big = fn.op("stablehlo.constant", "c", results=["tensor<f32>"], attributes={"value": "1.0, " * 10_000})
    fn.op("stablehlo.copy", "d", [big], results=["tensor<f32>"])
    graph, _ = module_graph(module, "g")
    (c,) = [n for n in graph["nodes"] if n["id"] == "c"]
    (value,) = [a["value"] for a in c["attrs"] if a["key"] == "value"]
    assert len(value) < 300 and "50,000 characters" in value
    assert cut("short") == "short"
    (menu,) = graph["tasksData"]["edgeOverlaysDataListLeftPane"]
    assert menu["overlays"][0]["edgeColor"] == DEP_COLOR and menu["overlays"][0]["edges"] == []


def _served_graph(served) -> dict:
    with urllib.request.urlopen(served.base + "/api/v1/load_graphs_json?graph_index=0") as r:
        (collection,) = json.loads(r.read())["graphCollections"]
    return {g["id"]: g for g in collection["graphs"]}


def test_a_chain_result_and_a_module_open_in_a_notebook(model_explorer):
    """What Jupyter shows for `result.explore()` and `module.explore()`: the app in an iframe."""
    import html

    result = pipeline.run(EXAMPLE_HLO)
    with result.explore() as served:
        assert f'src="{html.escape(served.url, quote=True)}"' in served._repr_html_()
        assert set(_served_graph(served)) == {explorer.HLO_GRAPH, explorer.PENGUIN_GRAPH}
    assert not served.running
    module = result.module()
    with module.explore() as served:
        (graph,) = _served_graph(served).values()
        assert len(graph["nodes"]) == program_nodes(module)


@pytest.mark.parametrize("argv, said", [
    (["--explore"], "--explore: Model Explorer is not installed: pip install 'hlo2penguin[explorer]'"),
    (["--explore-port", "8090"], "--explore-port says where --explore serves: give --explore too"),
    (["--explore", "--emit", "hlo"], "--explore shows the HLO beside its Penguin program, and --emit hlo stops"),
])
def test_explore_s_usage_errors_are_one_line_before_the_chain_runs(argv, said, monkeypatch, capsys, tmp_path):
    """Without the extra (Model Explorer made unfindable here), or with a flag it cannot use: exit 2,
    one line, no output file."""
    import importlib.util

    from pipeline.cli.hlo2penguin import main

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "model_explorer" else find_spec(name, *a))
    out = tmp_path / "out.py"
    assert main([*argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hlo2penguin: error: " + said), err
    assert not out.exists()
