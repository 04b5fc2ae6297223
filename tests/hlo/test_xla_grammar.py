"""The forms of HLO people write and XLA prints, through the whole chain.

Each input goes through `pipeline.run(text, isolate=False)` (a sample with
`isolate=True` too), and the oracle is XLA: its parser
(`jaxlib._hlo.hlo_module_from_text`) reads the input, and its proto of the
input gives the instructions, their names and the control edges. The names a
user reads in the chain's output (the report's edges, the Penguin program's
instructions and source) are the names as written: where XLA renames a name
the text reuses in another computation (`a` → `a.1`), each case says so in
`renamed`, which is checked against XLA's proto, and the chain must say `a`;
an instruction the text leaves unnamed (an operand written inline, the
pieces of an inline computation) goes by XLA's name. XLA reads back what the
chain prints after link #1 (`result.hlo`).

Refusals are XLA's: its message, at the line and column XLA itself reports
(`was parsing L:C`), asked of jaxlib's parser in a child process where it
may abort; an abort is refused in one line too (with `isolate=True`).

These tests took over the chain-level claims of the project's own HLO reader
and writer tests (tests/hlo/test_reader.py, tests/hlo/test_roundtrip.py),
removed with the reader: forms that must go through, attribute values and
comments that hold what looks like HLO, XLA's printings under its print
options, random modules, `%t#i` operands, and the refusals.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field

import jaxlib._hlo as xla_hlo
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipeline
from passes.hlo import proto as hlo_proto
from passes.hlo.text import HloSyntaxError
from pipeline.xla.native import XlaRejected
from pipeline.xla.versions import xla_reads_tuple_element_operands
from pipeline.xla.isolated import readable_text

SOURCE = "in.hlo"

# A chain bug these tests found (reported, not fixed here): a computation written
# inline (`to_apply={...}`, which XLA names `_`, `_.1`, ...) is taken for one XLA
# made itself (passes.hlo.names: the scan finds no head for it, so it lands in
# `made_by_xla`); the importer then names its ops after the calling instruction
# (`r:add`, in the caller's computation), the report keeps XLA's renames in it
# (`c.1`), and an edge inside it becomes a spurious dep edge `r -> r`.
INLINE_COMPUTATION_BUG = pytest.mark.xfail(strict=True, reason="limitation: in a computation written inline, "
                                           "a name XLA renames keeps XLA's name (passes.hlo.names does not "
                                           "align inline bodies; the report notes it)")
# Inline computations whose names XLA keeps go through with their own names
# and ops (fixed: the importer took them for computations XLA made).
INLINE_NAMES_KEPT = {"inline_computation", "inline_computation_reusing_a_name_of_its_caller"}
# Canonical printings whose inline bodies XLA renames in (`tmp_1.1`): the same limitation.
INLINE_RENAMED = {"attributes:definitions_in_comments_and_strings", "printed:fusion_with_edges_inside"}


def hand(text: str) -> str:
    """A test input: dedented, ending in one line break."""
    return textwrap.dedent(text).strip("\n") + "\n"


def xla_text(text: str) -> str:
    """The text this jaxlib's parser is given: the input itself, or, where
    jaxlib 0.10.2 cannot read `%t#i`, the input with explicit get-tuple-elements."""
    return text if xla_reads_tuple_element_operands() else readable_text(text)


def xla_proto(text: str):
    """XLA's own HloModuleProto of `text` (raises if XLA's parser refuses it)."""
    return hlo_proto.decode(xla_hlo.hlo_module_from_text(xla_text(text)).as_serialized_hlo_module_proto())


@dataclass
class Expected:
    """What XLA's proto of a text says the chain must report, with XLA's
    renames of the listed names undone."""

    proto: object
    renamed: dict[tuple[str, str], str]
    names: dict[str, set[str]] = field(default_factory=dict)  # computation → names, as written or XLA's
    edges: list[tuple[str, str, str]] = field(default_factory=list)

    def name(self, computation: str, xla_name: str) -> str:
        return self.renamed.get((computation, xla_name), xla_name)

    def reachable(self) -> set[str]:
        """The computations the entry calls, directly or not (the importer drops the others)."""
        by_id = {c.id: c for c in self.proto.computations}
        todo, seen = [self.proto.entry_computation_id], set()
        while todo:
            comp = by_id[todo.pop()]
            if comp.name not in seen:
                seen.add(comp.name)
                todo += [c for i in comp.instructions for c in i.called_computation_ids]
        return seen

    def fused(self, computation: str) -> bool:
        """Whether a fusion calls `computation` (the importer may inline it)."""
        comp_id = next(c.id for c in self.proto.computations if c.name == computation)
        return any(i.opcode == "fusion" and comp_id in i.called_computation_ids
                   for c in self.proto.computations for i in c.instructions)


def expected(text: str, renamed: dict[tuple[str, str], str] | None = None) -> Expected:
    """XLA's reading of `text`. `renamed`: (computation, XLA's name) → the name
    as written, for every name XLA renamed; each entry is checked: XLA's proto
    has the instruction, and its name is the written one (a numeric suffix
    taken off) with a `.N` suffix."""
    proto = xla_proto(text)
    renamed = dict(renamed or {})
    out = Expected(proto, renamed)
    for comp in proto.computations:
        by_id = {i.id: i.name for i in comp.instructions}
        out.names[comp.name] = {out.name(comp.name, i.name) for i in comp.instructions}
        for instr in comp.instructions:
            out.edges += [(comp.name, out.name(comp.name, by_id[p]), out.name(comp.name, instr.name))
                          for p in instr.control_predecessor_ids]
    for (comp, xla_name), written in renamed.items():
        assert xla_name in {i.name for c in proto.computations if c.name == comp for i in c.instructions}, \
            f"XLA has no {xla_name} in {comp}: the test's table is wrong"
        stem = re.sub(r"\.[0-9]+$", "", written)  # XLA takes a numeric suffix off, then numbers the name
        assert xla_name != written and re.fullmatch(re.escape(stem) + r"\.[0-9]+", xla_name), (xla_name, written)
    return out


# Opcodes the importer makes one op of, named as the instruction (outside fusions).
ONE_OP = {"add", "multiply", "maximum", "negate", "abs", "copy", "exponential", "compare"}


def sorted_edges(edges) -> list[tuple[str, str, str]]:
    return sorted((e.computation, e.predecessor, e.successor) if hasattr(e, "computation") else tuple(e)
                  for e in edges)


_PENGUIN_NAME = re.compile(r"\.op\('[^']*', '([^']*)'|\('([^']*)', T\(")


def penguin_names(source: str) -> set[str]:
    """The instruction and argument names an emitted Penguin program spells out
    (an op the importer derived from an instruction, `cs:copy`, by the instruction's)."""
    return {(a or b).split(":")[0] for a, b in _PENGUIN_NAME.findall(source)}


def through_the_chain(text: str, renamed: dict | None = None, edges: list | None = None, *,
                      isolate: bool = False):
    """Run the chain on `text` and check it against XLA's reading of it:
    `edges` (as written, if given) are XLA's edges, renames undone; the
    report has exactly those, and no spurious dep edge; every instruction of
    the Penguin program has a name of its computation (as written, or XLA's
    where the text gave none), and each that imports as one op is there by
    that name; no name XLA made by renaming shows in the program or its
    source; the program's module has XLA's module name; XLA reads `result.hlo`."""
    want = expected(text, renamed)
    if edges is not None:
        assert sorted_edges(edges) == sorted_edges(want.edges), "the test's edges are not XLA's"
    result = pipeline.run(text, isolate=isolate, source_name=SOURCE)
    assert sorted_edges(result.report.edges) == sorted_edges(want.edges)
    assert result.report.spurious == [], [str(e) for e in result.report.spurious]
    program = result.module()
    for instr in program.instructions():
        if instr.computation is not None:  # an op of an instruction, or one the importer derived (`cs:copy`)
            assert instr.name.split(":")[0] in want.names[instr.computation], (instr.computation, instr.name)
    ops = {(i.computation, i.name) for i in program.instructions()}
    for comp in want.proto.computations:  # an op that imports as one op keeps its instruction's name
        for instr in comp.instructions:
            if instr.opcode in ONE_OP and comp.name in want.reachable() and not want.fused(comp.name):
                assert (comp.name, want.name(comp.name, instr.name)) in ops, (comp.name, instr.name)
    spelled = penguin_names(result.penguin_source)
    all_names = set().union(*want.names.values())
    for (comp, xla_name), as_written in want.renamed.items():
        if xla_name not in all_names:
            assert xla_name not in spelled, f"XLA's {xla_name} in the program instead of {as_written}"
            assert all(i.name != xla_name for i in program.instructions())
    assert program.name == want.proto.name  # the module's name is XLA's (`module_main` without a header)
    xla_hlo.hlo_module_from_text(result.hlo)  # XLA reads link #1's output as XLA printed it
    return result, want


# --------------------------------------------------------------------------
# Hand-written forms (as XLA's own unit tests write them)
# --------------------------------------------------------------------------

# name → (text, renamed: (computation, XLA's name) → as written, edges as written)
FORMS = {
    "no_header": ("""
        ENTRY main {
          p = f32[4] parameter(0)
          e = f32[4] exponential(p)
          ROOT n = f32[4] negate(p), control-predecessors={e}
        }
    """, {}, [("main", "e", "n")]),
    "no_header_no_entry_takes_the_last_computation": ("""
        neg {
          x = f32[4] parameter(0)
          y = f32[4] copy(x)
          ROOT z = negate(x), control-predecessors={y}
        }
        e {
          x = f32[4] parameter(0)
          ROOT y = f32[4] call(x), to_apply=neg
        }
    """, {("e", "x.1"): "x", ("e", "y.1"): "y"}, [("neg", "y", "z")]),
    "leading_line_and_block_comments": ("""
        // copy insertion adds an edge here
        /* and a block comment: ENTRY bogus { q = f32[] parameter(0) } */
        ENTRY main {
          p = f32[4] parameter(0)  // a trailing comment: n = f32[4] copy(p)
          c = f32[4] copy(p) /* , control-predecessors={p} */
          ROOT n = f32[4] negate(p), control-predecessors={c}
        }
    """, {}, [("main", "c", "n")]),
    "shapes_left_out": ("""
        ENTRY main {
          p = f32[4] parameter(0)
          i = s32[] parameter(1)
          t = tuple(p, i)
          g = get-tuple-element(t), index=1
          s = add(g, g)
          c = copy(p)
          ROOT r = tuple(c, s), control-predecessors={g}
        }
    """, {}, [("main", "g", "r")]),
    "operands_written_inline": ("""
        ENTRY main {
          p0 = s32[] parameter(0)
          a = add(p0, s32[] constant(2))
          b = multiply(a, add(p0, s32[] constant(3)))
          ROOT r = tuple(a, b, s32[] constant(7)), control-predecessors={b}
        }
    """, {}, [("main", "b", "r")]),
    "an_inline_operand_beside_the_name_xla_would_give_it": ("""
        ENTRY e {
          p = s32[] parameter(0)
          constant.anon = s32[] constant(5)
          ROOT r = add(p, s32[] constant(2)), control-predecessors={constant.anon}
        }
    """, {}, [("e", "constant.anon", "r")]),
    "names_reused_across_computations": ("""
        cond {
          a = (s32[], f32[4]) parameter(0)
          n = s32[] get-tuple-element(a), index=0
          ROOT lt = pred[] compare(n, s32[] constant(10)), direction=LT
        }
        body {
          a = (s32[], f32[4]) parameter(0)
          n = get-tuple-element(a), index=0
          x = get-tuple-element(a), index=1
          e = exponential(x), control-predecessors={n}
          ROOT t = tuple(add(n, s32[] constant(1)), e)
        }
        ENTRY main {
          p = f32[4] parameter(0)
          n = s32[] constant(0)
          t = tuple(n, p)
          w = (s32[], f32[4]) while(t), condition=cond, body=body
          a = f32[4] get-tuple-element(w), index=1
          c = copy(a), control-predecessors={w}
          ROOT e = negate(c), control-predecessors={a, n}
        }
    """, {("body", "a.1"): "a", ("body", "n.1"): "n", ("main", "n.2"): "n", ("main", "t.1"): "t",
          ("main", "a.2"): "a", ("main", "e.1"): "e"},
        [("body", "n", "e"), ("main", "w", "c"), ("main", "a", "e"), ("main", "n", "e")]),
    "inline_computation": ("""
        ENTRY e {
          p = f32[4] parameter(0)
          r = f32[] reduce(p, f32[] constant(0)), dimensions={0}, to_apply={
            x = f32[] parameter(0)
            y = f32[] parameter(1)
            c = f32[] copy(y)
            ROOT s = add(x, y), control-predecessors={c}
          }
          ROOT n = f32[] negate(r), control-predecessors={p}
        }
    """, {}, [("_", "c", "s"), ("e", "p", "n")]),
    "inline_computation_reusing_a_name_of_its_caller": ("""
        ENTRY e {
          p = f32[4] parameter(0)
          x = f32[4] copy(p)
          r = f32[] reduce(x, f32[] constant(0)), dimensions={0}, to_apply={
            x = f32[] parameter(0)
            y = f32[] parameter(1)
            ROOT s = add(x, y), control-predecessors={y}
          }
          ROOT n = f32[] negate(r), control-predecessors={x}
        }
    """, {("e", "x.1"): "x"}, [("_", "y", "s"), ("e", "x", "n")]),  # the inline one, made first, keeps `x`
    "two_inline_computations_reusing_names": ("""
        ENTRY e {
          p = f32[4] parameter(0)
          r = f32[] reduce(p, f32[] constant(0)), dimensions={0}, to_apply={
            x = f32[] parameter(0)
            y = f32[] parameter(1)
            c = f32[] copy(y)
            ROOT s = add(x, y), control-predecessors={c}
          }
          q = f32[] reduce(p, f32[] constant(1)), dimensions={0}, to_apply={
            x = f32[] parameter(0)
            y = f32[] parameter(1)
            c = f32[] copy(x)
            ROOT s = multiply(x, y), control-predecessors={c}
          }
          ROOT n = f32[] add(r, q), control-predecessors={q}
        }
    """, {("_.1", "x.1"): "x", ("_.1", "y.1"): "y", ("_.1", "c.1"): "c", ("_.1", "s.1"): "s"},
        [("_", "c", "s"), ("_.1", "c", "s"), ("e", "q", "n")]),
    "a_reused_name_beside_an_inline_operand_of_its_opcode": ("""
        f {
          x = f32[4] parameter(0)
          c = f32[4] copy(x)
          ROOT n = f32[4] negate(x), control-predecessors={c}
        }
        ENTRY main {
          x = f32[4] parameter(0)
          c = f32[4] copy(x)
          n = negate(negate(x)), control-predecessors={c}
          ROOT r = f32[4] call(n), to_apply=f
        }
    """, {("main", "x.1"): "x", ("main", "c.1"): "c", ("main", "n.1"): "n"},
        [("f", "c", "n"), ("main", "c", "n")]),
    "a_reused_name_with_a_numeric_suffix": ("""
        f {
          a.1 = f32[4] parameter(0)
          b.7 = f32[4] copy(a.1)
          ROOT a.0 = f32[4] negate(a.1), control-predecessors={b.7}
        }
        ENTRY e {
          a.1 = f32[4] parameter(0)
          b.7 = f32[4] copy(a.1)
          a.0 = f32[4] negate(a.1), control-predecessors={b.7}
          ROOT x = f32[4] call(a.0), to_apply=f, control-predecessors={a.1}
        }
    """, {("e", "a.2"): "a.1", ("e", "b.0"): "b.7", ("e", "a.3"): "a.0"},  # XLA numbers the stem anew: `b.7` → `b.0`
        [("f", "b.7", "a.0"), ("e", "b.7", "a.0"), ("e", "a.1", "x")]),
    "shaped_and_bare_operands": ("""
        HloModule m
        ENTRY %main (a: f32[4], b: f32[4]) -> (f32[4], f32[4]) {
          %a = f32[4]{0} parameter(0)
          %b = f32[4]{0} parameter(1)
          %short = f32[4]{0} add(%a, %b)
          %long = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %b), control-predecessors={%short}
          %t = (f32[4]{0}, f32[4]{0}) tuple(%short, f32[4]{0} %long)
          %g = f32[4]{0} get-tuple-element((f32[4]{0}, f32[4]{0}) %t), index=1
          ROOT %r = (f32[4]{0}, f32[4]{0}) tuple(f32[4]{0} %g, %short)
        }
    """, {}, [("main", "short", "long")]),
    "names_without_percent_and_computations_without_signature": ("""
        HloModule m
        sum {
          x = f32[] parameter(0)
          y = f32[] parameter(1)
          ROOT s = f32[] add(x, y), control-predecessors={y}
        }
        ENTRY main {
          a = f32[4]{0} parameter(0)
          z = f32[] constant(0)
          ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=sum
        }
    """, {}, [("sum", "y", "s")]),
    "root_not_last": ("""
        HloModule m
        ENTRY %main (a: f32[]) -> f32[] {
          %a = f32[] parameter(0)
          %c = f32[] copy(%a)
          ROOT %n = f32[] negate(%a), control-predecessors={%c}
          %unused = f32[] abs(%a)
        }
    """, {}, [("main", "c", "n")]),
    "two_definitions_on_one_line": ("""
        HloModule m
        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          %a = f32[4]{0} negate(%x)  %b = f32[4]{0} abs(%a), control-predecessors={%a}
          ROOT %c = f32[4]{0} add(%a, %b), control-predecessors={%b}
        }
    """, {}, [("main", "a", "b"), ("main", "b", "c")]),
    "a_definition_continued_on_the_next_lines": ("""
        HloModule m
        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          %p = f32[4]{0} exponential(%x),
              metadata={op_name="e"},
              control-predecessors={%x}
          ROOT %n = f32[4]{0}
              negate(%p), control-predecessors={%p}
        }
    """, {}, [("main", "x", "p"), ("main", "p", "n")]),
}
FORMS = {name: (hand(text), renamed, edges) for name, (text, renamed, edges) in FORMS.items()}

# Windows line ends and tabs.
FORMS["crlf_and_tabs"] = (
    "HloModule m\r\nENTRY %main (a: f32[]) -> f32[] {\r\n\t%a = f32[] parameter(0)\r\n"
    "\t%c = f32[] copy(%a)\r\n\tROOT %n = f32[] negate(%a), control-predecessors={%c}\r\n}\r\n",
    {}, [("main", "c", "n")])


INLINE = {"inline_computation", "inline_computation_reusing_a_name_of_its_caller",
          "two_inline_computations_reusing_names"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=INLINE_COMPUTATION_BUG
                                               if n in INLINE and n not in INLINE_NAMES_KEPT else ())
                                  for n in FORMS])
