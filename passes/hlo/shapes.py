"""Shapes the text leaves out, as XLA infers them.

XLA's parser lets a writer omit a result shape it can infer (`t = tuple(a,
b)`, `n = get-tuple-element(w), index=0`, `s = add(x, y)`), as XLA's own unit
tests do. The chain needs every shape (link #1 gives a control-dep call the
shape of its data operand and tells tuples apart), and XLA is the one to say
what it is: the module is written with every instruction renamed to a key no
name of the text uses (XLA renames a name that repeats across computations,
`a` → `a.1`, so names alone would not map back), XLA parses it, and each
key's shape, as XLA prints the instruction, goes to its instruction.
"""

from __future__ import annotations

from typing import Callable

from passes.hlo.ir import Instruction, Module, Shape
from passes.hlo.writer import write_module


def infer_shapes(module: Module, shapeless: list[Instruction], original: str,
                 shapes_of: Callable[[str], dict[str, str]], read_shape: Callable[[str], Shape]) -> None:
    """Give each instruction of `shapeless` the shape XLA infers for it.
    `shapes_of(text)` is XLA's shape of every instruction of a module, by
    name (`xla_shapes`); where XLA refuses the keyed text, its complaint about
    `original`, the user's own text (with the user's line numbers), is what
    propagates. `read_shape(text)` reads the shape at the start of XLA's
    printed text (the reader's own `read_shape`: the reader calls this
    function, so this module does not import it)."""
    prefix = _free_prefix(original)
    instructions = [instr for _, instr in module.instructions()]
    names = [instr.name for instr in instructions]
    try:
        for i, instr in enumerate(instructions):
            instr.name = f"{prefix}{i}"
        keyed = write_module(module)
    finally:
        for instr, name in zip(instructions, names):
            instr.name = name
    try:
        shapes = shapes_of(keyed)
    except Exception:
        shapes_of(original)  # raises XLA's complaint in the user's terms
        raise  # XLA took the user's text but not the keyed copy: a bug here, not theirs
    position = {id(instr): i for i, instr in enumerate(instructions)}
    for instr in shapeless:
        instr.shape = read_shape(shapes[f"{prefix}{position[id(instr)]}"])  # the shape leads the printed text


def xla_shapes(text: str, source: str | None = None) -> dict[str, str]:
    """XLA's shape of every instruction of the module `text`, by name, as XLA
    prints it. Read computation by computation: XLA's printing of the whole
    module leaves out the computation an `async-start` wraps."""
    from passes.hlo.xla import parse_with_xla

    return module_shapes(parse_with_xla(text, source))


def module_shapes(xla_module) -> dict[str, str]:
    """`xla_shapes` of a module XLA has parsed (a `jaxlib._hlo.HloModule`)."""
    shapes = {}
    for computation in xla_module.computations():
        for instr in computation.instructions():
            printed = instr.to_string()
            shapes[instr.name] = printed[printed.index(" = ") + 3:]  # the shape, and all after it
    return shapes


def _free_prefix(text: str) -> str:
    """A name prefix that no word of `text` starts with."""
    prefix = "h2p_shape_"
    while prefix in text:
        prefix += "_"
    return prefix
