"""Graphviz DOT of a Penguin program, for those who have Graphviz: each
function and each nested block a cluster labelled as every picture names
a block (`printer.penguin.titles.Titles`), data edges solid, dep edges
dashed and red."""

from __future__ import annotations

from printer.penguin.drawing.model import DATA_COLOR, DEP_COLOR, FILL, GNode, block_path, graph
from printer.penguin.graph import Instruction
from printer.penguin.titles import Titles, every_block

# `Module` is named in annotations only (see model.py).


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(module: Module, function: str | None = None) -> str:
    """Graphviz DOT of `function` (every function if None): nodes named by HLO
    instruction names, data edges solid, dep edges dashed red, each function
    and each nested block a cluster."""
    g = graph(module, function)
    by_block: dict[int, list[GNode]] = {}
    for n in g.nodes:
        by_block.setdefault(id(n.block), []).append(n)
    deps = len(g.dep_edges)
    lines = [f"digraph {_q(module.name)} {{",
             f"  label={_q(f'{module.name}: {len(g.data_edges)} data edge(s), {deps} dep edge(s)')};",
             "  labelloc=t;",
             "  rankdir=LR;",
             "  compound=true;",
             '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="monospace", fontsize=10];',
             f'  edge [color="{DATA_COLOR}", arrowsize=0.7];']
    on_dep = {id(e.source) for e in g.dep_edges} | {id(e.target) for e in g.dep_edges}

    # Each block's subgraph holds its nodes, each op's nested blocks right
    # after it: an explicit stack of what is left (a block to open, a node,
    # a brace to close), since blocks nest as deep as the program.
    titles = Titles(every_block(g.module.functions))
    stack: list = [("block", fn, "  ") for fn in reversed(g.functions)]
    while stack:
        kind, item, indent = stack.pop()
        if kind == "close":
            lines.append(f"{indent}}}")
        elif kind == "block":
            lines.append(f"{indent}subgraph {_q('cluster_' + block_path(item))} {{")
            lines.append(f"{indent}  label={_q(titles.of(item))};")
            lines.append(f'{indent}  style=rounded; color="#999999";')
            stack.append(("close", None, indent))
            stack += [("node", n, indent) for n in reversed(by_block.get(id(item), []))]
        else:
            n = item
            label = n.name if n.opcode == n.name else n.name + "\n" + n.opcode
            attrs = [f"label={_q(label)}", f'fillcolor="{FILL[n.kind]}"']
            if id(n) in on_dep:
                attrs.append(f'color="{DEP_COLOR}", penwidth=1.5')
            lines.append(f"{indent}  {_q(n.id)} [{', '.join(attrs)}];")
            if isinstance(n.obj, Instruction):
                stack += [("block", inner, indent + "  ") for inner in reversed(n.obj.blocks)]

    lines.append("  // data edges (operands)")
    for e in g.data_edges:
        extra = f" [taillabel={_q('#' + str(e.result))}, fontsize=8]" if e.result is not None else ""
        lines.append(f"  {_q(e.source.id)} -> {_q(e.target.id)}{extra};")
    lines.append("  // dep edges (Module.dependencies: add_dep_edge)")
    for e in g.dep_edges:
        lines.append(f"  {_q(e.source.id)} -> {_q(e.target.id)} "
                     f'[style=dashed, color="{DEP_COLOR}", fontcolor="{DEP_COLOR}", penwidth=1.5, label="dep"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
