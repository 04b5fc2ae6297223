"""`pipeline.reading.names`: the names as written, beside XLA's parse.

Oracles: XLA's parser (its names, its renames, the order it made its
instructions in: their local ids) and the text itself, read here by a scan
of its own (`bodies`, `definitions`: brace matching that skips strings and
comments), which shares nothing with names.py. Over every corpus module XLA
reads, each instruction names.py aligns must have its recorded position at
the definition `name =` of its written name, inside its computation's body,
in XLA's order, and XLA's name must be that name or it with a `.N` suffix.
The fast path (`same`: XLA kept every name) must be taken exactly where XLA
renamed and made nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import jaxlib._hlo as xla_hlo
import pytest

from passes.hlo import proto
from pipeline.reading.names import names_of, scan, written_names
from pipeline.xla.native import XlaRejected
from pipeline.xla.isolated import parse
from paths import TESTS

MODULES = sorted([*TESTS.glob("xla_style/*.hlo"), *TESTS.glob("pipeline_dumps/*.hlo"),
                  *TESTS.glob("newer_xla/*.hlo")])


# --------------------------------------------------------------------------
# The text's own structure, read independently of names.py
# --------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_HEAD = re.compile(r"\s*(?:ENTRY\s+)?%?([A-Za-z_][A-Za-z0-9_.\-]*)\s*(?:\(.*\)\s*->.*?)?\s*")
_ARRAY_SHAPE = re.compile(r"[a-z][a-z0-9]*\[[^\]]*\]")
_OPCODE = re.compile(r"([a-z][a-z0-9\-]*)\s*\(")


def _past_string_or_comment(text: str, i: int) -> int | None:
    """Where a string or comment starting at `i` ends (None: none starts there)."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return len(text) if end < 0 else end + 2
    if text[i] == '"':
        j = i + 1
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return None


def _closing(text: str, i: int) -> int:
    """The index of the bracket closing the one opened just before `i`."""
    depth = 1
    while i < len(text):
        past = _past_string_or_comment(text, i)
        if past is not None:
            i = past
            continue
        if text[i] in "{([":
            depth += 1
        elif text[i] in "})]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise AssertionError("a bracket is never closed")


def bodies(text: str) -> dict[str, tuple[int, int]]:
    """Computation name → (start, end) of its body: from after its `{` to
    its `}`. A body's `{` is one outside every bracket whose line, before
    it, is a computation's head (`[ENTRY] [%]name [(signature) -> shape]`)."""
    found, depth, i, line = {}, 0, 0, 0
    while i < len(text):
        past = _past_string_or_comment(text, i)
        if past is not None:
            i = past
            continue
        c = text[i]
        if c == "\n":
            line = i + 1
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "}":
            depth -= 1
        elif c == "{":
            head = _HEAD.fullmatch(text, line, i) if depth == 0 and text[i - 1] != "]" else None
            if head is None:  # a layout `f32[4]{0}`, an attribute value, a stack frame
                depth += 1
            else:
                end = _closing(text, i + 1)
                assert head[1] not in found, head[1]
                found[head[1]] = (i + 1, end)
                i = end
        i += 1
    return found


def _opcode_after(text: str, i: int) -> str | None:
    """The opcode of a definition whose `=` ends before `i`: after an optional
    shape (a tuple in parentheses, or `type[dims]` with a `{layout}`)."""
    while text[i] in " \t\r\n":
        i += 1
    if text[i] == "(":
        i = _closing(text, i + 1) + 1
    else:
        shape = _ARRAY_SHAPE.match(text, i)
        if shape:
            i = shape.end()
            if text[i] == "{":
                i = _closing(text, i + 1) + 1
    while text[i] in " \t\r\n":
        i += 1
    opcode = _OPCODE.match(text, i)
    return opcode[1] if opcode else None


def definitions(text: str, start: int, end: int, nested: bool = False) -> list[tuple[int, str, str]]:
    """(position of the name, name, opcode) of each definition `[ROOT] [%]name
    = [shape] opcode(` in text[start:end] outside brackets (with `nested`, at
    any depth: the bodies of inline computations too) that starts a line (or
    the body) and continues no attribute list (no comma before it)."""
    found, depth, i, line_start, last = [], 0, start, True, ""
    while i < end:
        past = _past_string_or_comment(text, i)
        if past is not None:
            line_start = line_start and not text.startswith("//", i)
            i = past
            continue
        c = text[i]
        if c == "\n":
            line_start, i = True, i + 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if (depth == 0 or nested) and line_start and last != ",":
            k = i
            if text.startswith("ROOT", k) and text[k + 4] in " \t":
                k += 4
                while text[k] in " \t":
                    k += 1
            k += text[k] == "%"
            name = _IDENT.match(text, k)
            if name:
                j = name.end()
                while text[j] in " \t":
                    j += 1
                if text[j] == "=" and text[j + 1] != "=" and (opcode := _opcode_after(text, j + 1)):
                    found.append((k, name[0], opcode))
        line_start = False
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        last = c
        i += 1
    return found


