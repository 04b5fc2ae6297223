"""Reading a module, every form of it, in one room with two tiers around
XLA's bridge (`pipeline.xla`).

Without XLA (nothing here imports jaxlib): the HLO text's lexical rules
(`lexical`), the checks before XLA's parser (`text`), the names as written
(`names`), elided constants (`elided`), newer XLA's `%t#i` operands for
jaxlib 0.10.2's parser (`tuple_operands`), what XLA's parse becomes
(`parsed.Parsed`), the entry's parameters (`parameters`), hints after a
refusal (`hints`), the binary kinds and their wire walk (`binary`, `wire`)
and a snapshot's arguments (`literals`).

With XLA: the one entry (`source`: what an input is and what the chain takes
of it), XLA's dump folders (`dumps`), HLO captured from JAX (`capture`) and
the modules under the paths `hlo2penguin check` is given (`walk`).

Kept free of imports: `hlo2penguin check` reads its inputs with `text` and
`lexical` before anything heavy."""
