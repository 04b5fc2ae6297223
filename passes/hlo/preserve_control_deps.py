"""Link #1, `preserve-control-deps`: reify every HLO control edge as data.

A successor S with control predecessors p0..pk-1 gets

    %cc = shape(D) custom-call(p0, ..., pk-1, D),
          custom_call_target="AwsNeuronControlDep", custom_call_has_side_effect=true

as its operand 0 (D, the old operand 0, is the data operand and comes last),
and loses its control predecessors: the edge now lives in data, which XLA's
HLO→MLIR importer keeps (docs/design.md#link-1-what-each-edge-becomes; where link
#3 takes over: docs/link3-contract.md#where-the-pass-sits).

Two kinds of instruction cannot play their part directly
(docs/design.md#successors-that-cannot-take-the-call and
docs/design.md#predecessors-without-a-value-after-import-and-async-pairs):
- a successor that has no operand, or whose operand XLA pins (`*-done` and
  `*-update` must read their `*-start`): its edges are rerouted to each user
  of S, the custom-call wrapping S's value where that user reads it; a
  pinned S that nothing reads hands them to its start (ordering the start
  after p orders S after p too), unless that would make a cycle;
- a predecessor whose value has no MLIR value after import (`async-start`
  becomes `!mhlo.async_bundle`; `send`/`recv` hold a u32[] context that makes
  the importer abort): its matching `*-done` stands in, a stronger order,
  unless that would make a cycle.
Whatever cannot be kept is dropped and reported, never lost silently.

The pass is one rewrite, run straight on XLA's `HloModuleProto`
(`passes.hlo.view.view_of` finds the computations with edges): instructions
are XLA's instruction protos, named by id, edited in place; each
instruction it makes is added to its computation with the next free id,
and one sort at the end puts it before the one it feeds (XLA reads a
proto's instructions operands first), in the schedule too if the module
has one. The common case (S takes its edges at its own operand 0, from
predecessors that stand for themselves) searches nothing: a few field
reads, one custom-call added, operand 0 rewired. A successor that needs a
search (its readers, a start's matching done) builds the index of readers
once, and the search is a loop over an explicit stack: no depth of tuples,
get-tuple-elements or async chains is too deep.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from passes.collector import no_cyclic_gc
from passes.control_dep import CONTROL_DEP_TARGET, HAS_CONTROL_DEPS, HAS_CONTROL_DEPS_VALUE, Fate
from passes.hlo import proto as hlo_proto
from passes.hlo.ir import Module
from passes.hlo.kinds import (  # noqa: F401  (EdgeFate and the tests of an instruction are this pass's API too)
    NOT_PLAIN, EdgeFate, begins_async_pair, has_no_value_after_import, imports_as_future, is_buffer,
    is_structural, looked_through, opens_async_pair, pins_its_operands)
from passes.hlo.proto import local_id
from passes.options import option


@dataclass
class PreserveResult:
    changed: bool = False
    edges: list[EdgeFate] = field(default_factory=list)

    def count(self, fate: Fate) -> int:
        return sum(1 for e in self.edges if e.fate is fate)

    def summary(self) -> str:
        return (f"{len(self.edges)} control edge(s): {self.count(Fate.PRESERVED)} preserved, "
                f"{self.count(Fate.REROUTED)} rerouted, {self.count(Fate.DROPPED)} dropped")


@dataclass(frozen=True)
class PreserveControlDeps:
    """The HLO pass. `bundle=True` sends the predecessors through one HLO
    `tuple`, so that the importer produces the tuple artifact the binary's
    notes picture (docs/design.md#bundle-mode). The
    object holds its options only; what one run needs lives in `_Run`."""

    bundle: bool = option(False, help="pass each successor's predecessors through one HLO tuple")
    name = "preserve-control-deps"

    def run(self, module: Module) -> PreserveResult:
        with no_cyclic_gc():
            return _Run(self, module).run()


class _Run:
    """One run of the pass over one module."""

    def __init__(self, options: PreserveControlDeps, module: Module):
        self.bundle = options.bundle
        self.module = module
        self._taken: set[str] | None = None
        self._shape_bytes: dict[int, bytes] = {}

    def run(self) -> PreserveResult:
        result = PreserveResult()
        for comp in self.module.computations:
            _ComputationRewrite(self, comp, result).run()
        if any(e.fate is not Fate.DROPPED for e in result.edges):  # a call was made: as the binary, only then
            self.module.parsed.proto.frontend_attributes.map[HAS_CONTROL_DEPS] = HAS_CONTROL_DEPS_VALUE
        return result

    def shape_bytes(self, index: dict, ids: list[int]) -> list[bytes]:
        """The instructions' shapes, serialized (a tuple's elements): each
        once, however often it is bundled."""
        cache, out = self._shape_bytes, []
        for i in ids:
            found = cache.get(i)
            if found is None:
                found = cache[i] = index[i].shape.SerializeToString()
            out.append(found)
        return out

    @property
    def taken(self) -> set[str]:
        """Every name in the module, XLA's and as written: a made name is clear of both."""
        if self._taken is None:
            parsed = self.module.parsed
            xla = parsed.names.xla_names  # read once already, by the names' check
            self._taken = set(xla) if xla is not None else {
                i.name for c in parsed.proto.computations for i in c.instructions}
            self._taken.update(parsed.names.names.values())
        return self._taken

    def fresh_name(self, base: str) -> str:
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}.{n}"
        self.taken.add(name)
        return name


