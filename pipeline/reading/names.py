"""The names the user wrote, beside XLA's parse of the same text.

XLA's parser renames an instruction whose name is already taken in the
module (`a` in a second computation becomes `a.1`) and names the
instructions it makes itself (an operand written inline, the pieces of an
async start written in its sugared form). Reports and programs speak the
input's names, so they are recovered here without a grammar of HLO: a scan
finds each definition `[ROOT] [%]name = [shape] opcode(` at the top level of
a computation body (comments, strings and attribute values skipped), and
each computation's definitions are aligned, in order, with XLA's
instructions of that computation in the order XLA made them (their local
ids), checked by name and opcode. An instruction XLA made keeps XLA's name.
Where a computation does not align, every instruction of it keeps XLA's
name, and `WrittenNames.unaligned` says which computations those are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from passes.hlo.proto import local_id
from pipeline.reading.lexical import COMPUTATION_HEAD, GAP, HEADER, SKIPPED, after_comma, definition, opcode_after

# Between computations: heads, whose signatures hold brackets (and layouts in braces).
_OUTSIDE = re.compile(rf"{SKIPPED}|(?P<open>[{{(\[])|(?P<close>[}})\]])", re.S)
# Inside a body only braces nest; a definition starts a line.
_INSIDE = re.compile(
    rf"{SKIPPED}|(?P<define>(?:(?<=\n)|(?<=\{{))[ \t]*{definition()})"
    r"|(?P<open>\{)|(?P<close>\})", re.S)
_HEAD = re.compile(rf"{COMPUTATION_HEAD}{GAP}(?:\(.*\)\s*->\s*.*)?$", re.S)
_MODULE_HEADER = re.compile(rf"{HEADER}\n")
_RENAMED = re.compile(r"\.[0-9]+$")


class Definition(tuple):
    """(name, position after its `=`, position of the name) in the text; the
    opcode and the line are read from the text when asked for."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self[0]


@dataclass
class WrittenNames:
    """`name(computation, xla_name)` → the name as written; `line(...)` → its line.
    `same` says XLA kept every name as written (then `names` is empty)."""

    names: dict[tuple[str, str], str] = field(default_factory=dict)
    positions: dict[tuple[str, str], int] = field(default_factory=dict)
    unaligned: list[str] = field(default_factory=list)  # computations whose names are XLA's
    made_by_xla: set[str] = field(default_factory=set)  # computations the text does not define (a sugared start's)
    text: str = ""
    same: bool = False
    xla_names: frozenset[str] | None = None  # every instruction name XLA gave, when the check read them


    def name(self, computation: str, xla_name: str) -> str:
        return self.names.get((computation, xla_name), xla_name)

    def line(self, computation: str, xla_name: str) -> int | None:
        """The line of the instruction's definition in the text (errors name it)."""
        pos = self.positions.get((computation, xla_name))
        if pos is None and self.same:  # each name is defined once: find it
            m = re.search(rf"^[ \t]*{definition(xla_name)}", self.text, re.M)
            pos = m.start() if m else None
        return None if pos is None else self.text.count("\n", 0, pos) + 1


# A line that starts with `[ROOT] [%]name =`: a definition, or (rarely) an
# attribute continued on its own line or a line inside a comment. Matched
# after a newline (the text gets one in front), not with `^` and re.M: a
# pattern that starts with a literal lets re skip to each newline at C
# speed (3.3 ms against 7.4 ms on a 30k-instruction module).
_DEFINITION_LINE = re.compile(rf"\n[ \t]*{definition()}")


def names_of(text: str, module, instruction_lists: list[list] | None = None) -> WrittenNames:
    """The names as written for `module`, XLA's `HloModuleProto` of `text`.
    Where the lines that look like definitions name exactly the instructions
    XLA made, each once, XLA renamed nothing: no alignment is needed (the
    common case, and a C-speed check). Otherwise the definitions are found
    and aligned computation by computation (`written_names`)."""
    lists = instruction_lists if instruction_lists is not None else [c.instructions for c in module.computations]
    unique = frozenset(i.name for instructions in lists for i in instructions)  # XLA's names are unique
    defined = _DEFINITION_LINE.findall("\n" + text)
    # Equal sets of equal sizes: each name defined once, and the names XLA kept.
    if len(defined) == len(unique) and unique == set(defined):
        return WrittenNames(text=text, same=True, xla_names=unique)
    order = {c.name: [(i.name, i.opcode) for i in sorted(c.instructions, key=lambda i: local_id(i.id))]
             for c in module.computations}
    found = written_names(text, order)
    found.xla_names = unique
    return found


