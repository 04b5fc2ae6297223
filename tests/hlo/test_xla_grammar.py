"""The forms of HLO that people write by hand, as XLA's own unit tests do,
read as XLA's parser reads them.

The oracle is XLA: each input is accepted by `jaxlib._hlo.hlo_module_from_text`,
what the reader builds is written back and XLA prints the same module for
both (`canonical_text`), and the names the reader gives to what the text
leaves unnamed (nested operands, inline computations, the module) are the
names XLA gives them. Names the text reuses across computations stay as
written: XLA renames them (`a` → `a.1`), the chain must not.
"""

from __future__ import annotations

import re
import textwrap

import jaxlib._hlo as xla_hlo
import pytest

from passes.hlo import read_module, write_module
from passes.hlo.xla import XlaRejected
from pipeline.xla import canonical_text


def xla_names(text: str) -> dict[str, list[str]]:
    """Computation → instruction names, as XLA prints the module."""
    printed = xla_hlo.hlo_module_from_text(text).to_string()
    found, current = {}, None
    for line in printed.splitlines():
        head = re.match(r"(?:ENTRY )?%(\S+) .*\{$", line)
        if head:
            current = found.setdefault(head.group(1), [])
            continue
        m = re.match(r"\s+(?:ROOT )?%(\S+) = ", line)
        if m and current is not None:
            current.append(m.group(1))
    return found


def xla_module_name(text: str) -> str:
    return re.match(r"HloModule (\S+?),", xla_hlo.hlo_module_from_text(text).to_string()).group(1)


def read(text: str):
    text = textwrap.dedent(text).strip() + "\n"
    xla_hlo.hlo_module_from_text(text)  # XLA takes it, or the test is wrong
    module = read_module(text, "in.hlo")
    assert canonical_text(write_module(module)) == canonical_text(text)
    return text, module


def shapes(module) -> dict[tuple[str, str], str]:
    return {(c.name, i.name): i.shape.text for c, i in module.instructions()}


def test_no_header_module_is_named_as_xla_names_it():
    text, module = read("""
        ENTRY main {
          p = f32[4] parameter(0)
          e = f32[4] exponential(p)
          ROOT n = f32[4] negate(p), control-predecessors={e}
        }
    """)
    assert module.name == xla_module_name(text) == "module_main"
    assert module.control_edges() == [("main", "e", "n")]


def test_no_header_no_entry_keyword_takes_the_last_computation():
    text, module = read("""
        neg {
          x = f32[4] parameter(0)
          ROOT y = negate(x)
        }
        e {
          x = f32[4] parameter(0)
          ROOT y = f32[4] call(x), to_apply=neg
        }
    """)
    assert module.entry.name == "e"
    assert module.name == xla_module_name(text)


def test_a_leading_comment_before_a_computation():
    text, module = read("""
        // copy insertion adds an edge here
        ENTRY main {
          p = f32[4] parameter(0)
          c = f32[4] copy(p)
          ROOT n = f32[4] negate(p), control-predecessors={c}
        }
    """)
    assert module.control_edges() == [("main", "c", "n")]


def test_inferred_shapes_are_xlas():
    text, module = read("""
        ENTRY main {
          p = f32[4] parameter(0)
          i = s32[] parameter(1)
          t = tuple(p, i)
          g = get-tuple-element(t), index=1
          s = add(g, g)
          c = copy(p)
          ROOT r = tuple(c, s), control-predecessors={g}
        }
    """)
    got = shapes(module)
    assert got[("main", "t")].startswith("(f32[4]") and got[("main", "t")].endswith("s32[])")
    assert got[("main", "g")] == got[("main", "s")] == "s32[]"
    assert module.computation("main").instruction("t").shape.is_tuple
    assert got[("main", "r")] == "(f32[4]{0}, s32[])"


