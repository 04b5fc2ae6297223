"""The HLO text reader: what it builds from everything XLA 0.10.x prints,
and how it rejects what XLA would reject.

Every input that should be valid is first accepted by XLA's own parser
(`jaxlib._hlo.hlo_module_from_text`), so each test is about real HLO syntax.
Error positions are computed from the input text, never copied from output.
"""

from __future__ import annotations

import textwrap

import jaxlib._hlo as xla_hlo
import pytest

from passes.hlo import HloSyntaxError, read_module, write_module
from pipeline.versions import xla_reads_tuple_element_operands
from pipeline.xla import canonical_text


def valid(text: str) -> str:
    """Dedented text that XLA's parser accepts (asserted)."""
    text = textwrap.dedent(text).lstrip("\n")
    xla_hlo.hlo_module_from_text(text)
    return text


def xla_rejects(text: str) -> bool:
    try:
        xla_hlo.hlo_module_from_text(text)
    except Exception:
        return True
    return False


def locate(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """1-based (line, column) of the nth occurrence of `needle` in `text`."""
    index = -1
    for _ in range(nth + 1):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def syntax_error(text: str | bytes, source: str = "in.hlo") -> HloSyntaxError:
    with pytest.raises(HloSyntaxError) as info:
        read_module(text, source=source)
    err = info.value
    # The one-line form a user sees: `source:line:column: message`.
    assert str(err) == f"{source}:{err.line}:{err.column}: {err.message}"
    assert "\n" not in str(err)
    return err


def names(instrs) -> list[str]:
    return [i.name for i in instrs]


# --------------------------------------------------------------------------
# What the reader accepts, and what it builds
# --------------------------------------------------------------------------


def test_operands_with_and_without_shapes_are_the_same_instructions():
    text = valid("""
        HloModule m
        ENTRY %main (a: f32[4], b: f32[4]) -> (f32[4], f32[4]) {
          %a = f32[4]{0} parameter(0)
          %b = f32[4]{0} parameter(1)
          %short = f32[4]{0} add(%a, %b)
          %long = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %b)
          %t = (f32[4]{0}, f32[4]{0}) tuple(%short, f32[4]{0} %long)
          %g = f32[4]{0} get-tuple-element((f32[4]{0}, f32[4]{0}) %t), index=1
          ROOT %r = (f32[4]{0}, f32[4]{0}) tuple(f32[4]{0} %g, %short)
        }
    """)
    entry = read_module(text).entry
    a, b, t = entry.instruction("a"), entry.instruction("b"), entry.instruction("t")
    assert entry.instruction("short").operands == [a, b]
    assert entry.instruction("long").operands == [a, b]
    assert names(t.operands) == ["short", "long"]
    assert entry.instruction("g").operands == [t]
    assert entry.instruction("g").attributes == [("index", "1")]
    assert names(entry.root.operands) == ["g", "short"]
    assert t.shape.is_tuple and [e.text for e in t.shape.elements] == ["f32[4]{0}", "f32[4]{0}"]


def test_names_without_percent_and_computations_without_signature():
    text = valid("""
        HloModule m
        sum {
          x = f32[] parameter(0)
          y = f32[] parameter(1)
          ROOT s = f32[] add(x, y)
        }
        ENTRY main {
          a = f32[4]{0} parameter(0)
          z = f32[] constant(0)
          ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=sum
        }
    """)
    module = read_module(text)
    assert [c.name for c in module.computations] == ["sum", "main"]
    assert module.entry.name == "main" and module.entry.signature is None
    assert names(module.entry.root.operands) == ["a", "z"]
    assert module.entry.root.called_computation_names() == ["sum"]


def test_metadata_with_braces_commas_and_quotes_is_kept_verbatim():
    metadata = r'{op_name="jit(f)/a{b},c \"q\" control-predecessors={%a}" source_file="x,y.py" source_line=7}'
    text = valid(f"""
        HloModule m
        ENTRY %main (a: f32[]) -> f32[] {{
          %a = f32[] parameter(0)
          %c = f32[] copy(%a)
          ROOT %n = f32[] negate(%a), metadata={metadata}, control-predecessors={{%c}}
        }}
    """)
    root = read_module(text).entry.root
    assert root.attribute("metadata") == metadata
    # The text inside the string is not an attribute; the real one after it is.
    assert names(root.control_predecessors) == ["c"]


def test_backend_config_json_with_nested_braces_and_escaped_quotes():
    config = r'{"outer":{"inner":{"k":"v}"}},"q":"he said \"hi\", {","list":[1,{"x":2}]}'
    text = valid(f"""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {{
          %a = f32[4]{{0}} parameter(0)
          %c = f32[4]{{0}} copy(%a)
          ROOT %cc = f32[4]{{0}} custom-call(%a), custom_call_target="foo", backend_config={config}, control-predecessors={{%c}}
        }}
    """)
    root = read_module(text).entry.root
    assert root.attribute("backend_config") == config
    assert root.attribute("custom_call_target") == '"foo"'
    assert names(root.control_predecessors) == ["c"]


def test_backend_config_string_form_with_escaped_quotes():
    config = r'"{\"a\":{\"b\":\"c, d}\"}} , control-predecessors={%x}"'
    text = valid(f"""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {{
          %a = f32[4]{{0}} parameter(0)
          ROOT %cc = f32[4]{{0}} custom-call(%a), custom_call_target="foo", backend_config={config}
        }}
    """)
    root = read_module(text).entry.root
    assert root.attribute("backend_config") == config
    assert root.control_predecessors == []
    assert names(root.operands) == ["a"]


def test_frontend_attributes_on_module_and_instruction():
    text = valid("""
        HloModule m, frontend_attributes={a="1",b="x,y"}
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0), frontend_attributes={_xla_foo="bar",k="{1,2}"}
          ROOT %n = f32[4]{0} negate(%a), frontend_attributes={z="1"}
        }
    """)
    module = read_module(text)
    assert module.attribute("frontend_attributes") == '{a="1",b="x,y"}'
    assert module.entry.instruction("a").attribute("frontend_attributes") == '{_xla_foo="bar",k="{1,2}"}'


def test_sharding_forms():
    text = valid("""
        HloModule m
        ENTRY %main (a: f32[4,2]) -> (f32[4,2], f32[4,2]) {
          %a = f32[4,2]{1,0} parameter(0), sharding={devices=[2,1]0,1}
          %n = f32[4,2]{1,0} negate(%a), sharding={replicated}
          %m = f32[4,2]{1,0} abs(%a), sharding={maximal device=0}
          ROOT %t = (f32[4,2]{1,0}, f32[4,2]{1,0}) tuple(%n, %m), sharding={{replicated}, {devices=[2,1]0,1}}
        }
    """)
    entry = read_module(text).entry
    assert entry.instruction("a").attribute("sharding") == "{devices=[2,1]0,1}"
    assert entry.instruction("m").attribute("sharding") == "{maximal device=0}"
    assert entry.root.attribute("sharding") == "{{replicated}, {devices=[2,1]0,1}}"
    assert names(entry.root.operands) == ["n", "m"]


def test_index_comments_in_shapes_and_operand_lists():
    seven = "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], s32[])"
    text = valid(f"""
        HloModule m
        ENTRY %main (a: f32[], i: s32[]) -> {seven} {{
          %a = f32[] parameter(0)
          %i = s32[] parameter(1)
          ROOT %t = {seven} tuple(%a, %a, %a, %a, %a, /*index=5*/%a, %i)
        }}
    """)
    root = read_module(text).entry.root
    assert names(root.operands) == ["a"] * 6 + ["i"]
    assert [e.text for e in root.shape.elements] == ["f32[]"] * 6 + ["s32[]"]


def test_stack_frame_sections_are_kept_and_the_computations_follow():
    text = valid("""
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
          ROOT %n = f32[] negate(%a), metadata={op_name="jit(f)/neg" stack_frame_id=1}
        }
    """)
    module = read_module(text)
    assert module.stack_frame_text.startswith("FileNames\n1 \"/tmp/prog.py\"")
    assert module.stack_frame_text.endswith("1 {file_location_id=1 parent_frame_id=1}")
    for section in ("FunctionNames", "FileLocations", "StackFrames"):
        assert f"\n{section}\n" in module.stack_frame_text
    assert [c.name for c in module.computations] == ["main"]
    assert module.entry.root.attribute("metadata") == '{op_name="jit(f)/neg" stack_frame_id=1}'


def test_execution_thread_trailer():
    text = valid("""
        HloModule m
        %called (p: f32[]) -> f32[] {
          ROOT %p = f32[] parameter(0)
        }, execution_thread="host"

        ENTRY %main (a: f32[]) -> f32[] {
          %a = f32[] parameter(0)
          ROOT %c = f32[] call(%a), to_apply=%called
        }
    """)
    module = read_module(text)
    assert module.computation("called").trailing_attributes == [("execution_thread", '"host"')]
    assert module.entry.trailing_attributes == []
    assert module.entry.root.called_computation_names() == ["called"]


@pytest.mark.parametrize("shape", [
    "f32[8,128]{1,0:T(8,128)}",
    "f32[8,128]{1,0:T(8,128)(2,1)S(1)}",
    "bf16[16,256]{0,1:T(8,128)(2,1)}",
])
def test_tiled_layouts_are_kept_exactly(shape):
    text = valid(f"""
        HloModule m
        ENTRY %main (a: {shape.split("{")[0]}) -> {shape.split("{")[0]} {{
          %a = {shape} parameter(0)
          ROOT %n = {shape} negate({shape} %a)
        }}
    """)
    entry = read_module(text).entry
    assert entry.root.shape.text == shape
    assert names(entry.root.operands) == ["a"]


def test_dynamic_dimensions():
    text = valid("""
        HloModule m
        ENTRY %main (a: f32[<=4,2]) -> f32[<=4,2] {
          %a = f32[<=4,2]{1,0} parameter(0)
          ROOT %n = f32[<=4,2]{1,0} negate(f32[<=4,2]{1,0} %a)
        }
    """)
    entry = read_module(text).entry
    assert entry.root.shape.text == "f32[<=4,2]{1,0}"
    assert names(entry.root.operands) == ["a"]


def test_tokens_and_after_all():
    text = valid("""
        HloModule m
        ENTRY %main (a: f32[]) -> f32[] {
          %a = f32[] parameter(0)
          %t0 = token[] after-all()
          %t1 = token[] after-all(%t0, token[] %t0)
          ROOT %n = f32[] negate(%a), control-predecessors={%t1}
        }
    """)
    entry = read_module(text).entry
    t0, t1 = entry.instruction("t0"), entry.instruction("t1")
    assert t0.shape.is_token and t0.operands == []
    assert t1.operands == [t0, t0]
    assert entry.root.control_predecessors == [t1]


def test_async_start_done_with_calls():
    text = valid("""
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
    """)
    module = read_module(text)
    start = module.entry.instruction("start")
    assert start.called_computation_names() == ["async_comp"]
    assert [e.text for e in start.shape.elements] == ["(f32[4]{0})", "f32[4]{0}", "s32[]"]
    assert start.shape.elements[0].is_tuple
    assert module.control_edges() == [("main", "start", "b"), ("main", "b", "done")]


def test_send_recv_with_after_all_tokens():
    text = valid("""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %tok = token[] after-all()
          %send = (f32[4]{0}, u32[], token[]) send(%a, %tok), channel_id=1, is_host_transfer=true
          %send-done = token[] send-done(%send), channel_id=1, is_host_transfer=true
          %tok2 = token[] after-all()
          %recv = (f32[4]{0}, u32[], token[]) recv(%tok2), channel_id=2, is_host_transfer=true, control-predecessors={%send}
          %recv-done = (f32[4]{0}, token[]) recv-done(%recv), channel_id=2, is_host_transfer=true, control-predecessors={%send-done}
          ROOT %v = f32[4]{0} get-tuple-element(%recv-done), index=0
        }
    """)
    module = read_module(text)
    entry = module.entry
    assert names(entry.instruction("send").operands) == ["a", "tok"]
    assert entry.instruction("send-done").shape.is_token
    assert module.control_edges() == [("main", "send", "recv"), ("main", "send-done", "recv-done")]
    assert entry.root.attribute("index") == "0"


def test_collective_and_copy_start_done():
    text = valid("""
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
    """)
    module = read_module(text)
    entry = module.entry
    assert [i.opcode for i in entry.instructions] == [
        "parameter", "all-reduce-start", "copy-start", "negate", "all-reduce-done", "copy-done", "add"]
    assert entry.instruction("ars").called_computation_names() == ["sum"]
    assert names(entry.instruction("b").control_predecessors) == ["cs", "ars"]  # order kept
    assert entry.instruction("cd").operands == [entry.instruction("cs")]


def test_conditional_branch_computations_and_edges_inside_branches():
    text = valid("""
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

        ENTRY %main (i: s32[], x: f32[4]) -> f32[4] {
          %i = s32[] parameter(0)
          %x = f32[4]{0} parameter(1)
          ROOT %cond = f32[4]{0} conditional(%i, %x, %x), branch_computations={%b0, %b1}
        }
    """)
    module = read_module(text)
    assert module.entry.root.called_computation_names() == ["b0", "b1"]
    assert module.control_edges() == [("b1", "c", "a")]


def test_every_kind_of_called_computation_is_named():
    text = valid("""
        HloModule m
        %ge (a: f32[], b: f32[]) -> pred[] {
          %a = f32[] parameter(0)
          %b = f32[] parameter(1)
          ROOT %c = pred[] compare(%a, %b), direction=GE
        }

        %add (x: f32[], y: f32[]) -> f32[] {
          %x = f32[] parameter(0)
          %y = f32[] parameter(1)
          ROOT %s = f32[] add(%x, %y)
        }

        ENTRY %main (o: f32[4], s: f32[2]) -> (f32[4], f32[]) {
          %o = f32[4]{0} parameter(0)
          %s = f32[2]{0} parameter(1)
          %z = f32[] constant(0)
          %sas = f32[4]{0} select-and-scatter(%o, %s, %z), window={size=2 stride=2}, select=%ge, scatter=%add
          %cc = f32[] custom-call(%z, %z), custom_call_target="x", called_computations={%add}
          ROOT %t = (f32[4]{0}, f32[]) tuple(%sas, %cc)
        }
    """)
    entry = read_module(text).entry
    assert entry.instruction("sas").called_computation_names() == ["ge", "add"]
    assert entry.instruction("cc").called_computation_names() == ["add"]
    assert entry.root.called_computation_names() == []


def test_names_repeated_across_computations_are_separate_instructions():
    # XLA accepts the same instruction name in two computations.
    text = valid("""
        HloModule m
        %f (a: f32[]) -> f32[] {
          ROOT %a = f32[] parameter(0)
        }

        ENTRY %main (a: f32[]) -> f32[] {
          %a = f32[] parameter(0)
          ROOT %c = f32[] call(%a), to_apply=%f
        }
    """)
    module = read_module(text)
    inner, outer = module.computation("f").instruction("a"), module.entry.instruction("a")
    assert inner is not outer
    assert module.entry.root.operands == [outer]


def test_root_need_not_be_last_and_entry_is_marked():
    text = valid("""
        HloModule m
        ENTRY %main (a: f32[]) -> f32[] {
          %a = f32[] parameter(0)
          ROOT %n = f32[] negate(%a)
          %unused = f32[] abs(%a)
        }
    """)
    module = read_module(text)
    assert module.entry.is_entry
    assert module.entry.root.name == "n"
    assert names(module.entry.instructions) == ["a", "n", "unused"]


# --------------------------------------------------------------------------
# `%t#i` operands: made into explicit get-tuple-element instructions
# --------------------------------------------------------------------------

# As newer XLA prints it; `%t#i` may also follow an operand shape.
HASH = """\
HloModule m
ENTRY %main (a: f32[4], i: s32[]) -> (f32[4], (s32[], f32[4])) {
  %a = f32[4]{0} parameter(0)
  %i = s32[] parameter(1)
  %inner = (s32[], f32[4]{0}) tuple(%i, %a)
  %t = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%a, %inner)
  %n = f32[4]{0} negate(%t#0)
  %m = f32[4]{0} add(f32[4]{0} %t#0, %n)
  ROOT %r = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%m, %t#1)
}
"""


def test_tuple_element_operands_become_get_tuple_elements():
    entry = read_module(HASH).entry
    t = entry.instruction("t")
    gte0, gte1 = entry.instruction("t_0"), entry.instruction("t_1")
    for gte, index in ((gte0, 0), (gte1, 1)):
        assert gte.opcode == "get-tuple-element"
        assert gte.operands == [t]
        assert gte.attributes == [("index", str(index))]
        assert gte.shape == t.shape.elements[index]
    assert gte1.shape.is_tuple  # a nested tuple element keeps its tuple shape
    # One instruction per (tuple, index), defined right before its first user.
    assert entry.instruction("n").operands == [gte0]
    assert entry.instruction("m").operands == [gte0, entry.instruction("n")]
    assert entry.root.operands == [entry.instruction("m"), gte1]
    assert names(entry.instructions) == ["a", "i", "inner", "t", "t_0", "n", "m", "t_1", "r"]
    written = write_module(read_module(HASH))
    if xla_reads_tuple_element_operands():
        # XLA reads `#i` itself: the same module, its get-tuple-elements named as ours.
        assert canonical_text(written) == canonical_text(HASH)
        assert "%t_0 = " in canonical_text(HASH) and "%t_1 = " in canonical_text(HASH)
    else:
        assert xla_rejects(HASH)  # jaxlib 0.10.2 does not know `#i` ...
        xla_hlo.hlo_module_from_text(written)  # ... but it parses what the reader writes.


def test_tuple_element_names_do_not_collide_with_later_definitions():
    text = """\
HloModule m
ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %t = (f32[4]{0}, f32[4]{0}) tuple(%a, %a)
  %x = f32[4]{0} negate(%t#1)
  %t_1 = f32[4]{0} abs(%x)
  ROOT %r = f32[4]{0} add(%t_1, %t#1)
}
"""
    entry = read_module(text).entry
    made = entry.instruction("x").operands[0]
    # The input's names stay (XLA 0.12 would rename the user's %t_1 instead).
    assert made.opcode == "get-tuple-element" and made.name == "t_1.1"
    assert entry.instruction("t_1").opcode == "abs"
    assert entry.root.operands == [entry.instruction("t_1"), made]
    xla_hlo.hlo_module_from_text(write_module(read_module(text)))


def test_tuple_element_index_out_of_range_is_an_error():
    text = """\
HloModule m
ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %t = (f32[4]{0}, f32[4]{0}) tuple(%a, %a)
  ROOT %r = f32[4]{0} add(%t#0, %t#2)
}
"""
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%t#2")
    assert "%t#2" in err.message and "2 element(s)" in err.message


def test_tuple_element_of_a_non_tuple_is_an_error():
    text = """\
HloModule m
ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %r = f32[4]{0} add(%a, %a#0)
}
"""
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%a#0")
    assert "not a tuple" in err.message and "f32[4]{0}" in err.message


# --------------------------------------------------------------------------
# Errors: one line, with the line and column of the problem
# --------------------------------------------------------------------------


def test_undefined_operand():
    text = """\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %n = f32[] add(%a, %nope)
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%nope")
    assert "%nope" in err.message and "not defined" in err.message


def test_undefined_control_predecessor_points_at_its_name():
    text = """\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %n = f32[] negate(%a), control-predecessors={%a, %ghost}
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%ghost")
    assert "control predecessor %ghost" in err.message


@pytest.mark.parametrize("role,line", [
    ("operand", "  %n = f32[] negate(%b)"),
    ("control predecessor", "  %n = f32[] negate(%a), control-predecessors={%b}"),
])
def test_use_before_definition(role, line):
    text = f"""\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
{line}
  ROOT %b = f32[] abs(%a)
}}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%b")
    assert f"{role} %b before it is defined" in err.message


def test_name_defined_only_in_a_later_computation_is_not_called_a_forward_reference():
    text = """\
HloModule m
%f (p: f32[]) -> f32[] {
  %p = f32[] parameter(0)
  ROOT %n = f32[] negate(%a)
}

ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %c = f32[] call(%a), to_apply=%f
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%a)")
    assert "not defined in this computation" in err.message
    assert "before it is defined" not in err.message