def renamed_from(xla_name: str, written: str) -> bool:
    """Whether XLA's name is a rename of `written`: XLA takes a numeric
    suffix off (`a.1` → `a`) and numbers the name (`a.2`)."""
    stem = re.sub(r"\.[0-9]+$", "", written)
    return re.fullmatch(re.escape(stem) + r"\.[0-9]+", xla_name) is not None and xla_name != written


def _same_opcode(written: str, xla: str) -> bool:
    """XLA's opcode, or a sugared spelling of its async op (`custom-call-start`)."""
    return written == xla or (xla.startswith("async-") and written.endswith(("-start", "-update", "-done")))


def renamed_and_made(text: str, module) -> tuple[bool, bool]:
    """(whether XLA renamed a name as written, whether XLA made an instruction
    the text does not define), from the text's definitions (inline
    computations' too) and XLA's names and opcodes alone: XLA kept a written
    name where the text defines it once and XLA's instruction of that name,
    in that text's computation or an inline one, has the written opcode."""
    spans = bodies(text)
    written = [(comp, name, opcode) for comp, (start, end) in spans.items()
               for _, name, opcode in definitions(text, start, end, nested=True)]
    xla = {i.name: (c.name, i.opcode) for c in module.computations for i in c.instructions}
    names = [name for _, name, _ in written]
    renamed = len(set(names)) != len(names) or any(
        name not in xla or not _same_opcode(opcode, xla[name][1])
        or (xla[name][0] != comp and xla[name][0] in spans)  # in another written computation
        for comp, name, opcode in written)
    return renamed, len(written) != len(xla)


# --------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------


def xla_read(path: Path):
    """(the text XLA reads, XLA's proto) of a corpus module; None if XLA
    refuses it (a module written to be refused). `%t#i` is made explicit
    for jaxlib 0.10.2 (`pipeline.xla.isolated.parse`)."""
    try:
        parsed = parse(path.read_text(), path.name)
    except XlaRejected:
        return None
    return parsed.text, parsed.proto


CASES = [(p, *r) for p in MODULES if (r := xla_read(p)) is not None]
IDS = [f"{p.parent.name}/{p.name}" for p, _, _ in CASES]


def by_local_id(computation) -> list:
    return sorted(computation.instructions, key=lambda i: proto.local_id(i.id))


def test_xla_renames_names_in_the_corpus():
    renamed = 0
    for _, text, module in CASES:
        names = names_of(text, module)
        renamed += sum(names.name(c.name, i.name) != i.name for c in module.computations for i in c.instructions)
    assert len(CASES) > 80 and renamed > 50


def _check_positions(text: str, module, names) -> int:
    """Every aligned instruction's recorded position starts the definition
    of its written name in its computation's body; definitions come in
    XLA's order; XLA's name is the written one or it with `.N`. The number of
    positions checked."""
    spans = bodies(text)
    checked = 0
    for comp in module.computations:
        if comp.name not in spans:
            continue
        start, end = spans[comp.name]
        at = {pos: name for pos, name, _ in definitions(text, start, end)}
        previous = -1
        for instr in by_local_id(comp):
            pos = names.positions.get((comp.name, instr.name))
            if pos is None:
                continue
            written = names.name(comp.name, instr.name)
            assert start <= pos < end, (comp.name, instr.name, "outside its computation's body")
            assert at.get(pos) == written, (comp.name, instr.name, written, text[pos:pos + 40])
            assert pos > previous, (comp.name, instr.name, "out of XLA's order")
            assert instr.name == written or renamed_from(instr.name, written), (comp.name, instr.name, written)
            previous = pos
            checked += 1
        if comp.name not in names.unaligned and not names.same:
            # Every definition of the body was aligned with one of XLA's instructions.
            assert sorted(at) == sorted(p for (c, _), p in names.positions.items() if c == comp.name), comp.name
    return checked


