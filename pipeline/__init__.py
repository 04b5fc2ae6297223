"""The chain end to end: sources, link #2 (import), `run()`, the verifier
(`verify()`) and its report, CLI."""


def run(*args, **kwargs):
    """`pipeline.chain.steps.run`: links #1-#4 and the invariant (imported lazily:
    the CLI's --help should not pay for jaxlib)."""
    from pipeline.chain.steps import run as _run

    return _run(*args, **kwargs)


def verify(*args, **kwargs):
    """`pipeline.verifier.verify.verify`: the independent verifier of a Penguin program
    against its HLO (see that module)."""
    from pipeline.verifier.verify import verify as _verify

    return _verify(*args, **kwargs)
