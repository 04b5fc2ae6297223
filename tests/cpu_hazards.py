"""Modules XLA's parser and importer take but XLA:CPU cannot survive or
finish, for the tests that XLA:CPU's numbers run isolated: each is real
HLO, not a stub."""

# XLA:CPU waits on an infeed nobody feeds: a run that never ends by itself.
WAITS = """HloModule waits

ENTRY main {
  p = f32[4] parameter(0)
  tok = token[] after-all()
  in = ((f32[4]), token[]) infeed(tok)
  ROOT g = (f32[4]) get-tuple-element(in), index=0
}
"""

# XLA:CPU reads past its operand (TopK asked for more elements than there are) and dies of a segfault.
SEGFAULT = """HloModule segfault

ENTRY main {
  p = f32[4] parameter(0)
  ROOT t = (f32[4000000], s32[4000000]) custom-call(p), custom_call_target="TopK"
}
"""