def test_an_attribute_name_is_not_taken_for_a_later_definition():
    text = """\
HloModule m
ENTRY %main (a: (f32[], f32[])) -> f32[] {
  %a = (f32[], f32[]) parameter(0)
  %g = f32[] get-tuple-element(%a), index=0
  %n = f32[] add(%g, %index)
  ROOT %h = f32[] get-tuple-element(%a), index=1
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%index")
    assert "not defined in this computation" in err.message


def test_duplicate_instruction_name():
    text = """\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %n = f32[] negate(%a)
  ROOT %n = f32[] abs(%a)
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%n", nth=1)
    assert "duplicate instruction name %n" in err.message
    assert f"line {locate(text, '%n')[0]}" in err.message  # where the first one is


def test_duplicate_computation_name():
    text = """\
HloModule m
%f (p: f32[]) -> f32[] {
  ROOT %p = f32[] parameter(0)
}

%f (q: f32[]) -> f32[] {
  ROOT %q = f32[] parameter(0)
}

ENTRY %main (a: f32[]) -> f32[] {
  ROOT %a = f32[] parameter(0)
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%f", nth=1)
    assert "duplicate computation name %f" in err.message


def test_unterminated_computation_at_end_of_input():
    text = """\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %n = f32[] negate(%a)
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "{")  # the brace never closed
    assert "computation %main is not terminated" in err.message
    assert "'}'" in err.message


