"""The proof: the one loader of a Penguin program (`program`), the
independent verifier that judges the executed program against the HLO
(`verify`), what it reads of the two (`inputs`), and its report (`report`)."""