def test_a_hand_written_form_goes_through_the_chain_with_its_names(name):
    text, renamed, edges = FORMS[name]
    through_the_chain(text, renamed, edges)


@pytest.mark.parametrize("name", ["no_header", "names_reused_across_computations", "operands_written_inline",
                                  "names_without_percent_and_computations_without_signature", "crlf_and_tabs"])
def test_isolated_the_chain_says_the_same(name):
    text, renamed, edges = FORMS[name]
    isolated, _ = through_the_chain(text, renamed, edges, isolate=True)
    here = pipeline.run(text, isolate=False, source_name=SOURCE)
    assert isolated.report.edges == here.report.edges
    assert isolated.penguin_source == here.penguin_source
    assert isolated.hlo == here.hlo


def test_names_xla_renames_are_said_as_written_everywhere():
    text, renamed, edges = FORMS["names_reused_across_computations"]
    result, want = through_the_chain(text, renamed, edges)
    # XLA renames (its printing of link #1's output says so) ...
    assert "%n.1 = " in result.hlo and "%a.2 = " in result.hlo
    # ... the chain does not: the program's instructions and its source.
    by_computation = collections.defaultdict(set)
    for instr in result.module().instructions():
        by_computation[instr.computation].add(instr.name)
    assert {"e"} <= by_computation["body"] and {"n", "w", "c", "e"} <= by_computation["main"]
    assert "'e.1'" not in result.penguin_source and "'n.2'" not in result.penguin_source
    assert all("." not in name for name in by_computation["main"])
    for edge in result.report.edges:
        assert not re.search(r"\.[0-9]+$", edge.predecessor + " " + edge.successor), str(edge)
        assert not re.search(r"%[a-z]+\.[0-9]+\b", edge.reason + edge.link1), str(edge)


