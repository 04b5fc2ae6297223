"""Forms of HLO as people write them (and XLA's own unit tests): each goes
through the chain with XLA's meaning and the names as written, in this
process and isolated in XLA's child."""

from __future__ import annotations

import collections
import re

import pytest

import pipeline
from grammar_cases import FORMS, INLINE
from grammar_oracle import INLINE_COMPUTATION_BUG, INLINE_NAMES_KEPT, SOURCE, through_the_chain


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