def test_nested_operands_come_before_their_user_named_as_xla_names_them():
    text, module = read("""
        ENTRY main {
          p0 = s32[] parameter(0)
          a = add(p0, s32[] constant(2))
          b = multiply(a, add(p0, s32[] constant(3)))
          ROOT r = tuple(a, b, s32[] constant(7)), control-predecessors={b}
        }
    """)
    ours = [i.name for i in module.computation("main").instructions]
    assert ours == ["p0", "constant.anon", "a", "constant.anon.1", "add.anon", "b", "constant.anon.2", "r"]
    assert set(ours) == set(xla_names(text)["main"])


def test_a_nested_name_avoids_every_name_the_text_uses():
    text, module = read("""
        ENTRY e {
          p = s32[] parameter(0)
          constant.anon = s32[] constant(5)
          ROOT r = add(p, s32[] constant(2)), control-predecessors={constant.anon}
        }
    """)
    assert [i.name for i in module.entry.instructions] == ["p", "constant.anon", "constant.anon.1", "r"]
    assert module.control_edges() == [("e", "constant.anon", "r")]
    assert set(xla_names(text)["e"]) == {"p", "constant.anon", "constant.anon.1", "r"}


def test_names_reused_across_computations_stay_as_written():
    text, module = read("""
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
          ROOT c = copy(a), control-predecessors={w}
        }
    """)
    assert module.control_edges() == [("body", "n", "e"), ("main", "w", "c")]
    assert "n.1" in xla_names(text)["body"]  # XLA renames; the reader keeps the input's names
    assert "n.1" not in {i.name for _, i in module.instructions()}


def test_inline_computations_become_computations_named_as_xla_names_them():
    text, module = read("""
        ENTRY e {
          p = f32[4] parameter(0)
          r = f32[] reduce(p, f32[] constant(0)), dimensions={0}, to_apply={
            x = f32[] parameter(0)
            y = f32[] parameter(1)
            ROOT s = add(x, y)
          }
          ROOT n = f32[] negate(r), control-predecessors={p}
        }
    """)
    assert [c.name for c in module.computations] == ["_", "e"]
    assert set(xla_names(text)) == {"_", "e"}
    assert module.entry.instruction("r").attribute("to_apply") == "%_"


def test_xlas_canonical_printing_reads_back():
    # `HloPrintOptions.canonical()`: tmp_N names and computation bodies inline.
    module = xla_hlo.hlo_module_from_text(textwrap.dedent("""
        HloModule m
        sum {
          x = f32[] parameter(0)
          y = f32[] parameter(1)
          ROOT add = f32[] add(x, y)
        }
        ENTRY main {
          a = f32[4] parameter(0)
          ROOT r = f32[] reduce(a, f32[] constant(0)), dimensions={0}, to_apply=sum
        }
    """))
    text = module.to_string(xla_hlo.HloPrintOptions.canonical())
    assert "to_apply=\n" in text or "to_apply={" in text.replace("\n", "").replace(" ", "")
    read(text)


def test_tuple_element_operand_of_an_inferred_tuple():
    text = textwrap.dedent("""
        HloModule m
        ENTRY e {
          p = f32[4] parameter(0)
          t = tuple(p, p)
          ROOT r = add(%t#0, %t#1)
        }
    """)
    module = read_module(text)
    gte = module.entry.instruction("t_1")  # as XLA 0.12 names it
    assert gte.opcode == "get-tuple-element" and gte.shape.text == "f32[4]{0}"


def test_a_shape_xla_cannot_infer_is_xlas_refusal_at_the_users_line():
    text = "ENTRY e {\n  p = f32[4] parameter(0)\n  c = constant(1)\n  ROOT r = f32[4] add(p, p)\n}\n"
    with pytest.raises(XlaRejected) as info:
        read_module(text, "in.hlo")
    assert str(info.value) == "in.hlo:3:15: XLA's parser: cannot infer shape for opcode: constant"


def test_tuple_element_past_an_inferred_tuple_is_refused():
    text = textwrap.dedent("""
        HloModule m
        ENTRY e {
          p = f32[4] parameter(0)
          t = tuple(p, p)
          ROOT r = add(%t#0, %t#2)
        }
    """)
    with pytest.raises(ValueError) as info:
        read_module(text, "in.hlo")
    assert "%t#2" in str(info.value) and "indices 0 to 1" in str(info.value)