_SLOTS = 1 << 20  # sort keys: room for the made instructions before each read one


class _ComputationRewrite:
    """Link #1 on one computation's proto. Instructions are ints (XLA's ids);
    `index` gives each its proto, the made ones included."""

    def __init__(self, pass_: _Run, comp, result: PreserveResult):
        self.pass_, self.comp, self.result = pass_, comp, result
        self.instructions = comp.proto.instructions
        listed = comp.listed if comp.listed is not None else list(self.instructions)
        self.read_ids = [i.id for i in listed]
        self.index: dict[int, object] = dict(zip(self.read_ids, listed))
        self.listed = listed
        self.next_local = max(map(local_id, self.read_ids)) + 1
        self.base = comp.proto.id << 32
        parsed = pass_.module.parsed
        self.same_names = parsed.names.same
        self.written_name = parsed.name
        self.reordered = False
        # Made instructions, in the order made, each with the instruction it
        # was made to feed (None for a bundle): the readers' index replays them.
        self.made: list[tuple[int, int | None]] = []
        self.made_ids: set[int] = set()
        # New instructions by the instruction they go before; spliced in once
        # at the end, so that many edges cost one pass over the computation.
        self.inserted: dict[int, list[int]] = {}
        self.nested = False  # something was inserted before a made instruction
        # Each control-dep call this pass made → the instruction it feeds in the
        # end: an edge rerouted onto such a call lands on that instruction.
        self.feeds: dict[int, int] = {}
        self.merged: dict[int, set[int]] = {}  # made call → its predecessors
        self.bundles: dict[int, int] = {}      # made call → its made bundle
        self.grown: set[int] = set()           # bundles to re-shape at the end
        self._users: _Users | None = None

    def name(self, i: int) -> str:
        """The instruction's name as the input wrote it."""
        xla = self.index[i].name
        return xla if self.same_names else self.written_name(self.comp.name, xla)

    def written(self, instr) -> str:
        """`name`, of an instruction proto."""
        return instr.name if self.same_names else self.written_name(self.comp.name, instr.name)

    @property
    def users(self) -> _Users:
        """The readers of each instruction, made on the first search."""
        if self._users is None:
            users = self._users = _Users(self.index, self.listed, self.made_ids)
            for made, target in self.made:  # what `insert` and `wrap` would have told it
                users.set(made, [])
                for op in dict.fromkeys(self.index[made].operand_ids):
                    users.add(op, made)
                if target is not None:
                    users.set(made, [target])
        return self._users

    def run(self) -> None:
        index = self.index
        for succ_proto in self.comp.successor_protos():
            preds = list(succ_proto.control_predecessor_ids)
            del succ_proto.control_predecessor_ids[:]
            self.result.changed = True
            self.reify(succ_proto.id, preds)
        for bundle in self.grown:
            shape = index[bundle].shape
            del shape.tuple_shapes[:]
            shape.tuple_shapes.extend(self.pass_.shape_bytes(index, index[bundle].operand_ids))
        if self.made:
            self.splice()

    # -- one successor ------------------------------------------------------

    def reify(self, succ: int, preds: list[int]) -> None:
        index = self.index
        s = index[succ]
        ops = s.operand_ids
        if (ops and not is_structural(s) and not pins_its_operands(s)
                and not begins_async_pair(data := index[ops[0]]) and not is_buffer(data)):
            targets, why, start, direct = [(succ, ops[0])], "", None, True  # S takes them at operand 0
        else:
            targets, why, start = self.carriers(succ)
            if not targets:
                for p in preds:
                    self.drop(p, succ, why)
                return
            direct = False
        kept: list[tuple[int, list[int] | None, list[str]]] = []  # (original, stand-ins or None for itself, why)
        plain = True  # every kept predecessor stands for itself
        for p in preds:
            opcode = index[p].opcode
            if start is None and opcode not in NOT_PLAIN and not opens_async_pair(opcode):
                kept.append((p, None, ()))  # the common case: p itself (what `stand_ins` gives it)
                continue
            stand_ins, reasons, dropped = self.stand_ins(p, [t for t, _ in targets])
            if not dropped and start is not None:
                after = next((v for v in stand_ins if v == start or self.depends_on(v, start)), None)
                if after is not None:
                    dropped = (f"{self.unread(succ)}; its start %{self.name(start)} cannot carry it either: "
                               f"%{self.name(after)} comes after %{self.name(start)} (a cycle)")
            if dropped:
                self.drop(p, succ, dropped)
            else:
                kept.append((p, stand_ins, reasons))
                plain = False
        if not kept:
            return
        if start is not None:
            self.reordered = True  # the start may come before its predecessors: they move before it
        if plain:
            operands = list(dict.fromkeys([p for p, _, _ in kept]))
        else:
            operands = list(dict.fromkeys(v for p, stand_ins, _ in kept for v in (stand_ins or (p,))))
        for target, read in targets:
            self.wrap(target, read, operands, direct, plain)
        computation, edges, name, feeds = self.comp.name, self.result.edges, self.name, self.feeds
        succ_name = name(succ)
        PRESERVED = Fate.PRESERVED
        for p, stand_ins, reasons in kept:
            if direct and stand_ins is None:  # the common case, kept short
                p_name = name(p)
                edges.append(EdgeFate(computation, p_name, succ_name, PRESERVED, ((p_name, succ_name),)))
                continue
            stand_ins = stand_ins or [p]
            emitted = tuple((name(v), name(feeds.get(t, t))) for v in stand_ins for t, _ in targets)
            if direct and stand_ins == [p]:
                fate = EdgeFate(computation, name(p), succ_name, PRESERVED, emitted)
            else:
                if not direct:
                    reasons = [*reasons, why]
                fate = EdgeFate(computation, name(p), succ_name, Fate.REROUTED, emitted, "; ".join(reasons))
            edges.append(fate)

    def carriers(self, succ: int) -> tuple[list[tuple[int, int]], str, int | None]:
        """Where the edge can enter when S cannot take it at its own operand
        0: [(op, value it reads)], and why there (or, if nowhere, why not), and
        the start that carries it for a pinned S (None otherwise). Each op
        that reads S, looking through tuples and get-tuple-elements (they are
        not ops after import, so an edge into one would have nothing to land
        on); for a pinned S that nothing reads, its start."""
        index = self.index
        s = index[succ]
        found: list[tuple[int, int]] = []
        users, feeds, root = self.users, self.feeds, self.comp.proto.root_id
        reaches_root = succ == root
        seen = {succ}
        stack = [(succ, iter(users.of(succ)))]
        while stack:
            value, readers = stack[-1]
            for user in readers:
                u = index[user]
                if user in feeds and u.operand_ids[-1] != value:
                    continue  # a predecessor of a call made here: it orders, it does not read
                if is_structural(u) or is_buffer(index[value]):
                    # No op of its own, or it reads a buffer, which no call can wrap: its readers.
                    if user not in seen:
                        seen.add(user)
                        reaches_root = reaches_root or user == root
                        stack.append((user, iter(users.of(user))))
                        break
                elif u.opcode == "conditional" and u.operand_ids[0] != value:
                    # The importer inlines a branch operand into the branch: the
                    # conditional carries the edge on its selector (operand 0).
                    if (user, u.operand_ids[0]) not in found:
                        found.append((user, u.operand_ids[0]))
                elif not pins_its_operands(u) and (user, value) not in found:
                    found.append((user, value))
            else:
                stack.pop()
        if found:
            return found, f"%{self.name(succ)} ({s.opcode}) cannot carry it; the ops that read it do", None
        if reaches_root:
            return [], (f"implied: %{self.name(succ)} ({_kind(s)}) is the result of %{self.comp.name}, "
                        "which ends after every instruction in it"), None
        start = self.start_of(succ)
        if start is None:
            return [], self.unread(succ), None
        target = (start, index[start].operand_ids[0])
        call = target[1]
        if call in feeds and feeds[call] == start:  # a call made here feeds it already: one call
            target = (call, index[call].operand_ids[-1])
        return [target], (f"%{self.name(succ)} ({s.opcode}) cannot take an operand and nothing reads it; "
                          f"its start %{self.name(start)} carries the edge (%{self.name(succ)} waits for "
                          f"%{self.name(start)}: a stronger order)"), start

    def unread(self, succ: int) -> str:
        """Why nothing that reads S can carry its edges."""
        return f"%{self.name(succ)} is {_kind(self.index[succ])}, and it has no user to carry the edge"

    def start_of(self, succ: int) -> int | None:
        """The start a pinned S waits for (through `*-update`s), if S is
        pinned and that start takes an edge at its own operand 0."""
        index = self.index
        current = index[succ]
        if not pins_its_operands(current):
            return None
        for _ in range(len(self.instructions)):  # a chain of pinned ops, each reading the last
            if not current.operand_ids:
                return None
            start = current.operand_ids[0]
            current = index[start]
            if not pins_its_operands(current):
                break
        ops = current.operand_ids
        if not ops or not begins_async_pair(current):
            return None
        data = index[ops[0]]
        if begins_async_pair(data) or is_buffer(data):
            return None
        return start

    def stand_ins(self, p: int, targets: list[int]) -> tuple[list[int], list[str], str]:
        """What can be an operand in p's place: (instructions, reasons, why dropped)."""
        index = self.index
        pp = index[p]
        if pp.opcode not in NOT_PLAIN and not opens_async_pair(pp.opcode):
            return [p], [], ""  # the common case: p itself (what the general case below gives it)
        values, reasons, dropped = looked_through(pp, [index[v] for v in self.structural_sources(p)],
                                                  self.comp.name, self.written)
        if dropped:
            return [], [], dropped
        result = []
        module = self.pass_.module
        for v in values:
            if not has_no_value_after_import(v, module):
                result.append(v.id)
                continue
            done = self.matching_done(v.id)
            if done is None:
                return [], [], f"%{self.written(v)} is a {v.opcode} with no matching *-done to stand in for it"
            for t in targets:
                if t == done or self.depends_on(done, t):
                    return [], [], (f"%{self.written(v)} is a {v.opcode}; its %{self.name(done)} cannot stand "
                                    f"in because it comes after %{self.name(t)} (a cycle)")
            self.reordered = True
            reasons.append(f"%{self.written(v)} is a {v.opcode}, which has no value after import; "
                           f"its %{self.name(done)} stands in")
            result.append(done)
        return list(dict.fromkeys(result)), reasons, ""

    def structural_sources(self, p: int) -> list[int]:
        """The ops behind a tuple / get-tuple-element predecessor (in order, once)."""
        index = self.index
        found: dict[int, None] = {}
        seen: set[int] = set()  # a value met again adds nothing: its sources are in `found` already
        stack = [iter((p,))]
        while stack:
            for v in stack[-1]:
                if v in seen:
                    continue
                seen.add(v)
                instr = index[v]
                if instr.opcode == "get-tuple-element":
                    stack.append(iter(instr.operand_ids[:1]))
                    break
                if instr.opcode == "tuple":
                    stack.append(iter(instr.operand_ids))
                    break
                found[v] = None
            else:
                stack.pop()
        return list(found)

    def matching_done(self, start: int) -> int | None:
        """Follow start → update* → done through data users."""
        current, users, index = start, self.users, self.index
        for _ in range(users.bound()):
            nxt = [u for u in users.of(current) if pins_its_operands(index[u])]
            if not nxt:
                return None
            current = nxt[0]
            if index[current].opcode.endswith("-done"):
                return current
        return None

    def depends_on(self, instr: int, ancestor: int) -> bool:
        """Whether `instr` transitively reads or waits for `ancestor`."""
        index = self.index
        seen, stack = set(), [instr]
        while stack:
            node = index[stack.pop()]
            for dep in (*node.operand_ids, *node.control_predecessor_ids):
                if dep == ancestor:
                    return True
                if dep not in seen:
                    seen.add(dep)
                    stack.append(dep)
        return False

    # -- edits --------------------------------------------------------------

    def wrap(self, target: int, data: int, preds: list[int], direct: bool, plain: bool = False) -> None:
        """Make a control-dep custom-call feed `target` where it reads `data`
        (`plain`: every predecessor stands for itself, so none is a future)."""
        index, pass_ = self.index, self.pass_
        t = index[target]
        if target in self.feeds and t.operand_ids[-1] == data:
            self.merge(target, preds)
            return
        target_name = self.name(target)
        operands = preds
        if pass_.bundle:
            # A collective start imports as !stablehlo.future, which a tuple
            # cannot hold: it stays a plain operand beside the bundle.
            bundled = preds if plain else [p for p in preds if not self.future(p)]
            if bundled:
                bundle = self.add(target, pass_.fresh_name(f"{target_name}.control-dep-bundle"), "tuple",
                                  bundled, None)
                shape = index[bundle].shape
                shape.element_type = hlo_proto.TUPLE
                shape.tuple_shapes.extend(pass_.shape_bytes(index, bundled))
                operands = [bundle] if plain else [bundle] + [p for p in preds if self.future(p)]
        cc = self.add(target, pass_.fresh_name(f"{target_name}.control-dep"), "custom-call",
                      operands + [data], target)
        call = index[cc]
        call.shape.CopyFrom(index[data].shape)
        call.custom_call_target = CONTROL_DEP_TARGET
        call.custom_call_has_side_effect = True
        call.custom_call_api_version = hlo_proto.API_VERSION_ORIGINAL
        self.feeds[cc] = self.feeds.get(target, target)
        if operands is not preds:
            self.bundles[cc] = operands[0]
        if direct:
            t.operand_ids[0] = cc  # S's operand 0 only: the data operand D
        else:
            t.operand_ids[:] = [cc if op == data else op for op in t.operand_ids]
        users = self._users
        if users is not None:  # keep the readers true: a later reroute must see this custom-call
            users.set(cc, [target])
            if data not in t.operand_ids:
                users.remove(data, target)

    def merge(self, cc: int, preds: list[int]) -> None:
        """More predecessors for a call made here, when another successor's
        edges are rerouted to the very value it feeds on (constants packed in
        one tuple, say): one call, not a chain of calls, each of which every
        later reader would walk (quadratic)."""
        index, users = self.index, self.users
        call = index[cc]
        bundle = self.bundles.get(cc)
        have = self.merged.get(cc)
        if have is None:
            have = self.merged[cc] = set(call.operand_ids[:-1]) | set(
                index[bundle].operand_ids if bundle is not None else ())
        new = [p for p in dict.fromkeys(preds) if p not in have]
        have.update(new)
        if bundle is not None:
            packed = [p for p in new if not self.future(p)]
            index[bundle].operand_ids.extend(packed)
            self.grown.add(bundle)
            for p in packed:
                users.add(p, bundle)
            new = [p for p in new if self.future(p)]
        if new:
            data = call.operand_ids[-1]
            del call.operand_ids[-1]
            call.operand_ids.extend(new)
            call.operand_ids.append(data)
        for p in new:
            users.add(p, cc)

    def future(self, p: int) -> bool:
        return imports_as_future(self.index[p], self.pass_.module)

    def add(self, before: int, name: str, opcode: str, operands: list[int], feeds: int | None) -> int:
        """A new instruction in the proto (placed before `before` by `splice`)."""
        new = self.base | self.next_local
        self.next_local += 1
        instr = self.instructions.add(name=name, opcode=opcode, id=new)
        instr.operand_ids.extend(operands)
        self.index[new] = instr
        self.inserted.setdefault(before, []).append(new)
        if before in self.made_ids:
            self.nested = True
        self.made.append((new, feeds))
        self.made_ids.add(new)
        users = self._users
        if users is not None:
            users.set(new, [])
            for op in dict.fromkeys(operands):
                users.add(op, new)
        return new

    def drop(self, p: int, succ: int, reason: str) -> None:
        self.result.edges.append(EdgeFate(self.comp.name, self.name(p), self.name(succ), Fate.DROPPED, (), reason))

    # -- the proto's order --------------------------------------------------

    def splice(self) -> None:
        """Each made instruction goes before the one it feeds, in the proto
        and the schedule: protobuf sorts the messages in place (no copies), by
        the position each should take."""
        instructions = self.instructions
        position = self.positions(self.read_ids)
        instructions.sort(key=lambda i: position[i.id])
        if self.reordered:
            _reorder(instructions, _definition_order(list(instructions)))
        sequence = _sequence(self.pass_.module.parsed.proto, self.comp.proto.id)
        if sequence is not None:  # XLA checks a schedule names every instruction, operands first
            ids = list(sequence.instruction_ids)
            position = self.positions(ids)
            ids += [new for new, _ in self.made]
            ids.sort(key=position.__getitem__)
            if self.reordered:
                ids = [p.id for p in _definition_order([self.index[i] for i in ids])]
            sequence.instruction_ids[:] = ids

    def positions(self, ids: list[int]) -> dict[int, int]:
        """Sort keys: each of `ids` keeps its place, and each made instruction
        comes just before the one it was inserted before (one made before a
        made one goes before that one, in turn)."""
        last = _SLOTS - 1
        position = dict(zip(ids, range(last, _SLOTS * len(ids), _SLOTS)))  # C speed: 30k in 2 ms
        for anchor, made in self.inserted.items():
            at = position.get(anchor)
            if at is None or at % _SLOTS != last:
                continue  # a made one: placed with the read one it goes before
            at -= last
            for n, new in enumerate(self.before(anchor) if self.nested else made):
                position[new] = at + n
        return position

    def before(self, anchor: int) -> list[int]:
        """What goes before `anchor`, in order: for each instruction inserted
        before it, what goes before that one, then that one."""
        out: list[int] = []
        pending: list[int] = []
        stack = [iter(self.inserted.get(anchor, ()))]
        while stack:
            new = next(stack[-1], None)
            if new is None:
                stack.pop()
                if pending:
                    out.append(pending.pop())
                continue
            pending.append(new)
            stack.append(iter(self.inserted.get(new, ())))
        return out


