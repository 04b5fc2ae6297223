"""Link #4: MLIR (StableHLO, MHLO, or the mix XLA's importer makes) → a
Python program that builds the Penguin graph.

Every op becomes one `block.op(...)` line through a small emitter chosen by op
name, with a generic fallback, so no op is refused. Penguin instruction names
are the HLO instruction names that link #2 keeps in locations, planned for the
whole module before the first line (`printer.naming`). Attributes are
written as Python values (`printer.attributes`: a constant as `dense(…)`,
dimensions as tuples, 'LT'), so that `Module.execute` can run the program.

printControlDeps (the binary's printers share link #3's recognizer:
docs/link3-contract.md#recognizer-what-a-control-dep-call-is; docs/design.md#link-4-what-the-printer-reads):
a control-dep custom-call is not a Penguin instruction. Its
result stands for its data operand (the last); each other operand is a
predecessor, and each op that uses its result is a successor, giving per
predecessor, on the successor, the statement neuronx-cc's printer writes:

    succ.add_dep_edge(Dependency.DependencyEdge(src=pred, dst=succ, idx_map=[],
                                                kind=Dependency.EdgeKind.ORDERED, predicates=[]))

with `Dependency` imported by the preamble when the module carries
`has_control_deps` (as the real printer does) or has an edge to print
(safer: a program never names what it did not import). A call whose predecessors
are still bundled in a tuple yields one edge from the tuple, not one per
element: the failure the flatten pass (link #3) exists to prevent.
"""

from __future__ import annotations

import builtins
import keyword
import re
import types
from typing import Callable

from jaxlib.mlir import ir

from passes.control_dep import HAS_CONTROL_DEPS, check_operands, is_control_dep, ordered_ops
from passes.dialects import CUSTOM_CALL_OPS, FUNC_FUNC, IF_OPS, RETURN_OPS, WHILE_OPS
from passes.locations import hlo_name
from printer.attributes import attribute_source
from printer.naming import NamePlan, plan_names

# Region names by op, for readable programs; other ops get region0, region1…
REGION_NAMES = {**{op: ("cond", "body") for op in WHILE_OPS}, **{op: ("true", "false") for op in IF_OPS}}

_NOT_IDENTIFIER = re.compile(r"\W")
_RESULT_INDEX = re.compile(r"\[\d+\]$")


Emitter = Callable[["_Printer", ir.Operation, str], None]
EMITTERS: dict[str, Emitter] = {}


def emitter(*names: str):
    """Register the decorated function as the emitter of the ops `names`.
    Ops with none print through `_generic`, the fallback, which is not registered."""
    if not names:
        raise TypeError("emitter() needs at least one op name: with none it would register nothing")

    def register(fn: Emitter) -> Emitter:
        for name in names:
            EMITTERS[name] = fn
        return fn
    return register


def print_penguin(module: ir.Module, source: str = "<module>", dialect: str = "stablehlo", names=None,
                  elided=(), on_lines=None) -> str:
    """The Python source of a program that rebuilds `module` as a Penguin
    graph and leaves it in a module-level variable `module`. `elided`:
    (computation, name) of each constant XLA's dump printed without its
    values (`pipeline.reading.elided`); the program records them, and its module
    refuses to execute. `on_lines`, if given, is handed the program's lines
    as they are printed, a list of about `STREAM_LINES` lines at a time:
    in order, every line from the first function's to the last, each a
    whole statement (or blank, or a comment). What comes before them (the
    imports, the module, the types) is known only at the end."""
    return _Printer(source, dialect, names, elided, on_lines).print(module)


STREAM_LINES = 2_500  # lines per `on_lines` call


