"""Model Explorer's graphs of a chain run (`pipeline.explorer.chain_graphs`),
without a browser: the HLO graph against XLA's own printing of the module,
the program's graph against the executed program, the overlays by fate
against the verifier's report."""

from __future__ import annotations

import json
import re
import time

import jaxlib._hlo as xla_hlo
import pytest

import pipeline
from paths import CORPUS, PIPELINE_DUMPS
from pipeline import explorer
from pipeline.chain.example import EXAMPLE_HLO
from printer.penguin.explorer import module_graph

_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = ")
_CONTROL = re.compile(r"control-predecessors=\{([^}]*)\}")


def xla_printed(text: str) -> tuple[set[str], set[tuple[str, str]]]:
    """Every instruction name and control edge of the module, as XLA prints it."""
    names, edges = set(), set()
    for line in xla_hlo.hlo_module_from_text(text).to_string().splitlines():
        found = _INSTRUCTION.match(line)
        if not found:
            continue
        names.add(found.group(1))
        control = _CONTROL.search(line)
        if control:
            edges |= {(p.strip().lstrip("%"), found.group(1)) for p in control.group(1).split(",")}
    return names, edges


def graphs_of(result) -> dict[str, dict]:
    graphs, _ = explorer.chain_graphs(result)
    (collection,) = graphs["graphCollections"]
    return {g["id"]: g for g in collection["graphs"]}


def overlays(graph: dict) -> dict[str, set[tuple[str, str]]]:
    """Each overlay of the graph by its name up to its count: `lost` → its edges."""
    (menu,) = graph["tasksData"]["edgeOverlaysDataListLeftPane"]
    return {o["name"].split(" (")[0]: {(e["sourceNodeId"], e["targetNodeId"]) for e in o["edges"]}
            for o in menu["overlays"]}


def program_nodes(module) -> int:
    """Arguments and instructions of every block of the executed program."""
    count, stack = 0, list(module.functions)
    while stack:
        block = stack.pop()
        count += len(block.arguments) + len(block.instructions)
        stack += [b for i in block.instructions for b in i.blocks]
    return count


REAL = [CORPUS / "rnn_grad.jaxexport", CORPUS / "while_rotate_three.jaxexport",
        PIPELINE_DUMPS / "gpu_all_gather_scan_offload.hlo"]


@pytest.fixture(scope="module", params=REAL, ids=[p.name for p in REAL])
def real(request):
    return pipeline.run(str(request.param))


def test_the_hlo_graph_is_xla_s_module_and_its_control_edges(real):
    hlo = graphs_of(real)[explorer.HLO_GRAPH]
    names, edges = xla_printed(_read_text(real))
    assert {n["label"] for n in hlo["nodes"]} == names
    assert overlays(hlo)["every control edge"] == {("%" + a, "%" + b) for a, b in edges}
    assert edges, "a module without control edges tests nothing here"


def _read_text(result) -> str:
    """The module the chain read, as XLA prints its parse (the proof's reading)."""
    from pipeline.xla.isolated import print_module

    return print_module(result.read_proto, result.source)


def test_the_program_graph_holds_every_op_and_every_dep_edge(real):
    module = real.module()
    graph, ids = module_graph(module, "g")
    penguin = graphs_of(real)[explorer.PENGUIN_GRAPH]
    assert len(penguin["nodes"]) == program_nodes(module)
    every = overlays(penguin)["every dep edge"]
    expected = {(ids[id(d.predecessor)], ids[id(d.successor)]) for d in module.dependencies}
    assert every == expected and len(every) == len(module.dependencies) == real.report.dep_edges
    # Every data edge's source is a node of the graph; node ids are unique.
    node_ids = [n["id"] for n in penguin["nodes"]]
    assert len(set(node_ids)) == len(node_ids)
    assert {e["sourceNodeId"] for n in penguin["nodes"] for e in n["incomingEdges"]} <= set(node_ids)


def test_fates_are_the_verifier_s():
    """The example without link #3: one edge lost, two spurious dep edges (the report says which)."""
    result = pipeline.run(EXAMPLE_HLO, pipeline.Options(flatten=False))
    report = result.report
    assert report.lost and report.spurious  # what this test is about
    graphs = graphs_of(result)
    hlo, penguin = overlays(graphs[explorer.HLO_GRAPH]), overlays(graphs[explorer.PENGUIN_GRAPH])
    for fate in ("preserved", "rerouted", "dropped", "lost"):
        edges = {("%" + e.predecessor, "%" + e.successor) for e in report.edges if e.fate == fate}
        assert hlo[fate] == edges, fate
    assert penguin["spurious"] == {(s.predecessor, s.successor) for s in report.spurious}
    assert penguin["lost"] == {(e.predecessor, e.successor) for e in report.lost}  # where it should be
    carried = {pair for e in report.edges if e.fate == "preserved" for pair in e.carried}
    assert penguin["preserved"] == carried
    # The overlay menu says how many edges each fate has, as the report counts them.
    (menu,) = graphs[explorer.PENGUIN_GRAPH]["tasksData"]["edgeOverlaysDataListLeftPane"]
    named = {o["name"] for o in menu["overlays"]}
    totals = report.totals()
    assert f"lost ({totals['lost']} edge{'s' if totals['lost'] != 1 else ''})" in named
    assert f"spurious ({totals['spurious']} edges)" in named