def test_unterminated_computation_before_the_next_one():
    text = """\
HloModule m
%f (p: f32[]) -> f32[] {
  ROOT %p = f32[] parameter(0)

ENTRY %main (a: f32[]) -> f32[] {
  ROOT %a = f32[] parameter(0)
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "{")
    assert "computation %f is not terminated" in err.message
    assert f"line {locate(text, 'ENTRY')[0]}" in err.message


def test_non_utf8_input():
    # A two-byte character before the bad byte: columns count characters.
    data = "HloModule m\nENTRY %main {\n  %a = f32[] parameter(0), metadata={op_name=\"é".encode() + b"\xff\"}\n}\n"
    err = syntax_error(data)
    prefix = data[: data.index(b"\xff")].decode()
    assert (err.line, err.column) == (3, len(prefix.split("\n")[-1]) + 1)
    assert "not UTF-8" in err.message and "0xff" in err.message


@pytest.mark.parametrize("text", ["", "  \n\n\t"], ids=["empty", "blank"])
def test_empty_input(text):
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == (1, 1)
    assert "empty" in err.message and "HLO module" in err.message


def test_text_that_is_no_module_names_both_starts_xla_takes():
    text = "this is not HLO\n"
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == (1, 1)
    assert "expected 'HloModule' or a computation" in err.message


@pytest.mark.parametrize("line,before", [
    ("  ROOT %n f32[] negate(%a)", "f32[] negate"),
    ("  ROOT %n := f32[] negate(%a)", ":="),
])
def test_missing_equals(line, before):
    text = f"""\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
{line}
}}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, before)
    assert "expected '='" in err.message and "%n" in err.message


