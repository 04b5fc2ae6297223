"""Link #1 on XLA's parse: the module it runs on.

    module = view_of(parsed)         # the computations with control edges
    PreserveControlDeps().run(module)
    write_back(module)               # nothing left to write: parsed.proto is link #1's output

The pass edits `parsed.proto` in place: each instruction it makes goes in
as a new instruction before the one it feeds, with the next free id of its
computation; the operand ids of every instruction whose operands changed;
control-predecessor ids cleared; the module's schedule (if it has one)
with the new instructions in place; the module's frontend attribute.
Every other field, ours or not in our schema, stays as XLA wrote it.
"""

from __future__ import annotations

from passes.hlo.ir import Computation, Module


def view_of(parsed) -> Module:
    """Link #1's module over `parsed` (a `passes.hlo.parsed.Parsed`)."""
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


def write_back(module: Module) -> None:
    """Nothing to write: link #1 makes its edits in `module.parsed.proto` as
    it runs, and the proto is its output once `run` returns."""
