"""The chain's graphs in Model Explorer (`ai-edge-model-explorer`, the
optional extra `explorer`): the HLO as given and the Penguin program, side
by side, with the HLO's control edges and the program's dep edges as edge
overlays coloured by fate, and per-node data to colour the ops by.

    import pipeline
    from pipeline import explorer
    result = pipeline.run("module.hlo")
    served = explorer.explore(result)        # Model Explorer on localhost: served.url
    served                                   # in Jupyter: the app in the notebook
    served.close()

`chain_graphs(result)` is the conversion alone (Model Explorer's JSON, no
server); `pipeline.explorer.main` is the adapter extension that lets the
app open HLO text and protos, jax.export artifacts and Penguin programs
from its own page (`hlo2penguin FILE --explore` loads it).

The graphs:
- "HLO as given": every instruction of XLA's parse of the input, named by
  XLA; the entry computation at the top, every other computation a layer
  under the instruction that calls it. Overlays: every control edge, and
  the control edges by fate.
- "Penguin program": every instruction and argument of the program, named
  by its HLO name, each nested block a layer under its op
  (`printer.penguin.explorer`). Overlays: every dep edge, and the dep
  edges by the fate of the control edge they carry (spurious where none).
A lost or dropped edge has no dep edge: it is drawn between the program's
ops of its two names, where the program has them. A node's data: the
worst fate of its edges, and the last link that handled one (to colour by).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Sequence

from printer.penguin.drawing.model import DEP_COLOR
from printer.penguin.explorer import Overlay, cut, module_graph, overlays_json
from printer.penguin.explorer.serve import ExplorerError, Served, available, model_name, serve

__all__ = ["chain_graphs", "module_graphs", "explore", "ui_state", "Served", "ExplorerError", "available",
           "FATE_COLORS", "HLO_GRAPH", "PENGUIN_GRAPH"]

HLO_GRAPH = "HLO as given"
PENGUIN_GRAPH = "Penguin program"

# A fate's colour, in overlays and node data; the order is how bad it is (a node shows its worst).
FATE_COLORS = {"preserved": "#2ca02c", "rerouted": "#1f77b4", "dropped": "#7f7f7f", "lost": "#e377c2",
               "spurious": "#9467bd"}
_SEVERITY = {fate: k + 1 for k, fate in enumerate(FATE_COLORS)}


def _link_number(text: str | None) -> int | None:
    """2 for "link #2 (XLA's importer)"; None for no link."""
    if not text or "#" not in text:
        return None
    digits = text.split("#", 1)[1][:1]
    return int(digits) if digits.isdigit() else None


class _Marks:
    """Per node: its edges' fates and the links that handled them."""

    def __init__(self):
        self.fates: dict[str, list[str]] = defaultdict(list)
        self.links: dict[str, set[int]] = defaultdict(set)

    def mark(self, node: str, fate: str, links=()) -> None:
        self.fates[node].append(fate)
        self.links[node].update(links)

    def attrs(self) -> dict[str, list[tuple[str, str]]]:
        found = {}
        for node, fates in self.fates.items():
            counts = ", ".join(f"{f} ×{fates.count(f)}" for f in FATE_COLORS if f in fates)
            rows = [("control edges", counts)]
            if self.links[node]:
                rows.append(("links", ", ".join(f"link #{k}" for k in sorted(self.links[node]))))
            found[node] = rows
        return found

    def node_data(self, graph_id: str) -> dict[str, dict]:
        """Model Explorer's node data for `graph_id`: the worst fate, and the last link."""
        worst = {n: max(fates, key=_SEVERITY.__getitem__) for n, fates in self.fates.items()}
        fate = {"name": "worst fate of its edges",
                "results": {n: {"value": _SEVERITY[f], "bgColor": FATE_COLORS[f]} for n, f in worst.items()},
                "thresholds": [{"value": _SEVERITY[f], "bgColor": c} for f, c in FATE_COLORS.items()]}
        palette = {1: "#c6dbef", 2: "#6baed6", 3: "#2171b5", 4: "#08306b"}
        links = {"name": "last link that handled its edges",
                 "results": {n: {"value": max(k), "bgColor": palette[max(k)]} for n, k in self.links.items() if k},
                 "thresholds": [{"value": k, "bgColor": c} for k, c in palette.items()]}
        return {"fate": {graph_id: fate}, "links": {graph_id: links}}