def test_node_data_colours_each_node_by_its_worst_fate():
    result = pipeline.run(EXAMPLE_HLO, pipeline.Options(flatten=False))
    _, data = explorer.chain_graphs(result)
    fate = data["fate"][explorer.HLO_GRAPH]["results"]
    lost = result.report.lost[0]
    assert fate["%" + lost.successor]["bgColor"] == explorer.FATE_COLORS["lost"]
    untouched = {"%x", "%zero"} & set(fate)
    assert not untouched  # no control edge there


def test_nested_blocks_are_layers_named_by_their_op():
    result = pipeline.run(EXAMPLE_HLO)
    graphs = graphs_of(result)
    penguin = {n["label"]: n["namespace"] for n in graphs[explorer.PENGUIN_GRAPH]["nodes"]
               if not n["attrs"][1]["value"].startswith("argument")}
    hlo = {n["label"]: n["namespace"] for n in graphs[explorer.HLO_GRAPH]["nodes"]}
    # `copy.twice` is in the while's body in both graphs, under the while (%loop in the example's HLO).
    assert hlo["copy.twice"] == penguin["copy.twice"] != ""
    assert hlo["copy.twice"] == "%loop (while): body"  # XLA names the computation `body` too
    assert penguin["loop"] == hlo["loop"] == ""


def test_a_large_constant_is_not_sent_to_the_browser():
    values = ", ".join(str(k) for k in range(20000))
    text = (f"HloModule big\n\nENTRY %main () -> f32[20000] {{\n"
            f"  %c = f32[20000]{{0}} constant({{{values}}})\n"
            f"  %a = f32[20000]{{0}} copy(%c)\n"
            f"  ROOT %b = f32[20000]{{0}} copy(%c), control-predecessors={{%a}}\n}}\n")
    result = pipeline.run(text)
    graphs, data = explorer.chain_graphs(result)
    sent = json.dumps(graphs)
    assert len(sent) < len(values) / 4
    penguin = {n["label"]: n for n in graphs["graphCollections"][0]["graphs"][1]["nodes"]}
    assert all(len(a["value"]) <= 300 for a in penguin["c"]["attrs"])


def _synthetic(n: int) -> str:
    from bench.synthetic import synthetic_hlo

    return synthetic_hlo(n)


def test_the_conversion_grows_linearly():
    """Four times the instructions, at most eight times the conversion's time (best of three each)."""
    sizes = (2000, 8000)
    results = [pipeline.run(_synthetic(n)) for n in sizes]
    for r in results:
        r.module()

    def best(result) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            explorer.chain_graphs(result)
            times.append(time.perf_counter() - start)
        return min(times)

    small, large = (best(r) for r in results)
    assert large < 8 * small, (small, large)


def test_report_plot_and_explorer_name_each_block_alike(real, tmp_path):
    """The block of every edge of the report is the layer its ops sit in, in both graphs, and a panel
    of the program's picture (every nested block drawn)."""
    from xml.etree import ElementTree

    from printer.penguin import drawing

    module = real.module()
    svg = tmp_path / "all.svg"
    svg.write_bytes(drawing.svg(module, function=None, nested="all"))
    panels = {"".join(t.itertext()) for t in ElementTree.parse(svg).iter("{http://www.w3.org/2000/svg}text")
              if t.get("class") == "title"}
    graphs = graphs_of(real)
    hlo = {n["label"]: n["namespace"] for n in graphs[explorer.HLO_GRAPH]["nodes"]}
    layers = {n["namespace"].rsplit("/", 1)[-1] for n in graphs[explorer.PENGUIN_GRAPH]["nodes"]}
    nested = [e for e in real.report.edges if not e.block.startswith("func @")]
    assert nested, "edges of nested blocks are what this test is about"
    for e in nested:
        assert e.block in panels, (e.block, sorted(panels))
        assert e.block in layers, e.block
        assert hlo[e.successor].rsplit("/", 1)[-1] == e.block