def _kind(s) -> str:
    """What keeps `s` from taking an edge at an operand of its own."""
    if is_structural(s):
        return "a tuple or get-tuple-element, which is no op after import"
    return f"a {s.opcode}, which cannot take an operand"


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


def _sequence(module, computation_id: int):
    if not module.HasField("schedule"):
        return None
    sequences = module.schedule.sequences
    return sequences[computation_id] if computation_id in sequences else None


class _Users:
    """Data users of each instruction (ids), in program order (those read
    from the proto in the text's order, then those the pass made, in the
    order made), each as the computation stands when first asked for, kept
    true by the pass's edits after. Only what a search asks for is made: the
    readers of an instruction come from an index of the proto's operand ids,
    built on the first search."""

    def __init__(self, index: dict, listed: list, made: set[int]):
        self.index, self.listed, self.made = index, listed, made
        self.map: dict[int, list[int]] = {}
        self.made_readers: dict[int, list[int]] = {}  # of one not asked for yet
        self._readers: dict[int, list[int]] | None = None

    def readers(self, instr: int) -> list[int]:
        """The instructions XLA read that read `instr`, in the text's order."""
        if self._readers is None:
            readers: dict[int, list[int]] = {}
            for p in sorted(self.listed, key=lambda p: local_id(p.id)):
                for o in set(p.operand_ids):
                    readers.setdefault(o, []).append(p.id)
            self._readers = readers
        return [] if instr in self.made else self._readers.get(instr, [])

    def of(self, instr: int) -> list[int]:
        found = self.map.get(instr)
        if found is None:
            readers = self.readers(instr) + self.made_readers.pop(instr, [])
            index = self.index
            found = self.map[instr] = [u for u in readers if instr in index[u].operand_ids]
        return found

    def set(self, instr: int, users: list[int]) -> None:
        self.map[instr] = users

    def remove(self, operand: int, user: int) -> None:
        """`user` reads `operand` no more."""
        if operand in self.map:
            self.map[operand] = [u for u in self.map[operand] if u != user]

    def add(self, operand: int, user: int) -> None:
        if operand in self.map:
            self.map[operand].append(user)
        else:
            self.made_readers.setdefault(operand, []).append(user)

    def bound(self) -> int:
        return len(self.index)
