"""The HLO text's lexical rules, in one place: what XLA's lexer and parser
(`xla/hlo/parser/hlo_lexer.cc`, `hlo_parser.cc`) take as a comment, a name,
the head of a module and the head of a computation. Everything in the chain
that reads HLO text without XLA (the checks before XLA's parse, the hints
after its refusal, the folder walk that decides which files are modules)
takes its rules from here, and the differential tests against XLA's parser
(tests/reading/) hold them to XLA's verdicts.

Pure Python, no jaxlib.
"""

from __future__ import annotations

import re

# Comments XLA's parser skips before a module: `// …` lines, `/* … */` blocks.
_COMMENTS = r"(?:\s*//[^\n]*(?:\n|$)|\s*/\*(?:[^*]|\*(?!/))*\*/)*"
_HEADER = re.compile(_COMMENTS + r"\s*HloModule\s+([^\s,]+)")
# The start of a module with no `HloModule` line (as XLA's unit tests write
# them): comments, then a computation's head.
_COMPUTATION_FIRST = re.compile(_COMMENTS + r"\s*(?:ENTRY\b|%?[A-Za-z_][\w.\-]*\s*(?:\([^\n]*\)\s*->[^\n]*)?\{)")
# Comments to the end of the text, the last maybe unclosed: the head of a module whose comments run past it.
_COMMENTS_ONLY = re.compile(_COMMENTS + r"\s*(?:/\*(?:[^*]|\*(?!/))*)?/?\Z")


def hlo_module_name(text: str) -> str | None:
    """The name after `HloModule` if `text` starts with that line (after
    comments, as XLA's parser reads it), else None."""
    header = _HEADER.match(text)
    return header.group(1) if header else None


def looks_like_hlo(text: str) -> bool:
    """Whether `text` starts as an HLO module does, after any comments
    (XLA's parser skips them, however long): its `HloModule` line, or a
    computation's head (`ENTRY …`, `%name (…) -> … {`); or it is comments
    to its end, as the head of a module whose comments run past it is
    (XLA's parser judges the whole). XLA's reports beside the dumps (buffer
    assignment, memory usage) do not."""
    return (_HEADER.match(text) is not None or _COMPUTATION_FIRST.match(text) is not None
            or (bool(text.strip()) and _COMMENTS_ONLY.match(text) is not None))


_BLANK = re.compile(r"\s*")


def after_comments(text: str) -> str:
    """`text` from where XLA's parser starts reading: past blanks, `//` lines
    and `/* */` blocks, however long (a module may follow a long comment)."""
    at = 0
    while True:
        at = _BLANK.match(text, at).end()
        if text.startswith("//", at):
            end = text.find("\n", at)
            at = len(text) if end < 0 else end + 1
        elif text.startswith("/*", at) and text.find("*/", at + 2) >= 0:
            at = text.find("*/", at + 2) + 2
        else:
            return text[at:]

