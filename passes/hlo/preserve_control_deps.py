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
  of S, the custom-call wrapping S's value where that user reads it;
- a predecessor whose value has no MLIR value after import (`async-start`
  becomes `!mhlo.async_bundle`; `send`/`recv` hold a u32[] context that makes
  the importer abort): its matching `*-done` stands in, a stronger order,
  unless that would make a cycle.
Whatever cannot be kept is dropped and reported, never lost silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from passes.collector import no_cyclic_gc
from passes.control_dep import CONTROL_DEP_TARGET, HAS_CONTROL_DEPS, HAS_CONTROL_DEPS_VALUE, Fate
from passes.hlo import direct
from passes.hlo.ir import Computation, Instruction, Module
from passes.hlo.kinds import (  # noqa: F401  (EdgeFate and the tests of an instruction are this pass's API too)
    NOT_PLAIN, EdgeFate, begins_async_pair, has_no_value_after_import, imports_as_future, is_buffer,
    is_structural, looked_through, opens_async_pair, pins_its_operands)
from passes.hlo.view import tuple_shape
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


def _structural_sources(p: Instruction) -> list[Instruction]:
    """The ops behind a tuple / get-tuple-element predecessor (in order, once),
    on an explicit stack: a chain of tuples is as deep as the input makes it."""
    found: dict[Instruction, None] = {}
    stack, seen = [p], set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if v.opcode == "get-tuple-element":
            stack.append(v.operands[0])
        elif v.opcode == "tuple":
            stack += reversed(v.operands)
        else:
            found[v] = None
    return list(found)


def _name(instr: Instruction) -> str:
    return instr.name


@dataclass(frozen=True)
class PreserveControlDeps:
    """The HLO pass. `bundle=True` sends the predecessors through one HLO
    `tuple`, so that the importer produces the tuple artifact the binary's
    notes picture (docs/design.md#bundle-mode). The
    object holds its options only; what one run needs lives in `_Run`."""

    bundle: bool = option(False, help="pass each successor's predecessors through one HLO tuple")
    # Internal, so a plain field and no option: False sends every computation
    # through the general rewrite (the direct one, `passes.hlo.direct`, is
    # held to it by the tests).
    direct: bool = True
    name = "preserve-control-deps"

    def run(self, module: Module) -> PreserveResult:
        with no_cyclic_gc():
            return _Run(self, module).run()


