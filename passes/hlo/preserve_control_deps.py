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

One rewrite, on XLA's `HloModuleProto` (`passes.hlo.view.view_of`):
instructions are XLA's protos, by id, edited in place; a made one gets the
next free id, and one sort at the end puts it before the one it feeds
(`passes.hlo.view.splice`). The common case (S takes its edges at operand 0
from predecessors that stand for themselves) searches nothing; a search
(S's readers, a start's done) indexes the readers once and walks an
explicit stack: no depth of tuples or async chains is too deep.
"""

from __future__ import annotations

from dataclasses import dataclass

from passes.collector import no_cyclic_gc
from passes.control_dep import CONTROL_DEP_TARGET, HAS_CONTROL_DEPS, HAS_CONTROL_DEPS_VALUE, Fate
from passes.hlo import proto as hlo_proto
from passes.hlo.ir import Module, Readers
from passes.hlo.kinds import (  # noqa: F401  (EdgeFate, PreserveResult, the tests: this pass's API)
    NOT_PLAIN, EdgeFate, PreserveResult, begins_async_pair, depends_on, has_no_value_after_import,
    imports_as_future, is_buffer, is_structural, looked_through, opens_async_pair, pins_its_operands,
    structural_sources)
from passes.hlo.proto import local_id
from passes.hlo.view import splice
from passes.options import option


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

    def run(self) -> PreserveResult:
        result = PreserveResult()
        for comp in self.module.computations:
            _ComputationRewrite(self, comp, result).run()
        if any(e.fate is not Fate.DROPPED for e in result.edges):  # a call was made: as the binary, only then
            self.module.parsed.proto.frontend_attributes.map[HAS_CONTROL_DEPS] = HAS_CONTROL_DEPS_VALUE
        return result

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
        self._users: Readers | None = None

    def name(self, i: int) -> str:
        """The instruction's name as the input wrote it."""
        xla = self.index[i].name
        return xla if self.same_names else self.written_name(self.comp.name, xla)

    def written(self, instr) -> str:
        """`name`, of an instruction proto."""
        return instr.name if self.same_names else self.written_name(self.comp.name, instr.name)

    @property
    def users(self) -> Readers:
        """The readers of each instruction, made on the first search."""
        if self._users is None:
            users = self._users = Readers(self.index, self.listed, self.made_ids)
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
            shape.tuple_shapes.extend(index[i].shape for i in index[bundle].operand_ids)
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
                after = next((v for v in stand_ins if v == start or depends_on(self.index, v, start)), None)
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
        values, reasons, dropped = looked_through(pp, [index[v] for v in structural_sources(index, p)],
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
                if t == done or depends_on(self.index, done, t):
                    return [], [], (f"%{self.written(v)} is a {v.opcode}; its %{self.name(done)} cannot stand "
                                    f"in because it comes after %{self.name(t)} (a cycle)")
            self.reordered = True
            reasons.append(f"%{self.written(v)} is a {v.opcode}, which has no value after import; "
                           f"its %{self.name(done)} stands in")
            result.append(done)
        return list(dict.fromkeys(result)), reasons, ""

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
                shape.tuple_shapes.extend(index[i].shape for i in bundled)
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

    def splice(self) -> None:
        """Each made instruction before the one it feeds, in the proto and the schedule."""
        splice(self.instructions, self.read_ids, self.inserted, [new for new, _ in self.made], self.nested,
               self.reordered, self.index, _sequence(self.pass_.module.parsed.proto, self.comp.proto.id))


def _kind(s) -> str:
    """What keeps `s` from taking an edge at an operand of its own."""
    if is_structural(s):
        return "a tuple or get-tuple-element, which is no op after import"
    return f"a {s.opcode}, which cannot take an operand"


def _sequence(module, computation_id: int):
    if not module.HasField("schedule"):
        return None
    sequences = module.schedule.sequences
    return sequences[computation_id] if computation_id in sequences else None
