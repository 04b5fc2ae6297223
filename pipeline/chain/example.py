"""The built-in example the CLI runs when given no input.

A loop-carried buffer copied out of a `while`, with the orderings copy
insertion adds: a tuple-shaped predecessor (the `while`, whose edge comes
back from import wrapped in a tuple op), two predecessors on one successor,
and a successor with no operand (`constant`), whose edge is rerouted.
"""

EXAMPLE_NAME = "<built-in example>"

EXAMPLE_HLO = """\
HloModule example, entry_computation_layout={(f32[4]{0})->(f32[4]{0}, f32[4]{0})}

%body (state: (s32[], f32[4])) -> (s32[], f32[4]) {
  %state = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%state), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %buf = f32[4]{0} get-tuple-element(%state), index=1
  %twice = f32[4]{0} add(%buf, %buf)
  %copy.buf = f32[4]{0} copy(%buf)
  %copy.twice = f32[4]{0} copy(%twice), control-predecessors={%copy.buf}
  ROOT %out = (s32[], f32[4]{0}) tuple(%next, %copy.twice)
}

%cond (state.1: (s32[], f32[4])) -> pred[] {
  %state.1 = (s32[], f32[4]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%state.1), index=0
  %limit = s32[] constant(3)
  ROOT %lt = pred[] compare(%i.1, %limit), direction=LT
}

ENTRY %main (x: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(%zero, %x)
  %loop = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
  %result = f32[4]{0} get-tuple-element(%loop), index=1
  %copy.x = f32[4]{0} copy(%x)
  %scale = f32[] constant(2), control-predecessors={%loop}
  %scales = f32[4]{0} broadcast(%scale), dimensions={}
  %scaled = f32[4]{0} multiply(%result, %scales), control-predecessors={%loop, %copy.x}
  ROOT %pair = (f32[4]{0}, f32[4]{0}) tuple(%scaled, %copy.x)
}
"""
