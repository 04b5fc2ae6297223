"""The proof: the one loader of a Penguin program (`program`), the
independent verifier that judges the executed program against the HLO
(`verify`), and its report (`report`)."""