@pytest.mark.parametrize("path,text,module", CASES, ids=IDS)
def test_every_aligned_instruction_is_at_its_definition_as_written(path, text, module):
    names = names_of(text, module)
    assert names.unaligned == []
    spans = bodies(text)
    for comp in module.computations:  # XLA's computations the text does not write are XLA's
        if comp.name not in spans and not names.same:
            assert comp.name in names.made_by_xla, comp.name
    for (comp, xla_name), written in names.names.items():
        assert xla_name == written or renamed_from(xla_name, written), (comp, xla_name, written)
    if names.same:
        assert names.positions == {} and names.names == {}
        # The fast path's lines: each instruction's line is the one that defines it.
        for comp in module.computations:
            if comp.name not in spans:  # an inline computation
                continue
            start, end = spans[comp.name]
            for pos, name, _ in definitions(text, start, end):
                assert names.line(comp.name, name) == text.count("\n", 0, pos) + 1, (comp.name, name)
        # The alignment, which the fast path skips, says the same and places every instruction.
        order = {c.name: [(i.name, i.opcode) for i in by_local_id(c)] for c in module.computations}
        names = written_names(text, order)
        assert names.unaligned == [] and all(names.name(c, x) == x for c, x in names.positions)
    assert _check_positions(text, module, names) > 0


def test_the_corpus_takes_both_paths():
    same = sum(names_of(text, module).same for _, text, module in CASES)
    assert 10 < same < len(CASES) - 10


@pytest.mark.parametrize("path,text,module", CASES, ids=IDS)
def test_the_fast_path_is_never_taken_where_xla_renamed_or_made_an_instruction(path, text, module):
    renamed, made = renamed_and_made(text, module)
    if renamed or made:
        assert not names_of(text, module).same


# Modules where XLA renamed and made nothing, but the fast path is not taken
# (harmless: the alignment gives the same names): an attribute continued on
# its own line, `control-predecessors={send}`, looks like a definition there.
FAST_PATH_MISSED = {"74_recv_done_after_send.hlo"}


@pytest.mark.parametrize("path,text,module", [
    pytest.param(*case, marks=pytest.mark.xfail(strict=True, reason="an attribute line is taken for a definition"))
    if case[0].name in FAST_PATH_MISSED else case for case in CASES], ids=IDS)
def test_the_fast_path_is_taken_where_xla_renamed_and_made_nothing(path, text, module):
    renamed, made = renamed_and_made(text, module)
    if not renamed and not made:
        assert names_of(text, module).same


def _rename(text: str, start: int, end: int, old: str, new: str) -> str:
    """The text with `%old` renamed `%new` in text[start:end] (its definition and its uses)."""
    body = re.sub(rf"%{re.escape(old)}(?![A-Za-z0-9_.\-])", f"%{new}", text[start:end])
    return text[:start] + body + text[end:]


def _collisions():
    """Corpus modules on the fast path (names with `%`), with one definition
    of a computation renamed to a name another computation defines."""
    out = []
    for path, text, module in CASES:
        if not names_of(text, module).same or "%" not in text:
            continue
        spans = bodies(text)
        defined = {c: [name for _, name, _ in definitions(text, *spans[c])] for c in spans}
        for comp, names in defined.items():  # (a computation's name is no instruction's here)
            others = [n for c, ns in defined.items() if c != comp for n in ns if n not in names and n not in spans]
            victims = [n for n in names if f"%{n} " in text[slice(*spans[comp])] and n not in spans]
            if others and victims:
                out.append((f"{path.name}:{comp}:{victims[-1]}->{others[0]}",
                            _rename(text, *spans[comp], victims[-1], others[0]), comp, others[0]))
                break
        if len(out) == 8:
            break
    return out


COLLISIONS = _collisions()


def test_there_are_collisions_to_try():
    assert len(COLLISIONS) == 8


@pytest.mark.parametrize("name,text,computation,new", COLLISIONS, ids=[c[0] for c in COLLISIONS])
def test_a_name_reused_in_another_computation_leaves_the_fast_path(name, text, computation, new):
    module = proto.HloModuleProto.FromString(xla_hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto())
    renamed, made = renamed_and_made(text, module)
    assert renamed and not made  # XLA renamed one of the two
    names = names_of(text, module)
    assert not names.same and names.unaligned == []
    # Both instructions of that name are said as written, wherever XLA renamed one.
    as_written = [(c.name, i.name) for c in module.computations for i in c.instructions
                  if names.name(c.name, i.name) == new]
    assert len(as_written) == 2 and {x for _, x in as_written} != {new}, as_written
    assert computation in {c for c, _ in as_written}
    assert _check_positions(text, module, names) > 0


