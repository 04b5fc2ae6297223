"""`hlo2penguin`: run the chain on an HLO module and write one stage's output.

Exit status: 0 ok, 2 bad input or usage (one line on stderr, no traceback,
no output file left behind).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile

from passes.control_dep import ControlDepError
from passes.hlo import HloSyntaxError, read_module, write_module
from passes.hlo.preserve_control_deps import Fate, PreserveControlDeps, PreserveResult
from passes.mlir import SCOPES, FlattenError
from pipeline.chain import Report, UnreadableInput, read_path
from pipeline.chain import run as run_chain
from pipeline.example import EXAMPLE_HLO, EXAMPLE_NAME
from pipeline.importer import DIALECTS, ImportFailed
from pipeline.xla import TUPLE_ELEMENT_OPERAND, XlaRejected, parse_with_xla
from pipeline.xla import check as xla_check
from pipeline.xla import shape_inference

PROG = "hlo2penguin"
STAGES = ("penguin", "hlo", "mlir", "flat-mlir", "report", "dot")
PLOT_FORMATS = ("png", "svg")  # printer.draw.PLOT_FORMATS (not imported here: --help stays light)


class UsageError(Exception):
    """Bad input or usage: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own exit would print usage too
        raise UsageError(f"{message} (see '{PROG} --help')")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description=(
        "Carry XLA control dependencies from HLO into a Penguin program. "
        "With no INPUT, runs the built-in example. "
        "'hlo2penguin regress [DIR]' runs the regression corpus; "
        "'hlo2penguin verify MODULE PROGRAM.py' checks a Penguin program against its HLO."))
    p.add_argument("input", nargs="?", metavar="INPUT",
                   help="HLO text file, or '-' for standard input (default: the built-in example)")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    p.add_argument("--emit", choices=STAGES, default="penguin",
                   help="what to write: penguin = the Penguin program (default), hlo = after link #1, "
                        "mlir = after link #2 (XLA's importer), flat-mlir = after link #3, "
                        "report = every HLO control edge and its fate, "
                        "dot = the Penguin program's data and dep edges as Graphviz DOT")
    p.add_argument("--json", action="store_true", help="with --emit report: JSON instead of text")
    p.add_argument("--no-flatten", action="store_true",
                   help="skip link #3, to see which edges it saves")
    p.add_argument("--check", action="store_true",
                   help="exit 1 if any HLO control edge is lost or the program has a spurious dep edge")
    p.add_argument("--dialect", choices=DIALECTS, default="stablehlo",
                   help="dialect of links #2-#3 (default: stablehlo)")
    p.add_argument("--scope", choices=SCOPES, default="all",
                   help="functions link #3 walks: all (default: after symbol-dce, main and the functions "
                        "it calls), main (the pass's own default), first (the binary's reading)")
    p.add_argument("--keep-attributes", action="store_true",
                   help="link #3 keeps the rebuilt calls' attributes (default: only call_target_name)")
    p.add_argument("--debug-info", action="store_true", help="print MLIR locations (HLO names live there)")
    p.add_argument("--bundle", action="store_true",
                   help="link #1 passes each successor's predecessors through one HLO tuple")
    p.add_argument("--plot", metavar="OUT.png|OUT.svg",
                   help="also draw the Penguin program's data and dep edges to a PNG or SVG file "
                        "(matplotlib; no Graphviz needed)")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print the edge summary on stderr")
    return p


def read_input(path: str | None) -> tuple[bytes | str, str]:
    if path is None:
        return EXAMPLE_HLO, EXAMPLE_NAME
    if path == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    return read_path(path), path  # UnreadableInput: "cannot read input 'PATH': REASON"


