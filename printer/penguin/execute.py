"""Numerics: run a Penguin module on numpy arrays, in `schedule()` order.

    module.execute(x, y)                     # the results of @main, a tuple of arrays
    module.execute(x, function="body.3")

One small rule per op family, registered by the op's suffix (`add` serves
`stablehlo.add` and `mhlo.add`), as JAX's lowering registry does: the
registry and what rules share are in `registry`, the rules in `op_rules`
(elementwise, shapes, control flow) and `reduction_rules` (reduce,
reduce_window, dot, convolution, scatter, sort, top_k). An op without a
rule, or outside the namespaces the executor runs
(`passes.dialects.EXECUTABLE`), is refused by name, as is a custom call
whose target has none. A control-dep custom-call is not here at all: the
printer made its result alias its data operand.
"""

from __future__ import annotations

from types import GeneratorType

import numpy as np

from passes.dialects import EXECUTABLE, namespace
from passes.elision import elided_refusal
from printer.penguin import op_rules, reduction_rules  # noqa: F401  (they register the rules)
from printer.penguin.graph import Block, Instruction, Schedules, T, Value
from printer.penguin.registry import (
    RULES, ElidedConstants, ExecutionError, UnsupportedOp, dense, numpy_dtype, op_suffix, unsupported)

# `module` below is a printer.penguin.module.Module, named in annotations only:
# that module imports this one (for `Module.execute`), so this one does not import it.


def execute(module: Module, *arrays, function: str = "main") -> tuple:
    if module.elided:  # placeholder values: no number of this module means anything
        raise ElidedConstants(elided_refusal(module.elided, module.name))
    with np.errstate(all="ignore"):  # wraparound and inf/nan are the semantics, not accidents
        results = Interpreter(module).call(function, list(arrays), check=True)
    return tuple(_leaves(results))


class Interpreter:
    def __init__(self, module: Module):
        self.module = module
        self.functions = {fn.name: fn for fn in module.functions}
        self.schedules = Schedules(module)  # every block's, from one pass over the module

    def call(self, name: str, args: list, check: bool = False) -> list:
        return run_steps(self.steps(name, args, check))

    def steps(self, name: str, args: list, check: bool = False):
        """Function `name` on `args` in a new frame, as steps (`run_steps`)."""
        fn = self.functions.get(name)
        if fn is None:
            raise ExecutionError(f"module {self.module.name} has no function {name!r} "
                                 f"(it has {', '.join(self.functions) or 'none'})")
        if check:
            args = _arguments(fn, args)
        return Frame(self, {}).steps(fn, args)

    def schedule(self, block: Block) -> list[Instruction]:
        return self.schedules(block)