SAME_TWICE = """HloModule m

%f (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %c = f32[4]{0} call(%x), to_apply=%f
  ROOT %r = f32[4]{0} abs(%c), control-predecessors={%x}
}
"""


@pytest.mark.parametrize("old,new,same", [
    (None, None, True),
    ("c", "n", False),  # the entry's %c takes %f's name: XLA renames it `n.1`
    ("x", "p", False),
    ("r", "q", True),   # a name no other computation uses
])
def test_same_says_whether_xla_renamed(old, new, same):
    spans = bodies(SAME_TWICE)
    text = SAME_TWICE if old is None else _rename(SAME_TWICE, *spans["main"], old, new)
    module = proto.HloModuleProto.FromString(xla_hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto())
    assert renamed_and_made(text, module) == (not same, False)
    names = names_of(text, module)
    assert names.same == same
    main = {names.name("main", i.name) for c in module.computations if c.name == "main" for i in c.instructions}
    assert main == {"x", "c", "r"} - {old} | ({new} if new else set())


# `%t#1`, which XLA 0.12 makes a get-tuple-element named `t_1`, beside the user's
# own `t_1`, which it renames `t_1.1`; a block comment holds a line that looks
# like the definition of `t_1.1`.
COMMENTED = """HloModule m
ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %t = (f32[4]{0}, f32[4]{0}) tuple(%a, %a)
  /* XLA names the element:
  %t_1.1 = f32[4]{0} get-tuple-element(%t), index=1 */
  %x = f32[4]{0} negate(%t#1)
  %t_1 = f32[4]{0} abs(%x), control-predecessors={%x}
  ROOT %r = f32[4]{0} add(%t_1, %t#1), control-predecessors={%t_1}
}
"""


def _xla_renames_the_users_t_1() -> bool:
    parsed = parse(COMMENTED)
    return {i.name: i.opcode for i in parsed.proto.computations[0].instructions}.get("t_1.1") == "abs"


# A bug this test found (reported, not fixed here): the fast path counts lines
# inside a block comment as definitions, so with jaxlib 0.12 it takes XLA's
# rename `t_1.1` for the name as written.
@pytest.mark.xfail(_xla_renames_the_users_t_1(), strict=True,
                   reason="names.py bug: the fast path counts a definition-like line in a comment")
def test_a_definition_in_a_comment_does_not_make_the_fast_path():
    parsed = parse(COMMENTED)
    renamed, _ = renamed_and_made(parsed.text, parsed.proto)
    assert not (parsed.names.same and renamed)


def test_the_independent_scan_sees_what_xla_sees():
    """The test's own scan: computation bodies and definitions, comments,
    strings and attribute lines skipped, inline computations only when asked."""
    spans = bodies(TRICKY)
    assert set(spans) == {"n", "main"}
    assert [d[1] for d in definitions(TRICKY, *spans["n"])] == ["p", "n"]
    assert [d[1:] for d in definitions(TRICKY, *spans["main"])] == [
        ("x", "parameter"), ("p", "exponential"), ("n", "fusion"), ("r", "add")]
    inline = "ENTRY e {\n  p = f32[4] parameter(0)\n  r = f32[] reduce(p, f32[] constant(0)), dimensions={0}, " \
             "to_apply={\n    x = f32[] parameter(0)\n    y = f32[] parameter(1)\n    ROOT s = add(x, y)\n  }\n" \
             "  ROOT n = f32[] negate(r)\n}\n"
    (start, end), = bodies(inline).values()
    assert [d[1] for d in definitions(inline, start, end)] == ["p", "r", "n"]
    assert [d[1] for d in definitions(inline, start, end, nested=True)] == ["p", "r", "x", "y", "s", "n"]
    module = proto.HloModuleProto.FromString(xla_hlo.hlo_module_from_text(TRICKY).as_serialized_hlo_module_proto())
    assert renamed_and_made(TRICKY, module) == (True, True)  # `p` and `n` twice; an inline negate


# --------------------------------------------------------------------------
# Hand-written corners
# --------------------------------------------------------------------------


def xla_order(module) -> dict[str, list[tuple[str, str]]]:
    """Each computation's (name, opcode) pairs in the order XLA made them."""
    decoded = proto.HloModuleProto.FromString(module.as_serialized_hlo_module_proto())
    return {c.name: [(i.name, i.opcode) for i in by_local_id(c)] for c in decoded.computations}


