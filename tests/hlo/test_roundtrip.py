"""Reading then writing a module changes nothing XLA can see:
`canonical_text(write_module(read_module(t))) == canonical_text(t)`.

Inputs: hand-written modules covering what XLA 0.10.x prints (each first
accepted by XLA's parser), XLA's own printings of them under several print
options, the real corpus of XLA dumps compiled at test time, and random
modules. `%t#i` inputs, which jaxlib 0.10.2 cannot parse, are compared with
the same module written with explicit get-tuple-element instructions (and,
where XLA reads `#i` itself, with XLA's reading of them).
"""

from __future__ import annotations

import re
import textwrap

import jaxlib._hlo as xla_hlo
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jax_programs import corpus
from passes.hlo import Instruction, read_module, write_module
from pipeline.versions import xla_reads_tuple_element_operands
from pipeline.xla import canonical_text


def valid(text: str) -> str:
    text = textwrap.dedent(text).lstrip("\n")
    xla_hlo.hlo_module_from_text(text)  # real XLA syntax, or the test is wrong
    return text


def round_trip(text: str) -> str:
    return write_module(read_module(text))


def assert_round_trips(text: str) -> None:
    written = round_trip(text)
    assert canonical_text(written) == canonical_text(text)
    # Writing is a fixed point: reading what we wrote and writing it again
    # gives the same text, so repeated runs never drift.
    assert round_trip(written) == written


