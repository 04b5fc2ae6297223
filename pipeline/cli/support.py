"""What the project's commands share: `hlo2penguin` (and its `check`,
`regress` and `verify`), and `hlo2penguin-opt`. One argument parser that
reports usage errors as one line, the chain's options, `--version`, one guard
that turns every failure into one line and an exit status, and atomic output
files."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import sys
import tempfile
import threading

from passes.errors import ChainError


class UsageError(ChainError):
    """Bad usage: reported as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a UsageError (one line, no usage dump)."""

    def error(self, message: str):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def add_option_flags(p: argparse.ArgumentParser, options) -> None:
    """A flag for each of `options` (`passes.options.options(cls)`), as its
    declaration says: `--KEY` for a bool (`--no-KEY` if it is True by
    default), `--KEY VALUE` with its choices or type otherwise; the help is
    the declaration's."""
    for o in options:
        if o.type is bool:
            p.add_argument(f"--{o.flag}", action="store_true", help=o.help)
        else:
            p.add_argument(f"--{o.flag}", default=o.default, help=o.help,
                           choices=list(o.choices) if o.choices is not None else None,
                           type=None if o.type is str else o.type)


def option_values(args: argparse.Namespace, options) -> dict:
    """`add_option_flags`' arguments as keywords: {field name: value}."""
    values = {}
    for o in options:
        given = getattr(args, o.flag.replace("-", "_"))
        values[o.name] = given if o.flag == o.key else not given  # --no-KEY: given means False
    return values


def add_chain_options(p: argparse.ArgumentParser) -> None:
    """The options of `pipeline.run` a user picks: `hlo2penguin` and
    `hlo2penguin check`. They are the fields of `Options` declared as
    options (`--no-flatten --dialect --scope --keep-attributes --bundle`)."""
    add_option_flags(p, _chain_options())


def chain_options(args: argparse.Namespace) -> dict:
    """`add_chain_options`' arguments as `pipeline.run` keywords."""
    return option_values(args, _chain_options())


def _chain_options():
    from passes.options import options
    from pipeline.chain.options import Options

    return options(Options)


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


def end_process(prog: str, main) -> None:
    """A command's process, as its console script and `python -m` run it:
    `main()`'s status, then the end of the process without the interpreter's
    teardown. Finalizing jaxlib, MLIR and the few hundred modules a call
    imports costs about 0.1 s, as much as the whole call on a small module,
    and frees nothing the operating system would not. So once `main` has
    returned: stdout and stderr are flushed (a failed flush is one line and
    exit 2, a reader that left is not an error), the exit handlers run (the
    XLA child ends there, so do those of a tool wrapping the process), and
    `os._exit`. A `SystemExit` (`--help`), or a thread still running, takes
    the ordinary exit. `main` itself returns to its caller: tests and
    notebooks call it in their own process."""
    code = main()
    if threading.active_count() > 1:
        sys.exit(code)  # the ordinary exit waits for the other threads
    code = _flushed(prog, code)
    atexit._run_exitfuncs()
    os._exit(_flushed(prog, code))  # an exit handler may have printed


def _flushed(prog: str, code: int) -> int:
    for stream in (sys.stdout, sys.stderr):
        if stream is None or stream.closed:
            continue
        try:
            stream.flush()
        except OSError as err:
            with contextlib.suppress(OSError):  # what is left in the buffer goes nowhere, said once
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
            if isinstance(err, BrokenPipeError):  # e.g. `hlo2penguin | head`: the reader left
                continue
            if stream is sys.stdout:  # e.g. a full disk under `> FILE`: the output is not whole
                with contextlib.suppress(OSError):
                    print(f"{prog}: error: cannot write standard output: {err.strerror}", file=sys.stderr,
                          flush=True)
            code = 2
    return code


def refuse_overwriting_inputs(output: str | None, inputs, what: str = "-o") -> None:
    """UsageError if `output` is one of `inputs` (the same file, also through a
    symbolic or hard link): writing it would replace the input. Checked
    before any work is done; `what` names the flag."""
    if output is None or output == "-" or not os.path.exists(output):
        return
    for path in inputs:
        if path is None or path == "-":
            continue
        try:
            same = os.path.samefile(output, path)
        except OSError:  # the input is not there: reading it says so
            continue
        if same:
            shown = f"'{output}'" if output == path else f"'{output}' (the same file as '{path}')"
            raise UsageError(f"{what} {shown} is the input: give another output file, or the input is lost")


def refuse_output_among_inputs(output: str | None, paths, reads=lambda path: True, what: str = "-o") -> None:
    """UsageError if `output` is a file the command reads: one of `paths`
    (`refuse_overwriting_inputs`), or, under a folder among them, a file
    that `reads(path)` takes: an existing one (also through a link), or a
    new one (the next run would read it). Checked before any work is done."""
    if output is None or output == "-":
        return
    paths = [os.fspath(p) for p in paths]
    folders = [p for p in paths if os.path.isdir(p)]
    refuse_overwriting_inputs(output, [p for p in paths if p not in folders], what)
    inside = os.path.realpath(output)
    for folder in folders:
        root = os.path.realpath(folder)
        if os.path.commonpath([inside, root]) == root and inside != root and reads(inside):
            raise UsageError(f"{what} '{output}' is in the input folder '{folder}', among the files read there: "
                             "give an output file outside it")
    if os.path.isfile(output):  # a hard link to a file read under a folder is that file
        refuse_overwriting_inputs(output, [os.path.join(d, n) for folder in folders
                                           for d, _, names in os.walk(folder) for n in names
                                           if reads(os.path.join(d, n))], what)


def write_output(path: str | None, text: str | bytes) -> None:
    """Write atomically: a failed run never leaves a partial file behind
    (bytes as they are: `--emit hlo-proto`)."""
    if path is None:
        try:
            if isinstance(text, bytes):
                sys.stdout.flush()
                sys.stdout.buffer.write(text)
                sys.stdout.buffer.flush()
            else:
                sys.stdout.write(text)
        except BrokenPipeError:
            raise  # the reader left: `guarded` ends quietly
        except OSError as err:  # e.g. a full disk under `> FILE`
            raise UsageError(f"cannot write standard output: {err.strerror}") from None
        return
    commit_file(stage_file(path, text if isinstance(text, bytes) else text.encode("utf-8"), "output"), path, "output")


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