TRICKY = """// braces and definitions where no definition is
HloModule m, frontend_attributes={note="a = f32[] b(c) { }"}

%n (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  /* %q = f32[4] negate(%p) */
  ROOT %n = f32[4]{0} negate(%p), metadata={op_name="x } y = z"}
}

ENTRY %main (x: f32[4]{0}) -> f32[4]{0} {
  %x = f32[4]{0} parameter(0)
  %p = f32[4]{0} exponential(%x),
      metadata={op_name="e"}, control-predecessors={%x}
  %n = f32[4]{0} fusion(f32[4]{0} negate(%p)), kind=kLoop, calls=%n
  ROOT %r = f32[4]{0} add(%n, %p)
}
"""


def test_comments_strings_attributes_and_inline_operands_are_no_definitions():
    module = xla_hlo.hlo_module_from_text(TRICKY)
    assert set(scan(TRICKY)) == {"n", "main"}  # the header's braces and the comments make no computation
    assert [d.name for d in scan(TRICKY)["n"]] == ["p", "n"]
    assert [d.name for d in scan(TRICKY)["main"]] == ["x", "p", "n", "r"]
    names = written_names(TRICKY, xla_order(module))
    assert names.unaligned == []
    renamed = {(c.name, i.name): names.name(c.name, i.name) for c in module.computations() for i in c.instructions()}
    assert renamed[("main", "p.1")] == "p" and renamed[("main", "n.1")] == "n"  # XLA's renames, undone
    inline = [k for k, v in renamed.items() if k[0] == "main" and v == k[1] and k[1] not in ("x", "r")]
    assert [k[1] for k in inline] and all(k[1].startswith("negate") for k in inline)  # XLA's own, kept
    assert names.line("main", "p.1") == TRICKY.splitlines().index("  %p = f32[4]{0} exponential(%x),") + 1
    decoded = proto.HloModuleProto.FromString(module.as_serialized_hlo_module_proto())
    assert _check_positions(TRICKY, decoded, names_of(TRICKY, decoded)) == 6


REUSED_BESIDE_INLINE = """f {
  x = f32[4] parameter(0)
  a.1 = f32[4] copy(x)
  ROOT n = f32[4] negate(x), control-predecessors={a.1}
}
ENTRY main {
  x = f32[4] parameter(0)
  a.1 = f32[4] copy(x)
  n = negate(negate(x)), control-predecessors={a.1}
  ROOT r = f32[4] call(n), to_apply=f
}
"""


def test_a_renamed_definition_is_not_taken_for_an_inline_operand_of_its_opcode():
    """XLA makes the inline `negate(x)` (its own name) right before the renamed
    `n` (`n.1`), both negates: only the renamed one is the written `n`; and
    `a.1` is renamed by its stem, numbered anew (`a.0`)."""
    module = proto.HloModuleProto.FromString(xla_hlo.hlo_module_from_text(REUSED_BESIDE_INLINE).as_serialized_hlo_module_proto())
    main = {i.name: i.opcode for c in module.computations if c.name == "main" for i in c.instructions}
    made = [n for n in main if n.startswith("negate")]
    assert {"x.1", "a.0", "n.1", "r"} < set(main) and len(made) == 1
    names = names_of(REUSED_BESIDE_INLINE, module)
    assert not names.same and names.unaligned == []
    assert [names.name("main", n) for n in ("x.1", "a.0", "n.1", made[0], "r")] == ["x", "a.1", "n", made[0], "r"]
    assert _check_positions(REUSED_BESIDE_INLINE, module, names) == 7


def test_two_instructions_on_one_line_leave_their_computation_to_xla_s_names():
    text = """HloModule m
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)  %b = f32[4]{0} abs(%a)
  ROOT %c = f32[4]{0} add(%a, %b)
}
"""
    module = xla_hlo.hlo_module_from_text(text)
    names = written_names(text, xla_order(module))
    assert names.unaligned == ["main"]
    assert names.name("main", "b") == "b"  # XLA's name, which is here the written one too


def test_instructions_xla_makes_after_the_last_definition_keep_xla_s_names():
    """The alignment runs out of definitions before XLA runs out of instructions."""
    names = written_names("ENTRY %m {\n  %x = f32[] parameter(0)\n}\n",
                          {"m": [("x", "parameter"), ("constant.anon", "constant")]})
    assert names.unaligned == [] and names.name("m", "x") == "x" and names.name("m", "constant.anon") == "constant.anon"
