"""Link #1's common case, on XLA's protos: a computation in which every
successor takes its edges at its own operand 0, from predecessors that
stand for themselves or, through tuples and get-tuple-elements, for values
that do (parameters aside: they are implied).

There the general rewrite (`preserve_control_deps._ComputationRewrite`)
searches nothing: no users, no matching `*-done`, no merging into a call
made for another successor. What it makes for a successor depends on that
successor and its predecessors alone, so it can be made straight into
XLA's proto, with no view objects: per successor a few field reads, one
custom-call (and with `bundle` one tuple) added, operand 0 rewired, the
control-predecessor ids cleared; one sort at the end puts each new
instruction before the one it feeds (XLA reads a proto's instructions
operands first). The result is the general rewrite's, byte for byte:
tests/hlo/test_direct.py holds the two to each other on every corpus.

A computation with any other successor (a `*-done`, a tuple, one whose
operand 0 is a `*-start` or a buffer, a predecessor that is an async start
or send/recv) goes to the general rewrite whole: there one successor's
edits can change what the next one finds.
"""

from __future__ import annotations

from passes.control_dep import CONTROL_DEP_TARGET, Fate
from passes.hlo import proto as hlo_proto
from passes.hlo import kinds as general  # its tests of an instruction read protos as well

_SLOTS = 1 << 20  # sort keys: room for the new instructions before each read one


def _stands_alone(p) -> bool:
    """The general rewrite's common case for a predecessor: p stands in for itself."""
    return p.opcode not in general.NOT_PLAIN and not general.opens_async_pair(p.opcode)


def _takes_edges_at_operand_0(succ, index) -> bool:
    """The general rewrite's `carriers` gives (S, its operand 0) at once."""
    if not succ.operand_ids or general.is_structural(succ) or general.pins_its_operands(succ):
        return False
    data = index[succ.operand_ids[0]]
    return not (general.begins_async_pair(data) or general.is_buffer(data))


def _sources(p, index) -> list | None:
    """The values behind a tuple / get-tuple-element / parameter (in order,
    once), or None if one is an async start, send or recv (the general case)."""
    found: dict[int, object] = {}
    # An explicit stack, in the operands' order: a chain of tuples is as deep
    # as the input makes it. A value seen once adds nothing the second time
    # (its sources are found already): a tuple read twice is walked once.
    stack, seen = [p], set()
    while stack:
        v = stack.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        if v.opcode == "get-tuple-element":
            stack.append(index[v.operand_ids[0]])
        elif v.opcode == "tuple":
            stack += [index[o] for o in reversed(v.operand_ids)]
        elif v.opcode != "parameter" and not _stands_alone(v):
            return None
        else:
            found.setdefault(v.id, v)
    return list(found.values())


def rewrite(run, comp, result) -> bool:
    """Link #1 on `comp` (a `passes.hlo.ir.Computation`) if every successor
    in it is the common case; False, with nothing changed, if not."""
    EdgeFate, looked_through = general.EdgeFate, general.looked_through
    instructions = comp.proto.instructions
    listed = comp.listed if comp.listed is not None else list(instructions)
    ids = [i.id for i in listed]
    index = dict(zip(ids, listed))
    plans = []
    for succ in comp.successor_protos():
        if not _takes_edges_at_operand_0(succ, index):
            return False
        preds = []
        for pid in succ.control_predecessor_ids:
            p = index[pid]
            if _stands_alone(p):
                preds.append((p, None))
                continue
            values = _sources(p, index)
            if values is None:
                return False
            preds.append((p, values))
        plans.append((succ, index[succ.operand_ids[0]], preds))

    parsed = run.module.parsed
    computation = comp.name
    if parsed.names.same:
        def name(instr) -> str:
            return instr.name
    else:
        def name(instr) -> str:
            return parsed.name(computation, instr.name)
    edges, fresh_name, bundle = result.edges, run.fresh_name, run.bundle
    shape_bytes: dict[int, bytes] = {}
    next_local = max(hlo_proto.local_id(i) for i in ids) + 1
    base = comp.proto.id << 32
    before: dict[int, list[int]] = {}  # read instruction id → the new ones that go before it
    for succ, data, preds in plans:
        del succ.control_predecessor_ids[:]
        result.changed = True
        succ_name = name(succ)
        kept = []  # (predecessor, what stands in for it or None for itself, reasons)
        for p, values in preds:
            if values is None:
                kept.append((p, None, None))
                continue
            values, reasons, dropped = looked_through(p, values, computation, name)
            if dropped:
                edges.append(EdgeFate(computation, name(p), succ_name, Fate.DROPPED, (), dropped))
            else:
                kept.append((p, values, reasons))
        if not kept:
            continue
        operands: dict[int, object] = {}
        for p, values, _ in kept:
            for v in values or (p,):
                operands.setdefault(v.id, v)
        made = []
        if bundle:
            packed = instructions.add(name=fresh_name(f"{succ_name}.control-dep-bundle"), opcode="tuple",
                                      id=base | next_local)
            next_local += 1
            packed.shape.element_type = hlo_proto.TUPLE
            for v in operands.values():
                found = shape_bytes.get(v.id)
                if found is None:
                    found = shape_bytes[v.id] = v.shape.SerializeToString()
                packed.shape.tuple_shapes.append(found)
            packed.operand_ids.extend(operands)
            made.append(packed.id)
            reads = [packed.id, data.id]
        else:
            reads = [*operands, data.id]
        call = instructions.add(name=fresh_name(f"{succ_name}.control-dep"), opcode="custom-call",
                                id=base | next_local)
        next_local += 1
        call.shape.CopyFrom(data.shape)
        call.operand_ids.extend(reads)
        call.custom_call_target = CONTROL_DEP_TARGET
        call.custom_call_has_side_effect = True
        call.custom_call_api_version = hlo_proto.API_VERSION_ORIGINAL
        made.append(call.id)
        before[succ.id] = made
        succ.operand_ids[0] = call.id
        for p, values, reasons in kept:
            if values is None:
                p_name = name(p)
                edges.append(EdgeFate(computation, p_name, succ_name, Fate.PRESERVED, ((p_name, succ_name),)))
            else:
                emitted = tuple((name(v), succ_name) for v in values)
                edges.append(EdgeFate(computation, name(p), succ_name, Fate.REROUTED, emitted, "; ".join(reasons)))
    if before:
        position = _positions(ids, before)
        instructions.sort(key=lambda i: position[i.id])
        sequence = _sequence(parsed.proto, comp.proto.id)
        if sequence is not None:  # XLA checks a schedule names every instruction, operands first
            scheduled = []
            for i in sequence.instruction_ids:
                scheduled += before.get(i, ())
                scheduled.append(i)
            sequence.instruction_ids[:] = scheduled
    return True


def _positions(ids: list[int], before: dict[int, list[int]]) -> dict[int, int]:
    """Sort keys: each of `ids` keeps its place, the new ones come just before
    the one they feed, in the order made."""
    last = _SLOTS - 1
    position = dict(zip(ids, range(last, _SLOTS * len(ids), _SLOTS)))  # C speed
    for anchor, made in before.items():
        at = position[anchor] - last
        for n, new in enumerate(made):
            position[new] = at + n
    return position


def _sequence(module, computation_id: int):
    if not module.HasField("schedule"):
        return None
    sequences = module.schedule.sequences
    return sequences[computation_id] if computation_id in sequences else None
