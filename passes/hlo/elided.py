"""The constants whose values XLA left out of a module's text.

XLA prints a constant of more than a few elements as `constant({...})`
unless asked for every value (`--xla_dump_large_constants`, or
`HloPrintOptions.print_large_constants`), and its parser reads `{...}` back
as a literal of placeholder bits (a counter XLA keeps for the process, so
two parses of one text differ): the module's shapes, names and edges are
all there, its numbers are not. Only the text says which constants those
are: the literal XLA parsed cannot tell placeholder bits from real values.

So each `{...}` literal of the text (comments and strings skipped) is
placed at the instruction whose definition it stands in (`[%]name = shape
constant({...})`), and given that instruction's name as written
(`passes.hlo.names`); one written inline as another instruction's operand
(`add(x, f32[64] constant({...}))`) is the constant XLA made for that
operand, named as XLA names it (`constant.anon`). A module given as a
proto has its real literals: nothing is elided there.

    elided_constants(parsed)   # (("main", "W"), ...): (computation, name) in text order
"""

from __future__ import annotations

import bisect
import re

from passes.hlo.names import _SKIP, _opcode_after, scan

# `{...}` as XLA's lexer reads it: `{`, the `...` token, `}`, blanks between.
_DOTS = re.compile(r"\{\s*\.\.\.\s*\}")
_TOKENS = re.compile(rf"{_SKIP}|(?P<dots>\{{\s*\.\.\.\s*\}})|(?P<constant>\bconstant\s*\()", re.S)


def elided_constants(parsed) -> tuple[tuple[str, str], ...]:
    """(computation, name) of each constant of `parsed` (a `passes.hlo.Parsed`)
    whose literal its text writes as `{...}`, in the order of the text."""
    text = parsed.text
    if text is None or _DOTS.search(text) is None:  # a proto, or a text with every value
        return ()
    definitions = sorted((d[1], computation, d[0]) for computation, found in scan(text).items() for d in found)
    starts = [d[0] for d in definitions]
    inline: dict[int, list[int]] = {}  # definition index → the positions of its inline `constant(`s
    dots: list[tuple[int, int]] = []    # (definition index, position) of each `{...}`
    for m in _TOKENS.finditer(text):
        at = bisect.bisect_right(starts, m.start()) - 1
        if at < 0:
            continue
        if m.group("constant"):
            inline.setdefault(at, []).append(m.start())
        elif m.group("dots"):
            dots.append((at, m.start()))
    found = []
    for at, position in dots:
        start, computation, name = definitions[at]
        if _opcode_after(text, start) == "constant":
            found.append((computation, name))
        else:  # an inline operand: the k-th constant XLA made for this instruction's operands
            written = inline.get(at, [])
            k = sum(1 for p in written if p < position) - 1
            made = _inline_constants(parsed, computation, name)
            found.append((computation, made[k] if 0 <= k < len(made) == len(written) else f"a constant in %{name}"))
    return tuple(dict.fromkeys(found))


def _inline_constants(parsed, computation: str, name: str) -> list[str]:
    """The names of the constants XLA made for the operands written inline in
    the instruction `name` (as written) of `computation`, in the order it made them."""
    for comp in parsed.proto.computations:
        if comp.name != computation:
            continue
        by_id = {i.id: i for i in comp.instructions}
        for instr in comp.instructions:
            if parsed.name(comp.name, instr.name) == name:
                operands = sorted({o for o in instr.operand_ids if by_id[o].opcode == "constant"},
                                  key=lambda o: o & 0xFFFFFFFF)
                # XLA's own: no definition of that name in the text
                return [by_id[o].name for o in operands if parsed.names.line(comp.name, by_id[o].name) is None]
    return []