def _edge_links(e) -> set[int]:
    """The links that handled an edge of the report: #1 where it emitted dep
    edges, #4 where the program carries it, the blamed link where it is lost."""
    links = set()
    if e.emitted:
        links.add(1)
    if e.carried:
        links.add(4)
    blamed = _link_number(e.lost_at)
    if blamed is not None:
        links.add(blamed)
    return links


def _hlo_graph(read_proto: bytes, report, marks: _Marks, program=None) -> dict | None:
    """The HLO as XLA parsed it: computations as layers under their callers,
    each named as the program's block that stands for it is (`program`: the
    executed Penguin module), else by its caller and its place there."""
    from pipeline.reading.parameters import shape_text
    from pipeline.reading.parsed import decode_proto

    if not read_proto:
        return None
    module = decode_proto(read_proto)
    by_id = {c.id: c for c in module.computations}
    entry = module.entry_computation_id if module.entry_computation_id in by_id else None
    if entry is None:
        entry = next((c.id for c in module.computations if c.name == module.entry_computation_name),
                     module.computations[-1].id if module.computations else None)
    named = _program_titles(program)
    # Each computation's layer: under the first instruction that calls it, from the entry down (a stack).
    namespace: dict[int, str] = {entry: ""} if entry is not None else {}
    stack = [entry] if entry is not None else []
    while stack:
        cid = stack.pop()
        for instr in by_id[cid].instructions:
            called = list(instr.called_computation_ids)
            for k, callee in enumerate(called):
                if callee in namespace or callee not in by_id:
                    continue
                outer = namespace[cid]
                title = named.get(by_id[callee].name) or _hlo_title(instr, k, len(called), by_id[callee].name)
                namespace[callee] = (outer + "/" if outer else "") + title.replace("/", "∕")
                stack.append(callee)
    for c in module.computations:  # computations nothing reachable calls
        namespace.setdefault(c.id, (named.get(c.name) or f"%{c.name}").replace("/", "∕"))

    # Node ids are XLA's names with its `%`: an overlay applies to every graph of its pane by node id,
    # and the program's ids are the same names without it.
    names = {i.id: "%" + i.name for c in module.computations for i in c.instructions}
    attrs = marks.attrs()
    nodes, control = [], []
    for c in module.computations:
        for i in c.instructions:
            rows = [{"key": "name", "value": i.name}, {"key": "op", "value": i.opcode},
                    {"key": "computation", "value": f"%{c.name}"}]
            if i.custom_call_target:
                rows.append({"key": "custom_call_target", "value": i.custom_call_target})
            rows += [{"key": k, "value": v} for k, v in attrs.get(i.name, ())]
            nodes.append({"id": names[i.id], "label": i.name, "namespace": namespace[c.id], "subgraphIds": [],
                          "attrs": rows,
                          "incomingEdges": [{"sourceNodeId": names[o], "sourceNodeOutputId": "0",
                                             "targetNodeInputId": str(k)}
                                            for k, o in enumerate(i.operand_ids) if o in names],
                          "outputsMetadata": [{"id": "0", "attrs": [{"key": "shape",
                                                                      "value": cut(shape_text(i.shape))}]}],
                          "inputsMetadata": []})
            control += [(names[p], names[i.id], "") for p in i.control_predecessor_ids if p in names]
    overlays = [Overlay(f"every control edge ({len(control)})", DEP_COLOR, control)]
    if report is not None:
        have = set(names.values())
        overlays += _by_fate(report, lambda pred, succ: [("%" + pred, "%" + succ)]
                             if "%" + pred in have and "%" + succ in have else [], carried=False)
    return {"id": HLO_GRAPH, "nodes": nodes, "tasksData": _tasks(overlays_json("HLO control edges", overlays))}