class _Run:
    """One run of the pass over one module."""

    def __init__(self, options: PreserveControlDeps, module: Module):
        self.bundle, self.direct = options.bundle, options.direct
        self.module = module
        self._taken: set[str] | None = None
        self._shape_bytes: dict[Instruction, bytes] = {}

    def run(self) -> PreserveResult:
        result = PreserveResult()
        for comp in self.module.computations:
            if not (self.direct and direct.rewrite(self, comp, result)):  # the common case, on XLA's protos
                _ComputationRewrite(self, comp, result).run()
        if any(e.fate is not Fate.DROPPED for e in result.edges):  # a call was made: as the binary, only then
            self.module.parsed.proto.frontend_attributes.map[HAS_CONTROL_DEPS] = HAS_CONTROL_DEPS_VALUE
        return result

    def shape_bytes(self, instr: Instruction) -> bytes:
        """An instruction's shape, serialized (a tuple's element): once, however often it is bundled."""
        found = self._shape_bytes.get(instr)
        if found is None:
            found = self._shape_bytes[instr] = instr.shape.SerializeToString()
        return found

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
    def __init__(self, pass_: _Run, comp: Computation, result: PreserveResult):
        self.pass_, self.comp, self.result = pass_, comp, result
        self.users = _Users(comp)
        self.reordered = False
        # New instructions by the instruction they go before; spliced in once
        # at the end, so that many edges cost one pass over the computation.
        self.inserted: dict[Instruction, list[Instruction]] = {}
        # Each control-dep call this pass made → the instruction it feeds in the
        # end: an edge rerouted onto such a call lands on that instruction.
        self.feeds: dict[Instruction, Instruction] = {}
        self.merged: dict[Instruction, set[Instruction]] = {}  # made call → its predecessors
        self.bundles: dict[Instruction, Instruction] = {}      # made call → its made bundle
        self.grown: set[Instruction] = set()                   # bundles to re-shape at the end

    def run(self) -> None:
        for succ in self.comp.successors():
            preds, succ.control_predecessors = succ.control_predecessors, []
            self.comp.cleared.append(succ)
            self.result.changed = True
            self.reify(succ, preds)
        for bundle in self.grown:
            bundle.shape = tuple_shape([self.pass_.shape_bytes(p) for p in bundle.operands])
        # Where the new instructions go, for the write-back (passes.hlo.view).
        self.comp.inserted, self.comp.reordered = self.inserted, self.reordered

    def reify(self, succ: Instruction, preds: list[Instruction]) -> None:
        targets, why_not = self.carriers(succ)
        if not targets:
            for p in preds:
                self.drop(p, succ, why_not)
            return
        direct = targets == [(succ, succ.operands[0])] if succ.operands else False
        kept: list[tuple[Instruction, list[Instruction], list[str]]] = []  # (original, stand-ins, why)
        for p in preds:
            stand_ins, reasons, dropped = self.stand_ins(p, [t for t, _ in targets])
            if dropped:
                self.drop(p, succ, dropped)
            else:
                kept.append((p, stand_ins, reasons))
        if not kept:
            return
        operands = list(dict.fromkeys(s for _, stand_ins, _ in kept for s in stand_ins))
        for target, read in targets:
            self.wrap(target, read, operands, direct)
        computation = self.comp.name
        for p, stand_ins, reasons in kept:
            if direct and len(stand_ins) == 1 and stand_ins[0] is p:  # the common case, kept short
                self.result.edges.append(EdgeFate(computation, p.name, succ.name, Fate.PRESERVED,
                                                  ((p.name, self.feeds.get(succ, succ).name),)))
                continue
            emitted = tuple((s.name, self.feeds.get(t, t).name) for s in stand_ins for t, _ in targets)
            if direct and stand_ins == [p]:
                fate = EdgeFate(computation, p.name, succ.name, Fate.PRESERVED, emitted)
            else:
                if not direct:
                    reasons = reasons + [f"%{succ.name} ({succ.opcode}) cannot carry it; "
                                         "the ops that read it do"]
                fate = EdgeFate(self.comp.name, p.name, succ.name, Fate.REROUTED, emitted, "; ".join(reasons))
            self.result.edges.append(fate)

    def carriers(self, succ: Instruction) -> tuple[list[tuple[Instruction, Instruction]], str]:
        """Where the edge can enter: [(op, value it reads)] and, if none, why.
        S itself at operand 0 when it can; otherwise each op that reads S,
        looking through tuples and get-tuple-elements (they are not ops after
        import, so an edge into one would have nothing to land on)."""
        if (succ.operands and not is_structural(succ) and not pins_its_operands(succ)
                and not begins_async_pair(succ.operands[0]) and not is_buffer(succ.operands[0])):
            return [(succ, succ.operands[0])], ""
        found: list[tuple[Instruction, Instruction]] = []
        reaches_root = succ is self.comp.root
        # Depth first through the users, in their order, on an explicit stack
        # (value, its users still to see): chains of tuples are as deep as the input.
        stack = [(succ, iter(self.users.of(succ)))]
        while stack:
            value, users = stack[-1]
            user = next(users, None)
            if user is None:
                stack.pop()
                continue
            if user in self.feeds and user.operands[-1] is not value:
                continue  # a predecessor of a call made here: it orders, it does not read
            if is_structural(user) or is_buffer(value):
                # no op of its own, or it reads a buffer, which no call can wrap: its users
                reaches_root = reaches_root or user is self.comp.root
                stack.append((user, iter(self.users.of(user))))
            elif user.opcode == "conditional" and user.operands[0] is not value:
                # The importer inlines a branch operand into the branch: the
                # conditional carries the edge on its selector (operand 0).
                if (user, user.operands[0]) not in found:
                    found.append((user, user.operands[0]))
            elif not pins_its_operands(user) and (user, value) not in found:
                found.append((user, value))
        kind = "a tuple or get-tuple-element, which is no op after import" if is_structural(succ) \
            else f"a {succ.opcode}, which cannot take an operand"
        if found:
            return found, ""
        if reaches_root:
            return [], (f"implied: %{succ.name} ({kind}) is the result of %{self.comp.name}, "
                        "which ends after every instruction in it")
        return [], f"%{succ.name} is {kind}, and it has no user to carry the edge"

    def stand_ins(self, p: Instruction, targets: list[Instruction]):
        """What can be an operand in p's place: (instructions, reasons, why dropped)."""
        if p.opcode not in NOT_PLAIN and not opens_async_pair(p.opcode):
            return [p], [], ""  # the common case: p itself (what the general case below gives it)
        values, reasons, dropped = looked_through(p, _structural_sources(p), self.comp.name, _name)
        if dropped:
            return [], [], dropped
        result = []
        for v in values:
            if not has_no_value_after_import(v, self.pass_.module):
                result.append(v)
                continue
            done = _matching_done(v, self.users)
            if done is None:
                return [], [], f"%{v.name} is a {v.opcode} with no matching *-done to stand in for it"
            for t in targets:
                if t is done or _depends_on(done, t):
                    return [], [], (f"%{v.name} is a {v.opcode}; its %{done.name} cannot stand in "
                                    f"because it comes after %{t.name} (a cycle)")
            self.reordered = True
            reasons.append(f"%{v.name} is a {v.opcode}, which has no value after import; "
                           f"its %{done.name} stands in")
            result.append(done)
        return list(dict.fromkeys(result)), reasons, ""

    def wrap(self, target: Instruction, data: Instruction, preds: list[Instruction], direct: bool) -> None:
        """Make a control-dep custom-call feed `target` where it reads `data`."""
        if target in self.feeds and target.operands[-1] is data:
            self.merge(target, preds)
            return
        operands = preds
        # A collective start imports as !stablehlo.future, which a tuple cannot
        # hold: it stays a plain operand beside the bundle.
        bundled = [p for p in preds if not self.future(p)]
        if self.pass_.bundle and bundled:
            bundle = Instruction(self.pass_.fresh_name(f"{target.name}.control-dep-bundle"),
                                 tuple_shape([self.pass_.shape_bytes(p) for p in bundled]), "tuple", bundled)
            self.insert(target, bundle)
            operands = [bundle] + [p for p in preds if self.future(p)]
        cc = Instruction(self.pass_.fresh_name(f"{target.name}.control-dep"), data.shape, "custom-call",
                         operands + [data], target=CONTROL_DEP_TARGET)
        self.insert(target, cc)
        self.feeds[cc] = self.feeds.get(target, target)
        if operands is not preds:
            self.bundles[cc] = operands[0]
        self.comp.rewired.add(target)
        if direct:
            target.operands[0] = cc  # S's operand 0 only: the data operand D
        else:
            target.operands = [cc if op is data else op for op in target.operands]
        # Keep the users map true: a later reroute must see this custom-call.
        self.users.set(cc, [target])
        if data not in target.operands:
            self.users.remove(data, target)

    def merge(self, cc: Instruction, preds: list[Instruction]) -> None:
        """More predecessors for a call made here, when another successor's
        edges are rerouted to the very value it feeds on (constants packed in
        one tuple, say): one call, not a chain of calls, each of which every
        later reader would walk (quadratic, and a RecursionError at ~1000)."""
        bundle = self.bundles.get(cc)
        have = self.merged.get(cc)
        if have is None:
            have = self.merged[cc] = set(cc.operands[:-1]) | set(bundle.operands if bundle else ())
        new = [p for p in dict.fromkeys(preds) if p not in have]
        have.update(new)
        if bundle is not None:
            packed = [p for p in new if not self.future(p)]
            bundle.operands += packed
            self.grown.add(bundle)
            for p in packed:
                self.users.add(p, bundle)
            new = [p for p in new if self.future(p)]
        cc.operands[-1:-1] = new
        for p in new:
            self.users.add(p, cc)

    def future(self, p: Instruction) -> bool:
        return imports_as_future(p, self.pass_.module)

    def insert(self, before: Instruction, new: Instruction) -> None:
        self.inserted.setdefault(before, []).append(new)
        self.comp.added.append(new)
        self.users.set(new, [])
        for op in dict.fromkeys(new.operands):
            self.users.add(op, new)

    def drop(self, p: Instruction, succ: Instruction, reason: str) -> None:
        self.result.edges.append(EdgeFate(self.comp.name, p.name, succ.name, Fate.DROPPED, (), reason))


