"""Read HLO text, as XLA prints it, into the IR of `ir.py`.

The reader interprets only what the passes rewire (names, shapes, opcodes,
operands, control predecessors, called computations) and keeps every other
attribute as the exact text that was read, so writing a module back changes
nothing XLA would notice. XLA's grammar is free-form (no line structure), so
this is a scanner over the whole text, not a line splitter.

The tuple-element operand `%t#i`, printed by newer XLA in scheduled modules,
is normalised into an explicit `get-tuple-element` so that jaxlib 0.10.2's
parser accepts the result.
"""

from __future__ import annotations

import bisect
import contextlib
import re
import sys

from typing import Callable

from passes.errors import ChainError
from passes.hlo import fast_path
from passes.hlo.shapes import infer_shapes, xla_shapes
from passes.hlo.ir import (
    BLOCK_COMMENT, COMPUTATION_ATTRIBUTES, PAYLOAD_OPCODES, Computation, Instruction, Module, Shape, no_cyclic_gc)

_NAME = re.compile(r"%?([A-Za-z0-9_][A-Za-z0-9_.\-]*)")
_OPCODE = re.compile(r"[a-z][a-z0-9\-]*")
_ATTRIBUTE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_DTYPE = re.compile(r"[a-z][a-z0-9]*(?=\[)")
# The device-axes group of XLA 0.12's mesh replica groups, `replica_groups=mesh['d'=4] {'d'}`:
# the one attribute value with a space in it.
_MESH_AXES = re.compile(r"(?<=\])[ \t]+(?=\{)")
_INDEX = re.compile(r"#([0-9]+)")
_INTEGER = re.compile(r"-?[0-9]+")
_BLANKS = re.compile(r"[ \t\r\n]*")
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
# `ENTRY %name (` or `%name {`: a computation header, never an instruction.
_GAP = r"(?:\s|/\*.*?\*/)"  # what XLA reads as whitespace between tokens (a // comment ends a line)
_COMPUTATION_HEADER = re.compile(rf"(?:ENTRY{_GAP}+)?%?[A-Za-z0-9_][A-Za-z0-9_.\-]*{_GAP}*[({{]", re.S)
_STACK_FRAME_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_CLOSERS = {"(": ")", "{": "}", "[": "]"}
# `{ x = ...`: a computation body written as an attribute's value, not a list of names.
_INLINE_BODY = re.compile(rf"\{{{_GAP}*(?:ROOT{_GAP}+)?%?[A-Za-z0-9_][A-Za-z0-9_.\-]*{_GAP}*=", re.S)


class HloSyntaxError(ChainError):
    """Bad HLO text: `line:column: message`, with the source name when known."""

    def __init__(self, message: str, line: int, column: int, source: str | None = None):
        super().__init__(message, f"{source}:{line}:{column}" if source else f"{line}:{column}")
        self.line, self.column, self.source = line, column, source


def read_module(text: str | bytes, source: str | None = None, *,
                shapes_of: Callable[[str], dict[str, str]] | None = None) -> Module:
    """Parse one HLO module, in any form XLA's parser reads. `source` names the
    input in error messages. Where the text leaves shapes for XLA to infer,
    XLA's parser infers them: `shapes_of(text)` gives XLA's shape of every
    instruction of a module by name, and raises XlaRejected where XLA refuses
    it (default: `passes.hlo.shapes.xla_shapes`, in this process)."""
    if isinstance(text, bytes):
        text = _decode(text, source)
    with no_cyclic_gc():
        try:
            reader = _Reader(text, source)
            module = reader.module()
        except RecursionError:  # nested deeper than Python's default allows: once more, with room
            with _deeper(_DEEP_LIMIT):
                reader = _Reader(text, source)
                module = reader.module()
        if reader.shapeless:
            infer_shapes(module, reader.shapeless, text, shapes_of or (lambda t: xla_shapes(t, source)),
                         read_shape)
            for check in reader.deferred:
                check()
        return module


@contextlib.contextmanager
def _deeper(limit: int):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


# XLA reads operands written inline and tuple shapes nested hundreds deep,
# which take the reader a few frames a level: past Python's default limit
# the module is read again with room for this many frames.
_DEEP_LIMIT = 60_000


