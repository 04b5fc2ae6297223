"""A Penguin Module as Model Explorer draws it: the JSON of one graph of
Model Explorer's `graph_builder` (a node per argument and instruction, a
data edge per operand, each nested block a layer under the op that owns
it), with the dep edges as edge overlays, not layout edges: Model Explorer
lays a graph out by its data edges and draws an overlay's edges over it
while one of their ops is selected.

The JSON is written here as plain dicts, not `graph_builder` objects:
Model Explorer's own conversion (`dataclasses.asdict`) takes longer than
the chain's link #4 on a 300k-instruction program, and a Module is drawn
without Model Explorer installed (tests, `hlo2penguin --explore`'s parent).
The field names are Model Explorer's (`model_explorer/graph_builder.py`).

`serve` (printer.penguin.explorer.serve) shows the graphs in Model
Explorer's web app, served on localhost by a child process."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from printer.penguin.drawing.model import DEP_COLOR, GNode, entry_function, graph
from printer.penguin.graph import Instruction
from printer.penguin.titles import Titles, every_block

# An overlay of more edges than this draws, while an op is selected, only
# the edges of that op: drawing every edge of an overlay makes Model Explorer
# open every layer that holds an end of one, and a module of a real training
# step then lays out tens of thousands of ops at once (its page stops).
CONNECTED_ONLY = 100

# An attribute's text past this many characters is cut in the browser's side
# panel (a constant's values can run to megabytes): its length is said instead.
ATTRIBUTE_CHARS = 200


@dataclass
class Overlay:
    """Edges drawn over a graph in one colour: (source node id, target node id, label)."""

    name: str
    color: str
    edges: list[tuple[str, str, str]] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"name": self.name, "edgeColor": self.color, "edgeWidth": 2, "edgeLabelFontSize": 7.5,
                "showEdgesConnectedToSelectedNodeOnly": len(self.edges) > CONNECTED_ONLY,
                "edges": [{"sourceNodeId": s, "targetNodeId": t, "label": label or None} for s, t, label in self.edges]}


def overlays_json(name: str, overlays: Iterable[Overlay]) -> dict:
    """One entry of a graph's edge overlay menu: `name`, holding `overlays`."""
    return {"name": name, "type": "edge_overlays", "overlays": [o.as_json() for o in overlays]}


def cut(text: str, limit: int = ATTRIBUTE_CHARS) -> str:
    """`text`, or its start and how long it is where it runs past `limit` characters."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters, not sent to the browser)"


def module_graph(module, graph_id: str, *, overlays: Iterable[dict] | None = None,
                 extra_attrs: dict[str, list[tuple[str, str]]] | None = None) -> tuple[dict, dict[int, str]]:
    """The graph of every function of `module` (Model Explorer's JSON), and
    the node id of each instruction and argument (by `id()` of the object).

    The entry function's ops sit at the top; any other function is a layer
    `func @name`; a nested block is a layer inside the layer of the block
    that holds its op, named as the report and the pictures name it
    (`printer.penguin.titles.Titles`: `%while.16 (while): body [%region_2.10]`). `overlays` (the JSON of
    `overlays_json`) default to one: every dep edge of the module.
    `extra_attrs` adds side-panel rows to the nodes of those ids."""
    g = graph(module)
    entry = entry_function(module)
    titles = Titles(every_block(module.functions))
    namespace: dict[int, str] = {}
    for block in every_block(g.functions):  # each block after the block that holds its op
        if block.parent is None:
            namespace[id(block)] = "" if block.name == entry else _layer(titles.of(block))
        else:
            outer = namespace[id(block.parent.parent)]
            namespace[id(block)] = (outer + "/" if outer else "") + _layer(titles.of(block))
    ids = {id(n.obj): n.id for n in g.nodes}
    nodes: dict[str, dict] = {}
    for n in g.nodes:
        nodes[n.id] = _node(n, namespace[id(n.block)], extra_attrs.get(n.id, ()) if extra_attrs else ())
    for position, e in _operand_positions(g):
        nodes[e.target.id]["incomingEdges"].append(
            {"sourceNodeId": e.source.id, "sourceNodeOutputId": str(e.result or 0), "targetNodeInputId": str(position)})
    if overlays is None:
        deps = [(ids[id(d.predecessor)], ids[id(d.successor)], "") for d in module.dependencies
                if id(d.predecessor) in ids and id(d.successor) in ids]
        overlays = [overlays_json("Penguin dep edges", [Overlay(f"every dep edge ({len(deps)})", DEP_COLOR, deps)])]
    # In either pane (Model Explorer offers a pane every graph's overlays; they draw where their ids are).
    tasks = {"edgeOverlaysDataListLeftPane": list(overlays), "edgeOverlaysDataListRightPane": list(overlays)}
    return {"id": graph_id, "nodes": list(nodes.values()), "tasksData": tasks}, ids


def _layer(title: str) -> str:
    """A title as one level of a namespace: Model Explorer splits namespaces at `/`."""
    return title.replace("/", "∕")


def _operand_positions(g):
    """(operand position, data edge) of every data edge, by the position of
    its source among the target's operands."""
    seen: dict[int, int] = {}
    for e in g.data_edges:
        k = seen.get(id(e.target), 0)
        seen[id(e.target)] = k + 1
        yield k, e


def _node(n: GNode, namespace: str, extra: Iterable[tuple[str, str]]) -> dict:
    attrs = [{"key": "name", "value": n.name}, {"key": "op", "value": n.opcode}]
    outputs = []
    obj = n.obj
    if isinstance(obj, Instruction):
        if obj.computation:
            attrs.append({"key": "hlo computation", "value": f"%{obj.computation}"})
        for key, value in obj.attributes.items():
            attrs.append({"key": key, "value": cut(str(value))})
        outputs = [{"id": str(i), "attrs": [{"key": "type", "value": cut(str(t))}]}
                   for i, t in enumerate(obj.result_types)]
    else:
        outputs = [{"id": "0", "attrs": [{"key": "type", "value": cut(str(obj.type))}]}]
    attrs += [{"key": k, "value": v} for k, v in extra]
    return {"id": n.id, "label": n.name, "namespace": namespace, "subgraphIds": [], "attrs": attrs,
            "incomingEdges": [], "outputsMetadata": outputs, "inputsMetadata": []}