def test_names_the_text_leaves_unnamed_are_xlas():
    for name, comp in (("operands_written_inline", "main"), ("names_reused_across_computations", "body"),
                       ("an_inline_operand_beside_the_name_xla_would_give_it", "e")):
        text, renamed, edges = FORMS[name]
        result, want = through_the_chain(text, renamed, edges)
        xla_made = {i.name for c in want.proto.computations if c.name == comp for i in c.instructions
                    if i.name.startswith(("constant.", "add.", "multiply."))} - {"constant.anon"}
        assert xla_made, name
        program = {i.name for i in result.module().instructions() if i.computation == comp}
        # The inline constants and adds the importer keeps as ops, by the names XLA gave them.
        assert xla_made & program and (xla_made & program) <= want.names[comp], (name, xla_made, program)


def test_the_inline_computation_is_named_as_xla_names_it():
    text, renamed, edges = FORMS["inline_computation"]
    result, want = through_the_chain(text, renamed, edges)
    names = [c.name for c in want.proto.computations]
    assert len(names) == 2 and "e" in names
    inline = next(n for n in names if n != "e")
    assert {(e.computation, e.predecessor, e.successor) for e in result.report.edges} >= {(inline, "c", "s")}


# --------------------------------------------------------------------------
# Attribute values and comments that hold what looks like HLO
# --------------------------------------------------------------------------