def write_output(path: str | None, text: str) -> None:
    """Write atomically: a failed run never leaves a partial file behind."""
    if path is None:
        sys.stdout.write(text)
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".hlo2penguin-", suffix=".tmp")
    except OSError as err:
        raise UsageError(f"cannot write output '{path}': {err.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            # mkstemp makes the file 0600; give it the mode a plain open()
            # would (or keep the mode of the file it replaces).
            os.fchmod(f.fileno(), _output_mode(path))
            f.write(text)
        os.replace(tmp, path)
    except OSError as err:
        os.unlink(tmp)
        raise UsageError(f"cannot write output '{path}': {err.strerror}") from None
    except BaseException:
        os.unlink(tmp)
        raise


def _output_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def run(args: argparse.Namespace):
    """The output text, link #1's result (reported once the output is written)
    and the Penguin program (None for --emit hlo without --plot)."""
    data, source = read_input(args.input)
    if args.emit == "hlo":
        module = read_module(data, source, shapes_of=shape_inference(source, isolate=True))
        _judge(data, source, module)
        program = _run_chain(args, data, source).module() if args.plot else None
        result = PreserveControlDeps(bundle=args.bundle).run(module)
        out = write_module(module)
        parse_with_xla(out, f"{source} after link #1")
        return out, result, program
    if args.emit == "flat-mlir" and args.no_flatten:
        raise UsageError("--emit flat-mlir shows link #3's output; it cannot go with --no-flatten")
    chain = _run_chain(args, data, source)  # XLA judges the input there (link #2's child process)
    program = chain.module()
    if args.emit == "mlir":
        return chain.mlir, chain.report, program
    if args.emit == "flat-mlir":
        return chain.flat_mlir, chain.report, program
    if args.emit == "report":
        if args.json:
            return json.dumps(chain.report.as_dict(), indent=2) + "\n", chain.report, program
        return "".join(f"{line}\n" for line in chain.report.lines()) + chain.report.summary() + "\n", \
            chain.report, program
    if args.emit == "dot":
        from printer.draw import to_dot
        return to_dot(program), chain.report, program
    return chain.penguin_source, chain.report, program


def _judge(data: bytes | str, source: str, module) -> None:
    """XLA judges the input before we change it, so that its complaints name
    the user's lines; in a child process, since XLA's parser aborts the
    process on some bad input."""
    text = data if isinstance(data, str) else data.decode("utf-8")
    try:
        xla_check(text, source, isolate=True)
    except XlaRejected:
        # jaxlib 0.10.2 cannot read `%t#i`; the reader made those explicit
        # get-tuple-elements, so judge that reading instead.
        if not (TUPLE_ELEMENT_OPERAND.search(text) and _xla_accepts(write_module(module))):
            raise


def _run_chain(args: argparse.Namespace, data: bytes | str, source: str):
    return run_chain(data, args.dialect, bundle=args.bundle, flatten=not args.no_flatten,
                     scope=args.scope, keep_attributes=args.keep_attributes, debug_info=args.debug_info,
                     source_name=source)  # errors name the input, not the module


def plot_format(path: str) -> str:
    """png or svg, from the file name; checked before any work is done."""
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in PLOT_FORMATS:
        raise UsageError(f"cannot plot to '{path}': give a .png or .svg file name")
    if os.path.isdir(path):
        raise UsageError(f"cannot write plot '{path}': Is a directory")
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise UsageError(f"cannot write plot '{path}': No such file or directory")
    return ext


def stage_plot(path: str, program) -> str:
    """Draw the program into a temporary file beside `path`; `commit_plot`
    renames it into place once the output is written."""
    from printer.draw import render

    data = render(program, plot_format(path), function=None)  # every function, every block
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".hlo2penguin-plot-", suffix=".tmp")
    except OSError as err:
        raise UsageError(f"cannot write plot '{path}': {err.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), _output_mode(path))
            f.write(data)
    except OSError as err:
        os.unlink(tmp)
        raise UsageError(f"cannot write plot '{path}': {err.strerror}") from None
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def commit_plot(tmp: str, path: str) -> None:
    try:
        os.replace(tmp, path)
    except OSError as err:
        os.unlink(tmp)
        raise UsageError(f"cannot write plot '{path}': {err.strerror}") from None


def _xla_accepts(text: str) -> bool:
    try:
        xla_check(text, isolate=True)
    except XlaRejected:
        return False
    return True


def report(result) -> None:
    """Edges in, edges out, on stderr: link #1's result for --emit hlo, the
    whole chain's report otherwise; a warning for each dropped or lost edge."""
    for edge in result.edges:
        fate = edge.fate.value if isinstance(edge.fate, Fate) else edge.fate
        if fate in ("dropped", "lost"):
            print(f"{PROG}: warning: {edge}", file=sys.stderr)
    for edge in getattr(result, "spurious", ()):
        print(f"{PROG}: warning: {edge}", file=sys.stderr)
    stage = PreserveControlDeps.name if isinstance(result, PreserveResult) else "chain"
    print(f"{PROG}: {stage}: {result.summary()}", file=sys.stderr)


# What a CLI reports as bad input: one line, exit status 2.
BAD_INPUT = (UsageError, HloSyntaxError, XlaRejected, ImportFailed, FlattenError, ControlDepError, UnreadableInput)


def guarded(prog: str, body, bad_input: tuple = BAD_INPUT) -> int:
    """Run `body()` (an exit status) so that every failure is one line on
    stderr, `PROG: error: ...`, exit 2, and never a traceback."""
    try:
        return body()
    except bad_input as err:
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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["regress"]:  # a file named 'regress' is still reachable as ./regress
        from pipeline import regress
        return regress.main(argv[1:])
    if argv[:1] == ["verify"]:  # likewise ./verify
        return verify_main(argv[1:])
    return guarded(PROG, lambda: _main(argv))


def _main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.plot is not None:
        plot_format(args.plot)  # a bad name fails before the chain runs
    out, result, program = run(args)
    staged = stage_plot(args.plot, program) if args.plot is not None else None
    try:
        write_output(args.output, out)
    except BaseException:
        if staged:
            os.unlink(staged)
        raise
    if staged:
        commit_plot(staged, args.plot)
    # Only after the output is written: a failed run says one line, the error.
    if not args.quiet:
        report(result)
    if args.check and isinstance(result, Report) and not result.ok:
        return 1
    return 0


def verify_main(argv: list[str]) -> int:
    """`hlo2penguin verify MODULE PROGRAM.py [--json]`: the independent
    verifier's report; exit 1 if an edge is lost or a dep edge is spurious."""
    from pipeline.verify import VerifyError

    return guarded(f"{PROG} verify", lambda: _verify(argv), BAD_INPUT + (VerifyError,))


def _verify(argv: list[str]) -> int:
    from pipeline.verify import verify

    parser = _Parser(prog=f"{PROG} verify", description=(
        "Check a Penguin program against the HLO module it came from, from these two alone: every "
        "control edge of the HLO (read by XLA's parser) and its fate in the executed program, and every "
        "dep edge no HLO edge accounts for. Exit 1 if an edge is lost or a dep edge is spurious."))
    parser.add_argument("module", metavar="MODULE", help="the HLO text the program came from")
    parser.add_argument("program", metavar="PROGRAM.py", help="the Penguin program (it is run)")
    parser.add_argument("--json", action="store_true", help="the report as JSON")
    args = parser.parse_args(argv)
    result = verify(read_path(args.module), pathlib.Path(args.program), source=args.module)
    if args.json:
        sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n")
    else:
        sys.stdout.write("".join(f"{line}\n" for line in result.lines()) + result.summary() + "\n")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
