"""The case tables of the tests on the forms of HLO: hand-written forms (as
XLA's own unit tests write them), attribute values and comments that hold
what looks like HLO, and forms XLA prints. Each form is a module the chain
must take with XLA's meaning (grammar_oracle.through_the_chain); XLA's
printings of all of them are inputs too (test_xla_printings.py)."""

from __future__ import annotations

from grammar_oracle import hand


# Hand-written forms (as XLA's own unit tests write them)
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


# Attribute values and comments that hold what looks like HLO
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


# Forms XLA prints (XLA 0.10.x and later)
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