ATTRIBUTES = {
    "metadata_with_braces_commas_and_quotes": (r"""
        HloModule m
        ENTRY %main (a: f32[]) -> f32[] {
          %a = f32[] parameter(0)
          %c = f32[] copy(%a)
          ROOT %n = f32[] negate(%a), metadata={op_name="jit(f)/a{b},c \"q\" control-predecessors={%a}" source_file="x,y.py" source_line=7}, control-predecessors={%c}
        }
    """, [("main", "c", "n")]),
    "backend_config_json_with_nested_braces_and_escaped_quotes": (r"""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %c = f32[4]{0} copy(%a)
          ROOT %cc = f32[4]{0} custom-call(%a), custom_call_target="foo", backend_config={"outer":{"inner":{"k":"v}"}},"q":"he said \"hi\", {","list":[1,{"x":2}]}, control-predecessors={%c}
        }
    """, [("main", "c", "cc")]),
    "backend_config_string_holding_an_edge": (r"""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %x = f32[4]{0} copy(%a)
          ROOT %cc = f32[4]{0} custom-call(%x), custom_call_target="foo", backend_config="{\"a\":{\"b\":\"c, d}\"}} , control-predecessors={%x}\n%y = f32[4] copy(%x)", control-predecessors={%a}
        }
    """, [("main", "a", "cc")]),
    "frontend_attributes_on_module_and_instruction": ("""
        HloModule m, frontend_attributes={a="1",b="x,y",note="q = f32[] negate(p) { }"}
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0), frontend_attributes={_xla_foo="bar",k="{1,2}"}
          ROOT %n = f32[4]{0} negate(%a), frontend_attributes={z="1"}, control-predecessors={%a}
        }
    """, [("main", "a", "n")]),
    "definitions_in_comments_and_strings": ("""
        // braces and definitions where no definition is
        HloModule m, frontend_attributes={note="a = f32[] b(c) { }"}

        %n (p: f32[4]) -> f32[4] {
          %p = f32[4]{0} parameter(0)
          /* %q = f32[4] negate(%p)
             %p = f32[4] negate(%p) */
          %c = f32[4]{0} copy(%p), metadata={op_name="x } y = z"}
          ROOT %n = f32[4]{0} negate(%p), metadata={op_name="x } y = z {"}, control-predecessors={%c}
        }

        ENTRY %main (x: f32[4]{0}) -> f32[4]{0} {
          %x = f32[4]{0} parameter(0)
          // %p = f32[4]{0} abs(%x)
          %p = f32[4]{0} exponential(%x),
              metadata={op_name="e"}, control-predecessors={%x}
          %n = f32[4]{0} fusion(f32[4]{0} negate(%p)), kind=kLoop, calls=%n
          ROOT %r = f32[4]{0} add(%n, %p), control-predecessors={%n}
        }
    """, [("n", "c", "n"), ("main", "x", "p"), ("main", "n", "r")]),
    "index_comments_in_shapes_and_operand_lists": ("""
        HloModule m
        ENTRY %main (a: f32[], i: s32[]) -> (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], s32[]) {
          %a = f32[] parameter(0)
          %i = s32[] parameter(1)
          %c = f32[] copy(%a)
          ROOT %t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], s32[]) tuple(%a, %a, %a, %a, %a, /*index=5*/%c, %i), control-predecessors={/*index=0*/%i}
        }
    """, [("main", "i", "t")]),
}
ATTRIBUTES = {name: (hand(text), edges) for name, (text, edges) in ATTRIBUTES.items()}
RENAMED_IN = {"definitions_in_comments_and_strings": {("main", "p.1"): "p", ("main", "n.1"): "n"}}


@pytest.mark.parametrize("name", ATTRIBUTES)
def test_attribute_values_and_comments_are_no_hlo(name):
    text, edges = ATTRIBUTES[name]
    through_the_chain(text, RENAMED_IN.get(name, {}), edges)


def assert_link1_kept_the_rest(text: str, result, want: Expected) -> None:
    """XLA's printing of link #1's output (`result.hlo`) keeps every line of
    XLA's printing of the input but the header and the instructions link #1
    edits (the successors of edges and of the dep edges it emitted): attribute
    values, stack frame sections, computation heads and trailers."""
    edited = {(e.computation, s) for e in result.link1.edges for s in [e.successor, *(s for _, s in e.emitted)]}
    before = xla_hlo.hlo_module_from_text(xla_text(text)).to_string(PRINT_OPTIONS["default"]).splitlines()[1:]
    after = set(result.hlo.splitlines())
    computation = None
    for line in before:
        head = re.match(r"(?:ENTRY )?%(\S+) \(", line)
        if head:
            computation = head[1]
        m = re.match(r"\s+(?:ROOT )?%(\S+) = ", line)
        if m and (computation, want.name(computation, m[1])) in edited:
            continue
        assert line in after, line


def test_what_link1_does_not_touch_xla_prints_as_it_came():
    for name, (text, edges) in ATTRIBUTES.items():
        result, want = through_the_chain(text, RENAMED_IN.get(name, {}), edges)
        assert_link1_kept_the_rest(text, result, want)


def _xla_edges(proto) -> list[tuple[str, str, str]]:
    """(computation, predecessor, successor), XLA's names."""
    edges = []
    for comp in proto.computations:
        by_id = {i.id: i.name for i in comp.instructions}
        edges += [(comp.name, by_id[p], i.name) for i in comp.instructions for p in i.control_predecessor_ids]
    return edges


# --------------------------------------------------------------------------
# Forms XLA prints (XLA 0.10.x and later): each goes through, edges as XLA reads them
# --------------------------------------------------------------------------

