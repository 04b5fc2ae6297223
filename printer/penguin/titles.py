"""One name for a block of a Penguin program, wherever a block is named:
the verifier's report (its lines and its HTML table), the panels of a
drawing (`printer.penguin.drawing`) and the layers of Model Explorer.

    block_title("body", "region_2.10", caller=("while.16", "stablehlo.while"))
                                       # '%while.16 (while): body [%region_2.10]'
    block_title("main", "main.5")      # 'func @main [%main.5]'
    title_of(block)                    # the same, read off a `Block` of a program

A nested block is named by the op whose region it is (that op's name and
short opcode) and by its own name there, as the printer names it: a
while's `cond` and `body`, an if's `true` and `false`, `region0`,
`region1`… for any other op. A function is named `func @name`. XLA's name
of the computation the block stands for follows in brackets where it is
known and differs from the block's own name. A computation that several
ops call (XLA's importer copies it into each op's region) is named by its
first caller and how many more there are (`+2 more callers`).

Nothing here imports the rest of the runtime: the verifier, the drawing and
Model Explorer's graph all import it.
"""

from __future__ import annotations

from collections import Counter

from passes.dialects import kind

__all__ = ["block_title", "title_of", "computation_of", "short_opcode", "regions_by_computation", "Titles"]


def short_opcode(opcode: str) -> str:
    """`stablehlo.while` → `while`; an opcode without a dialect stays as it is."""
    return kind(opcode) if "." in opcode else opcode


def block_title(name: str, computation: str | None = None, *, caller: tuple[str, str] | None = None,
                more_callers: int = 0) -> str:
    """The one name of a block.

    `name`: the block's own name (a function's name, or a nested block's:
    `body`, `cond`, `true`, `region0`…). `computation`: XLA's name of the
    computation the block stands for, shown in brackets where it differs
    from `name` (None: not known). `caller`: (name, opcode) of the op whose
    region the block is, None for a function. `more_callers`: how many
    other ops call the same computation.

        %while.16 (while): body [%region_2.10]
        %fusion.3 (fusion): region0 [%fused_computation] +1 more caller
        func @main [%main.5]
        func @body
    """
    if caller is None:
        title = f"func @{name}"
    else:
        title = f"%{caller[0]} ({short_opcode(caller[1])}): {name}"
    if computation and computation != name:
        title += f" [%{computation}]"
    if more_callers > 0:
        title += f" +{more_callers} more caller{'s' if more_callers != 1 else ''}"
    return title


def computation_of(block) -> str | None:
    """XLA's name of the computation `block` stands for: the block's own
    (`computation=` where the program builds it), else the one most of its
    instructions came from; None where none says."""
    if block.computation is not None:
        return block.computation
    counts = Counter(i.computation for i in block.instructions if i.computation is not None)
    return counts.most_common(1)[0][0] if counts else None


def title_of(block, *, computation: str | None = None, more_callers: int = 0) -> str:
    """`block_title` of a `printer.penguin.Block`: its name, the op whose
    region it is (none for a function) and XLA's name of its computation
    (`computation_of`, unless `computation` gives it)."""
    op = block.parent
    return block_title(block.name, computation if computation is not None else computation_of(block),
                       caller=None if op is None else (op.name, op.opcode), more_callers=more_callers)


def regions_by_computation(blocks) -> dict[str, list]:
    """Computation → the nested blocks among `blocks` that stand for it, in
    their order: each a region of an op (not a block the importer nests
    inside its own computation's block)."""
    found: dict[str, list] = {}
    for block in blocks:
        if block.parent is None:
            continue
        mine = computation_of(block)
        if mine is not None and computation_of(block.parent.parent) != mine:
            found.setdefault(mine, []).append(block)
    return found


class Titles:
    """The one name of every block of a program, as the report, the
    pictures and Model Explorer give it: `title_of` with, for a computation
    several ops' regions stand for, how many more callers it has.
    `blocks`: every block of the program (functions and nested blocks)."""

    def __init__(self, blocks):
        self.regions = regions_by_computation(blocks)
        self._titles: dict[tuple[int, str | None], str] = {}

    def of(self, block, computation: str | None = None) -> str:
        """The name of `block`; `computation` (default: the block's own,
        `computation_of`) is XLA's computation it is named for."""
        computation = computation if computation is not None else computation_of(block)
        key = (id(block), computation)
        if key not in self._titles:
            callers = {id(b.parent) for b in self.regions.get(computation, ())}
            more = len(callers) - 1 if block.parent is not None and len(callers) > 1 else 0
            self._titles[key] = title_of(block, computation=computation, more_callers=more)
        return self._titles[key]


def every_block(functions) -> list:
    """Every block of `functions` and the blocks nested in them, in program order (an explicit stack)."""
    found, stack = [], list(reversed(list(functions)))
    while stack:
        block = stack.pop()
        found.append(block)
        stack += reversed([inner for instr in block.instructions for inner in instr.blocks])
    return found
