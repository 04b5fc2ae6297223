"""`passes.hlo.names`: the names as written, beside XLA's parse.

Oracles: XLA's parser (its names, its renames, the order it made its
instructions in) and the chain's reader, which has named instructions as
written for every module of the corpus so far: over every corpus module
XLA reads, both must give the same name to every instruction."""

from __future__ import annotations

from pathlib import Path

import jaxlib._hlo as xla_hlo
import pytest

from passes.hlo import proto, read_module
from passes.hlo.names import scan, written_names

TESTS = Path(__file__).parent.parent
MODULES = sorted([*TESTS.glob("xla_style/*.hlo"), *TESTS.glob("pipeline_dumps/*.hlo"),
                  *TESTS.glob("newer_xla/*.hlo")])


def xla_order(module) -> dict[str, list[tuple[str, str]]]:
    """Each computation's (name, opcode) pairs in the order XLA made them."""
    decoded = proto.decode(module.as_serialized_hlo_module_proto())
    return {c.name: [(i.name, i.opcode) for i in sorted(c.instructions, key=lambda i: proto.local_id(i.id))]
            for c in decoded.computations}


def both_read(path: Path):
    text = path.read_text()
    try:
        return text, xla_hlo.hlo_module_from_text(text), read_module(text)
    except Exception:  # a module of the corpus written to be refused
        return None


CASES = [(p, *r) for p in MODULES if (r := both_read(p)) is not None]


def test_xla_renames_names_in_the_corpus():
    renamed = sum(a.name != b.name for _, _, xla, ours in CASES for c in xla.computations()
                  if c.name in {o.name for o in ours.computations}
                  for a, b in zip(c.instructions(), ours.computation(c.name).instructions))
    assert len(CASES) > 80 and renamed > 50


@pytest.mark.parametrize("path,text,xla,ours", CASES, ids=[c[0].name for c in CASES])
def test_every_instruction_gets_the_name_it_was_written_with(path, text, xla, ours):
    names = written_names(text, xla_order(xla))
    assert names.unaligned == []
    written = {c.name: c for c in ours.computations}
    for computation in xla.computations():
        if computation.name not in written:  # made by XLA's parser (an async start's wrapped computation)
            assert computation.name not in scan(text)
            continue
        mine = written[computation.name].instructions
        theirs = computation.instructions()
        assert len(mine) == len(theirs)
        for as_read, made in zip(mine, theirs):
            assert names.name(computation.name, made.name) == as_read.name
            if as_read.line is not None and names.line(computation.name, made.name) is not None:
                assert names.line(computation.name, made.name) == as_read.line


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