PRINTED = {
    "sharding": """
        HloModule m
        ENTRY %main (a: f32[4,2]) -> (f32[4,2], f32[4,2]) {
          %a = f32[4,2]{1,0} parameter(0), sharding={devices=[2,1]0,1}
          %n = f32[4,2]{1,0} negate(%a), sharding={replicated}
          %m = f32[4,2]{1,0} abs(%a), sharding={maximal device=0}, control-predecessors={%n}
          ROOT %t = (f32[4,2]{1,0}, f32[4,2]{1,0}) tuple(%n, %m), sharding={{replicated}, {devices=[2,1]0,1}}
        }
    """,
    "stack_frames": """
        HloModule m, entry_computation_layout={(f32[])->f32[]}

        FileNames
        1 "/tmp/prog.py"

        FunctionNames
        1 "f"

        FileLocations
        1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=2 end_column=9}

        StackFrames
        1 {file_location_id=1 parent_frame_id=1}

        ENTRY %main (a: f32[]) -> f32[] {
          %a = f32[] parameter(0)
          %c = f32[] copy(%a)
          ROOT %n = f32[] negate(%a), metadata={op_name="jit(f)/neg" stack_frame_id=1}, control-predecessors={%c}
        }
    """,
    "execution_thread_and_async": """
        HloModule m
        %async_comp (p: f32[4]) -> f32[4] {
          %p = f32[4]{0} parameter(0)
          %n = f32[4]{0} negate(%p)
          ROOT %e = f32[4]{0} exponential(%n)
        }, execution_thread="side"

        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %start = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(%a), async_execution_thread="side", calls=%async_comp
          %b = f32[4]{0} abs(%a), control-predecessors={%start}
          %done = f32[4]{0} async-done(%start), control-predecessors={%b}
          ROOT %r = f32[4]{0} add(%done, %b)
        }
    """,
    "tiled_and_dynamic_shapes": """
        HloModule m
        ENTRY %main (a: f32[8,128], d: f32[<=4]) -> (f32[8,128], f32[<=4]) {
          %a = f32[8,128]{1,0:T(8,128)} parameter(0)
          %d = f32[<=4]{0} parameter(1)
          %n = f32[8,128]{1,0:T(8,128)} negate(f32[8,128]{1,0:T(8,128)} %a)
          %m = f32[<=4]{0} abs(f32[<=4]{0} %d), control-predecessors={%n}
          ROOT %t = (f32[8,128]{1,0:T(8,128)}, f32[<=4]{0}) tuple(%n, %m)
        }
    """,
    "tokens_send_recv": """
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %tok = token[] after-all()
          %send = (f32[4]{0}, u32[], token[]) send(%a, %tok), channel_id=1, is_host_transfer=true
          %send-done = token[] send-done(%send), channel_id=1, is_host_transfer=true
          %tok2 = token[] after-all(%tok, token[] %send-done)
          %recv = (f32[4]{0}, u32[], token[]) recv(%tok2), channel_id=2, is_host_transfer=true, control-predecessors={%send}
          %recv-done = (f32[4]{0}, token[]) recv-done(%recv), channel_id=2, is_host_transfer=true, control-predecessors={%send-done}
          ROOT %v = f32[4]{0} get-tuple-element(%recv-done), index=0
        }
    """,
    "all_reduce_and_copy_start_done": """
        HloModule m
        %sum (x: f32[], y: f32[]) -> f32[] {
          %x = f32[] parameter(0)
          %y = f32[] parameter(1)
          ROOT %add = f32[] add(%x, %y)
        }

        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %ars = f32[4]{0} all-reduce-start(%a), replica_groups={}, to_apply=%sum
          %cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%a)
          %b = f32[4]{0} negate(%a), control-predecessors={%cs, %ars}
          %ard = f32[4]{0} all-reduce-done(%ars)
          %cd = f32[4]{0} copy-done(%cs)
          ROOT %r = f32[4]{0} add(%ard, %cd), control-predecessors={%b}
        }
    """,
    "conditional_branches": """
        HloModule m
        %b0 (p0: f32[4]) -> f32[4] {
          %p0 = f32[4]{0} parameter(0)
          ROOT %n = f32[4]{0} negate(%p0)
        }

        %b1 (p1: f32[4]) -> f32[4] {
          %p1 = f32[4]{0} parameter(0)
          %c = f32[4]{0} copy(%p1)
          ROOT %a = f32[4]{0} abs(%p1), control-predecessors={%c}
        }

        %t (q: f32[4]) -> f32[4] {
          ROOT %q = f32[4]{0} parameter(0)
        }

        ENTRY %main (i: s32[], x: f32[4], p: pred[]) -> (f32[4], f32[4]) {
          %i = s32[] parameter(0)
          %x = f32[4]{0} parameter(1)
          %p = pred[] parameter(2)
          %c1 = f32[4]{0} conditional(%i, %x, %x), branch_computations={%b0, %b1}
          %c2 = f32[4]{0} conditional(%p, %x, %c1), true_computation=%t, false_computation=%b0
          ROOT %r = (f32[4]{0}, f32[4]{0}) tuple(%c1, %c2)
        }
    """,
    "while_no_signatures_no_percent": """
        HloModule m
        cond {
          s = (s32[], f32[4]{0}) parameter(0)
          i = s32[] get-tuple-element(s), index=0
          k = s32[] constant(3)
          ROOT lt = pred[] compare(i, k), direction=LT
        }
        body {
          s = (s32[], f32[4]{0}) parameter(0)
          i = s32[] get-tuple-element(s), index=0
          one = s32[] constant(1)
          next = s32[] add(i, one)
          b = f32[4]{0} get-tuple-element(s), index=1
          c = f32[4]{0} copy(b)
          d = f32[4]{0} negate(b), control-predecessors={c}
          ROOT o = (s32[], f32[4]{0}) tuple(next, d)
        }
        ENTRY main {
          x = f32[4]{0} parameter(0)
          z = s32[] constant(0)
          init = (s32[], f32[4]{0}) tuple(z, x)
          ROOT w = (s32[], f32[4]{0}) while(init), condition=cond, body=body
        }
    """,
    "constants_and_scheduled": """
        HloModule m, is_scheduled=true, entry_computation_layout={(f32[2,2]{1,0})->f32[2,2]{1,0}}
        ENTRY %main (a: f32[2,2]) -> f32[2,2] {
          %a = f32[2,2]{1,0} parameter(0)
          %k = f32[2,2]{1,0} constant({ { 1, -2.5 }, { inf, -inf } })
          %s = s32[] constant(-7)
          %b = pred[] constant(true)
          ROOT %r = f32[2,2]{1,0} add(%a, %k), control-predecessors={%s, %b}
        }
    """,
    "module_header_attributes": """
        HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }, buffer_donor={ (2, {}) }, entry_computation_layout={(f32[4]{0}, f32[4]{0}, f32[4]{0})->(f32[4]{0}, f32[4]{0})}, replica_count=1, num_partitions=1, frontend_attributes={x="y"}
        ENTRY %main (a: f32[4], b: f32[4], c: f32[4]) -> (f32[4], f32[4]) {
          %a = f32[4]{0} parameter(0)
          %b = f32[4]{0} parameter(1)
          %c = f32[4]{0} parameter(2)
          %n = f32[4]{0} negate(%a)
          %m = f32[4]{0} add(%b, %c), control-predecessors={%n}
          ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%n, %m)
        }
    """,
    "collectives_with_iota_replica_groups": """
        HloModule m, replica_count=4
        %sum (x: f32[], y: f32[]) -> f32[] {
          %x = f32[] parameter(0)
          %y = f32[] parameter(1)
          ROOT %add = f32[] add(%x, %y)
        }

        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %ar = f32[4]{0} all-reduce(%a), replica_groups=[2,2]<=[4], to_apply=%sum
          %ar2 = f32[4]{0} all-reduce(%a), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=%sum, control-predecessors={%ar}
          %cp = f32[4]{0} collective-permute(%ar2), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
          ROOT %r = f32[4]{0} add(%ar, %cp)
        }
    """,
    "convolution_dot_slice_custom_call_aliasing": """
        HloModule m
        ENTRY %main (a: f32[1,8,8,3], w: f32[3,3,3,4], x: f32[2,3], y: f32[3,5]) -> (f32[1,8,8,4], f32[2,5], (f32[1,4], f32[1,4])) {
          %a = f32[1,8,8,3]{3,2,1,0} parameter(0)
          %w = f32[3,3,3,4]{3,2,1,0} parameter(1)
          %x = f32[2,3]{1,0} parameter(2)
          %y = f32[3,5]{1,0} parameter(3)
          %conv = f32[1,8,8,4]{3,2,1,0} convolution(%a, %w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
          %dot = f32[2,5]{1,0} dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}
          %sl = f32[1,4]{1,0} slice(%dot), slice={[0:1], [0:4]}
          %cc = (f32[1,4]{1,0}, f32[1,4]{1,0}) custom-call(%sl), custom_call_target="t", output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_STATUS_RETURNING
          ROOT %t = (f32[1,8,8,4]{3,2,1,0}, f32[2,5]{1,0}, (f32[1,4]{1,0}, f32[1,4]{1,0})) tuple(%conv, %dot, %cc), control-predecessors={%sl}
        }
    """,
    "fusion_with_edges_inside": """
        HloModule m
        %fused (p: f32[4]) -> f32[4] {
          %p = f32[4]{0} parameter(0)
          %c = f32[4]{0} copy(%p)
          ROOT %n = f32[4]{0} negate(%p), control-predecessors={%c}
        }

        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          ROOT %f = f32[4]{0} fusion(%x), kind=kLoop, calls=%fused, backend_config={"fusion_backend_config":{"kind":"__triton"}}
        }
    """,
    "every_kind_of_called_computation": """
        HloModule m
        %ge (a: f32[], b: f32[]) -> pred[] {
          %a = f32[] parameter(0)
          %b = f32[] parameter(1)
          ROOT %c = pred[] compare(%a, %b), direction=GE
        }

        %add (x: f32[], y: f32[]) -> f32[] {
          %x = f32[] parameter(0)
          %y = f32[] parameter(1)
          ROOT %s = f32[] add(%x, %y), control-predecessors={%y}
        }

        ENTRY %main (o: f32[4], s: f32[2]) -> (f32[4], f32[]) {
          %o = f32[4]{0} parameter(0)
          %s = f32[2]{0} parameter(1)
          %z = f32[] constant(0)
          %sas = f32[4]{0} select-and-scatter(%o, %s, %z), window={size=2 stride=2}, select=%ge, scatter=%add
          %rd = f32[] reduce(%s, %z), dimensions={0}, to_apply=%add, control-predecessors={%sas}
          ROOT %t = (f32[4]{0}, f32[]) tuple(%sas, %rd)
        }
    """,
}
PRINTED = {name: hand(text) for name, text in PRINTED.items()}


