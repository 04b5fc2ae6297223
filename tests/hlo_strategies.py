"""Hypothesis strategies: random, acyclic HLO modules that XLA accepts, with
random control edges.

`hlo_modules()` draws a whole module and returns an `HloCase`: its text
and the control edges it was drawn with. The module is built as a small
tree of computations:

- the entry computation, whose parameters may appear anywhere (so that a
  parameter can itself be the successor of a control edge);
- `while` loops (body and condition computations of their own, nested up to
  `max_depth`), `conditional`s (a pred[] or s32[] selector, two or three
  branch computations) and `call`s (a `to_apply` computation); a body,
  branch or callee is sometimes shared by two callers, as XLA allows;
- in every computation: elementwise ops on small f32/s32 arrays (unary,
  binary, compare, select, convert, broadcast), zero-operand instructions
  (constant, iota, after-all), tuples (nested too) and get-tuple-elements of
  anything tuple-shaped (a tuple, a while, a conditional, a call, a
  tuple-shaped parameter);
- random control edges: each instruction draws a few control predecessors
  among the instructions defined before it in the same computation, so
  definition order is a topological order of data and control edges alike:
  every module is acyclic by construction;
- module-unique instruction names in XLA's style (`get-tuple-element.7`,
  `add.3`), in other styles with dots and dashes (`x-1.b`), and names that
  collide with what the chain makes or uses (`<name>.control-dep`, Python
  keywords and builtins, the printer's `module`, `T`, `dense`, `ret`);
- now and then a `metadata={op_name=… source_file=… source_line=…}`.

Only shape-correct instructions are drawn: XLA's text parser does not run
the HLO verifier, so the generator itself must keep every shape right.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

from hypothesis import strategies as st

F32, S32, PRED = "f32", "s32", "pred"
NUMERIC = (F32, S32)
DIMS = ((), (2,), (3,), (2, 3))

# Names that collide with what the chain makes (link #1's custom-calls and
# bundles), with the printer's own variables, and with Python keywords.
TRICKY_NAMES = ("module", "T", "dense", "ret", "fn_main", "lambda", "class", "None", "print", "_",
                "arg0", "v_1", "x-1.b", "a.b.c", "tuple", "while", "constant.1")
TRICKY_SUFFIXES = (".control-dep", ".control-dep.1", ".control-dep-bundle", ".gte0", ".1")
# XLA refuses an instruction named like a primitive type ("illegal instruction name: u1").
_TYPE_LIKE = re.compile(r"(?:pred|token|opaque|bf16|[subfc][0-9]+(?:e[0-9]+m[0-9]+[a-z]*)?)")


@dataclasses.dataclass(frozen=True)
class Shape:
    dtype: str | None = None          # None for tuples and tokens
    dims: tuple[int, ...] = ()
    elements: tuple["Shape", ...] | None = None
    token: bool = False

    @property
    def is_tuple(self) -> bool:
        return self.elements is not None

    @property
    def is_array(self) -> bool:
        return self.dtype is not None

    def text(self, layout: bool = True) -> str:
        if self.token:
            return "token[]"
        if self.is_tuple:
            return "(" + ", ".join(e.text(layout) for e in self.elements) + ")"
        dims = ",".join(map(str, self.dims))
        lay = "{" + ",".join(str(i) for i in reversed(range(len(self.dims)))) + "}" if layout and self.dims else ""
        return f"{self.dtype}[{dims}]{lay}"


TOKEN = Shape(token=True)


def array(dtype: str, dims: tuple[int, ...] = ()) -> Shape:
    return Shape(dtype, tuple(dims))


def tuple_of(shapes) -> Shape:
    return Shape(elements=tuple(shapes))


@dataclasses.dataclass(eq=False)
class Instr:
    name: str
    shape: Shape
    opcode: str
    operands: list["Instr"] = dataclasses.field(default_factory=list)
    payload: str | None = None
    attributes: str = ""                      # ", key=value..." verbatim
    preds: list["Instr"] = dataclasses.field(default_factory=list)
    layout: bool = True

    def render(self, root: bool) -> str:
        inner = self.payload if self.payload is not None else ", ".join("%" + o.name for o in self.operands)
        text = f"{'ROOT ' if root else ''}%{self.name} = {self.shape.text(self.layout)} {self.opcode}({inner})"
        text += self.attributes
        if self.preds:
            text += ", control-predecessors={" + ", ".join("%" + p.name for p in self.preds) + "}"
        return text


@dataclasses.dataclass(eq=False)
class Comp:
    name: str
    depth: int
    instrs: list[Instr] = dataclasses.field(default_factory=list)
    params: list[Instr] = dataclasses.field(default_factory=list)
    root: Instr | None = None
    is_entry: bool = False
    signature: bool = True

    def values(self, pred=lambda s: True) -> list[Instr]:
        return [i for i in self.instrs if pred(i.shape)]

    def render(self) -> str:
        head = ("ENTRY " if self.is_entry else "") + "%" + self.name
        if self.signature:
            params = sorted(self.params, key=lambda p: int(p.payload))
            head += " (" + ", ".join(f"{p.name}: {p.shape.text(False)}" for p in params) + ")"
            head += " -> " + self.root.shape.text(False)
        lines = [head + " {"] + ["  " + i.render(i is self.root) for i in self.instrs] + ["}"]
        return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class HloCase:
    text: str
    edges: tuple[tuple[str, str, str], ...]   # (computation, predecessor, successor)
    opcodes: frozenset[str]

    def __repr__(self) -> str:  # hypothesis prints the falsifying example: show the module
        return f"HloCase(<{len(self.edges)} edge(s)>)\n{self.text}"


class _Builder:
    def __init__(self, draw, max_instructions: int, max_depth: int, edge_chance: int, many_edges: bool):
        self.draw = draw
        self.max_instructions, self.max_depth = max_instructions, max_depth
        self.edge_chance, self.many_edges = edge_chance, many_edges
        self.taken: set[str] = set()
        self.comp_taken: set[str] = set()
        self.counter = itertools.count(1)
        self.computations: list[Comp] = []    # callees first, entry last
        self.shared: dict[tuple, list[tuple[Comp, ...]]] = {}  # signature -> computations to reuse

    # -- drawing (an index into a list: st.integers is cached, a fresh
    # sampled_from per draw is not, and generation time matters here) --------

    def pick(self, items):
        return items[self.draw(st.integers(0, len(items) - 1))] if len(items) > 1 else items[0]

    def picks(self, items, least: int, most: int, unique: bool = False) -> list:
        chosen = [self.pick(items) for _ in range(self.draw(st.integers(least, most)))]
        return list({id(i): i for i in chosen}.values()) if unique else chosen

    # -- names ----------------------------------------------------------------

    def fresh(self, opcode: str, comp: Comp | None = None) -> str:
        style = self.pick(("xla", "xla", "plain", "tricky", "suffix"))
        if style == "xla":
            base = f"{opcode}.{next(self.counter)}"
        elif style == "plain":
            base = self.draw(st.from_regex(r"[a-z][a-z0-9]{0,3}([._-][a-z0-9]{1,3}){0,2}", fullmatch=True))
            if _TYPE_LIKE.fullmatch(base):
                base += "_"
        elif style == "tricky":
            base = self.pick(TRICKY_NAMES)
        else:
            others = sorted(self.taken) or ["x"]
            base = self.pick(others) + self.pick(TRICKY_SUFFIXES)
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}.{n}"
        self.taken.add(name)
        return name

    def fresh_computation(self, base: str) -> str:
        style = self.pick(("xla", "dash", "plain"))
        name = {"xla": f"{base}.{next(self.counter)}", "dash": f"{base}-{next(self.counter)}.clone",
                "plain": base}[style]
        while name in self.comp_taken:
            name += ".1"
        self.comp_taken.add(name)
        return name

    # -- instructions -----------------------------------------------------------

    def add(self, comp: Comp, instr: Instr, edges: bool = True) -> Instr:
        instr.layout = self.draw(st.booleans())
        if self.draw(st.integers(0, 9)) == 0:
            op_name = self.draw(st.text(st.sampled_from('ab/ {}(),=%#"\\é.'), max_size=10))
            escaped = op_name.replace("\\", "\\\\").replace('"', '\\"')
            line = self.draw(st.integers(1, 999))
            instr.attributes += f', metadata={{op_name="{escaped}" source_file="f-1.py" source_line={line}}}'
        if edges and comp.instrs and self.draw(st.integers(0, 99)) < self.edge_chance:
            most = len(comp.instrs) if self.many_edges else 3
            instr.preds = self.picks(comp.instrs, 1, most, unique=True)
        comp.instrs.append(instr)
        return instr

    def new(self, comp: Comp, shape: Shape, opcode: str, operands=(), payload=None, attributes="",
            edges: bool = True) -> Instr:
        return self.add(comp, Instr(self.fresh(opcode), shape, opcode, list(operands), payload, attributes),
                        edges)

    def literal(self, shape: Shape) -> str:
        def scalar():
            if shape.dtype == PRED:
                return self.pick(("true", "false"))
            if shape.dtype == S32:
                return str(self.draw(st.integers(-4, 9)))
            return self.pick(("0", "1", "-2.5", "0.5", "3"))
        if not shape.dims:
            return scalar()
        if len(shape.dims) == 1:
            return "{" + ", ".join(scalar() for _ in range(shape.dims[0])) + "}"
        rows = ["{ " + ", ".join(scalar() for _ in range(shape.dims[1])) + " }" for _ in range(shape.dims[0])]
        return "{ " + ", ".join(rows) + " }"

    def constant(self, comp: Comp, shape: Shape, edges: bool = True) -> Instr:
        return self.new(comp, shape, "constant", payload=self.literal(shape), edges=edges)

    def value_of(self, comp: Comp, shape: Shape) -> Instr:
        """An instruction of exactly `shape`: an existing one or a new one."""
        have = comp.values(lambda s: s == shape)
        if have and self.draw(st.integers(0, 3)):
            return self.pick(have)
        if shape.token:
            return self.new(comp, TOKEN, "after-all")
        if shape.is_tuple:
            return self.new(comp, shape, "tuple", [self.value_of(comp, e) for e in shape.elements])
        return self.constant(comp, shape)

    def any_shape(self, allow_tuple: bool = True) -> Shape:
        kind = self.pick(("array", "array", "array", "tuple") if allow_tuple else ("array",))
        if kind == "tuple":
            return tuple_of([self.any_shape(allow_tuple=False) for _ in range(self.draw(st.integers(1, 3)))])
        return array(self.pick(NUMERIC), self.pick(DIMS))

    # -- one step -------------------------------------------------------------

    def step(self, comp: Comp) -> None:
        numeric = comp.values(lambda s: s.is_array and s.dtype in NUMERIC)
        kinds = ["constant", "iota", "after-all", "tuple"]
        if numeric:
            kinds += ["unary", "binary", "binary", "compare", "convert", "broadcast"]
        if comp.values(lambda s: s.is_array and s.dtype == PRED):
            kinds.append("select")
        if comp.values(lambda s: s.is_tuple):
            kinds += ["get-tuple-element", "get-tuple-element"]
        if comp.depth < self.max_depth:
            kinds += ["while", "conditional", "call"]
        if comp.is_entry:
            kinds.append("parameter")
        getattr(self, "step_" + self.pick(kinds).replace("-", "_"))(comp)

    def step_constant(self, comp):
        self.constant(comp, array(self.pick(NUMERIC + (PRED,)), self.pick(DIMS)))

    def step_iota(self, comp):
        dims = self.pick(DIMS[1:])
        dim = self.draw(st.integers(0, len(dims) - 1))
        self.new(comp, array(self.pick(NUMERIC), dims), "iota", attributes=f", iota_dimension={dim}")

    def step_after_all(self, comp):
        tokens = comp.values(lambda s: s.token)
        operands = self.picks(tokens, 0, 2, unique=True) if tokens else []
        self.new(comp, TOKEN, "after-all", operands)

    def step_parameter(self, comp):
        shape = self.any_shape()
        param = self.new(comp, shape, "parameter", payload=str(len(comp.params)))
        comp.params.append(param)

    def step_tuple(self, comp):
        if not comp.instrs:
            return self.step_constant(comp)
        elements = self.picks(comp.instrs, 1, 3)
        self.new(comp, tuple_of(e.shape for e in elements), "tuple", elements)

    def step_get_tuple_element(self, comp):
        t = self.pick(comp.values(lambda s: s.is_tuple))
        if not t.shape.elements:
            return self.step_constant(comp)
        i = self.draw(st.integers(0, len(t.shape.elements) - 1))
        self.new(comp, t.shape.elements[i], "get-tuple-element", [t], attributes=f", index={i}")

    def _numeric(self, comp):
        return self.pick(comp.values(lambda s: s.is_array and s.dtype in NUMERIC))

    def step_unary(self, comp):
        a = self._numeric(comp)
        ops = ("negate", "abs", "copy") + (("exponential", "tanh", "floor") if a.shape.dtype == F32 else ("not",))
        self.new(comp, a.shape, self.pick(ops), [a])

    def step_binary(self, comp):
        a = self._numeric(comp)
        b = self.pick(comp.values(lambda s: s == a.shape))
        op = self.pick(("add", "subtract", "multiply", "maximum", "minimum"))
        self.new(comp, a.shape, op, [a, b])

    def step_compare(self, comp):
        a = self._numeric(comp)
        b = self.pick(comp.values(lambda s: s == a.shape))
        direction = self.pick(("LT", "GT", "EQ", "NE", "GE", "LE"))
        self.new(comp, array(PRED, a.shape.dims), "compare", [a, b], attributes=f", direction={direction}")

    def step_select(self, comp):
        p = self.pick(comp.values(lambda s: s.is_array and s.dtype == PRED))
        shape = array(self.pick(NUMERIC), p.shape.dims)
        self.new(comp, shape, "select", [p, self.value_of(comp, shape), self.value_of(comp, shape)])

    def step_convert(self, comp):
        a = self._numeric(comp)
        other = S32 if a.shape.dtype == F32 else F32
        self.new(comp, array(other, a.shape.dims), "convert", [a])

    def step_broadcast(self, comp):
        scalars = comp.values(lambda s: s.is_array and s.dtype in NUMERIC and not s.dims)
        if not scalars:
            return self.step_constant(comp)
        s = self.pick(scalars)
        dims = self.pick(DIMS[1:])
        self.new(comp, array(s.shape.dtype, dims), "broadcast", [s], attributes=", dimensions={}")

    # -- control flow ------------------------------------------------------------

    def reuse(self, key) -> tuple[Comp, ...] | None:
        """A computation (or group) made earlier for the same signature, sometimes."""
        made = self.shared.get(key)
        if made and self.draw(st.integers(0, 3)) == 0:
            return self.pick(made)
        return None

    def remember(self, key, comps: tuple[Comp, ...]) -> None:
        self.shared.setdefault(key, []).append(comps)

    def step_while(self, comp):
        n = self.draw(st.integers(1, 2))
        state_elements = [self.value_of(comp, self.any_shape()) for _ in range(n)]
        counter = self.value_of(comp, array(S32))
        state = tuple_of([counter.shape] + [e.shape for e in state_elements])
        init = self.new(comp, state, "tuple", [counter] + state_elements)
        pair = self.reuse(("while", state))
        if pair is None:
            cond = self.condition(state, comp.depth + 1)
            body = self.body(state, comp.depth + 1)
            pair = (cond, body)
            self.remember(("while", state), pair)
        cond, body = pair
        self.new(comp, state, "while", [init], attributes=f", condition=%{cond.name}, body=%{body.name}")

    def subcomputation(self, base: str, param_shapes: list[Shape], depth: int) -> Comp:
        comp = Comp(self.fresh_computation(base), depth, signature=self.draw(st.booleans()))
        # Sometimes an instruction before the parameter, so that it can be its control predecessor.
        if self.draw(st.integers(0, 4)) == 0:
            self.step_constant(comp)
        for i, shape in enumerate(param_shapes):
            comp.params.append(self.new(comp, shape, "parameter", payload=str(i)))
        return comp

    def fill(self, comp: Comp, least: int = 0) -> None:
        for _ in range(self.draw(st.integers(least, self.max_instructions))):
            self.step(comp)

    def finish(self, comp: Comp) -> Comp:
        self.computations.append(comp)
        return comp

    def condition(self, state: Shape, depth: int) -> Comp:
        comp = self.subcomputation("cond", [state], depth)
        if self.draw(st.booleans()):
            self.fill(comp)
        i = self.new(comp, array(S32), "get-tuple-element", [comp.params[0]], attributes=", index=0")
        limit = self.new(comp, array(S32), "constant", payload=str(self.draw(st.integers(0, 3))))
        comp.root = self.new(comp, array(PRED), "compare", [i, limit], attributes=", direction=LT")
        return self.finish(comp)

    def body(self, state: Shape, depth: int) -> Comp:
        comp = self.subcomputation("body", [state], depth)
        param = comp.params[0]
        i = self.new(comp, array(S32), "get-tuple-element", [param], attributes=", index=0")
        one = self.new(comp, array(S32), "constant", payload="1")
        nxt = self.new(comp, array(S32), "add", [i, one])
        for k, shape in enumerate(state.elements[1:], start=1):
            if self.draw(st.booleans()):
                self.new(comp, shape, "get-tuple-element", [param], attributes=f", index={k}")
        self.fill(comp)
        elements = [nxt] + [self.value_of(comp, s) for s in state.elements[1:]]
        comp.root = self.new(comp, state, "tuple", elements)
        return self.finish(comp)

    def returning(self, base: str, param_shapes: list[Shape], result: Shape, depth: int) -> Comp:
        """A branch or callee: the parameters, random steps, a root of shape `result`."""
        comp = self.subcomputation(base, param_shapes, depth)
        self.fill(comp)
        have = comp.values(lambda s: s == result)
        if have and self.draw(st.booleans()):
            comp.root = self.pick(have)
        else:
            comp.root = self.value_of(comp, result)
        return self.finish(comp)

    def step_conditional(self, comp):
        indexed = self.draw(st.booleans())
        n = self.draw(st.integers(1, 3)) if indexed else 2
        if indexed:
            selector = self.value_of(comp, array(S32))
        else:
            selector = self.value_of(comp, array(PRED))
        operands = [self.value_of(comp, self.any_shape()) for _ in range(n)]
        result = self.any_shape()
        key = ("conditional", indexed, tuple(o.shape for o in operands), result)
        branches = self.reuse(key)
        if branches is None:
            branches = tuple(self.returning("branch", [o.shape], result, comp.depth + 1) for o in operands)
            self.remember(key, branches)
        if indexed:
            attributes = ", branch_computations={" + ", ".join("%" + b.name for b in branches) + "}"
        else:
            attributes = f", true_computation=%{branches[0].name}, false_computation=%{branches[1].name}"
        self.new(comp, result, "conditional", [selector] + operands, attributes=attributes)

    def step_call(self, comp):
        operands = [self.value_of(comp, self.any_shape()) for _ in range(self.draw(st.integers(1, 2)))]
        result = self.any_shape()
        key = ("call", tuple(o.shape for o in operands), result)
        callee = self.reuse(key)
        if callee is None:
            callee = (self.returning("callee", [o.shape for o in operands], result, comp.depth + 1),)
            self.remember(key, callee)
        self.new(comp, result, "call", operands, attributes=f", to_apply=%{callee[0].name}")

    # -- the module ------------------------------------------------------------

    def module(self) -> HloCase:
        entry = Comp(self.fresh_computation(self.pick(("main", "entry", "jit_f"))), 0,
                     is_entry=True, signature=self.draw(st.booleans()))
        self.fill(entry, least=1)
        if self.draw(st.integers(0, 3)) == 0:
            entry.root = self.pick(entry.instrs)
        else:
            entry.root = entry.instrs[-1]
        self.finish(entry)
        name = self.pick(("m", "jit_f.1", "module-x_2", "a.b-c"))
        text = f"HloModule {name}\n\n" + "\n\n".join(c.render() for c in self.computations) + "\n"
        edges = tuple((c.name, p.name, i.name) for c in self.computations for i in c.instrs for p in i.preds)
        opcodes = frozenset(i.opcode for c in self.computations for i in c.instrs)
        return HloCase(text, edges, opcodes)


@st.composite
def hlo_modules(draw, max_instructions: int = 8, max_depth: int = 2, edge_chance: int = 35,
                many_edges: bool = False) -> HloCase:
    """A random acyclic HLO module XLA accepts, with random control edges.
    `max_instructions` bounds the random steps per computation (a step may add
    a few instructions), `max_depth` the nesting of while/conditional/call,
    `edge_chance` the percentage of instructions that get control
    predecessors, `many_edges` lets one take any number of them."""
    return _Builder(draw, max_instructions, max_depth, edge_chance, many_edges).module()
