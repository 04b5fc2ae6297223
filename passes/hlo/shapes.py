"""Shapes the text leaves out, as XLA infers them.

XLA's parser lets a writer omit a result shape it can infer (`t = tuple(a,
b)`, `n = get-tuple-element(w), index=0`, `s = add(x, y)`), as XLA's own unit
tests do. The chain needs every shape (link #1 gives a control-dep call the
shape of its data operand and tells tuples apart), and XLA is the one to say
what it is: the module is printed with every instruction renamed to a key no
name of the text uses (XLA renames a name that repeats across computations,
`a` → `a.1`, so names alone would not map back), XLA parses and prints it,
and each key's printed shape goes to its instruction.
"""

from __future__ import annotations

from typing import Callable

from passes.hlo.ir import Instruction, Module


def infer_shapes(module: Module, shapeless: list[Instruction], original: str,
                 canonical: Callable[[str], str]) -> None:
    """Give each instruction of `shapeless` the shape XLA infers for it.
    `canonical(text)` is XLA's printing of a module; where XLA refuses the
    keyed text, its complaint about `original`, the user's own text (with the
    user's line numbers), is what propagates."""
    from passes.hlo.reader import read_module
    from passes.hlo.writer import write_module

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
        printed = canonical(keyed)
    except Exception:
        canonical(original)  # raises XLA's complaint in the user's terms
        raise  # XLA took the user's text but not the keyed copy: a bug here, not theirs
    shapes = {instr.name: instr.shape for _, instr in read_module(printed).instructions()}
    position = {id(instr): i for i, instr in enumerate(instructions)}
    for instr in shapeless:
        instr.shape = shapes[f"{prefix}{position[id(instr)]}"]


def _free_prefix(text: str) -> str:
    """A name prefix that no word of `text` starts with."""
    prefix = "h2p_shape_"
    while prefix in text:
        prefix += "_"
    return prefix