@pytest.mark.parametrize("name", PRINTED)
def test_a_form_xla_prints_goes_through_the_chain(name):
    result, want = through_the_chain(PRINTED[name])
    assert want.edges  # every case has an edge to follow
    assert_link1_kept_the_rest(PRINTED[name], result, want)


def _print_options() -> dict:
    """Ways XLA prints a module it can read back (control predecessors printed:
    `short_parsable` and `canonical` leave them out by default)."""
    def options(base=None, **changes):
        o = base or xla_hlo.HloPrintOptions()
        o.print_large_constants = True
        o.print_control_dependencies = True
        for key, value in changes.items():
            setattr(o, key, value)
        return o

    return {
        "default": options(),
        "short_parsable": options(xla_hlo.HloPrintOptions.short_parsable()),
        # tmp_N names, the same in every computation, and called computations inline; XLA
        # cannot read its control predecessors back (they name the instructions as they were)
        "canonical": options(xla_hlo.HloPrintOptions.canonical(), print_control_dependencies=False),
        "no_percent": options(print_percent=False),
        "no_operand_shapes": options(print_operand_shape=False),
        "no_layouts": options(include_layout_in_shapes=False),
        "no_metadata": options(print_metadata=False, print_backend_config=False),
        "no_indent": options(indent_amount=0),
    }


PRINT_OPTIONS = _print_options()
REPRINTED = {**{f"form:{n}": FORMS[n][0] for n in ("names_reused_across_computations", "operands_written_inline",
                                                   "shaped_and_bare_operands", "crlf_and_tabs")},
             **{f"attributes:{n}": t for n, (t, _) in ATTRIBUTES.items()},
             **{f"printed:{n}": t for n, t in PRINTED.items()}}


def canonical_renames(text: str) -> dict[tuple[str, str], str]:
    """XLA's renames of a canonical printing: every instruction there is written
    `tmp_N`, so XLA's `tmp_N.K` is a `tmp_N` the text reuses."""
    return {(c.name, i.name): i.name.rsplit(".", 1)[0] for c in xla_proto(text).computations
            for i in c.instructions if re.fullmatch(r"tmp_[0-9]+\.[0-9]+", i.name)}


def _printings():
    """(module, printing) pairs. A canonical printing puts called computations
    inline, where the chain has a known bug (seen here outside fusion bodies)."""
    for name, text in REPRINTED.items():
        for printing in PRINT_OPTIONS:
            yield pytest.param(name, printing, id=f"{name}-{printing}",
                               marks=INLINE_COMPUTATION_BUG if printing == "canonical"
                               and (_inline(text) or name in INLINE_RENAMED) else ())


def _inline(text: str) -> bool:
    """Whether XLA's canonical printing of `text` has an inline computation no fusion calls."""
    try:
        want = expected(xla_hlo.hlo_module_from_text(xla_text(text)).to_string(PRINT_OPTIONS["canonical"]))
    except Exception:  # XLA cannot read some of its canonical printings back (see the test)
        return False
    return any(c.name.split(".")[0] == "_" and not want.fused(c.name) for c in want.proto.computations)


@pytest.mark.parametrize("name,printing", list(_printings()))
def test_xlas_printings_go_through_the_chain(name, printing):
    """XLA's own printing of a module, under each of its print options, is
    input the chain takes, with every edge XLA reads in the original."""
    text = xla_hlo.hlo_module_from_text(xla_text(REPRINTED[name])).to_string(PRINT_OPTIONS[printing])
    if printing == "canonical" and name == "printed:execution_thread_and_async":
        with pytest.raises(Exception, match="execution_thread"):  # XLA cannot read it back itself
            xla_hlo.hlo_module_from_text(text)
        return
    if printing == "canonical":
        assert re.search(r"tmp_[0-9]+ = ", text) and "control-predecessors" not in text
        through_the_chain(text, canonical_renames(text))
        return
    result, want = through_the_chain(text)
    assert len(want.edges) == len(expected(REPRINTED[name]).edges) > 0


# --------------------------------------------------------------------------
# `%t#i` operands (newer XLA prints them; jaxlib 0.10.2's parser does not read them)
# --------------------------------------------------------------------------

HASH = {
    "entry": ("""
        HloModule m
        ENTRY %main (a: f32[4], i: s32[]) -> (f32[4], (s32[], f32[4])) {
          %a = f32[4]{0} parameter(0)
          %i = s32[] parameter(1)
          %inner = (s32[], f32[4]{0}) tuple(%i, %a)
          %t = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%a, %inner)
          %n = f32[4]{0} negate(%t#0)
          %m = f32[4]{0} add(f32[4]{0} %t#0, %n), control-predecessors={%n}
          ROOT %r = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%m, %t#1), control-predecessors={%inner}
        }
    """, [("main", "n", "m"), ("main", "inner", "r")]),
    "while_body_scheduled": ("""
        HloModule m, is_scheduled=true

        %cond (s: (s32[], f32[4])) -> pred[] {
          %s = (s32[], f32[4]{0}) parameter(0)
          %k = s32[] constant(3)
          ROOT %lt = pred[] compare(%s#0, %k), direction=LT
        }

        %body (s.1: (s32[], f32[4])) -> (s32[], f32[4]) {
          %s.1 = (s32[], f32[4]{0}) parameter(0)
          %one = s32[] constant(1)
          %next = s32[] add(%s.1#0, %one)
          %c = f32[4]{0} copy(%s.1#1)
          %d = f32[4]{0} negate(%s.1#1), control-predecessors={%c}
          ROOT %o = (s32[], f32[4]{0}) tuple(%next, %d)
        }

        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          %z = s32[] constant(0)
          %init = (s32[], f32[4]{0}) tuple(%z, %x)
          %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
          ROOT %res = f32[4]{0} copy(%w#1), control-predecessors={%w}
        }
    """, [("body", "c", "d"), ("main", "w", "res")]),
    "of_an_inferred_tuple_without_header": ("""
        ENTRY e {
          p = f32[4] parameter(0)
          t = tuple(p, p)
          c = copy(%t#1)
          ROOT r = add(%t#0, c), control-predecessors={c}
        }
    """, [("e", "c", "r")]),
}
HASH = {name: (hand(text), edges) for name, (text, edges) in HASH.items()}


@pytest.mark.parametrize("name", HASH)
def test_tuple_element_operands_go_through_the_chain(name):
    text, edges = HASH[name]
    if not xla_reads_tuple_element_operands():
        with pytest.raises(Exception):
            xla_hlo.hlo_module_from_text(text)  # jaxlib 0.10.2 does not read `#i`: the chain makes them explicit
    result, want = through_the_chain(text, {}, edges)
    assert "#" not in result.hlo.split("\n", 1)[1]  # XLA prints explicit get-tuple-elements


