"""The HLO text's lexical rules, in one place: what XLA's lexer and parser
(`xla/hlo/parser/hlo_lexer.cc`, `hlo_parser.cc`) take as a blank, a
comment, a string, a name, the head of a module, the head of a computation
and the start of an instruction. Everything in the chain that reads HLO
text without XLA (the checks before XLA's parse, the scans beside it, the
hints after its refusal, the folder walk that decides which files are
modules) takes its rules from here, and the differential tests against
XLA's parser (tests/reading/test_lexical.py) hold them to XLA's verdicts.

The rules are regular-expression source strings, to be composed and
compiled where they are used; a rule with a named group is used once per
pattern.

Pure Python, no jaxlib.
"""

from __future__ import annotations

import re

# XLA's lexer skips four blanks: space, tab, newline, carriage return. Any
# other (a form feed, a vertical tab, a Unicode space) is an error.
BLANK = r"[ \t\n\r]"
# `// …` up to a newline or a carriage return, either of which ends it.
LINE_COMMENT = r"//[^\n\r]*"
# `/* … */`; one left open is an error.
BLOCK_COMMENT = r"/\*(?:[^*]|\*(?!/))*\*/"
# What XLA's lexer passes over between two tokens: blanks and comments, any
# number, none given back.
GAP = rf"(?:{BLANK}|{LINE_COMMENT}|{BLOCK_COMMENT})*+"
# A string, `"…"` or `'…'`, with backslash escapes: a newline may stand in
# it, but not after a backslash.
STRING = r""""(?:[^"\\]|\\[^\n])*"|'(?:[^'\\]|\\[^\n])*'"""
# Where nothing is a token of the module: comments and strings.
SKIPPED = rf"{LINE_COMMENT}|{BLOCK_COMMENT}|{STRING}"

# A character of a name: `[a-zA-Z0-9_.-]` (ASCII only).
NAME_CHAR = r"[A-Za-z0-9_.\-]"
# A name, after `%` or bare: a letter or `_`, then name characters. A digit,
# `.` or `-` cannot start one (`%1a` is refused), nor can a non-ASCII letter.
NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*"
# The words a bare name cannot be: XLA's keywords, `nan`, and its element
# types (a name after `%` may be any of them; `tuple` and `buffer` are no
# element type's word).
RESERVED_WORDS = (
    "true", "false", "inf", "nan", "HloModule", "ENTRY", "ROOT", "FileLocations", "FileNames", "FunctionNames",
    "StackFrames", "maximal", "replicated", "manual", "last_tile_dim_replicate", "shard_as", "shard_like",
    "unknown", "unreduced",
    "pred", "token", "opaque", "s1", "s2", "s4", "s8", "s16", "s32", "s64", "u1", "u2", "u4", "u8", "u16", "u32",
    "u64", "f16", "f32", "f64", "bf16", "c64", "c128", "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz",
    "f8e5m2fnuz", "f8e4m3fnuz", "f8e3m4", "f4e2m1fn", "f8e8m0fnu")
RESERVED = rf"(?:{'|'.join(RESERVED_WORDS)})(?!{NAME_CHAR})"
# What stands before a name: `%`, or nothing where the name is no reserved word.
SIGIL = rf"(?:%|(?!{RESERVED}))"


def _named(group: str) -> str:
    """A module's or a computation's name, in the group `group`, after `%` or
    bare; a bare one may end in `:` (XLA's lexer reads `name:` as one token)."""
    return rf"(?:(?P<{group}_sigil>%)|(?!{RESERVED}))(?P<{group}>{NAME})(?({group}_sigil)|:?)"


# The `HloModule` line: the keyword, the module's name (`%` before it is
# dropped), the rest of the line.
HEADER = (rf"{GAP}(?P<header>HloModule(?!{NAME_CHAR}){GAP}{_named('module')}"
          rf"(?=[ \t\n\r,]|//|/\*|\Z)[^\n]*)")
# A computation's head up to its signature: `[ENTRY] [%]name`.
COMPUTATION_HEAD = rf"(?:ENTRY(?!{NAME_CHAR}){GAP})?{_named('computation')}"
# A computation's head written on a line of its own, ending in its body's `{`.
COMPUTATION_HEAD_LINE = rf"[ \t]*(?:ENTRY[ \t]+)?{_named('computation')}[ \t]*(?:\([^\n]*)?\{{[ \t]*$"
# An opcode, as XLA writes them: lower case, digits and dashes (`get-tuple-element`).
OPCODE = r"[a-z][a-z0-9\-]*"
# An array's shape before its layout: an element type and its dimensions (`f32[4,?]`).
ARRAY_SHAPE = r"[a-z][a-z0-9]*\[[^\]]*\]"
# `{...}`: a literal XLA's printer left out (the `...` token between braces).
ELIDED_LITERAL = r"\{" + BLANK + r"*\.\.\." + BLANK + r"*\}"
# The operand `%t#i` (`t#i`, `%t#i#j`): element i of the tuple-shaped t, as newer XLA writes it.
TUPLE_ELEMENT = rf"(?<!{NAME_CHAR})(?<!%)(%?)({NAME})((?:#[0-9]+)+)"
# The attribute that lists an instruction's control predecessors: XLA's
# lexer reads `name=` as one token, so nothing stands between name and `=`.
CONTROL_PREDECESSORS = "control-predecessors="