def _tasks(overlays: dict) -> dict:
    """A graph's overlays, in whichever pane it is opened (Model Explorer
    offers every graph's overlays in a pane; they draw where their ids are)."""
    return {"edgeOverlaysDataListLeftPane": [overlays], "edgeOverlaysDataListRightPane": [overlays]}


def _program_titles(program) -> dict[str, str]:
    """XLA's computation name → the name of the program's block that stands
    for it (the first op's region, else a function), as the report names it."""
    if program is None:
        return {}
    from printer.penguin.titles import Titles, computation_of, every_block

    blocks = every_block(program.functions)
    titles = Titles(blocks)
    found = {c: titles.of(regions[0], c) for c, regions in titles.regions.items()}
    for block in blocks:
        if block.parent is None:
            c = computation_of(block)
            if c is not None:
                found.setdefault(c, titles.of(block))
    return found


def _hlo_title(instr, k: int, count: int, callee: str) -> str:
    """A called computation no block of the program stands for: named by the
    instruction that calls it and its place there (XLA's roles), as `block_title` writes names."""
    from printer.penguin.titles import block_title

    # The printer's names of an op's regions: a while's `cond` and `body`, `region0`, `region1`… else.
    role = ("body", "cond")[k] if instr.opcode == "while" and count == 2 else f"region{k}"
    return block_title(role, callee, caller=(instr.name, instr.opcode))


def _by_fate(report, ends, carried: bool) -> list[Overlay]:
    """The report's edges by fate, as overlays: `ends(pred, succ)` gives the
    node id pairs a pair of names stands for; with `carried`, an edge the
    program carries is drawn as the dep edges that carry it."""
    overlays = {fate: Overlay(fate, color) for fate, color in FATE_COLORS.items()}
    for e in report.edges:
        fate = str(e.fate)
        label = f"%{e.predecessor} -> %{e.successor}" + (f" lost at {e.lost_at}" if e.lost_at else "")
        pairs = e.carried if carried and e.carried else ((e.predecessor, e.successor),)
        for pred, succ in pairs:
            overlays[fate].edges += [(s, t, label) for s, t in ends(pred, succ)]
    for s in report.spurious:
        overlays["spurious"].edges += [(a, b, "spurious") for a, b in ends(s.predecessor, s.successor)]
    counts = {fate: 0 for fate in FATE_COLORS}
    for e in report.edges:
        counts[str(e.fate)] += 1
    counts["spurious"] = len(report.spurious)
    found = []
    for fate, overlay in overlays.items():
        overlay.name = f"{fate} ({counts[fate]} edge{'s' if counts[fate] != 1 else ''})"
        found.append(overlay)
    return found


def _penguin_graph(module, report, marks: _Marks) -> dict:
    """The program's graph, its dep edges as overlays by fate."""
    graph, ids = module_graph(module, PENGUIN_GRAPH, overlays=[])
    by_names: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    deps = []
    for d in module.dependencies:
        pair = (ids.get(id(d.predecessor)), ids.get(id(d.successor)))
        if None in pair:
            continue
        deps.append((*pair, ""))
        by_names[(d.predecessor.name, d.successor.name)].append(pair)
    by_name: dict[str, list[str]] = defaultdict(list)  # an instruction's name → its node ids (arguments aside)
    for instr in module.instructions():
        by_name[instr.name].append(ids[id(instr)])

    def ends(pred: str, succ: str) -> list[tuple[str, str]]:
        if (pred, succ) in by_names:
            return by_names[(pred, succ)]
        return [(a, b) for a in by_name.get(pred, ()) for b in by_name.get(succ, ())][:4]

    overlays = [Overlay(f"every dep edge ({len(deps)})", DEP_COLOR, deps)]
    if report is not None:
        overlays += _by_fate(report, ends, carried=True)
    graph["tasksData"] = _tasks(overlays_json("Penguin dep edges", overlays))
    return graph


def _marks(report, names: set[str] | None = None) -> _Marks:
    marks = _Marks()
    if report is None:
        return marks
    for e in report.edges:
        for node in (e.predecessor, e.successor):
            marks.mark(node, str(e.fate), _edge_links(e))
        for pred, succ in e.carried:
            for node in (pred, succ):
                if node not in (e.predecessor, e.successor):
                    marks.mark(node, str(e.fate), {4})
    for s in report.spurious:
        for node in (s.predecessor, s.successor):
            marks.mark(node, "spurious", {_link_number(s.at)} - {None})
    return marks


