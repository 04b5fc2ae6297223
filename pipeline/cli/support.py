"""What the project's commands share: `hlo2penguin` (and its `check`,
`regress` and `verify`), and `hlo2penguin-opt`. One argument parser that
reports usage errors as one line, the chain's options, `--version`, one guard
that turns every failure into one line and an exit status, and atomic output
files."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from passes.errors import ChainError


class UsageError(ChainError):
    """Bad usage: reported as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a UsageError (one line, no usage dump)."""

    def error(self, message: str):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def add_chain_options(p: argparse.ArgumentParser) -> None:
    """The options of `pipeline.run` a user picks: `hlo2penguin` and `hlo2penguin check`."""
    from passes.dialects import DIALECTS
    from passes.mlir import SCOPES

    p.add_argument("--no-flatten", action="store_true",
                   help="skip link #3, to see which edges it saves")
    p.add_argument("--dialect", choices=list(DIALECTS), default=next(iter(DIALECTS)),
                   help="dialect of links #2-#3 (default: stablehlo)")
    p.add_argument("--scope", choices=SCOPES, default="all",
                   help="functions link #3 walks: all (default: after symbol-dce, main and the functions "
                        "it calls), main (the pass's own default), first (the binary's reading)")
    p.add_argument("--keep-attributes", action="store_true",
                   help="link #3 keeps the rebuilt calls' attributes (default: only call_target_name)")
    p.add_argument("--bundle", action="store_true",
                   help="link #1 passes each successor's predecessors through one HLO tuple")


def chain_options(args: argparse.Namespace) -> dict:
    """`add_chain_options`' arguments as `pipeline.run` keywords."""
    return {"dialect": args.dialect, "bundle": args.bundle, "flatten": not args.no_flatten,
            "scope": args.scope, "keep_attributes": args.keep_attributes}


def version_line(prog: str) -> str:
    """`PROG X.Y.Z (jax A, jaxlib B)`: the installed package and the jax it runs with."""
    from importlib import metadata

    from pipeline.xla import versions

    return f"{prog} {metadata.version('hlo2penguin')} (jax {versions.JAX}, jaxlib {versions.JAXLIB})"


def guarded(prog: str, body) -> int:
    """Run `body()` (an exit status) so that every failure is one line on
    stderr, `PROG: error: ...`, exit 2, and never a traceback."""
    try:
        return body()
    except ChainError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `hlo2penguin | head`: the reader left, not an error
        sys.stderr.close()
        return 0
    except Exception as err:  # a bug, but the user still gets one line, not a traceback
        print(f"{prog}: error: internal error ({type(err).__name__}: {err}); "
              "please report it with the input", file=sys.stderr)
        return 2


def write_output(path: str | None, text: str) -> None:
    """Write atomically: a failed run never leaves a partial file behind."""
    if path is None:
        sys.stdout.write(text)
        return
    commit_file(stage_file(path, text.encode("utf-8"), "output"), path, "output")


def stage_file(path: str, data: bytes, what: str) -> str:
    """Write `data` to a temporary file beside `path`, with the mode a plain
    open() would give `path` (or the mode of the file it replaces); the
    caller renames it into place. UsageError names `what` and `path`."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        prefix = ".hlo2penguin-" if what == "output" else f".hlo2penguin-{what}-"
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    except OSError as err:
        raise UsageError(f"cannot write {what} '{path}': {err.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), _output_mode(path))  # mkstemp makes the file 0600
            f.write(data)
    except OSError as err:
        os.unlink(tmp)
        raise UsageError(f"cannot write {what} '{path}': {err.strerror}") from None
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def commit_file(tmp: str, path: str, what: str) -> None:
    """Rename a file `stage_file` wrote into place."""
    try:
        os.replace(tmp, path)
    except OSError as err:
        os.unlink(tmp)
        raise UsageError(f"cannot write {what} '{path}': {err.strerror}") from None


def _output_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