def scan(text: str) -> dict[str, list[Definition]]:
    """Computation name → its definitions as written, in order. A definition
    is found where it starts a line (or follows the body's `{`), as XLA and
    people write them; one that shares a line with another instruction
    leaves its computation unaligned (XLA's names)."""
    found: dict[str, list[Definition]] = {}
    pos, head_start, outer = 0, 0, 0  # outer: bracket depth between computations
    while True:
        m = _OUTSIDE.search(text, pos)
        if m is None:
            return found
        pos = m.end()
        if m.group("close"):
            outer = max(outer - 1, 0)
            continue
        if not m.group("open"):
            if outer == 0 and m.group(0).startswith(("//", "/*")):
                head_start = pos  # a comment between computations is no part of the next head
            continue
        if m.group("open") != "{" or outer or text[m.start() - 1:m.start()] == "]":  # `f32[4]{0}`: a layout
            outer += 1
            continue
        head = _HEAD.search(_head_text(text, head_start, m.start()))
        body = found.setdefault(head.group("computation"), []) if head else []
        depth = 1
        while depth:  # the body, up to its closing brace
            t = _INSIDE.search(text, pos)
            if t is None:
                return found
            pos = t.end()
            if t.group("open"):
                depth += 1
            elif t.group("close"):
                depth -= 1
            elif t.group("define") and depth == 1 and not after_comma(text, t.start("name")):
                body.append(Definition((t.group("name"), pos, t.start("name"))))
        head_start = pos


def _head_text(text: str, start: int, end: int) -> str:
    """What stands before a computation's `{`: its own line(s), after the module header."""
    head = text[start:end]
    header = _MODULE_HEADER.match(head)
    if header:
        head = head[header.end():]
    return head.strip()


def written_names(text: str, xla_computations: dict[str, list[tuple[str, str]]]) -> WrittenNames:
    """Align the text's definitions with XLA's instructions: `xla_computations`
    maps each computation to its (name, opcode) pairs in the order XLA made
    them."""
    result = WrittenNames()
    written = scan(text)
    for computation, theirs in xla_computations.items():
        mine = written.get(computation)
        if mine is None:  # a computation XLA made (an async start's wrapped one): its names are XLA's
            result.made_by_xla.add(computation)
            continue
        pairs = _align(mine, theirs, text)
        if pairs is None:
            result.unaligned.append(computation)
            continue
        for definition, xla_name in pairs:
            result.names[(computation, xla_name)] = definition[0]
            result.positions[(computation, xla_name)] = definition[2]
    result.text = text
    return result


def _align(mine: list[Definition], theirs: list[tuple[str, str]], text: str) -> list[tuple[Definition, str]] | None:
    xla_names = {n for n, _ in theirs}
    mine_names = {d[0] for d in mine}
    pairs, i = [], 0
    for xla_name, opcode in theirs:
        d = mine[i] if i < len(mine) else None
        if d is not None and xla_name == d[0]:
            pairs.append((d, xla_name))
            i += 1
            continue
        renamed = (d is not None and xla_name not in mine_names and d[0] not in xla_names
                   and _RENAMED.search(xla_name) is not None
                   and _RENAMED.sub("", xla_name) in (d[0], _RENAMED.sub("", d[0])))
        if renamed and _same_opcode(opcode_after(text, d[1]), opcode):
            pairs.append((d, xla_name))
            i += 1
        elif not _made_by_xla(xla_name, opcode):
            return None  # a definition the scan missed (two on one line): XLA's names for all
    return pairs if i == len(mine) else None


def _made_by_xla(name: str, opcode: str) -> bool:
    """XLA names what it makes after the opcode (`negate.1`, `constant.anon`),
    and the get-tuple-element of a `%t#i` operand after the tuple."""
    return name.startswith(opcode) or opcode == "get-tuple-element"


def _same_opcode(written: str | None, xla: str) -> bool:
    """XLA's opcode, or a sugared spelling of it (`all-reduce-start` for an
    async-start around an all-reduce, `custom-call-start`, …)."""
    if written is None or written == xla:
        return True
    return xla.startswith("async-") and written.endswith(("-start", "-update", "-done"))