# The same modules with the get-tuple-elements written out, named as XLA names them.
HASH_EXPLICIT = {
    "entry": hand("""
        HloModule m
        ENTRY %main (a: f32[4], i: s32[]) -> (f32[4], (s32[], f32[4])) {
          %a = f32[4]{0} parameter(0)
          %i = s32[] parameter(1)
          %inner = (s32[], f32[4]{0}) tuple(%i, %a)
          %t = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%a, %inner)
          %t_0 = f32[4]{0} get-tuple-element(%t), index=0
          %n = f32[4]{0} negate(%t_0)
          %m = f32[4]{0} add(f32[4]{0} %t_0, %n), control-predecessors={%n}
          %t_1 = (s32[], f32[4]{0}) get-tuple-element(%t), index=1
          ROOT %r = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%m, %t_1), control-predecessors={%inner}
        }
    """),
    "while_body_scheduled": hand("""
        HloModule m, is_scheduled=true

        %cond (s: (s32[], f32[4])) -> pred[] {
          %s = (s32[], f32[4]{0}) parameter(0)
          %k = s32[] constant(3)
          %s_0 = s32[] get-tuple-element(%s), index=0
          ROOT %lt = pred[] compare(%s_0, %k), direction=LT
        }

        %body (s.1: (s32[], f32[4])) -> (s32[], f32[4]) {
          %s.1 = (s32[], f32[4]{0}) parameter(0)
          %one = s32[] constant(1)
          %s.1_0 = s32[] get-tuple-element(%s.1), index=0
          %next = s32[] add(%s.1_0, %one)
          %s.1_1 = f32[4]{0} get-tuple-element(%s.1), index=1
          %c = f32[4]{0} copy(%s.1_1)
          %d = f32[4]{0} negate(%s.1_1), control-predecessors={%c}
          ROOT %o = (s32[], f32[4]{0}) tuple(%next, %d)
        }

        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          %z = s32[] constant(0)
          %init = (s32[], f32[4]{0}) tuple(%z, %x)
          %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
          %w_1 = f32[4]{0} get-tuple-element(%w), index=1
          ROOT %res = f32[4]{0} copy(%w_1), control-predecessors={%w}
        }
    """),
}


@pytest.mark.parametrize("name", HASH_EXPLICIT)
def test_tuple_element_operands_say_what_the_explicit_module_says(name):
    """`%t#i` is the explicit get-tuple-element: the chain says the same of both."""
    with_hash, edges = HASH[name]
    explicit, _ = through_the_chain(HASH_EXPLICIT[name], {}, edges)
    hashed, _ = through_the_chain(with_hash, {}, edges)
    assert hashed.report.edges == explicit.report.edges
    assert hashed.hlo == explicit.hlo


# The made get-tuple-element of `%t#1` takes XLA's name for it; the user's `t_1` stays `t_1`.
HASH_COLLIDING = hand("""
    HloModule m
    ENTRY %main (a: f32[4]) -> f32[4] {
      %a = f32[4]{0} parameter(0)
      %t = (f32[4]{0}, f32[4]{0}) tuple(%a, %a)
      %x = f32[4]{0} negate(%t#1)
      %t_1 = f32[4]{0} abs(%x), control-predecessors={%x}
      ROOT %r = f32[4]{0} add(%t_1, %t#1), control-predecessors={%t_1}
    }
""")


def _xla_renames_the_users_t_1() -> bool:
    names = {i.name: i.opcode for i in xla_proto(HASH_COLLIDING).computations[0].instructions}
    return names.get("t_1.1") == "abs"


# A chain bug these tests found (reported, not fixed here), on jaxlib 0.12: XLA
# names the get-tuple-element it makes for `%t#1` `t_1` and renames the user's
# `t_1` to `t_1.1`; names.py's alignment gives up on the computation (a written
# name that XLA also uses) and the report says `t_1.1`.
@pytest.mark.xfail(_xla_renames_the_users_t_1(), strict=True,
                   reason="chain bug: a written name XLA gives to a get-tuple-element it made stays XLA's rename")
def test_a_name_the_text_uses_beside_xlas_name_for_a_tuple_element():
    proto = xla_proto(HASH_COLLIDING)
    names = {i.name: i.opcode for i in proto.computations[0].instructions}
    # jaxlib 0.12 names the element `t_1` and renames the user's abs `t_1.1`;
    # jaxlib 0.10.2 reads the chain's explicit form, which names the element `t_1.1`.
    renamed = {("main", "t_1.1"): "t_1"} if names.get("t_1.1") == "abs" else {}
    through_the_chain(HASH_COLLIDING, renamed, [("main", "x", "t_1"), ("main", "t_1", "r")])


# --------------------------------------------------------------------------
# Random modules
# --------------------------------------------------------------------------

_OPS = {"negate": 1, "abs": 1, "copy": 1, "exponential": 1, "add": 2, "multiply": 2, "maximum": 2}
_NAME_STYLES = ["v{}", "copy.{}", "add-{}.1", "x_{}", "fusion.{}.clone"]


@st.composite
def random_modules(draw):
    """A module of elementwise ops, names in one of XLA's styles, operands with
    and without shapes, metadata strings full of HLO punctuation, control edges."""
    n = draw(st.integers(1, 8))
    style = draw(st.sampled_from(_NAME_STYLES))
    names = ["p0"] + [style.format(i) for i in range(n)]
    lines, edges, operands = ["  %p0 = f32[4]{0} parameter(0)"], [], {}
    for i in range(1, n + 1):
        name = names[i]
        op = draw(st.sampled_from(sorted(_OPS)))
        ops = [names[draw(st.integers(0, i - 1))] for _ in range(_OPS[op])]
        operands[name] = ops
        shaped = draw(st.booleans())
        text = f"  {'ROOT ' if i == n else ''}%{name} = f32[4]{{0}} {op}(" + ", ".join(
            ("f32[4]{0} " if shaped else "") + "%" + o for o in ops) + ")"
        if draw(st.booleans()):
            op_name = draw(st.text(st.sampled_from('ab {}(),=%#"\\/é*\n'), max_size=12))
            escaped = op_name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            text += f', metadata={{op_name="{escaped}" source_line={i}}}'
        preds = draw(st.lists(st.sampled_from(names[:i]), unique=True, max_size=3))
        if preds:
            text += ", control-predecessors={" + ", ".join("%" + p for p in preds) + "}"
            edges.extend(("main", p, name) for p in preds)
        lines.append(text)
    text = "HloModule random\n\nENTRY %main (p0: f32[4]) -> f32[4] {\n" + "\n".join(lines) + "\n}\n"
    return text, edges, operands


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_modules())
def test_random_modules_go_through_the_chain(case):
    text, edges, operands = case
    result, want = through_the_chain(text, {}, edges)
    program = {i.name: i for i in result.module().instructions() if i.computation == "main"}
    for name, ops in operands.items():
        assert [o.name for o in program[name].operands] == ops, name


# --------------------------------------------------------------------------
# Refusals: XLA's, at XLA's line and column, in one line
# --------------------------------------------------------------------------

# jaxlib's parser on stdin, in a child: it may abort. Its complaint on stdout, exit 1.
_JUDGE = """\
import sys
import jaxlib._hlo as xla_hlo
try:
    xla_hlo.hlo_module_from_text(sys.stdin.buffer.read().decode("utf-8"))
except Exception as err:
    sys.stdout.write(str(err))
    sys.exit(1)
"""


@dataclass(frozen=True)
class Verdict:
    """jaxlib's parser's own verdict on a text, asked in a child process."""

    aborted: bool
    place: str = ""      # `in.hlo:L:C`, XLA's first `was parsing L:C`
    said: str = ""       # its first error message there
    then: str | None = None  # its next message, where that is at the same place

    def matches(self, message: str) -> bool:
        """Whether the chain's one line is this verdict: XLA's first message at
        XLA's place (`in.hlo:L:C: XLA's parser: MSG`); where that message only
        leads in (it ends in `:`), the line may add XLA's next one at the same place."""
        head = f"{self.place}: XLA's parser: {self.said}"
        return message == head or (self.said.endswith(":") and self.then is not None
                                   and message == f"{head} {self.then}")