def definition(name: str | None = None) -> str:
    """An instruction's definition up to its `=`, within its line:
    `[ROOT] [%]name =`, the name in the group `name` (any name, or `name`)."""
    named = NAME if name is None else re.escape(name)
    return rf"(?:ROOT[ \t]+)?{SIGIL}(?P<name>{named})[ \t]*=(?!=)"


_HEADER = re.compile(HEADER)
# The start of a module with no `HloModule` line (as XLA's unit tests write
# them): a computation's head and its body's `{`. Without the header, XLA's
# parser reads a signature (on its line) only after `ENTRY`: it takes
# `name (` for the start of an instruction.
_COMPUTATION_FIRST = re.compile(
    rf"{GAP}(?:ENTRY(?!{NAME_CHAR}){GAP}{_named('computation')}{GAP}(?:\([^\n]*\){GAP}->[^\n]*?{GAP})?"
    rf"|{_named('bare')}{GAP})\{{")
# Comments to the end of the text, the last maybe unclosed: the head of a module whose comments run past it.
_COMMENTS_ONLY = re.compile(rf"{GAP}(?:/\*(?:[^*]|\*(?!/))*)?/?\Z")
_GAP = re.compile(GAP)


def hlo_module_name(text: str) -> str | None:
    """The module's name if `text` starts with its `HloModule` line (after
    comments, as XLA's parser reads it), else None."""
    header = _HEADER.match(text)
    return header.group("module") if header else None


def module_header(text: str) -> str | None:
    """The `HloModule` line `text` starts with (after comments), from the keyword to the line's end."""
    header = _HEADER.match(text)
    return header.group("header") if header else None


def starts_as_module(text: str) -> bool:
    """Whether `text` starts, after comments, with a module's `HloModule`
    line or a computation's head (`ENTRY …`, `%name (…) -> … {`)."""
    return _HEADER.match(text) is not None or _COMPUTATION_FIRST.match(text) is not None


def looks_like_hlo(text: str) -> bool:
    """Whether `text` starts as an HLO module does, after any comments
    (XLA's parser skips them, however long): `starts_as_module`; or it is
    comments to its end, as the head of a module whose comments run past it
    is (XLA's parser judges the whole). XLA's reports beside the dumps
    (buffer assignment, memory usage) do not."""
    return starts_as_module(text) or (bool(text.strip()) and _COMMENTS_ONLY.match(text) is not None)


def after_comments(text: str) -> str:
    """`text` from where XLA's parser starts reading: past blanks, `//` lines
    and `/* */` blocks, however long (a module may follow a long comment)."""
    return text[_GAP.match(text).end():]


_BLANKS = re.compile(rf"{BLANK}*")
_OPCODE_AT = re.compile(rf"{BLANK}*({OPCODE}){BLANK}*\(")
_ARRAY_AT = re.compile(rf"{ARRAY_SHAPE}(?:{BLANK}*\{{[^}}]*\}})?")  # with its layout, if written


def opcode_at(text: str, pos: int) -> re.Match | None:
    """After an instruction's `=` at `pos`: its opcode and `(` (the opcode in
    group 1), past the shape if one is written (an array with its layout,
    or a tuple); None where no opcode follows."""
    found = _OPCODE_AT.match(text, pos)
    if found:
        return found
    i = _BLANKS.match(text, pos).end()
    if text.startswith("(", i):  # a tuple shape: its parentheses balance
        depth = 0
        while i < len(text):
            depth += text[i] == "("
            depth -= text[i] == ")"
            i += 1
            if depth == 0:
                break
    else:
        array = _ARRAY_AT.match(text, i)
        if array is None:
            return None
        i = array.end()
    return _OPCODE_AT.match(text, i)


def opcode_after(text: str, pos: int) -> str | None:
    """The opcode after an instruction's `=` at `pos` (`opcode_at`), or None."""
    found = opcode_at(text, pos)
    return found.group(1) if found else None


def after_comma(text: str, pos: int) -> bool:
    """Whether `key=` at `pos` follows a comma (blanks and block comments
    between): an attribute of the instruction before, not a definition."""
    i = pos - 1
    while i >= 0:
        if text[i] in " \t\n\r":
            i -= 1
        elif text[i] == "/" and i > 0 and text[i - 1] == "*":  # the end of a /* comment */
            i = text.rfind("/*", 0, i - 1) - 1
        else:
            return text[i] == ","
    return False