def chain_graphs(result) -> tuple[dict, dict[str, dict]]:
    """Model Explorer's JSON for a `ChainResult`: one collection holding
    the HLO as given (where the chain read it with check on) and the
    Penguin program; and the node data to colour them by (name → data).

    Python's cyclic collector is paused meanwhile: the conversion makes a
    few dicts per op and frees none, and each collection of the oldest
    generation walks every object the run holds, so with it on the
    conversion grows faster than the module (16k instructions: 2.4 s, 0.9 s
    without)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _chain_graphs(result)
    finally:
        if enabled:
            gc.enable()


def _chain_graphs(result) -> tuple[dict, dict[str, dict]]:
    report = result.report
    marks = _marks(report)
    graphs = []
    program = result.module()
    hlo = _hlo_graph(result.read_proto, report, marks, program)
    if hlo is not None:
        graphs.append(hlo)
    penguin = _penguin_graph(program, report, marks)
    rows = marks.attrs()
    for node in penguin["nodes"]:
        node["attrs"] += [{"key": k, "value": v} for k, v in rows.get(node["label"], ())]
    graphs.append(penguin)
    node_data = {}
    for graph in graphs:
        for name, data in _graph_node_data(marks, graph).items():
            node_data.setdefault(name, {}).update(data)
    collection = {"label": result.source, "graphs": graphs, "graphSorting": "name_desc"}
    return {"graphCollections": [collection]}, node_data


def _graph_node_data(marks: _Marks, graph: dict) -> dict[str, dict]:
    """The node data of one graph, by node id (a name may stand for several nodes)."""
    ids: dict[str, list[str]] = defaultdict(list)
    for node in graph["nodes"]:
        ids[node["label"]].append(node["id"])
    data = marks.node_data(graph["id"])
    for what in data.values():
        results = what[graph["id"]]["results"]
        what[graph["id"]]["results"] = {i: r for name, r in results.items() for i in ids.get(name, ())}
    return data


def module_graphs(module, name: str = "penguin") -> dict:
    """Model Explorer's JSON for a Penguin Module alone: its graph, every dep edge one overlay."""
    graph, _ = module_graph(module, PENGUIN_GRAPH)
    return {"graphCollections": [{"label": name, "graphs": [graph]}]}


def ui_state(graph: str = PENGUIN_GRAPH, *, select: str = "", beside: str | None = None,
             expand: Sequence[str] = ()) -> dict:
    """Model Explorer's `uiState`: `graph` open (with the node of id `select`
    selected, the layers `expand` open), and `beside` it, in a second pane, another graph."""
    def pane(graph_id: str, node: str, width: float, selected: bool) -> dict:
        return {"deepestExpandedGroupNodeIds": list(expand) if node == select else [], "selectedNodeId": node,
                "selectedGraphId": graph_id, "selectedCollectionLabel": "", "widthFraction": width,
                "selected": selected}

    if beside is None:
        return {"paneStates": [pane(graph, select, 1.0, True)]}
    return {"paneStates": [pane(beside, "", 0.5, False), pane(graph, select, 0.5, True)]}


def explore(result, *, port: int | None = None, host: str = "localhost", side_by_side: bool = True,
            select: str = "") -> Served:
    """Model Explorer on localhost showing `result` (a `ChainResult`), with
    the adapter extension loaded: a `Served` (its `url`; Jupyter shows it).
    The Penguin program opens with the HLO beside it (`side_by_side=False`:
    the program alone), the program's op `select` selected."""
    graphs, node_data = chain_graphs(result)
    has_hlo = len(graphs["graphCollections"][0]["graphs"]) > 1
    state = ui_state(PENGUIN_GRAPH, select=select, beside=HLO_GRAPH if side_by_side and has_hlo else None)
    return serve(graphs, model_name(result.source), node_data=node_data, port=port, host=host,
                 extensions=("pipeline.explorer",), ui_state=state)