def test_missing_equals_in_module_header_attribute():
    text = """\
HloModule m, is_scheduled true
ENTRY %main (a: f32[]) -> f32[] {
  ROOT %a = f32[] parameter(0)
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "true")
    assert "expected '='" in err.message and "is_scheduled" in err.message


@pytest.mark.parametrize("attribute", [
    "to_apply=%nowhere",
    "to_apply=nowhere",
])
def test_unknown_called_computation(attribute):
    text = f"""\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  ROOT %c = f32[] call(%a), {attribute}
}}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, attribute.split("=")[1])
    assert "%nowhere" in err.message and "does not define" in err.message


def test_unknown_computation_in_a_list_and_in_select_and_scatter():
    text = """\
HloModule m
%ge (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE
}

ENTRY %main (o: f32[4], s: f32[2], i: s32[]) -> f32[4] {
  %o = f32[4]{0} parameter(0)
  %s = f32[2]{0} parameter(1)
  %i = s32[] parameter(2)
  %z = f32[] constant(0)
  %sel = f32[4]{0} select-and-scatter(%o, %s, %z), window={size=2 stride=2}, select=%ge, scatter=%add
  ROOT %c = f32[4]{0} conditional(%i, %sel, %sel), branch_computations={%ge, %missing}
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%add")
    assert "%add" in err.message
    err = syntax_error(text.replace("scatter=%add", "scatter=%ge"))
    fixed = text.replace("scatter=%add", "scatter=%ge")
    assert (err.line, err.column) == locate(fixed, "%missing")


def test_called_computation_defined_after_its_caller():
    text = """\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %c = f32[] call(%a), to_apply=%f
}