def read_shape(text: str) -> Shape:
    """The shape at the start of `text` (`f32[4]{0}`, `(s32[], f32[4])`, …)."""
    return _Reader(text, None).shape()


def _decode(data: bytes, source: str | None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        head = data[: err.start]
        line = head.count(b"\n") + 1
        # Columns count characters, as everywhere else; the line's prefix is valid UTF-8.
        column = len(head[head.rfind(b"\n") + 1:].decode("utf-8")) + 1
        raise HloSyntaxError(
            f"input is not UTF-8 text (byte 0x{data[err.start]:02x}); "
            "HLO modules are text: pass the .txt that XLA dumped, not a binary proto",
            line, column, source) from None


class _Reader:
    def __init__(self, text: str, source: str | None):
        self.text, self.source, self.pos = text, source, 0
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._computations: set[str] = set()  # names defined so far, in order
        self._gtes: dict[tuple[Instruction, int], Instruction] = {}  # made for `%t#i`
        self._words: set[str] | None = None  # every name-like word, made on demand
        self._anonymous: set[str] = set()  # names given to nested instructions
        self._inline_computations: list[Computation] = []  # read inside the current computation
        self.shapeless: list[Instruction] = []  # written without a shape: XLA infers it
        self.deferred: list = []  # checks that need a shape XLA has not inferred yet

    # -- positions and errors ------------------------------------------------

    def where(self, pos: int | None = None) -> tuple[int, int]:
        pos = self.pos if pos is None else pos
        line = bisect.bisect_right(self._line_starts, pos)
        return line, pos - self._line_starts[line - 1] + 1

    def error(self, message: str, pos: int | None = None) -> HloSyntaxError:
        return HloSyntaxError(message, *self.where(pos), self.source)

    def describe_here(self) -> str:
        if self.pos >= len(self.text):
            return "end of input"
        return repr(self.text[self.pos:self.pos + 20].split("\n")[0])

    # -- lexical helpers -----------------------------------------------------

    def skip_space(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.error("unterminated /* comment")
                self.pos = end + 2
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            else:
                return

    def peek(self, s: str) -> bool:
        self.skip_space()
        return self.text.startswith(s, self.pos)

    def accept(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, what: str) -> None:
        if not self.accept(s):
            raise self.error(f"expected '{s}' {what}, found {self.describe_here()}")

    def match(self, pattern: re.Pattern) -> re.Match | None:
        self.skip_space()
        m = pattern.match(self.text, self.pos)
        if m:
            self.pos = m.end()
        return m

    def name(self, what: str) -> str:
        m = self.match(_NAME)
        if not m:
            raise self.error(f"expected {what}, found {self.describe_here()}")
        return m.group(1)

    def balanced(self, stop_at_space: bool) -> str:
        """Text up to a top-level ',' (or space, or unmatched closer),
        respecting brackets, quotes and escapes: one attribute value."""
        self.skip_space()
        text, start, depth, stack = self.text, self.pos, 0, []
        # XLA reads a comment as whitespace, in a value too: its brackets do not
        # count. A /* comment */ stays in the value as written; a // comment,
        # which would swallow the rest of the line the writer puts it on, goes.
        comments: list[tuple[int, int]] = []
        i, n = self.pos, len(self.text)
        while i < n:
            c = text[i]
            if c == "/" and text.startswith(("/*", "//"), i):
                end = text.find("*/", i + 2) + 2 if text[i + 1] == "*" else text.find("\n", i)
                if end < 2 and text[i + 1] == "*":
                    raise self.error("unterminated /* comment", i)
                end = n if end < 0 else end
                if text[i + 1] == "/":
                    comments.append((i, end))
                i = end
                continue
            if c == '"':
                i += 1
                while i < n and text[i] != '"':
                    i += 2 if text[i] == "\\" else 1
                if i >= n:
                    raise self.error("unterminated string", start)
            elif c in _CLOSERS:
                stack.append((_CLOSERS[c], i))
                depth += 1
            elif c in ")}]":
                if not stack:
                    break
                want, opened = stack.pop()
                if c != want:
                    raise self.error(f"'{c}' does not close the '{text[opened]}' opened at "
                                     "%d:%d" % self.where(opened), i)
                depth -= 1
            elif depth == 0 and (c == "," or (stop_at_space and c in " \t\r\n")):
                if c in " \t" and _MESH_AXES.match(text, i):
                    i = _MESH_AXES.match(text, i).end()  # `mesh['d'=4] {'d'}` (XLA 0.12): one value
                    continue
                break
            i += 1
        if stack:
            raise self.error(f"'{text[stack[-1][1]]}' is never closed", stack[-1][1])
        self.pos = i
        if not comments:
            return text[start:i]
        # Each // comment becomes a space: a value written back on one line stays one value.
        value, at = [], start
        for begin, end in comments:
            value += [text[at:begin], " "]
            at = end
        value.append(text[at:i])
        return "".join(value).rstrip()

    def group(self, opener: str, what: str) -> str:
        """The text between `opener` and its matching closer (exclusive)."""
        self.skip_space()
        start = self.pos
        self.expect(opener, what)
        inner = self.balanced(stop_at_space=False)
        while self.peek(","):  # top-level commas inside the group
            self.pos += 1
            inner += "," + self.balanced(stop_at_space=False)
        if not self.accept(_CLOSERS[opener]):
            raise self.error(f"'{opener}' {what} is never closed", start)
        return inner.strip()

    # -- shapes --------------------------------------------------------------

    def shape(self) -> Shape:
        self.skip_space()
        start = self.pos
        if self.accept("("):
            elements = []
            if not self.peek(")"):
                elements.append(self.shape())
                while self.accept(","):
                    elements.append(self.shape())
            self.expect(")", "to close the tuple shape")
            return Shape(self.text[start:self.pos], tuple(elements))
        if not self.match(_DTYPE):
            raise self.error(f"expected a shape such as f32[8]{{0}}, found {self.describe_here()}")
        self.group("[", "of the shape's dimensions")
        if self.text.startswith("{", self.pos):  # layout follows without a space
            self.group("{", "of the layout")
        return Shape(self.text[start:self.pos])

    # -- module --------------------------------------------------------------

    def module(self) -> Module:
        if not self.text.strip():
            raise self.error("input is empty; expected an HLO module")
        if self.text.startswith("\ufeff", self.pos):
            raise self.error("the input starts with a byte-order mark (U+FEFF), which XLA's parser "
                             "refuses too; save it as UTF-8 without one")
        if self.accept("HloModule"):
            module = Module(self.name("a module name"))
            while self.accept(","):
                module.attributes.append(self.attribute())
            module.stack_frame_text = self.stack_frames()
        elif _COMPUTATION_HEADER.match(self.text, self.pos):
            module = Module(None)  # XLA's rule: named after the entry computation, below
        else:
            raise self.error("expected 'HloModule' or a computation at the start of the module, "
                             f"found {self.describe_here()}")
        self.skip_space()
        while self.pos < len(self.text):
            comp = self.computation(module)
            module.computations += self._inline_computations  # defined inside comp's attributes
            self._inline_computations = []
            module.computations.append(comp)
            self.skip_space()
        if not module.computations:
            raise self.error("the module has no computations")
        if module.name is None:
            module.name = f"module_{module.entry.name}"
        return module

    def attribute(self) -> tuple[str, str]:
        m = self.match(_ATTRIBUTE_KEY)
        if not m:
            raise self.error(f"expected an attribute name, found {self.describe_here()}")
        self.expect("=", f"after attribute '{m.group(0)}'")
        return m.group(0), self.balanced(stop_at_space=True)

    def stack_frames(self) -> str:
        """The stack-frame sections, kept verbatim (XLA re-derives ids)."""
        self.skip_space()
        start = self.pos
        while any(self.text.startswith(s, self.pos) for s in _STACK_FRAME_SECTIONS):
            self.pos = self.text.find("\n", self.pos) + 1 or len(self.text)
            # Section entries are lines that start with their numeric id.
            while re.match(r"[ \t]*[0-9]", self.text[self.pos:self.pos + 32]):
                self.pos = self.text.find("\n", self.pos) + 1 or len(self.text)
            self.skip_space()
        return self.text[start:self.pos].strip()

    def check_callees(self, instr: Instruction, key: str, value: str, value_pos: int) -> None:
        """Every computation named by `key=value` must be defined above (XLA's rule)."""
        body, base = BLOCK_COMMENT.sub(lambda m: " " * len(m.group(0)), value), value_pos  # positions kept
        if body.startswith("{") and body.endswith("}"):
            body, base = body[1:-1], value_pos + 1
        for item in re.finditer(r"[^,]+", body):
            name = item.group(0).strip()
            if not name:
                continue
            pos = base + item.start() + len(item.group(0)) - len(item.group(0).lstrip())
            m = _NAME.fullmatch(name)
            if not m:
                raise self.error(
                    f"{key}= of %{instr.name} must name computations (like {key}=%comp), found "
                    f"{name.splitlines()[0][:40]!r}; computation bodies written inline (XLA's "
                    "canonical print form) are not supported", pos)
            callee = m.group(1)
            if callee in self._computations:
                continue
            later = re.compile(r"^[ \t]*(?:ENTRY[ \t]+)?%?" + re.escape(callee) + r"[ \t]*[({]", re.M)
            if later.search(self.text, self.pos):
                raise self.error(f"%{instr.name} calls computation %{callee} before it is defined; "
                                 "XLA requires a called computation to be defined above its caller", pos)
            raise self.error(f"%{instr.name} calls computation %{callee}, which the module does not define", pos)

    def check_tuple_index(self, instr: Instruction, value: str, pos: int) -> None:
        """A get-tuple-element index outside its operand's tuple: XLA's parser
        crashes the process on it (a segfault), its importer aborts. Refused
        here, as for `%t#i`; an index that is not a number is XLA's to report."""
        if not instr.operands or not _INTEGER.fullmatch(value):
            return
        operand, index = instr.operands[0], int(value)
        elements = _elements(operand)
        if elements is _UNKNOWN:  # XLA infers the shape after reading
            self.deferred.append(lambda: self.check_tuple_index(instr, value, pos))
            return
        if elements is None:
            raise self.error(f"%{instr.name} reads element {index} of %{operand.name}, which is not a tuple "
                             f"(its shape is {operand.shape.text})", pos)
        if not 0 <= index < len(elements):
            raise self.error(f"%{instr.name} reads element {index} of %{operand.name}, a tuple of "
                             f"{len(elements)} element(s), indices 0 to {len(elements) - 1}", pos)

    # -- computations --------------------------------------------------------

    def computation(self, module: Module) -> Computation:
        self.skip_space()
        start_line = self.where()[0]
        is_entry = self.accept("ENTRY")
        self.skip_space()
        name_pos = self.pos
        name = self.name("a computation name (or 'ENTRY')")
        if name in self._computations:
            raise self.error(f"duplicate computation name %{name}", name_pos)
        signature = None
        if self.peek("("):
            params = self.group("(", "of the parameter list")
            self.expect("->", "between the parameters and the result shape")
            signature = f"({params}) -> {self.shape().text}"
        comp = self.body(name, is_entry, signature, start_line)
        while self.peek(",") and not self.text.startswith(",", self.pos + 1):
            save = self.pos
            self.pos += 1
            if not self.match(_ATTRIBUTE_KEY) or not self.peek("="):
                self.pos = save
                break
            self.pos = save + 1
            comp.trailing_attributes.append(self.attribute())
        return comp

    def body(self, name: str, is_entry: bool, signature: str | None, start_line: int) -> Computation:
        """`{ instructions }`: a computation's body, at the top level or written
        inline as an attribute's value (`to_apply={ ... }`)."""
        self.skip_space()
        open_pos = self.pos
        self.expect("{", f"to open computation %{name}")
        scope: dict[str, Instruction] = {}
        instructions: list[Instruction] = []
        root = None
        text, end = self.text, len(self.text)
        while True:
            # Plain whitespace is skipped here, comments by skip_space below.
            self.pos = pos = _BLANKS.match(text, self.pos).end()
            if pos < end and text[pos] == "}":
                self.pos += 1
                break
            fast = self.fast_instruction(scope, instructions)
            if fast is None:
                self.skip_space()
                if self.pos >= end:
                    raise self.error(f"computation %{name} is not terminated: expected '}}' "
                                     "before the end of input", open_pos)
                if self.accept("}"):
                    break
            if fast is not None:
                instr, is_root = fast
            else:
                if _COMPUTATION_HEADER.match(self.text, self.pos):
                    raise self.error(f"computation %{name} is not terminated: expected '}}' before the "
                                     f"computation that starts on line {self.where()[0]}", open_pos)
                instr, is_root = self.instruction(scope, instructions)
            if is_root:
                if root is not None:
                    raise self.error(f"computation %{name} has two ROOT instructions "
                                     f"(%{root.name} and %{instr.name})")
                root = instr
        if not instructions:
            raise self.error(f"computation %{name} has no instructions", open_pos)
        comp = Computation(name, instructions, root or instructions[-1], is_entry, signature, line=start_line)
        self._computations.add(name)
        return comp

    def instruction(self, scope: dict[str, Instruction], out: list[Instruction]) -> tuple[Instruction, bool]:
        start = self.pos
        # `ROOT` is a keyword unless it is itself the instruction's name
        # (`ROOT = …`); blanks, comments or nothing before a `%name` may follow it.
        is_root = False
        if self.text.startswith("ROOT", self.pos) and self.text[self.pos + 4:self.pos + 5] in (" ", "\t", "\r", "\n", "/", "%"):
            self.pos += 4
            self.skip_space()
            is_root = _NAME.match(self.text, self.pos) is not None and not self.text.startswith("=", self.pos)
            if not is_root:
                self.pos = start
        self.skip_space()
        name_pos = self.pos
        name = self.name("an instruction name or '}'")
        if name in scope:
            first = scope[name].line
            raise self.error(f"duplicate instruction name %{name} (first defined on line {first})", name_pos)
        self.expect("=", f"after instruction name %{name}")
        shape = self.optional_shape()
        m = self.match(_OPCODE)
        if not m:
            raise self.error(f"expected an opcode for %{name}, found {self.describe_here()}")
        instr = self.new_instruction(name, shape, m.group(0), start)
        self.operands_of(instr, scope, out)
        while self.accept(","):
            key, value = self.attribute()
            value_pos = self.pos - len(value)
            if key == "control-predecessors":
                instr.control_predecessors = self.predecessors(value, scope, name, value_pos)
            else:
                if key in COMPUTATION_ATTRIBUTES:
                    value = self.inline_computation(key, value, value_pos)
                    self.check_callees(instr, key, value, value_pos)
                elif key == "index" and instr.opcode == "get-tuple-element":
                    self.check_tuple_index(instr, value, value_pos)
                instr.attributes.append((key, value))
        scope[name] = instr
        out.append(instr)
        return instr, is_root

    def optional_shape(self) -> Shape | None:
        """The result shape, which XLA lets a writer leave out where it can
        infer it (`t = tuple(a, b)`): None then, filled in after reading."""
        self.skip_space()
        if self.text.startswith("(", self.pos) or _DTYPE.match(self.text, self.pos):
            return self.shape()
        return None

    def new_instruction(self, name: str, shape: Shape | None, opcode: str, start: int) -> Instruction:
        instr = Instruction(name, shape, opcode, line=self.where(start)[0])
        if shape is None:
            self.shapeless.append(instr)
        return instr

    def operands_of(self, instr: Instruction, scope: dict[str, Instruction], out: list[Instruction]) -> None:
        """`(operands)`, or the literal of a constant/parameter."""
        if instr.opcode in PAYLOAD_OPCODES:
            instr.payload = self.group("(", f"of {instr.opcode}")
            return
        self.expect("(", f"after opcode '{instr.opcode}'")
        if self.accept(")"):
            return
        # XLA's parser passes over empty places in the list (`add(p, , p)`,
        # `negate(p,)`), but not a list of nothing but commas.
        while True:
            while self.accept(","):
                pass
            if instr.operands and self.accept(")"):
                return
            instr.operands.append(self.operand(scope, out, instr))
            if not self.peek(","):
                self.expect(")", f"to close the operand list of %{instr.name}")
                return

    def nested(self, opcode: str, shape: Shape | None, start: int, scope, out) -> Instruction:
        """An operand written as an instruction, `add(p0, s32[] constant(2))`:
        it comes before its user, named as XLA names it (`constant.anon`,
        then `constant.anon.1`, ...: no name the text uses). It takes no
        attributes (XLA's grammar) and no other instruction can name it."""
        name = f"{opcode}.anon"
        n = 0
        while name in self._anonymous or name in scope or name in self.words():
            n += 1
            name = f"{opcode}.anon.{n}"
        self._anonymous.add(name)
        instr = self.new_instruction(name, shape, opcode, start)
        self.operands_of(instr, scope, out)
        out.append(instr)
        return instr

    def inline_computation(self, key: str, value: str, value_pos: int) -> str:
        """`to_apply={ x = ... ROOT s = add(x, y) }`: a computation written
        where it is called. It becomes a computation of its own, defined just
        above the caller's and named as XLA names it (`_`, `_.1`, ...); the
        attribute then names it."""
        if not _INLINE_BODY.match(value):
            return value
        name, n = "_", 0
        while name in self._computations or name in self.words():
            n += 1
            name = f"_.{n}"
        resume = self.pos
        self.pos = value_pos
        comp = self.body(name, False, None, self.where(value_pos)[0])
        self.pos = resume
        self._inline_computations.append(comp)
        return "%" + name

    def words(self) -> set[str]:
        """Every name-like word of the text: a name made up here avoids them all."""
        if self._words is None:
            self._words = set(_WORD.findall(self.text))
        return self._words

    def fast_instruction(self, scope: dict[str, Instruction], out: list[Instruction]):
        """The one-line fast path (see fast_path.py); None hands the line to
        `instruction`, which reads anything and reports every error."""
        m = fast_path.LINE.match(self.text, self.pos)
        if m is None:
            return None
        root, name, shape, opcode, operands_text, attributes_text = m.groups()
        if name in scope or (name == "ROOT" and root is None):
            return None
        attributes = fast_path.split_attributes(attributes_text) if attributes_text else ()
        if attributes is None:
            return None
        try:
            read = fast_path.shape_of(shape, self._tuple_shape)
        except HloSyntaxError:  # the general reader owns every error message (file, line, column)
            return None
        instr = Instruction(name, read, opcode, line=bisect.bisect_right(self._line_starts, self.pos))
        if opcode in PAYLOAD_OPCODES:
            instr.payload = operands_text.strip()
        else:
            if not fast_path.OPERANDS.fullmatch(operands_text):
                return None
            for operand_name in fast_path.OPERAND.findall(operands_text):
                operand = scope.get(operand_name)
                if operand is None:
                    return None
                instr.operands.append(operand)
        base = m.start("attributes")
        for key, value, offset in attributes:
            if key == "control-predecessors":
                instr.control_predecessors = self.predecessors(value, scope, name, base + offset)
            else:
                if key in COMPUTATION_ATTRIBUTES:
                    self.check_callees(instr, key, value, base + offset)
                elif key == "index" and opcode == "get-tuple-element":
                    self.check_tuple_index(instr, value, base + offset)
                instr.attributes.append((key, value))
        self.pos = m.end()
        scope[name] = instr
        out.append(instr)
        return instr, root is not None

    @staticmethod
    def _tuple_shape(text: str) -> Shape:
        return read_shape(text)

    def operand(self, scope: dict[str, Instruction], out: list[Instruction], user: Instruction) -> Instruction:
        # A shape before a name is implied by its definition; before an opcode it is the nested instruction's.
        start = self.pos
        shape = self.optional_shape()
        pos = self.pos
        name = self.name(f"an operand of %{user.name}")
        if self.text[pos] != "%" and self.peek("(") and _OPCODE.fullmatch(name):
            return self.nested(name, shape, start, scope, out)
        operand = self.lookup(scope, name, pos, "operand", user.name)
        index = _INDEX.match(self.text, self.pos)
        if index:
            self.pos = index.end()
            operand = self.tuple_element(scope, out, operand, int(index.group(1)), pos)
        return operand

    def tuple_element(self, scope, out, tuple_instr: Instruction, index: int, pos: int) -> Instruction:
        """`%t#i` → an explicit `get-tuple-element`, made once per (t, i)."""
        if _elements(tuple_instr) is _UNKNOWN:  # XLA infers the shape after reading: check the index then
            self.deferred.append(lambda: self.element_shape(tuple_instr, index, pos))
            shape = None
        else:
            shape = self.element_shape(tuple_instr, index, pos)
        existing = self._gtes.get((tuple_instr, index))
        if existing is not None:
            return existing
        # Named as XLA (0.11 and later) names it, `t_1`, then `t_1.1`, ...: clear of
        # every name in the text and of every name the reader made.
        base = name = f"{tuple_instr.name}_{index}"
        n = 0
        while name in self._anonymous or name in scope or name in self.words():
            n += 1
            name = f"{base}.{n}"
        self._anonymous.add(name)
        gte = self.new_instruction(name, shape, "get-tuple-element", pos)
        gte.operands.append(tuple_instr)
        gte.attributes.append(("index", str(index)))
        scope[name] = gte
        self._gtes[(tuple_instr, index)] = gte
        out.append(gte)
        return gte

    def element_shape(self, tuple_instr: Instruction, index: int, pos: int) -> Shape | None:
        elements = _elements(tuple_instr)
        if elements is None:
            raise self.error(f"%{tuple_instr.name}#{index}: %{tuple_instr.name} is not a tuple "
                             f"(its shape is {tuple_instr.shape.text})", pos)
        if index >= len(elements):
            raise self.error(f"%{tuple_instr.name}#{index}: the tuple has only {len(elements)} "
                             f"element(s), indices 0 to {len(elements) - 1}", pos)
        return elements[index] if tuple_instr.shape is not None else None

    def predecessors(self, value: str, scope, successor: str, pos: int) -> list[Instruction]:
        """`{%a, %b}` read at `pos`; errors point at the failing name."""
        if not (value.startswith("{") and value.endswith("}")):
            raise self.error(f"control-predecessors of %{successor} must be a list like {{%a, %b}}", pos)
        preds: dict[Instruction, None] = {}  # ordered, each once: a list's `in` made 10k preds quadratic
        inner = BLOCK_COMMENT.sub(lambda m: " " * len(m.group(0)), value[1:-1])  # whitespace to XLA; positions kept
        for item in re.finditer(r"[^,]+", inner):
            raw = item.group(0)
            if raw.strip():
                name = raw.strip().lstrip("%")
                name_pos = pos + 1 + item.start() + len(raw) - len(raw.lstrip())
                preds[self.lookup(scope, name, name_pos, "control predecessor", successor)] = None
        return list(preds)

    def lookup(self, scope, name: str, pos: int, role: str, user: str) -> Instruction:
        found = scope.get(name)
        if found is None:
            if name == user:
                raise self.error(f"%{user} uses itself as {role}", pos)
            if not _WORD.fullmatch(name):  # a list cut short, say `{%a` then the next line: keep it one line
                raise self.error(f"%{user}: expected a {role} name, found {name[:40]!r} "
                                 "(is a '}' or ',' missing?)", pos)
            # A definition later in this computation (which XLA closes with a '}' at a line start).
            end = self.text.find("\n}", self.pos)
            definition = re.compile(r"^[ \t]*(?:ROOT[ \t]+)?%?" + re.escape(name) + r"[ \t]*=", re.M)
            later = definition.search(self.text, self.pos, len(self.text) if end < 0 else end)
            hint = (" before it is defined; XLA requires operands and control predecessors "
                    "to be defined earlier in the computation") if later else (
                    " which is not defined in this computation")
            raise self.error(f"%{user} uses {role} %{name}{hint}", pos)
        return found


_UNKNOWN = object()


def _elements(instr: Instruction):
    """The elements of an instruction's tuple shape (None: not a tuple). A
    shape XLA has yet to infer is _UNKNOWN, but for a `tuple`, whose arity is
    its operand count: XLA's parser aborts the process on an index past the
    arity, so the common case is checked before XLA sees it."""
    if instr.shape is not None:
        return instr.shape.elements
    if instr.opcode == "tuple":
        return instr.operands
    return _UNKNOWN