class _Printer:
    def __init__(self, source: str, dialect: str, names=None, elided=(), on_lines=None):
        self.source, self.dialect = source, dialect
        self.on_lines = on_lines
        self.handed_on = 0  # lines handed to `on_lines` so far, counted from the start of `lines`
        self.elided = [tuple(c) for c in elided]
        # Where HLO names come from: the importer's table of keys (`pipeline.xla.importer.HloNames`)
        # for a module still at its key locations, else the locations themselves.
        self.hlo_names = names
        self.lines: list[str] = []
        self.edges: list[str] = []
        self.values: dict = {}  # MLIR value → Python expression
        self.variables: set[str] = {"module", "Module", "T", "dense", "Dependency"}  # the program's own names
        self.plan = NamePlan({}, {})  # each op's Penguin name and computation, and where helper ops' edges go
        self.suffixes: dict[str, int] = {}  # variable base → last numeric suffix used
        self.op_variables: dict = {}  # MLIR op → its Penguin instruction's variable
        self.pending: list = []       # (predecessor variables or ops, control-dep call)
        self.types: dict = {}         # MLIR type → the variable of its `T('…')`, defined once up front
        self.type_lines: list[str] = []
        self.block_computations: dict[str, str | None] = {}  # block variable → its ops' usual computation
        self._work: list | None = None  # what `block_body` has left to print, innermost last

    def print(self, module: ir.Module) -> str:
        op = module.operation
        name = ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else "module"
        self.lines += [
            f'"""Penguin program generated by hlo2penguin from {_escape_doc(self.source)} ({self.dialect})."""',
            "",
            _RUNTIME,
            "",
            f"module = Module({name!r})",
        ]
        if self.elided:
            self.lines += ["", "# Constants XLA's dump printed as `constant({...})`: placeholder values, "
                           "so the module does not execute", f"module.elided = {self.elided!r}"]
        self.plan = plan_names(module, self.hlo_names)
        self.handed_on = len(self.lines)  # the head is not handed on: the types go in it at the end
        for fn in module.body.operations:
            if fn.operation.name == FUNC_FUNC:
                self.function(fn.operation)
        self.control_deps()
        if self.on_lines is not None:
            self.hand_on(0)
            tail = (["", "# Control dependencies (printControlDeps)"] if self.edges else []) + self.edges
            for at in range(0, len(tail), STREAM_LINES):
                self.on_lines(tail[at:at + STREAM_LINES])
        if self.type_lines:  # each type once, before the first function uses it
            at = self.lines.index(f"module = Module({name!r})") + 1
            self.lines[at:at] = ["", "# Types"] + self.type_lines
        if self.edges or _carries_control_deps(op):
            self.lines.insert(self.lines.index(_RUNTIME) + 1, "from printer.penguin import Dependency")
        if self.edges:
            self.lines += ["", "# Control dependencies (printControlDeps)"] + self.edges
        return "\n".join(self.lines) + "\n"

    def hand_on(self, at_least: int) -> None:
        """The lines printed since the last call to `on_lines`, if there are `at_least`."""
        lines = self.lines
        if len(lines) - self.handed_on >= max(at_least, 1):
            self.on_lines(lines[self.handed_on:])
            self.handed_on = len(lines)

    # -- structure -----------------------------------------------------------

    def function(self, fn: ir.Operation) -> None:
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        block = fn.regions[0].blocks[0]
        var = self.variable(f"fn_{name}")
        arg_names = self.argument_names(fn, 0, block)
        args = list(zip(arg_names, (a.type for a in block.arguments)))
        self.lines += ["", f"# func @{name}", f"{var} = module.function({name!r}, {self.pairs(args)}"
                       f"{self.block_computation(block, var)})"]
        self.bind_arguments(block, var, arg_names)
        self.block_body(block, var)

    def bind_arguments(self, block: ir.Block, var: str, arg_names: list[str]) -> None:
        for i, arg in enumerate(block.arguments):
            arg_var = self.variable(arg_names[i])
            self.lines.append(f"{arg_var} = {var}.args[{i}]")
            self.values[arg] = arg_var

    def block_body(self, block: ir.Block, var: str) -> None:
        """Print `block`'s ops and, after each op with regions, its nested
        blocks, in program order. On an explicit stack of what is left to
        print (a block's ops; an op's blocks): regions nest as deep as the
        module makes them. An emitter that meets regions (`regions`) only
        puts them on the stack, printed before the block's next op."""
        frame = (iter(block.operations), var)
        if self._work is not None:  # called while printing: the caller's loop prints it
            self._work.append(frame)
            return
        self._work = work = [frame]
        lines, streaming = self.lines, self.on_lines is not None
        try:
            while work:
                if streaming and len(lines) - self.handed_on >= STREAM_LINES:
                    self.hand_on(STREAM_LINES)
                items, where = work[-1]
                item = next(items, None)
                if item is None:
                    work.pop()
                elif isinstance(where, str):  # an op of a block whose variable is `where`
                    op = item.operation
                    EMITTERS.get(op.name, _generic)(self, op, where)
                else:  # a nested block of the op `where` = (op, its variable)
                    self._open_block(*where, *item)
        finally:
            self._work = None

    def regions(self, op: ir.Operation, op_var: str) -> None:
        """The blocks of `op`'s regions, printed next (`block_body`)."""
        blocks = [(i, j, block) for i, region in enumerate(op.regions) for j, block in enumerate(region.blocks)]
        self._work.append((iter(blocks), (op, op_var)))

    def _open_block(self, op: ir.Operation, op_var: str, i: int, j: int, block: ir.Block) -> None:
        """Block #`j` of region #`i` of `op`: its variable and arguments, then its ops."""
        names = REGION_NAMES.get(op.name, ())
        label = names[i] if i < len(names) else f"region{i}"
        if j:
            label += f".{j}"
        var = self.variable(f"{op_var}_{label}")
        arg_names = self.argument_names(op, i, block)
        args = list(zip(arg_names, (a.type for a in block.arguments)))
        self.lines.append(f"{var} = {op_var}.block({label!r}, {self.pairs(args)}"
                          f"{self.block_computation(block, var)})")
        self.bind_arguments(block, var, arg_names)
        self.block_body(block, var)

    def block_computation(self, block: ir.Block, var: str) -> str:
        """`, computation='c'` for a block whose first named op is of `c`: the
        block's default, which its ops then need not repeat (most share it)."""
        names = self.plan.names
        computation = None
        for op in block.operations:
            planned = names.get(op.operation)  # (Penguin name, computation)
            if planned is not None and planned[1] is not None:
                computation = planned[1]
                break
        self.block_computations[var] = computation
        return f", computation={computation!r}" if computation is not None else ""

    def computation_argument(self, computation: str | None, block_var: str) -> str:
        """`, computation=…` where an op's computation is not its block's."""
        return "" if computation == self.block_computations.get(block_var) else f", computation={computation!r}"

    # -- naming --------------------------------------------------------------

    def instruction_name(self, op: ir.Operation) -> tuple[str, str | None]:
        """The Penguin name (the HLO name, or a derived one) and the HLO computation (`printer.naming`)."""
        return self.plan.names[op]

    def argument_names(self, op: ir.Operation, region: int, block: ir.Block) -> list[str]:
        """The HLO names of a block's arguments (`arg<i>` where none), the block in region #`region` of `op`."""
        if self.hlo_names is not None:
            found = [name for name, _ in self.hlo_names.arguments(op, region, block)]
        else:
            found = [hlo_name(arg.location)[0] for arg in block.arguments]
        return [name or f"arg{i}" for i, name in enumerate(found)]

    def variable(self, hint: str) -> str:
        if hint.isascii() and hint.isidentifier():  # most HLO names: nothing to replace
            base = hint
        else:
            base = _NOT_IDENTIFIER.sub("_", hint) or "v"
        if base[0].isdigit() or keyword.iskeyword(base) or _is_builtin(base):
            base = "v_" + base
        var = base
        if var in self.variables:
            # Count on from the last suffix this base got: many `ret`s stay linear.
            n = self.suffixes.get(base, 1)
            while var in self.variables:
                n += 1
                var = f"{base}_{n}"
            self.suffixes[base] = n
        self.variables.add(var)
        return var

    def pairs(self, args: list[tuple[str, ir.Type]]) -> str:
        return "[" + ", ".join(f"({n!r}, {self.type_source(t)})" for n, t in args) + "]"

    def type_source(self, type_: ir.Type) -> str:
        """The variable of the type's `T('tensor<8xf32>')`, defined once at the
        top of the program (MLIR types are uniqued: equal types hash alike)."""
        source = self.types.get(type_)
        if source is None:
            text = str(type_)
            source = self.types[type_] = self.variable(_type_hint(text))
            self.type_lines.append(f"{source} = T({text!r})")
        return source

    def operand(self, value) -> str:
        try:
            return self.values[value]
        except KeyError:
            raise ValueError(f"operand defined after its use, or outside the module: {value}") from None

    def operand_list(self, op: ir.Operation) -> str:
        """The operands' expressions, comma-separated (the same error as `operand`)."""
        values = self.values
        try:
            return ", ".join([values[v] for v in op.operands])
        except KeyError as missing:
            raise ValueError(f"operand defined after its use, or outside the module: {missing.args[0]}") from None

    def predecessor(self, value) -> str | ir.Operation:
        """What a predecessor operand stands for: the variable of the
        instruction that defines it, or, for a helper op of an instruction
        (not a tuple/get_tuple_element), the op that carries the HLO name,
        whose variable `control_deps` looks up once everything is printed."""
        dep_target = self.plan.dep_target
        if dep_target:  # reading the owner costs; most modules have no helper ops
            owner = value.owner
            if not isinstance(owner, ir.Block):
                target = dep_target.get(owner.operation)
                if target is not None:
                    return target
        return _node(self.operand(value))

    def control_deps(self) -> None:
        """One add_dep_edge per predecessor and successor, once every
        successor has a variable. Each pair once: an op can read a call's
        result several times (a while reads each element of an unpacked
        tuple), and two calls can carry the same pair."""
        written: set[tuple[str, str]] = set()
        dep_target = self.plan.dep_target
        for preds, call in self.pending:
            pred_vars = list(dict.fromkeys(p if isinstance(p, str) else self.op_variables[p] for p in preds))
            for succ in ordered_ops(call):
                succ_var = self.op_variables[dep_target.get(succ, succ)]
                for pred in pred_vars:
                    if (pred, succ_var) not in written:
                        written.add((pred, succ_var))
                        self.edges.append(f"{succ_var}.add_dep_edge(Dependency.DependencyEdge(src={pred}, "
                                          f"dst={succ_var}, {_EDGE_REST}))")


