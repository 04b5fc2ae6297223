"""Which constants of a module XLA's dump elided (`constant({...})`), as the
report names them: from the text as XLA reads it, at the instruction the
`{...}` stands in, with the name as written (XLA renames a name reused
across computations) or, for a constant written inline as an operand, the
name XLA gives it. `{...}` in a comment or a string is no literal. A proto
has its real literals: nothing is elided there.

The oracle for "elided": XLA's own printer, which writes `{...}` for the
constants it leaves out (its default print) and every value with
`print_large_constants`.
"""

from __future__ import annotations

import re

import jaxlib._hlo as xla_hlo
import pytest

import pipeline
from pipeline.reading.elided import elided_constants
from pipeline.reading.parsed import Parsed
from pipeline.xla import native

DIALECTS = ["stablehlo", "mhlo"]
SIXTEEN = "{" + ", ".join(str(i) for i in range(16)) + "}"
# Names XLA accepts: `w` in two computations (XLA calls the second `w.1`), `%w.x-1`; an inline operand;
# a constant in a while body; `{...}` in a comment, a block comment and a string.
WRITTEN = f"""\
HloModule names

body {{
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[16] get-tuple-element(p), index=1
  w = f32[16] constant({{...}}), metadata={{op_name="w = constant({{...}})"}}
  one = s32[] constant(1)
  j = s32[] add(i, one)
  u = f32[16] add(v, w)
  ROOT t = (s32[], f32[16]) tuple(j, u)
}}

cond {{
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}}

ENTRY main {{
  x = f32[16] parameter(0)
  // w = f32[16] constant({{...}})
  %w = f32[16]{{0}} constant({{ ... }}) /* {{...}} */
  %w.x-1 = f32[16] constant({SIXTEEN})
  a = f32[16] add(x, f32[16] constant({{...}}))
  b = f32[16] add(a, %w.x-1)
  zero = s32[] constant(0)
  s = (s32[], f32[16]) tuple(zero, b)
  l = (s32[], f32[16]) while(s), body=body, condition=cond
  g = f32[16] get-tuple-element(l), index=1
  ROOT r = f32[16] add(g, w), control-predecessors={{a}}
}}
"""
FULL = WRITTEN.replace("{...}", SIXTEEN).replace("{ ... }", SIXTEEN)


def xla_print(text: str, every_value: bool) -> str:
    options = xla_hlo.HloPrintOptions()
    options.print_large_constants = every_value
    return xla_hlo.hlo_module_from_text(text).to_string(options)


def elided_by_xla_s_printer(text: str) -> set[tuple[str, str]]:
    """(computation, instruction) of each constant XLA's default print leaves out: XLA writes one
    instruction a line, and its lines with every value differ from these exactly there."""
    found, computation = set(), None
    short, full = xla_print(text, False).splitlines(), xla_print(text, True).splitlines()
    assert len(short) == len(full)
    for a, b in zip(short, full):
        head = re.match(r"(?:ENTRY )?%(\S+) .*\{$", a)
        computation = head.group(1) if head else computation
        if a != b:
            assert "constant({...})" in a
            found.add((computation, re.match(r"\s*(?:ROOT )?%(\S+) =", a).group(1)))
    return found


def test_on_xla_s_own_dump_the_elided_constants_are_those_its_printer_left_out():
    dumped = xla_print(FULL, every_value=False)  # as XLA dumps it without --xla_dump_large_constants
    oracle = elided_by_xla_s_printer(FULL)
    assert len(oracle) == 4  # every 16-element constant; the scalars keep their values
    assert set(elided_constants(native.read(dumped, "dump"))) == oracle


def test_in_a_written_module_each_is_named_as_written_or_as_xla_names_an_inline_one():
    parsed = native.read(WRITTEN, "written.hlo")
    [inline] = [i.name for c in parsed.proto.computations if c.name == "main"
                for i in c.instructions if i.opcode == "constant" and i.name.startswith("constant")]
    assert parsed.name("main", "w.1") == "w"  # XLA renamed it; the report says it as written
    # Text order; the comment, the block comment and the string's `{...}` are none; %w.x-1 has its values.
    assert elided_constants(parsed) == (("body", "w"), ("main", "w"), ("main", inline))


def test_a_module_with_every_value_and_a_proto_have_none_elided():
    assert elided_constants(native.read(FULL, "full.hlo")) == ()
    proto = native.parse_to_proto(FULL)
    assert elided_constants(Parsed.from_serialized(proto)) == ()  # a proto: the real literals, no text


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_report_names_them_and_still_judges_the_edges(dialect):
    report = pipeline.run(WRITTEN, dialect=dialect, isolate=False).report
    full = pipeline.run(FULL, dialect=dialect, isolate=False).report
    assert [str(e) for e in report.edges] == [str(e) for e in full.edges] and report.ok  # the edges: unaffected
    assert report.elided[:2] == [("body", "w"), ("main", "w")] and len(report.elided) == 3 and full.elided == []
    [note] = [line for line in report.lines() if line.startswith("note: XLA's dump elided")]
    assert "%w (in %body), %w (in %main)" in note and "numbers cannot be compared" in note
    assert "--xla_dump_large_constants" in note
    assert report.summary() == full.summary() + "; 3 constant(s) elided by XLA's dump: its numbers cannot be compared"
    assert report.as_dict()["elided_constants"][0] == {"computation": "body", "name": "w"}
    assert "elided_constants" not in full.as_dict()
    assert "%w (in %body)" in report._repr_html_() and "--xla_dump_large_constants" in report._repr_html_()
    assert "elided" not in full._repr_html_()


def test_the_verifier_alone_reads_them_from_the_hlo():
    program = pipeline.run(WRITTEN, isolate=False).penguin_source
    assert pipeline.verify(WRITTEN, program).elided == [("body", "w"), ("main", "w"),
                                                         pipeline.run(WRITTEN, isolate=False).report.elided[2]]


def test_a_definition_over_two_lines_and_comments_over_several_are_read_as_xla_reads_them():
    text = """\
HloModule lines

ENTRY main {
  x = f32[16] parameter(0), metadata={op_name="jit(f)/*b"}
  /* a comment
     c = f32[16] constant({...})
  */
  w2 = f32[16]
       constant({...})
  ROOT y = f32[16] add(x, w2), metadata={op_name="{...}"}, control-predecessors={x}
}
"""
    assert elided_constants(native.read(text, "lines.hlo")) == (("main", "w2"),)
    # XLA reads the same: the comment's `c` is no instruction, w2's literal is its placeholder.
    assert {i.name for c in native.read(text, "lines.hlo").proto.computations for i in c.instructions
            if i.opcode == "constant"} == {"w2"}