MODULES = {
    "shaped_and_bare_operands": """
        HloModule m
        ENTRY %main (a: f32[4], b: f32[4]) -> (f32[4], f32[4]) {
          %a = f32[4]{0} parameter(0)
          %b = f32[4]{0} parameter(1)
          %s = f32[4]{0} add(%a, %b)
          %l = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %b), control-predecessors={%s}
          %t = (f32[4]{0}, f32[4]{0}) tuple(%s, %l)
          %g = f32[4]{0} get-tuple-element((f32[4]{0}, f32[4]{0}) %t), index=0
          ROOT %r = (f32[4]{0}, f32[4]{0}) tuple(%g, %l)
        }
    """,
    "metadata_backend_config_frontend_attributes": r"""
        HloModule m, frontend_attributes={a="1",b="x,y"}
        ENTRY %main (a: f32[4]) -> (f32[4], f32[4]) {
          %a = f32[4]{0} parameter(0), metadata={op_name="jit(f)/a{b},c \"q\"" source_file="x,y.py" source_line=7}
          %c = f32[4]{0} copy(%a), frontend_attributes={_xla_k="v",k="{1,2}"}
          %j = f32[4]{0} custom-call(%a), custom_call_target="foo", backend_config={"o":{"i":{"k":"v}"}},"q":"he said \"hi\", {"}, control-predecessors={%c}
          %s = f32[4]{0} custom-call(%a), custom_call_target="bar", backend_config="{\"a\":{\"b\":\"c, d}\"}}"
          ROOT %r = (f32[4]{0}, f32[4]{0}) tuple(%j, %s)
        }
    """,
    "sharding": """
        HloModule m
        ENTRY %main (a: f32[4,2]) -> (f32[4,2], f32[4,2]) {
          %a = f32[4,2]{1,0} parameter(0), sharding={devices=[2,1]0,1}
          %n = f32[4,2]{1,0} negate(%a), sharding={replicated}
          %m = f32[4,2]{1,0} abs(%a), sharding={maximal device=0}
          ROOT %t = (f32[4,2]{1,0}, f32[4,2]{1,0}) tuple(%n, %m), sharding={{replicated}, {devices=[2,1]0,1}}
        }
    """,
    "index_comments": """
        HloModule m
        ENTRY %main (a: f32[], i: s32[]) -> (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], s32[]) {
          %a = f32[] parameter(0)
          %i = s32[] parameter(1)
          ROOT %t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], s32[]) tuple(%a, %a, %a, %a, %a, /*index=5*/%a, %i)
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
          ROOT %n = f32[] negate(%a), metadata={op_name="jit(f)/neg" stack_frame_id=1}
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
          %m = f32[<=4]{0} abs(%d), control-predecessors={%n}
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
          %tok2 = token[] after-all(%tok, %send-done)
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
          %tk = (f32[], s32[]) constant((1.5, 2))
          ROOT %r = f32[2,2]{1,0} add(%a, %k), control-predecessors={%s, %tk}
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
}
MODULES = {name: valid(text) for name, text in MODULES.items()}
# Windows line ends and tabs.
MODULES["crlf_and_tabs"] = valid(
    "HloModule m\r\nENTRY %main (a: f32[]) -> f32[] {\r\n\t%a = f32[] parameter(0)\r\n"
    "\t%c = f32[] copy(%a)\r\n\tROOT %n = f32[] negate(%a), control-predecessors={%c}\r\n}\r\n")


@pytest.mark.parametrize("name", MODULES)
def test_hand_written_module_round_trips(name):
    assert_round_trips(MODULES[name])


def test_round_trip_keeps_what_the_reader_does_not_interpret():
    # Sanity check that canonical_text would see a loss: these are in XLA's printing.
    printed = canonical_text(round_trip(MODULES["metadata_backend_config_frontend_attributes"]))
    for kept in ('op_name="jit(f)/a{b},c \\"q\\""', 'backend_config={"o":{"i":{"k":"v}"}}',
                 'frontend_attributes={a="1",b="x,y"}', "control-predecessors={%c}"):
        assert kept in printed
    printed = canonical_text(round_trip(MODULES["stack_frames"]))
    assert "StackFrames" in printed and "stack_frame_id=1" in printed
    printed = canonical_text(round_trip(MODULES["execution_thread_and_async"]))
    assert 'execution_thread="side"' in printed and "calls=%async_comp" in printed


def _print_options():
    """Ways XLA 0.10.x prints a parsable module."""
    def options(**changes):
        o = xla_hlo.HloPrintOptions()
        o.print_large_constants = True
        for key, value in changes.items():
            setattr(o, key, value)
        return o

    short = xla_hlo.HloPrintOptions.short_parsable()
    short.print_large_constants = True
    return {
        "default": options(),
        "short_parsable": short,
        "no_percent": options(print_percent=False),
        "no_operand_shapes": options(print_operand_shape=False),
        "no_layouts": options(include_layout_in_shapes=False),
        "no_metadata": options(print_metadata=False, print_backend_config=False),
        "no_indent": options(indent_amount=0),
    }


PRINT_OPTIONS = _print_options()


@pytest.mark.parametrize("printing", PRINT_OPTIONS)
@pytest.mark.parametrize("name", MODULES)
def test_xla_printings_round_trip(name, printing):
    text = xla_hlo.hlo_module_from_text(MODULES[name]).to_string(PRINT_OPTIONS[printing])
    assert_round_trips(text)


# --------------------------------------------------------------------------
# The real corpus: XLA dumps of JAX programs, compiled at test time
# --------------------------------------------------------------------------

CORPUS = corpus()


def test_corpus_is_the_expected_size_and_has_control_edges():
    assert len(CORPUS) == 63
    assert sum("control-predecessors=" in text for _, text in CORPUS) >= 6


@pytest.mark.parametrize("name,text", CORPUS, ids=[n for n, _ in CORPUS])
def test_corpus_module_round_trips(name, text):
    module = read_module(text, source=name)
    written = write_module(module)
    assert canonical_text(written) == canonical_text(text)
    # The reader saw every control edge the dump has.
    assert len(module.control_edges()) == sum(
        len([p for p in m.group(1).split(",") if p.strip()])
        for m in re.finditer(r"control-predecessors=\{([^}]*)\}", text))
    # And XLA's other printings of the same module read back the same.
    xla_module = xla_hlo.hlo_module_from_text(text)
    for printing, options in PRINT_OPTIONS.items():
        reprinted = xla_module.to_string(options)
        assert canonical_text(round_trip(reprinted)) == canonical_text(reprinted), printing


# --------------------------------------------------------------------------
# `%t#i` operands
# --------------------------------------------------------------------------

HASH_CASES = {
    "entry": ("""\
HloModule m
ENTRY %main (a: f32[4], i: s32[]) -> (f32[4], (s32[], f32[4])) {
  %a = f32[4]{0} parameter(0)
  %i = s32[] parameter(1)
  %inner = (s32[], f32[4]{0}) tuple(%i, %a)
  %t = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%a, %inner)
  %n = f32[4]{0} negate(%t#0)
  %m = f32[4]{0} add(f32[4]{0} %t#0, %n), control-predecessors={%n}
  ROOT %r = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%m, %t#1)
}
""", """
        HloModule m
        ENTRY %main (a: f32[4], i: s32[]) -> (f32[4], (s32[], f32[4])) {
          %a = f32[4]{0} parameter(0)
          %i = s32[] parameter(1)
          %inner = (s32[], f32[4]{0}) tuple(%i, %a)
          %t = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%a, %inner)
          %t_0 = f32[4]{0} get-tuple-element(%t), index=0
          %n = f32[4]{0} negate(%t_0)
          %m = f32[4]{0} add(%t_0, %n), control-predecessors={%n}
          %t_1 = (s32[], f32[4]{0}) get-tuple-element(%t), index=1
          ROOT %r = (f32[4]{0}, (s32[], f32[4]{0})) tuple(%m, %t_1)
        }
    """),
    "while_body_scheduled": ("""\
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
  ROOT %res = f32[4]{0} copy(%w#1)
}
""", """
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
          ROOT %res = f32[4]{0} copy(%w_1)
        }
    """),
}


@pytest.mark.parametrize("case", HASH_CASES)
def test_tuple_element_operands_round_trip_as_explicit_get_tuple_elements(case):
    with_hash, explicit = HASH_CASES[case]
    explicit = valid(explicit)
    written = round_trip(with_hash)
    assert "#" not in written
    assert canonical_text(written) == canonical_text(explicit)
    if xla_reads_tuple_element_operands():  # and XLA itself reads the `#i` as the same module
        assert canonical_text(with_hash) == canonical_text(written)
    else:
        with pytest.raises(Exception):
            xla_hlo.hlo_module_from_text(with_hash)  # jaxlib 0.10.2 cannot read `#i`
    assert round_trip(written) == written


# --------------------------------------------------------------------------
# The writer prints what passes build
# --------------------------------------------------------------------------


def test_writer_prints_new_instructions_and_edges_xla_accepts():
    module = read_module(MODULES["shaped_and_bare_operands"])
    entry = module.entry
    a, s, l = entry.instruction("a"), entry.instruction("s"), entry.instruction("l")
    cc = Instruction("s.control-dep", s.shape, "custom-call", [l.operands[0], a],
                     [("custom_call_target", '"AwsNeuronControlDep"'), ("custom_call_has_side_effect", "true")])
    entry.insert_before(l, cc)
    l.operands[0] = cc
    entry.instruction("g").control_predecessors.append(s)
    module.set_attribute("frontend_attributes", '{has_control_deps="true"}')
    printed = canonical_text(write_module(module))
    assert re.search(r"%s\.control-dep = f32\[4\]\{0\} custom-call\(%a, %a\), "
                     r'custom_call_target="AwsNeuronControlDep", custom_call_has_side_effect=true', printed)
    assert re.search(r"%l = f32\[4\]\{0\} add\(%s\.control-dep, %b\), control-predecessors=\{%s\}", printed)
    assert re.search(r"%g = .* index=0, control-predecessors=\{%s\}", printed)
    assert 'frontend_attributes={has_control_deps="true"}' in printed


# --------------------------------------------------------------------------
# Random modules
# --------------------------------------------------------------------------

_OPS = {"negate": 1, "abs": 1, "copy": 1, "exponential": 1, "add": 2, "multiply": 2, "maximum": 2}
_NAME_STYLES = ["v{}", "copy.{}", "add-{}.1", "x_{}", "fusion.{}.clone"]


@st.composite
def random_modules(draw):
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
            op_name = draw(st.text(st.sampled_from('ab {}(),=%#"\\/é*'), max_size=12))
            escaped = op_name.replace("\\", "\\\\").replace('"', '\\"')
            text += f', metadata={{op_name="{escaped}" source_line={i}}}'
        preds = draw(st.lists(st.sampled_from(names[:i]), unique=True, max_size=3))
        if preds:
            text += ", control-predecessors={" + ", ".join("%" + p for p in preds) + "}"
            edges.extend(("main", p, name) for p in preds)
        lines.append(text)
    text = ("HloModule random\n\nENTRY %main (p0: f32[4]) -> f32[4] {\n" + "\n".join(lines) + "\n}\n")
    return text, edges, operands


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_modules())
def test_random_modules_round_trip(case):
    text, edges, operands = case
    xla_hlo.hlo_module_from_text(text)  # the generator writes real XLA syntax
    module = read_module(text)
    assert module.control_edges() == edges
    for name, ops in operands.items():
        assert [o.name for o in module.entry.instruction(name).operands] == ops
    assert_round_trips(text)