_RUNTIME = "from printer.penguin import Module, T, dense"
_TYPE_WORDS = re.compile(r"[^0-9A-Za-z]+")


def _type_hint(text: str) -> str:
    """A variable name for a type: `tensor<4x8xf32>` → `t_4x8xf32`, `!stablehlo.token` → `t_stablehlo_token`."""
    inner = text[len("tensor<"):-1] if text.startswith("tensor<") and text.endswith(">") else text
    return "t_" + (_TYPE_WORDS.sub("_", inner).strip("_")[:40] or "type")
# What every edge the real printer writes says besides its ends.
_EDGE_REST = "idx_map=[], kind=Dependency.EdgeKind.ORDERED, predicates=[]"


def _carries_control_deps(module_op: ir.Operation) -> bool:
    """Whether link #1 stamped the module (`has_control_deps`, a frontend
    attribute that XLA's importer keeps on the MLIR module)."""
    if "mhlo.frontend_attributes" not in module_op.attributes:
        return False
    attributes = ir.DictAttr(module_op.attributes["mhlo.frontend_attributes"])
    return HAS_CONTROL_DEPS in attributes


def _is_builtin(name: str) -> bool:
    """`hasattr(builtins, name)` without raising AttributeError on the
    common miss: a name of builtins, or one every module has (`__doc__`)."""
    return name in vars(builtins) or name in _MODULE_ATTRIBUTES