def _matching_done(start: Instruction, users: _Users) -> Instruction | None:
    """Follow start → update* → done through data users."""
    current = start
    for _ in range(users.bound()):
        nxt = [u for u in users.of(current) if pins_its_operands(u)]
        if not nxt:
            return None
        current = nxt[0]
        if current.opcode.endswith("-done"):
            return current
    return None


def _depends_on(instr: Instruction, ancestor: Instruction) -> bool:
    """Whether `instr` transitively reads or waits for `ancestor`."""
    seen, stack = set(), [instr]
    while stack:
        node = stack.pop()
        for dep in node.operands + node.control_predecessors:
            if dep is ancestor:
                return True
            if id(dep) not in seen:
                seen.add(id(dep))
                stack.append(dep)
    return False


class _Users:
    """Data users of each instruction, in program order (those read from
    the proto in the text's order, then those the pass made, in the order
    made), each as the computation stands when first asked for, kept true
    by the pass's edits after. Only what a search asks for is made: the
    readers of an instruction come from an index of the proto's operand ids."""

    def __init__(self, comp: Computation):
        self.comp = comp
        self.map: dict[Instruction, list[Instruction]] = {}
        self.made_readers: dict[Instruction, list[Instruction]] = {}  # of one not asked for yet

    def of(self, instr: Instruction) -> list[Instruction]:
        found = self.map.get(instr)
        if found is None:
            readers = [self.comp.get(i) for i in self.comp.readers(instr.id)] if instr.id is not None else []
            readers += self.made_readers.pop(instr, [])
            found = self.map[instr] = [u for u in readers if instr in u.operands]
        return found

    def set(self, instr: Instruction, users: list[Instruction]) -> None:
        self.map[instr] = users

    def remove(self, operand: Instruction, user: Instruction) -> None:
        """`user` reads `operand` no more."""
        if operand in self.map:
            self.map[operand] = [u for u in self.map[operand] if u is not user]

    def add(self, operand: Instruction, user: Instruction) -> None:
        if operand in self.map:
            self.map[operand].append(user)
        else:
            self.made_readers.setdefault(operand, []).append(user)

    def bound(self) -> int:
        return len(self.comp.proto.instructions) + len(self.comp.added)