def xla_verdict(text: str) -> Verdict:
    """jaxlib's parser on the text it is given for `text` (`xla_text`), in a
    child process, where it may abort."""
    done = subprocess.run([sys.executable, "-c", _JUDGE], input=xla_text(text).encode(), capture_output=True,
                          timeout=300)
    if done.returncode < 0:
        return Verdict(aborted=True)
    assert done.returncode == 1, "XLA's parser takes this input: the test is wrong"
    errors = re.findall(r"was parsing (\d+):(\d+): error: (.*)", done.stdout.decode("utf-8", "replace"))
    assert errors, done.stdout
    (line, column, said), rest = errors[0], errors[1:]
    then = rest[0][2].strip() if rest and rest[0][:2] == (line, column) else None
    return Verdict(False, f"{SOURCE}:{line}:{column}", said.strip(), then)


def refused(text: str, isolate: bool) -> str:
    with pytest.raises(XlaRejected) as info:
        pipeline.run(text, isolate=isolate, source_name=SOURCE)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


REFUSED = {
    "shape_xla_cannot_infer": "ENTRY e {\n  p = f32[4] parameter(0)\n  c = constant(1)\n  ROOT r = f32[4] add(p, p)\n}\n",
    "undefined_operand": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                         "  ROOT %n = f32[] add(%a, %nope)\n}\n",
    "undefined_control_predecessor": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                                     "  ROOT %n = f32[] negate(%a), control-predecessors={%a, %ghost}\n}\n",
    "operand_before_its_definition": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                                     "  %n = f32[] negate(%b)\n  ROOT %b = f32[] abs(%a)\n}\n",
    "control_predecessor_before_its_definition":
        "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
        "  %n = f32[] negate(%a), control-predecessors={%b}\n  ROOT %b = f32[] abs(%a)\n}\n",
    "a_name_of_a_later_computation": "HloModule m\n%f (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n"
                                     "  ROOT %n = f32[] negate(%a)\n}\n\nENTRY %main (a: f32[]) -> f32[] {\n"
                                     "  %a = f32[] parameter(0)\n  ROOT %c = f32[] call(%a), to_apply=%f\n}\n",
    "an_attribute_name_as_operand": "HloModule m\nENTRY %main (a: (f32[], f32[])) -> f32[] {\n"
                                    "  %a = (f32[], f32[]) parameter(0)\n  %g = f32[] get-tuple-element(%a), index=0\n"
                                    "  %n = f32[] add(%g, %index)\n  ROOT %h = f32[] get-tuple-element(%a), index=1\n}\n",
    "duplicate_instruction": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                             "  %n = f32[] negate(%a)\n  ROOT %n = f32[] abs(%a)\n}\n",
    "duplicate_computation": "HloModule m\n%f (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n\n"
                             "%f (q: f32[]) -> f32[] {\n  ROOT %q = f32[] parameter(0)\n}\n\n"
                             "ENTRY %main (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n",
    "unterminated_at_the_end": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                               "  ROOT %n = f32[] negate(%a)\n",
    "unterminated_before_the_next_computation": "HloModule m\n%f (p: f32[]) -> f32[] {\n"
                                                "  ROOT %p = f32[] parameter(0)\n\nENTRY %main (a: f32[]) -> f32[] {\n"
                                                "  ROOT %a = f32[] parameter(0)\n}\n",
    "no_module": "this is not HLO\n",
    "missing_equals": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                      "  ROOT %n f32[] negate(%a)\n}\n",
    "colon_equals": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                    "  ROOT %n := f32[] negate(%a)\n}\n",
    "header_attribute_without_equals": "HloModule m, is_scheduled true\nENTRY %main (a: f32[]) -> f32[] {\n"
                                       "  ROOT %a = f32[] parameter(0)\n}\n",
    "unknown_called_computation": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                                  "  ROOT %c = f32[] call(%a), to_apply=nowhere\n}\n",
    "called_computation_after_its_caller": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n"
                                           "  %a = f32[] parameter(0)\n  ROOT %c = f32[] call(%a), to_apply=%f\n}\n\n"
                                           "%f (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n",
    "unterminated_string": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n"
                           "  ROOT %a = f32[] parameter(0), metadata={op_name=\"oops}\n}\n",
    "an_instruction_waiting_for_itself": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                                         "  ROOT %n = f32[] negate(%a), control-predecessors={%n}\n}\n",
}


@pytest.mark.parametrize("name", REFUSED)
def test_a_refusal_is_xlas_at_the_users_line(name):
    text = REFUSED[name]
    want = xla_verdict(text)
    assert not want.aborted  # these XLA refuses in words, at a place
    for isolate in (False, True):
        got = refused(text, isolate=isolate)
        assert want.matches(got), (got, want)


def test_a_shape_xla_cannot_infer_is_refused_where_the_user_left_it_out():
    text = REFUSED["shape_xla_cannot_infer"]
    assert refused(text, isolate=False) == "in.hlo:3:15: XLA's parser: cannot infer shape for opcode: constant"
    assert text.splitlines()[2][14:].startswith("(1)")  # column 15: where the shape should have been read


# `%t#i` past the tuple's elements, or of no tuple: jaxlib 0.10.2's parser
# (on the chain's explicit get-tuple-elements) aborts the process; 0.12 refuses in words.
TUPLE_ELEMENT_REFUSED = {
    "past_an_inferred_tuple": hand("""
        HloModule m
        ENTRY e {
          p = f32[4] parameter(0)
          t = tuple(p, p)
          ROOT r = add(%t#0, %t#2)
        }
    """),
    "past_a_written_tuple": hand("""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %t = (f32[4]{0}, f32[4]{0}) tuple(%a, %a)
          ROOT %r = f32[4]{0} add(%t#0, %t#2)
        }
    """),
    "of_no_tuple": hand("""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          ROOT %r = f32[4]{0} add(%a, %a#0)
        }
    """),
}


@pytest.mark.parametrize("name", TUPLE_ELEMENT_REFUSED)
def test_a_tuple_element_xla_cannot_take_is_refused_in_one_line(name):
    text = TUPLE_ELEMENT_REFUSED[name]
    want = xla_verdict(text)
    got = refused(text, isolate=True)  # isolated only: XLA may abort the process
    if want.aborted:  # one line, and the reason XLA gave
        assert re.fullmatch(rf"{SOURCE}: XLA's parser aborted \(signal [0-9]+\): Check failed: .+", got), got
    else:
        assert want.matches(got), (got, want)


NOT_UTF8 = "HloModule m\nENTRY %main {\n  %a = f32[] parameter(0), metadata={op_name=\"é".encode() + b"\xff\"}\n}\n"
# The column counts characters (`é` is one), not bytes.
NOT_UTF8_COLUMN = len(NOT_UTF8[:NOT_UTF8.index(b"\xff")].decode().split("\n")[-1]) + 1


@pytest.mark.parametrize("data,message", [
    (b"", "in.hlo:1:1: input is empty; expected an HLO module"),
    (b"  \n\n\t", "in.hlo:1:1: input is empty; expected an HLO module"),
    ("\ufeffHloModule m\n".encode(), "in.hlo:1:1: the input starts with a byte-order mark"),
    (NOT_UTF8, f"in.hlo:3:{NOT_UTF8_COLUMN}: input is not UTF-8 text (byte 0xff)"),
], ids=["empty", "blank", "byte-order-mark", "not-utf8"])
def test_what_is_no_text_is_refused_before_xla(data, message):
    with pytest.raises(HloSyntaxError) as info:
        pipeline.run(data, isolate=False, source_name=SOURCE)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