class Frame:
    """One function activation: the values of its instructions and arguments,
    nested blocks included (a region may read what its enclosing blocks defined).

    A block runs as a generator (`steps`) that yields the steps it waits on:
    a rule that runs regions (while, case, if, fusion, call) is a generator
    that yields `frame.steps(...)` of the block to run and gets its results
    back. One driver (`run_steps`) runs them all on an explicit stack, so a
    while nested in a while as deep as the module makes it takes no Python
    stack. Rules that run a scalar region per element (reduce, sort, scatter)
    call `block` and get the results at once."""

    def __init__(self, interpreter: Interpreter, env: dict, exact_shapes: bool = True):
        self.interpreter, self.env, self.exact_shapes = interpreter, env, exact_shapes

    def block(self, block: Block, args: list) -> list:
        """Run `block` on `args` in schedule order; the values its return op returns."""
        return run_steps(self.steps(block, args))

    def steps(self, block: Block, args: list):
        """`block` on `args`, as steps for `run_steps`: its results at the end."""
        if len(args) != len(block.arguments):
            raise ExecutionError(f"block {block.name} takes {len(block.arguments)} argument(s), got {len(args)}")
        for argument, value in zip(block.arguments, args):
            self.env[id(argument)] = value
        results = []
        for instr in self.interpreter.schedule(block):
            operands = [self.value(o, instr) for o in instr.operands]
            if op_suffix(instr) == "return":
                results = operands
            else:
                self.env[id(instr)] = yield self.run(instr, operands)
        return results

    def vectorized(self) -> Frame:
        """A frame that runs a scalar region on whole arrays, one element per position
        (the region must be `op_rules.vectorizable`); it shares this frame's values."""
        return Frame(self.interpreter, self.env, exact_shapes=False)

    def region(self, instr: Instruction, index: int, args: list):
        """Region #`index` of `instr` on `args`, as steps: a rule yields them for the results."""
        return self.steps(instr.blocks[index], args)

    def call(self, name: str, args: list):
        """Function `name` on `args`, as steps: a rule yields them for the results."""
        return self.interpreter.steps(name, args)

    def value(self, node, user: Instruction):
        try:
            if isinstance(node, Value):
                return self.env[id(node.instruction)][node.index]
            return self.env[id(node)]
        except KeyError:
            raise ExecutionError(f"%{user.name}: operand %{node.name} has no value yet") from None

    def run(self, instr: Instruction, operands: list):
        """`instr` on its operands' values, as steps: its value (typed) at the end."""
        fn = RULES.get(op_suffix(instr)) if namespace(instr.opcode) in EXECUTABLE else None
        if fn is None:
            raise unsupported(instr)
        try:
            result = fn(self, instr, operands)
            if isinstance(result, GeneratorType):  # a rule that runs regions: the driver runs its steps
                result = yield result
        except ExecutionError:
            raise
        except Exception as e:
            raise ExecutionError(f"{instr.opcode} %{instr.name}: {type(e).__name__}: {e}") from e
        if len(instr.result_types) > 1:
            return tuple(self.typed(r, t, instr) for r, t in zip(result, instr.result_types))
        return self.typed(result, instr.result_types[0], instr) if instr.result_types else result

    def typed(self, value, t: T, instr: Instruction):
        """An array of the result type; a wrong dtype or shape is a bug in a rule."""
        if t.dtype is None:
            return value  # a tuple or a token
        value = np.asarray(value)
        if value.dtype != numpy_dtype(t.dtype) or (self.exact_shapes and value.shape != t.shape):
            raise ExecutionError(f"{instr.opcode} %{instr.name}: computed {value.dtype}{list(value.shape)}, "
                                 f"the result type is {t}")
        return value


def run_steps(steps):
    """Run a generator of steps to its end: each step it yields is a
    generator too, run first (with the steps it yields in turn) and its
    value sent back; an error in one is raised in the one that waits on it.
    One loop over an explicit stack, however deep the steps nest."""
    stack, value, error = [steps], None, None
    while True:
        try:
            step = stack[-1].throw(error) if error is not None else stack[-1].send(value)
        except StopIteration as done:
            stack.pop()
            value, error = done.value, None
            if not stack:
                return value
            continue
        except BaseException as raised:  # noqa: BLE001 (handed to the waiting step, or raised at the end)
            stack.pop()
            if not stack:
                raise
            value, error = None, raised
            continue
        stack.append(step)
        value = None


def _arguments(fn: Block, args: list) -> list:
    if len(args) != len(fn.arguments):
        raise ExecutionError(f"function {fn.name} takes {len(fn.arguments)} argument(s), got {len(args)}")
    out = []
    for arg, value in zip(fn.arguments, args):
        value = np.asarray(value)
        if arg.type.dtype is not None:
            dtype = numpy_dtype(arg.type.dtype)
            if not np.can_cast(value.dtype, dtype, "same_kind"):
                raise ExecutionError(f"argument {arg.name} of {fn.name}: {value.dtype} does not convert "
                                     f"safely to {arg.type}")
            value = value.astype(dtype, copy=False)
            if value.shape != arg.type.shape:
                raise ExecutionError(f"argument {arg.name} of {fn.name}: shape {value.shape}, "
                                     f"expected {arg.type.shape} ({arg.type})")
        out.append(value)
    return out


def _leaves(values) -> list:
    """The arrays of `values`, tuples flattened in order (an explicit stack:
    a tuple nests as deep as its type)."""
    out, stack = [], list(reversed(values))
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            stack += reversed(v)
        else:
            out.append(v)
    return out


__all__ = ["ElidedConstants", "ExecutionError", "RULES", "UnsupportedOp", "dense", "execute", "numpy_dtype"]
