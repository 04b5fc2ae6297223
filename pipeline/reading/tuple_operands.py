"""Rewrite newer XLA's tuple-element operands `%t#i` as explicit instructions.

XLA 0.11 and later print, in scheduled modules, an operand `%t#i` meaning
"element i of the tuple-shaped instruction %t" (`%copy.3 = s32[] copy(%t#0)`).
jaxlib 0.10.2's HLO parser cannot read that form. `explicit_tuple_elements`
rewrites the text so that it can: each distinct `%t#i` of a computation
becomes one `%t_i = get-tuple-element(%t), index=i` (no shape: XLA's parser
infers it), defined on a line of its own just before the first line that uses
it, and every `%t#i` in an operand list becomes `%t_i`. Names are chosen as
XLA 0.11+ names the get-tuple-elements it makes: `t_i`, or `t_i.1`, `t_i.2`,
... when the name is already a word of the text (or made here before).

Only operand lists `opcode(...)` are rewritten: a `#` in a string or a comment
stays as it is, and so does every other character; text without `%t#i`
operands comes back unchanged. One exception to "only whole new lines are
added": where the user is not the first thing on its line (a computation
written on one line), the definition goes just before it on the same line.
"""

from __future__ import annotations

import re

from pipeline.reading.lexical import NAME, NAME_CHAR, SKIPPED, TUPLE_ELEMENT, definition, opcode_at

_WORD = re.compile(NAME)
# What XLA reads as no token at all: the inside of a string and a comment.
_STRING_OR_COMMENT = re.compile(SKIPPED, re.S)
# `[ROOT] %name =`, then a shape (or none) and `opcode(`.
_INSTRUCTION = re.compile(rf"(?<!{NAME_CHAR})(?<!%){definition()}\s*")
# `%t#i`, `t#i`, or `%t#i#j` (an element of an element).
_ELEMENT = re.compile(TUPLE_ELEMENT)
_BRACKETS = re.compile(r"[(){}\[\]]")
_BRACES = re.compile(r"[{}]")


def explicit_tuple_elements(text: str) -> str:
    """`text` with every `%t#i` operand made an explicit get-tuple-element (see the module docstring)."""
    if "#" not in text:
        return text
    code = _STRING_OR_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    taken = set(_WORD.findall(text))  # every word of the text, and every name made here
    made: dict[tuple[int, str, int], str] = {}  # (computation body, tuple, index) -> element name
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), insertions have start == end
    braces: list[int] = []  # the `{`s open at `scanned`: the innermost one is the current body
    scanned = pos = 0
    while (m := _INSTRUCTION.search(code, pos)) is not None:
        pos = m.end()
        opcode = opcode_at(code, m.end())
        if opcode is None:
            continue
        operands_end = _close(code, opcode.end() - 1)
        pos = operands_end
        elements = list(_ELEMENT.finditer(code, opcode.end(), operands_end))
        if not elements:
            continue
        for brace in _BRACES.finditer(code, scanned, m.start()):
            if brace.group() == "{":
                braces.append(brace.start())
            elif braces:
                braces.pop()
        scanned = m.start()
        body = braces[-1] if braces else -1
        for element in elements:
            prefix, name = element.group(1), element.group(2)
            for index in map(int, element.group(3)[1:].split("#")):
                key = (body, name, index)
                if key not in made:
                    made[key] = _fresh(f"{name}_{index}", taken)
                    made_line = f"{prefix}{made[key]} = get-tuple-element({prefix}{name}), index={index}"
                    edits.append(_insertion(text, m.start(), made_line))
                name = made[key]
            edits.append((element.start(), element.end(), prefix + name))
    out, last = [], 0
    for start, end, new in sorted(edits, key=lambda e: e[0]):  # stable: insertions keep their order
        out += [text[last:start], new]
        last = end
    out.append(text[last:])
    return "".join(out)


def _fresh(base: str, taken: set[str]) -> str:
    """`base`, or `base.1`, `base.2`, ...: the first not in `taken` (which then holds it)."""
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}.{n}"
    taken.add(name)
    return name


def _insertion(text: str, user: int, made_line: str) -> tuple[int, int, str]:
    """The definition as a line of its own before the user's line, indented like it;
    just before the user on its line if something else precedes the user there."""
    line = text.rfind("\n", 0, user) + 1
    if text[line:user].strip():
        return user, user, made_line + " "
    indent = re.match(r"[ \t]*", text[line:]).group()
    return line, line, indent + made_line + "\n"


def _close(code: str, i: int) -> int:
    """Past the bracket matching the one at `i` (the end of `code` if it has none)."""
    depth = 0
    for b in _BRACKETS.finditer(code, i):
        depth += 1 if b.group() in "({[" else -1
        if depth == 0:
            return b.end()
    return len(code)
