"""Link #1 on XLA's parse: the module it runs on.

    module = view_of(parsed)         # the computations with control edges
    PreserveControlDeps().run(module)  # edits parsed.proto: once it returns, that is link #1's output

The pass edits `parsed.proto` in place: each instruction it makes goes in
as a new instruction before the one it feeds (`splice`), with the next free
id of its computation; the operand ids of every instruction whose operands
changed; control-predecessor ids cleared; the module's schedule (if it has
one) with the new instructions in place; the module's frontend attribute.
Every other field, ours or not in our schema, stays as XLA wrote it.
"""

from __future__ import annotations

from passes.hlo.ir import Computation, Module


def view_of(parsed) -> Module:
    """Link #1's module over `parsed` (a `pipeline.reading.parsed.Parsed`)."""
    module = parsed.proto
    names = {c.id: c.name for c in module.computations}
    same = parsed.names.same
    with_edges = []
    for c, instructions in zip(module.computations, parsed.take_instruction_lists()):
        successors = [i for i in instructions if i.control_predecessor_ids]
        if successors:
            with_edges.append(Computation(c, parsed.name, names, c.id == module.entry_computation_id, same,
                                          successors, instructions))
    return Module(parsed, with_edges, {c.id: c for c in module.computations})


_SLOTS = 1 << 20  # sort keys: room for the made instructions before each read one


def splice(instructions, read_ids: list[int], inserted: dict[int, list[int]], made: list[int], nested: bool,
           reordered: bool, index: dict, sequence) -> None:
    """Each made instruction (`made`, in the order made) goes before the one
    it was inserted before (`inserted`: anchor id → made ids; `nested`: some
    anchor is a made one), in a computation's `instructions` and its schedule
    `sequence` (None if none): protobuf sorts the messages in place (no
    copies), by the position each should take. With `reordered` (a
    stand-in or a start moved), definitions are then put in a topological
    order, list order breaking ties (XLA reads a proto operands first)."""
    position = _positions(read_ids, inserted, nested)
    instructions.sort(key=lambda i: position[i.id])
    if reordered:
        _reorder(instructions, _definition_order(list(instructions)))
    if sequence is not None:  # XLA checks a schedule names every instruction, operands first
        ids = list(sequence.instruction_ids)
        position = _positions(ids, inserted, nested)
        ids += made
        ids.sort(key=position.__getitem__)
        if reordered:
            ids = [p.id for p in _definition_order([index[i] for i in ids])]
        sequence.instruction_ids[:] = ids


def _positions(ids: list[int], inserted: dict[int, list[int]], nested: bool) -> dict[int, int]:
    """Sort keys: each of `ids` keeps its place, and each made instruction
    comes just before the one it was inserted before (one made before a
    made one goes before that one, in turn)."""
    last = _SLOTS - 1
    position = dict(zip(ids, range(last, _SLOTS * len(ids), _SLOTS)))  # C speed: 30k in 2 ms
    for anchor, made in inserted.items():
        at = position.get(anchor)
        if at is None or at % _SLOTS != last:
            continue  # a made one: placed with the read one it goes before
        at -= last
        for n, new in enumerate(_before(anchor, inserted) if nested else made):
            position[new] = at + n
    return position


def _before(anchor: int, inserted: dict[int, list[int]]) -> list[int]:
    """What goes before `anchor`, in order: for each instruction inserted
    before it, what goes before that one, then that one."""
    out: list[int] = []
    pending: list[int] = []
    stack = [iter(inserted.get(anchor, ()))]
    while stack:
        new = next(stack[-1], None)
        if new is None:
            stack.pop()
            if pending:
                out.append(pending.pop())
            continue
        pending.append(new)
        stack.append(iter(inserted.get(new, ())))
    return out


def _reorder(instructions, order: list) -> None:
    rank = {p.id: n for n, p in enumerate(order)}
    instructions.sort(key=lambda i: rank[i.id])


def _definition_order(order: list) -> list:
    """A stable topological order of the protos: a stand-in `*-done` may be
    defined after the call that reads it; list order breaks ties."""
    position = {p.id: n for n, p in enumerate(order)}
    by_id = {p.id: p for p in order}
    placed: set[int] = set()
    out: list = []

    def deps(p):
        return sorted(set(p.operand_ids) | set(p.control_predecessor_ids), key=position.__getitem__)

    for first in order:
        if first.id in placed:
            continue
        stack, active = [(first, iter(deps(first)))], {first.id}
        while stack:
            node, pending = stack[-1]
            dep = next((d for d in pending if d not in placed), None)
            if dep is not None:
                if dep in active:  # never made by the pass: it checks every reroute for a cycle
                    raise RuntimeError(f"link #1 made a cycle through %{by_id[dep].name}")
                active.add(dep)
                stack.append((by_id[dep], iter(deps(by_id[dep]))))
                continue
            stack.pop()
            active.discard(node.id)
            placed.add(node.id)
            out.append(node)
    return out
