"""The chain end to end: sources, link #2 (import), `run()`, edge accounting, CLI."""


def run(*args, **kwargs):
    """`pipeline.chain.run`: links #1-#4 and the invariant (imported lazily:
    the CLI's --help should not pay for jaxlib)."""
    from pipeline.chain import run as _run

    return _run(*args, **kwargs)
