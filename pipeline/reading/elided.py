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
(`pipeline.reading.names`); one written inline as another instruction's operand
(`add(x, f32[64] constant({...}))`) is the constant XLA made for that
operand, named as XLA names it (`constant.anon`). A module given as a
proto has its real literals: nothing is elided there.

    elided_constants(parsed)   # (("main", "W"), ...): (computation, name) in text order
"""

from __future__ import annotations

import re

from passes.hlo.proto import local_id
from pipeline.reading.lexical import (COMPUTATION_HEAD_LINE, ELIDED_LITERAL, SKIPPED, after_comma, definition,
                                      opcode_after)

_DOTS = re.compile(ELIDED_LITERAL)
_SKIPPED = re.compile(SKIPPED, re.S)
_DEFINITION = re.compile(rf"[ \t]*{definition()}")
_INLINE = re.compile(r"\bconstant\s*\(")
_HEAD = re.compile(COMPUTATION_HEAD_LINE, re.M)


def elided_constants(parsed) -> tuple[tuple[str, str], ...]:
    """(computation, name) of each constant of `parsed` (a `passes.hlo.Parsed`)
    whose literal its text writes as `{...}`, in the order of the text.
    The work is in the `{...}`s: a text without one costs one search."""
    text = parsed.text
    if text is None:  # a proto: its literals are real
        return ()
    places = _Places(parsed)
    found = []
    for m in _DOTS.finditer(text):
        if _skipped(text, m.start()):
            continue
        definition = _definition_before(text, m.start())
        computation, xla_name = places.of(*definition[:2]) if definition is not None else (None, None)
        if computation is None:  # never passed over: said by its line
            line = text.count("\n", 0, m.start()) + 1
            found.append((_computation_at(text, m.start()), f"the constant on line {line}"))
            continue
        name, _, after = definition
        if opcode_after(text, after) == "constant":
            found.append((computation, name))
            continue
        # An inline operand: the k-th constant XLA made for this instruction's operands.
        segment = _SKIPPED.sub(lambda s: " " * len(s.group(0)), text[after:m.start()])
        k = len(_INLINE.findall(segment)) - 1
        made = _inline_constants(parsed, computation, xla_name)
        found.append((computation, made[k] if 0 <= k < len(made) else f"a constant in %{name}"))
    return tuple(dict.fromkeys(found))


def _skipped(text: str, pos: int) -> bool:
    """Whether `pos` is inside a comment or a string: one on its own line
    (strings and `//` comments end with their line), or a block comment
    opened on a line before and not closed since."""
    line_start, line_end = _line(text, pos)
    opened = text.rfind("/*", 0, line_start)
    if opened >= 0 and text.find("*/", opened + 2, pos) < 0:
        o_start, o_end = _line(text, opened)  # a `/*` in a string or after `//` opens nothing
        if not any(m.start() <= opened < m.end() for m in _SKIPPED.finditer(text, o_start, o_end)
                   if not m.group(0).startswith("/*")):
            return True
    return any(m.start() <= pos < m.end() for m in _SKIPPED.finditer(text, line_start, line_end))


def _line(text: str, pos: int) -> tuple[int, int]:
    """Where the line that holds `pos` starts and ends (before its newline)."""
    end = text.find("\n", pos)
    return text.rfind("\n", 0, pos) + 1, len(text) if end < 0 else end


def _definition_before(text: str, pos: int) -> tuple[str, int, int] | None:
    """(name, position of the name, position after its `=`) of the definition
    that holds `pos`: the nearest line at or before it that starts one."""
    line_end = pos
    while line_end > 0:
        line_start = text.rfind("\n", 0, line_end) + 1
        m = _DEFINITION.match(text, line_start)
        if m and not after_comma(text, m.start("name")):
            return m.group("name"), m.start("name"), m.end()
        if _HEAD.match(text, line_start):
            return None  # a computation's head: no instruction holds it
        line_end = line_start - 1
    return None


def _computation_at(text: str, pos: int) -> str:
    """The computation whose head is the last before `pos` ("" if none)."""
    heads = [m.group("computation") for m in _HEAD.finditer(text, 0, pos)]
    return heads[-1] if heads else ""


class _Places:
    """Which computation a definition is in, and XLA's name for it, from XLA's
    parse: each name once where XLA renamed nothing, else the names' table
    of positions."""

    def __init__(self, parsed):
        self.parsed = parsed
        self.by_name: dict[str, str] | None = None
        self.by_position: dict[int, tuple[str, str]] | None = None

    def of(self, name: str, name_at: int) -> tuple[str | None, str | None]:
        names = self.parsed.names
        if names.same:
            if self.by_name is None:
                self.by_name = {i.name: c.name for c in self.parsed.proto.computations for i in c.instructions}
            return self.by_name.get(name), name
        if self.by_position is None:
            self.by_position = {at: key for key, at in names.positions.items()}
        found = self.by_position.get(name_at)
        if found is not None:
            return found
        # A computation whose definitions could not be aligned with XLA's: XLA's names are its names.
        for c in self.parsed.proto.computations:
            if c.name in names.unaligned and any(i.name == name for i in c.instructions):
                return c.name, name
        return None, None


def _inline_constants(parsed, computation: str, xla_name: str | None) -> list[str]:
    """The names of the constants XLA made for the operands written inline in
    the instruction `xla_name` of `computation`, in the order it made them."""
    for comp in parsed.proto.computations:
        if comp.name != computation:
            continue
        by_id = {i.id: i for i in comp.instructions}
        for instr in comp.instructions:
            if instr.name == xla_name:
                operands = sorted({o for o in instr.operand_ids if by_id[o].opcode == "constant"},
                                  key=local_id)
                # XLA's own: no definition of that name in the text
                return [by_id[o].name for o in operands if parsed.names.line(comp.name, by_id[o].name) is None]
    return []