%f (p: f32[]) -> f32[] {
  ROOT %p = f32[] parameter(0)
}
"""
    assert xla_rejects(text)  # XLA wants callees above their callers
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%f")
    assert "before it is defined" in err.message


def test_unterminated_string_and_unclosed_bracket():
    text = """\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {
  ROOT %a = f32[] parameter(0), metadata={op_name="oops}
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "{op_name")
    assert "never closed" in err.message or "unterminated" in err.message


def test_error_without_source_has_no_prefix():
    with pytest.raises(HloSyntaxError) as info:
        read_module("")
    assert str(info.value).startswith("1:1: ")
    assert info.value.source is None


def test_valid_inputs_here_round_trip():
    # A cross-check that the reader's model of these inputs is complete.
    text = valid("""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0), metadata={op_name="a, b{c}"}
          %c = f32[4]{0} copy(f32[4]{0} %a)
          ROOT %n = f32[4]{0} negate(%a), control-predecessors={%c}
        }
    """)
    assert canonical_text(write_module(read_module(text))) == canonical_text(text)


def test_instruction_that_waits_for_itself():
    text = """\
HloModule m
ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %n = f32[] negate(%a), control-predecessors={%n}
}
"""
    assert xla_rejects(text)
    err = syntax_error(text)
    assert (err.line, err.column) == locate(text, "%n}")
    assert "%n uses itself as control predecessor" in err.message
