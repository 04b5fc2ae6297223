"""Reading HLO, beside XLA's bridge (`pipeline.xla`): the checks before
XLA's parser (`text`: the input is text), newer XLA's `%t#i` operands made
explicit for jaxlib 0.10.2's parser (`tuple_operands`), and what XLA's parse
becomes (`parsed.Parsed`: XLA's proto of the module, in our schema
`passes.hlo.proto`, with the names as written, aligned by `names`).

XLA parses (`pipeline.xla.native` here, `pipeline.xla.isolated` in its
child); nothing in this room imports jaxlib. Kept free of imports:
`hlo2penguin check` reads its inputs with `text` before anything heavy."""
