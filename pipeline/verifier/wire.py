"""What the verifier reads of an executed Penguin module, as plain data:
the child that runs a program (`pipeline.verifier.sandbox`) `describe`s the
module it built, the verifier `rebuild`s it, and reads the rebuilt one as
it would read the program's own (`pipeline.verifier.inputs.Program`).

    {"name": "m",
     "functions": [block, ...],                       # indices into "blocks"
     "blocks": [[name, owner op | null, [argument], [instruction]], ...],
     "nodes": [["i", name, opcode, computation | null, block | null, [operand], [nested block]]
               | ["a", name, block | null], ...],
     "dependencies": [[predecessor, successor], ...]}

A node is its index in "nodes"; an operand or a dependency end that is one
result of an op (`Value`) is [node, index]. Names, opcodes and computations
are kept; types, attributes and constants, which no judgement reads, are
not. Every walk is a loop over a work list: a program nests blocks as deep
as it likes. Only these plain types cross: never an object the program made.
"""

from __future__ import annotations


class NotAGraph(ValueError):
    """The module holds something that is not part of a Penguin graph."""


def describe(module) -> dict:
    """The plain data of `module` (a `printer.penguin.Module`), in the child;
    NotAGraph, one line, for anything the verifier could not read."""
    from printer.penguin.graph import Argument, Block, Instruction, Value

    nodes: list = []
    blocks: list = []
    node_at: dict[int, int] = {}
    block_at: dict[int, int] = {}
    todo: list = []
    kept: list = []  # every object indexed stays alive: ids stay unique

    def node(n, where: str):
        if isinstance(n, Value) and isinstance(n.instruction, Instruction) and type(n.index) is int:
            return [node(n.instruction, where), n.index]
        if not isinstance(n, (Instruction, Argument)):
            raise NotAGraph(f"{where} is {type(n).__name__}, not an instruction or an argument")
        k = node_at.get(id(n))
        if k is None:
            k = node_at[id(n)] = len(nodes)
            nodes.append(None)
            todo.append(("node", n, k))
            kept.append(n)
        return k

    def block(b, where: str):
        if b is None:
            return None
        if not isinstance(b, Block):
            raise NotAGraph(f"{where} is {type(b).__name__}, not a block")
        k = block_at.get(id(b))
        if k is None:
            k = block_at[id(b)] = len(blocks)
            blocks.append(None)
            todo.append(("block", b, k))
            kept.append(b)
        return k

    name = _text(module.name, "the module's name")
    functions = [block(f, "a function of the module") for f in _listed(module.functions, "module.functions")]
    dependencies = []
    for dep in _listed(module.dependencies, "module.dependencies"):
        succ = getattr(dep, "successor", None)
        if not isinstance(succ, Instruction):
            raise NotAGraph(f"a dependency's successor is {type(succ).__name__}, not an instruction")
        dependencies.append([node(getattr(dep, "predecessor", None), "a dependency's predecessor"),
                             node(succ, "a dependency's successor")])
    while todo:
        kind, obj, k = todo.pop()
        label = _text(obj.name, f"a {kind}'s name")
        if kind == "block":
            owner = obj.parent
            if owner is not None and not isinstance(owner, Instruction):
                raise NotAGraph(f"block {label}'s owner is {type(owner).__name__}, not an instruction")
            blocks[k] = [label, None if owner is None else node(owner, f"block {label}'s owner"),
                         [node(a, f"an argument of block {label}") for a in _listed(obj.arguments, label)],
                         [node(i, f"an instruction of block {label}") for i in _listed(obj.instructions, label)]]
        elif isinstance(obj, Argument):
            nodes[k] = ["a", label, block(obj.block, f"argument {label}'s block")]
        else:
            computation = obj.computation
            nodes[k] = ["i", label, _text(obj.opcode, f"{label}'s opcode"),
                        None if computation is None else _text(computation, f"{label}'s computation"),
                        block(obj.parent, f"{label}'s block"),
                        [node(o, f"an operand of {label}") for o in _listed(obj.operands, label)],
                        [block(b, f"a block of {label}") for b in _listed(obj.blocks, label)]]
    return {"name": name, "functions": functions, "blocks": blocks, "nodes": nodes, "dependencies": dependencies}


def _text(value, what: str) -> str:
    if type(value) is not str:
        raise NotAGraph(f"{what} is {type(value).__name__}, not a str")
    return value


def _listed(value, what: str) -> list:
    if type(value) is not list:
        raise NotAGraph(f"{what} holds a {type(value).__name__}, not a list")
    return value


def rebuild(data: dict):
    """The `printer.penguin.Module` that `data` describes, in the verifier's
    process; NotAGraph for data that is not what `describe` writes (a
    program can write to the child's channel too: nothing here trusts it)."""
    from printer.penguin import Module
    from printer.penguin.Dependency import DependencyEdge
    from printer.penguin.graph import Argument, Block, Function, Instruction, T, Value

    try:
        nodes_data, blocks_data = data["nodes"], data["blocks"]
        functions = set(data["functions"])
        blocks = [(Function if k in functions else Block)(_text(b[0], "a block's name"))
                  for k, b in enumerate(blocks_data)]
        no_type = T("")
        nodes: list = []
        for n in nodes_data:
            if n[0] == "a":
                nodes.append(Argument(_text(n[1], "a name"), no_type, _at(blocks, n[2]), 0))
            elif n[0] == "i" and (n[3] is None or type(n[3]) is str):
                nodes.append(Instruction(_text(n[1], "a name"), _text(n[2], "an opcode"), computation=n[3],
                                         parent=_at(blocks, n[4])))
            else:
                raise NotAGraph(f"a node of kind {n[0]!r}")

        def ref(r):
            if type(r) is list and len(r) == 2 and type(r[1]) is int:
                found = nodes[_index(r[0])]
                if not isinstance(found, Instruction):
                    raise NotAGraph("a result of an argument")
                return Value(found, r[1])
            return nodes[_index(r)]

        for node, n in zip(nodes, nodes_data):
            if isinstance(node, Instruction):
                node.operands = [ref(r) for r in n[5]]
                node.blocks = [blocks[_index(b)] for b in n[6]]
        for block, (_, owner, arguments, instructions) in zip(blocks, blocks_data):
            block.parent = None if owner is None else nodes[_index(owner)]
            block.arguments = [nodes[_index(a)] for a in arguments]
            for index, argument in enumerate(block.arguments):
                if isinstance(argument, Argument):
                    argument.index = index
            block.instructions = [nodes[_index(i)] for i in instructions]
            if not isinstance(block.parent, (Instruction, type(None))):
                raise NotAGraph("a block owned by an argument")
        module = Module(_text(data["name"], "the module's name"),
                        functions=[blocks[_index(f)] for f in data["functions"]])
        module.dependencies = [DependencyEdge(ref(p), ref(s)) for p, s in data["dependencies"]]
    except NotAGraph:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
        raise NotAGraph(f"{type(err).__name__}: {err}") from None
    for block in blocks:
        if any(not isinstance(a, Argument) for a in block.arguments) or \
                any(not isinstance(i, Instruction) for i in block.instructions):
            raise NotAGraph(f"block {block.name} lists a node of the wrong kind")
    return module


def _index(k) -> int:
    if type(k) is not int or k < 0:
        raise NotAGraph(f"{k!r} is no index")
    return k


def _at(items: list, k):
    return None if k is None else items[_index(k)]