_MODULE_ATTRIBUTES = frozenset(dir(types.ModuleType))


def _escape_doc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _attributes(op: ir.Operation) -> str:
    """The attributes as a Python dict literal of structured values (see `attribute_source`)."""
    attributes = op.attributes
    if not len(attributes):
        return ""
    return "{" + ", ".join(f"{name!r}: {attribute_source(name, attributes[name])}" for name in attributes) + "}"


def _generic(p: _Printer, op: ir.Operation, block_var: str) -> None:
    """The fallback for every op no emitter is registered for (`EMITTERS.get(op.name, _generic)`)."""
    name, computation = p.instruction_name(op)
    var = p.variable(name)
    operands = p.operand_list(op)
    results = op.results
    result_types = ", ".join([p.type_source(t) for t in results.types])
    attrs = _attributes(op)
    extra = f", {attrs}" if attrs else ""
    where = p.computation_argument(computation, block_var)
    p.lines.append(f"{var} = {block_var}.op({op.name!r}, {name!r}, [{operands}], [{result_types}]{extra}{where})")
    if len(results) == 1:
        p.values[results[0]] = var
    elif len(results) > 1:
        for i, result in enumerate(results):
            p.values[result] = f"{var}[{i}]"
    p.op_variables[op] = var
    if op.regions:
        p.regions(op, var)


@emitter(*RETURN_OPS)
def _return(p: _Printer, op: ir.Operation, block_var: str) -> None:
    var = p.variable("ret")
    p.lines.append(f"{var} = {block_var}.op({op.name!r}, 'return', [{p.operand_list(op)}]"
                   f"{p.computation_argument(None, block_var)})")
    p.op_variables[op] = var


@emitter(*CUSTOM_CALL_OPS)
def _custom_call(p: _Printer, op: ir.Operation, block_var: str) -> None:
    if not is_control_dep(op):
        _generic(p, op, block_var)
        return
    check_operands(op)  # no operands: not a control dep (ControlDepError); only D: aliases, no edge
    # printControlDeps: the call aliases its data operand; edges come at the end,
    # once every successor has a variable.
    *preds, data = list(op.operands)
    p.values[op.results[0]] = p.operand(data)
    p.pending.append(([p.predecessor(v) for v in preds], op))


def _node(expr: str) -> str:
    """`loop[1]` → `loop`: a dependency is on the instruction, not a result."""
    return _RESULT_INDEX.sub("", expr)
