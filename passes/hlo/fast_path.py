"""The reader's fast path: one instruction on one line, as XLA prints it.

The general reader scans character by character, which costs tens of
microseconds an instruction in Python. Almost every line XLA prints has one
simple shape, so a few compiled regular expressions read it whole; a line
they do not fully account for (a `%t#i` operand, a comment, a tuple-shaped
operand, a deeply nested attribute, an instruction split over lines) goes to
the general reader, which also owns every error message. The two paths build
the same instructions; the round-trip tests run both.
"""

from __future__ import annotations

import re

from passes.hlo.ir import Shape

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\-]*"
_ARRAY_SHAPE = r"[a-z][a-z0-9]*\[[^\]\n]*\](?:\{[^{}\n]*\})?"
# An array shape, or a tuple of array shapes / one level of nested tuples.
_SHAPE = rf"(?:{_ARRAY_SHAPE}|\((?:[^()\n]|\([^()\n]*\))*\))"

LINE = re.compile(
    rf"[ \t]*(?P<root>ROOT[ \t]+)?%?(?P<name>{_NAME})[ \t]*=[ \t]*(?P<shape>{_SHAPE})[ \t]+"
    rf"(?P<opcode>[a-z][a-z0-9\-]*)\((?P<operands>[^()\n]*)\)(?P<attributes>[^\n]*)")

_OPERAND = rf"[ \t]*(?:{_ARRAY_SHAPE}[ \t]+)?%?({_NAME})[ \t]*"
OPERANDS = re.compile(rf"(?:{_OPERAND}(?:,{_OPERAND})*)?")
OPERAND = re.compile(_OPERAND)

_STRING = r'"(?:[^"\\\n]|\\.)*"'
_PLAIN = r'[^{}"\n]'
_BRACES1 = rf"\{{(?:{_PLAIN}|{_STRING})*\}}"
_BRACES2 = rf"\{{(?:{_PLAIN}|{_STRING}|{_BRACES1})*\}}"
_BRACES3 = rf"\{{(?:{_PLAIN}|{_STRING}|{_BRACES2})*\}}"
_BARE = r"(?:\[[^\]\n]*\]|[^,\s\[\]{}\"])+"
ATTRIBUTE = re.compile(
    rf"[ \t]*,[ \t]*(?P<key>[A-Za-z_][A-Za-z0-9_\-]*)=(?P<value>{_STRING}|{_BRACES3}|{_BARE})")
_TRAILING = re.compile(r"[ \t\r]*")

_shapes: dict[str, Shape] = {}


def shape_of(text: str, parse_tuple) -> Shape:
    """Shapes repeat across a module: each distinct text is read once."""
    shape = _shapes.get(text)
    if shape is None:
        shape = parse_tuple(text) if text.startswith("(") else Shape(text)
        if len(_shapes) < 100_000:
            _shapes[text] = shape
    return shape


def split_attributes(text: str) -> list[tuple[str, str, int]] | None:
    """[(key, value, offset of value)] if the regexes account for all of
    `text`, else None (the general reader takes the line)."""
    found, pos, end = [], 0, len(text)
    while pos < end:
        m = ATTRIBUTE.match(text, pos)
        if not m:
            tail = _TRAILING.match(text, pos)
            return found if tail.end() == end else None
        found.append((m.group("key"), m.group("value"), m.start("value")))
        pos = m.end()
    return found
