"""`hlo2penguin`: run the chain on an HLO module and write one stage's output
(`hlo2penguin check`, `regress` and `verify` are subcommands).

Exit status: 0 ok, 2 bad input or usage (one line on stderr, no traceback,
no output file left behind).
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import pathlib
import re
import sys
import time

from passes.control_dep import Fate
from pipeline.reading.hints import NO_CONTROL_EDGES, directory_hint, with_hint
from pipeline.cli.support import (Parser, UsageError, add_chain_options, chain_options, commit_file, end_process,
                                  guarded, refuse_overwriting_inputs, stage_file, version_line, write_output)
from pipeline.xla import worker as xla_child
from pipeline.chain.example import EXAMPLE_HLO, EXAMPLE_NAME

PROG = "hlo2penguin"
STAGES = ("penguin", "hlo", "hlo-proto", "mlir", "flat-mlir", "report", "dot")
PLOT_FORMATS = ("png", "svg")  # printer.penguin.drawing.PLOT_FORMATS (not imported here: --help stays light)


USAGE = (f"{PROG} [options] [INPUT]\n"
         f"       {PROG} check [options] PATH...\n"
         f"       {PROG} verify [options] MODULE PROGRAM.py\n"
         f"       {PROG} regress [options] [DIR]\n"
         f"       {PROG} corpus add [options] CORPUS SOURCE")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, usage=USAGE, description=(
        "Carry XLA control dependencies from HLO into a Penguin program. "
        "With no INPUT, runs the built-in example. "
        "'hlo2penguin check PATH...' runs every HLO module with control edges in files or XLA dump "
        "folders through the chain and tables their edges; "
        "'hlo2penguin regress [DIR]' runs the regression corpus; "
        "'hlo2penguin corpus add CORPUS SOURCE' adds a JAX program to a corpus of your own; "
        "'hlo2penguin verify MODULE PROGRAM.py' checks a Penguin program against its HLO."))
    p.add_argument("input", nargs="?", metavar="INPUT",
                   help="HLO module: text, or binary (XLA's *.hlo.pb or snapshot, a serialized HloModuleProto, "
                        "a jax.export artifact: told apart by content), or '-' for standard input (default: "
                        "the built-in example)")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    p.add_argument("--emit", choices=STAGES, default="penguin",
                   help="what to write: penguin = the Penguin program (default), hlo = after link #1, "
                        "hlo-proto = after link #1 as a serialized HloModuleProto (binary: -o FILE or a pipe), "
                        "mlir = after link #2 (XLA's importer), flat-mlir = after link #3, "
                        "report = every HLO control edge and its fate, "
                        "dot = the Penguin program's data and dep edges as Graphviz DOT")
    p.add_argument("--json", action="store_true", help="with --emit report: JSON instead of text (with any "
                                                        "other --emit it is a usage error)")
    p.add_argument("--check", action="store_true",
                   help="exit 1 if any HLO control edge is lost or the program has a spurious dep edge (not "
                        "with --emit hlo or hlo-proto, which stop after link #1, before there is a program "
                        "to judge)")
    add_chain_options(p)  # --no-flatten, --dialect, --scope, --keep-attributes, --bundle
    p.add_argument("--debug-info", action="store_true",
                   help="with --emit mlir or flat-mlir: print MLIR locations (HLO names live there)")
    p.add_argument("--plot", metavar="OUT.png|OUT.svg",
                   help="also draw the Penguin program's data and dep edges to a PNG or SVG file "
                        "(PNG drawn with Pillow, SVG written as text; neither imports matplotlib, and no "
                        "Graphviz is needed): each function "
                        "with a dep edge (the entry "
                        "function if the program has none), a panel each, with a panel under it for "
                        "each nested block that holds a dep edge or leads to one (the block of the op whose "
                        "region holds it, and so on up)")
    p.add_argument("--plot-function", metavar="NAME", action="append",
                   help="with --plot: draw the function NAME instead (repeat for several); "
                        "a name the program lacks is an error that lists its functions")
    p.add_argument("--plot-nested", choices=("deps", "all", "none"),
                   help="with --plot: which nested blocks (a while's cond and body, a branch) get a "
                        "panel under their function: deps = those that hold a dep edge or lead to one "
                        "(default), all = every one, none = the functions' own blocks alone")
    p.add_argument("--explore", action="store_true",
                   help="after writing the output, serve the HLO as given and the Penguin program in Model "
                        "Explorer on localhost (control and dep edges as overlays coloured by fate; the "
                        "adapter opens other modules from the page) and print its address on stderr; "
                        "Ctrl+C stops it. Needs the 'explorer' extra: pip install 'hlo2penguin[explorer]'")
    p.add_argument("--explore-port", metavar="PORT", type=int,
                   help="with --explore: serve on this port (default: a free one)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="do not print the edge summary and warnings on stderr; with --check, a failure "
                        "still prints its lost and spurious edges")
    p.add_argument("--timings", action="store_true",
                   help="print on stderr the seconds each step took (read, link #1, write, link #2, link #3, "
                        "link #4, proof, output), also with -q")
    p.add_argument("--example", action="store_true",
                   help="print the built-in example's HLO (what runs with no INPUT) and exit")
    p.add_argument("--version", action="store_true", help="print the version (and jax's) and exit")
    return p


def read_input(path: str | None) -> tuple[bytes | str, str]:
    from pipeline.reading.text import read_path

    if path is None:
        return EXAMPLE_HLO, EXAMPLE_NAME
    if path == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    try:
        return read_path(path), path  # UnreadableInput: "cannot read input 'PATH': REASON"
    except OSError as err:
        raise with_hint(err, directory_hint(path) if err.errno == errno.EISDIR else None) from None


def refuse_unusable_flags(args: argparse.Namespace) -> None:
    """A flag the chosen output cannot use is a usage error, not silently
    ignored: one line, before any work is done."""
    if args.emit == "flat-mlir" and args.no_flatten:
        raise UsageError("--emit flat-mlir shows link #3's output; it cannot go with --no-flatten")
    if args.json and args.emit != "report":
        raise UsageError(f"--json writes the report as JSON: it goes with --emit report, not --emit {args.emit}")
    if args.check and args.emit in ("hlo", "hlo-proto"):
        raise UsageError(f"--check judges the Penguin program, and --emit {args.emit} stops after link #1: "
                         "drop --check, or emit another stage")
    if args.emit == "hlo-proto" and args.output is None and sys.stdout.isatty():
        raise UsageError("--emit hlo-proto writes a binary proto, not for a terminal: give -o FILE, "
                         "or redirect standard output")
    if args.plot is None and (args.plot_function or args.plot_nested):
        flag = "--plot-function" if args.plot_function else "--plot-nested"
        raise UsageError(f"{flag} says what --plot draws: give --plot OUT.png|OUT.svg too")
    if args.explore_port is not None and not args.explore:
        raise UsageError("--explore-port says where --explore serves: give --explore too")
    if args.explore and args.emit in ("hlo", "hlo-proto"):
        raise UsageError(f"--explore shows the HLO beside its Penguin program, and --emit {args.emit} stops "
                         "after link #1: emit another stage")
    if args.explore:
        from printer.penguin.explorer.serve import available

        missing = available()
        if missing is not None:
            raise UsageError(f"--explore: {missing}")
        if args.explore_port is not None and not 0 < args.explore_port < 65536:
            raise UsageError(f"--explore-port takes a port from 1 to 65535, not {args.explore_port}")
    if args.debug_info and args.emit not in ("mlir", "flat-mlir"):
        raise UsageError(f"--debug-info prints MLIR locations: it goes with --emit mlir or flat-mlir, "
                         f"not --emit {args.emit}")


def run(args: argparse.Namespace):
    """The output text, the account to report once the output is written
    (link #1's for --emit hlo, else the chain's report) and the Penguin
    program (None for --emit hlo without --plot)."""
    from pipeline.chain.steps import Reify, run as run_chain

    data, source = read_input(args.input)
    stop_after = None
    if args.plot is None and args.emit in ("hlo", "hlo-proto"):  # the chain stops after link #1 (and writing it)
        stop_after = Reify.name if args.emit == "hlo" else "write"
    data = _module_of_export(data, source, args.quiet)
    # The artifact's line said that no module XLA dumped has control edges: the note would say an earlier stage
    args.said_no_edges = not isinstance(data, (bytes, str)) and not data.edges
    chain = run_chain(data, stop_after=stop_after, **chain_options(args), debug_info=args.debug_info,
                      source_name=source, timings=args.step_seconds)  # errors name the input, not the module
    if args.emit == "hlo":
        return chain.hlo, chain.link1, chain.module() if args.plot is not None else None
    if args.emit == "hlo-proto":
        from pipeline.xla.isolated import read_proto

        read_proto(chain.hlo_proto, f"{source} after link #1", isolate=True)  # XLA reads what is written
        return chain.hlo_proto, chain.link1, chain.module() if args.plot is not None else None
    program = chain.module()
    args.chain = chain  # --explore shows it
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
        from printer.penguin.drawing import to_dot
        return to_dot(program), chain.report, program
    return chain.penguin_source, chain.report, program


def _module_of_export(data, source: str, quiet: bool):
    """`data`, or the module the chain takes from a jax.export artifact
    (`capture.export_module`: one compilation, here), said on stderr: it
    compiles to several."""
    from pipeline.reading.capture import export_module
    from pipeline.reading.source import kind_of

    if kind_of(data) != "jax.export":
        return data
    module = export_module(data, source)
    if not quiet and module.edges:
        print(f"{PROG}: {source}: a jax.export artifact: the program is of {module.name}, the last module XLA "
              f"dumped with control edges as it compiled it; '{PROG} check {source}' checks each one",
              file=sys.stderr)
    elif not quiet:  # the note under the summary says the module has none: this says why
        print(f"{PROG}: {source}: a jax.export artifact: no module XLA dumped as it compiled it has control "
              f"edges; the program is of {module.name}, the module XLA compiled it to", file=sys.stderr)
    return module


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


def stage_plot(args: argparse.Namespace, program) -> str:
    """Draw the program into a temporary file beside --plot's path; `commit_file`
    renames it into place once the output is written. The functions of
    --plot-function, else each function with a dep edge, else the entry
    function; the nested blocks --plot-nested names."""
    from printer.penguin import drawing

    names = [f.name for f in program.functions]
    for name in args.plot_function or ():
        if name not in names:
            raise UsageError(f"--plot-function: the program has no function {name!r} "
                             f"(its functions: {', '.join(names) or 'none'})")
    functions = args.plot_function or drawing.functions_with_deps(program) or \
        [name for name in [drawing.entry_function(program)] if name is not None]
    # Pillow's PNG, or SVG written as text: matplotlib's import alone would cost more than the drawing.
    if plot_format(args.plot) == "png":
        data = drawing.png(program, function=functions, nested=args.plot_nested or "deps")
    else:
        data = drawing.svg(program, function=functions, nested=args.plot_nested or "deps")
    return stage_file(args.plot, data, "plot")


def report(result, *, failures_only: bool = False, note: bool = True) -> None:
    """Edges in, edges out, on stderr: link #1's account for --emit hlo, the
    whole chain's report otherwise; a warning for each dropped or lost edge
    and each spurious dep edge. `failures_only` (--quiet on a failed
    --check): the lost and spurious edges alone, the reason for exit 1.
    `note`: the note on a module without control edges."""
    from passes.elision import elided_note
    from passes.hlo.preserve_control_deps import PreserveControlDeps
    from pipeline.verifier.report import Report

    for edge in result.edges:
        if edge.fate is Fate.LOST or (edge.fate is Fate.DROPPED and not failures_only):
            print(f"{PROG}: warning: {edge}", file=sys.stderr)
    for edge in getattr(result, "spurious", ()):
        print(f"{PROG}: warning: {edge}", file=sys.stderr)
    if failures_only:
        return
    if getattr(result, "elided", None):
        print(f"{PROG}: warning: {elided_note(result.elided)}", file=sys.stderr)
    stage = "chain" if isinstance(result, Report) else PreserveControlDeps.name
    print(f"{PROG}: {stage}: {result.summary()}", file=sys.stderr)
    if note:
        note_without_edges(result)


def print_timings(seconds: dict[str, float]) -> None:
    """Each step's seconds on stderr, one line each, in the order run."""
    lines = [f"{PROG}: seconds per step"] + [f"  {name:<14}{s:9.3f}" for name, s in seconds.items()]
    lines.append(f"  {'total':<14}{sum(seconds.values()):9.3f}")
    sys.stderr.write("\n".join(lines) + "\n")


def note_without_edges(result) -> None:
    """A module without a control edge: one line on stderr that says where XLA adds them."""
    if not result.edges:
        print(f"{PROG}: note: the module has no control edges (control-predecessors=): {NO_CONTROL_EDGES}",
              file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["regress"]:  # a file named 'regress' is still reachable as ./regress
        from pipeline.cli import regress
        return regress.main(argv[1:])
    if argv[:1] == ["corpus"]:  # likewise ./corpus
        from pipeline.cli import corpus
        return corpus.main(argv[1:])
    if argv[:1] == ["verify"]:  # likewise ./verify
        return verify_main(argv[1:])
    if argv[:1] == ["check"]:  # likewise ./check
        from pipeline.cli import check
        return check.main(argv[1:])
    return guarded(PROG, lambda: _main(argv))


def entry() -> None:
    """The `hlo2penguin` command (console script, `python -m pipeline.cli`):
    `main`, then the process ends without the interpreter's teardown
    (`pipeline.cli.support.end_process`)."""
    end_process(PROG, main)


# Arguments that print text and run no chain: no XLA child for them.
_TEXT_ONLY = {"-h", "--help", "--version", "--example"}


def _main(argv: list[str]) -> int:
    if _TEXT_ONLY.isdisjoint(argv):
        # Before the parser (its options import jaxlib): the child is forked with
        # jaxlib loaded while this process has one thread, or spawned.
        xla_child.fork_early()
    args = build_parser().parse_args(argv)
    if args.version:
        write_output(None, version_line(PROG) + "\n")
        return 0
    if args.example:
        write_output(None, EXAMPLE_HLO)
        return 0
    refuse_unusable_flags(args)
    refuse_overwriting_inputs(args.output, [args.input])
    if args.plot is not None:
        plot_format(args.plot)  # a bad name fails before the chain runs
        refuse_overwriting_inputs(args.plot, [args.input], "--plot")
    args.step_seconds = {} if args.timings else None
    out, result, program = run(args)
    staged = stage_plot(args, program) if args.plot is not None else None
    start = time.perf_counter()
    try:
        write_output(args.output, out)
    except BaseException:
        if staged:
            os.unlink(staged)
        raise
    if staged:
        commit_file(staged, args.plot, "plot")
    if args.timings:
        args.step_seconds["output"] = time.perf_counter() - start
    # Only after the output is written: a failed run says one line, the error.
    failed = args.check and not result.ok
    if args.emit == "report" and args.output is None:
        if not args.quiet and not args.said_no_edges:  # the report is on stdout already: stderr does not repeat it
            note_without_edges(result)
    elif not args.quiet:
        report(result, note=not args.said_no_edges)
    elif failed:
        report(result, failures_only=True)  # quiet hides the summary, never why the exit is 1
    if args.timings:
        print_timings(args.step_seconds)
    if args.explore:
        explore(args)
    return 1 if failed else 0


def explore(args: argparse.Namespace) -> None:
    """Serve the chain's graphs in Model Explorer until Ctrl+C: the address on stderr."""
    from pipeline import explorer

    try:
        served = explorer.explore(args.chain, port=args.explore_port)
    except explorer.ExplorerError as err:
        raise UsageError(f"--explore: {err}") from None
    print(f"{PROG}: Model Explorer serves {args.chain.source} at {served.base} (Ctrl+C stops it); "
          f"the graphs open at:\n{served.url}", file=sys.stderr, flush=True)
    served.wait()


def verify_main(argv: list[str]) -> int:
    """`hlo2penguin verify MODULE PROGRAM.py [--json]`: the independent
    verifier's report; exit 1 if an edge is lost or a dep edge is spurious."""
    return guarded(f"{PROG} verify", lambda: _verify(argv))


def build_verify_parser() -> argparse.ArgumentParser:
    from pipeline.verifier.sandbox import DEFAULT_MEMORY_MIB, DEFAULT_TIMEOUT  # light: no jaxlib

    parser = Parser(prog=f"{PROG} verify", description=(
        "Check a Penguin program against the HLO module it came from, from these two alone: every "
        "control edge of the HLO (read by XLA's parser) and its fate in the executed program, and every "
        "dep edge no HLO edge accounts for. Exit 1 if an edge is lost or a dep edge is spurious. The "
        "program runs in a child process with a time and a memory limit: a program that exits early, "
        "hangs, runs out of memory, dies or raises is an error (exit 2), never a pass."))
    parser.add_argument("module", metavar="MODULE", help="the HLO module the program came from (text, or binary: "
                                                        "*.hlo.pb, a snapshot, a serialized HloModuleProto, or a "
                                                        "jax.export artifact, whose module is the one hlo2penguin "
                                                        "takes from it)")
    parser.add_argument("program", metavar="PROGRAM.py", help="the Penguin program (it is run, in a child process)")
    parser.add_argument("-o", "--output", metavar="OUT", help="write the report here instead of standard output")
    parser.add_argument("--json", action="store_true", help="the report as JSON")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="write only the lost and spurious edges (nothing when the program holds), "
                             "no summary; the exit status says the verdict")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=DEFAULT_TIMEOUT,
                        help=f"stop the program after this many seconds of wall clock (default: {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--memory", metavar="MIB", type=int, default=DEFAULT_MEMORY_MIB,
                        help=f"limit the program's address space to this many MiB (default: {DEFAULT_MEMORY_MIB})")
    return parser


# How Python source starts (its first line that is not blank or a `# ` comment), and no HLO module does.
_PYTHON_START = re.compile(r'(?:"""|\'\'\'|from\s+[\w.]+\s+import\b|import\s+[\w.]+|def\s|class\s|#!)')


def _swapped(module: str, program: str) -> None:
    """`verify PROGRAM.py MODULE`, said as such, before anything is run."""
    from pipeline.reading.hints import looks_like_hlo_text

    def head(path: str) -> str:
        try:
            with open(path, "rb") as f:
                return f.read(65536).decode("utf-8", "replace")
        except OSError:  # the verifier says why it cannot read it
            return ""

    lines = head(module).splitlines()
    first = next((line.strip() for line in lines if line.strip() and not re.match(r"#(\s|$)", line.strip())), "")
    is_python = _PYTHON_START.match(first) is not None
    is_hlo = looks_like_hlo_text(head(program))
    said = [f"'{module}' is Python, not an HLO module"] if is_python else []
    said += [f"'{program}' is an HLO module, not a Penguin program"] if is_hlo else []
    if said:
        raise UsageError(f"verify takes MODULE then PROGRAM.py: {' and '.join(said)}")


def _verify(argv: list[str]) -> int:
    from pipeline.verifier.sandbox import start_program

    args = build_verify_parser().parse_args(argv)
    if args.quiet and args.json:
        raise UsageError("--quiet writes the failures alone; --json writes the whole report: choose one")
    if not args.timeout > 0:  # nan too
        raise UsageError(f"--timeout takes a number of seconds above 0, not {args.timeout:g}")
    if args.memory <= 0:
        raise UsageError(f"--memory takes a number of MiB above 0, not {args.memory}")
    refuse_overwriting_inputs(args.output, [args.module, args.program])
    _swapped(args.module, args.program)
    # The program's child starts first, XLA's next (forked with jaxlib loaded):
    # both load while this process imports the verifier.
    with start_program(pathlib.Path(args.program), timeout=args.timeout, memory_mib=args.memory) as program:
        xla_child.fork_early()
        from pipeline.reading.text import read_path
        from pipeline.verifier.verify import verify

        # XLA parses in a child: it aborts the process on some bad modules
        result = verify(read_path(args.module), program, source=args.module, isolate=True)
    if args.json:
        text = json.dumps(result.as_dict(), indent=2) + "\n"
    elif args.quiet:
        text = "".join(f"{edge}\n" for edge in [*result.lost, *result.spurious])
    else:
        text = "".join(f"{line}\n" for line in result.lines()) + result.summary() + "\n"
    write_output(args.output, text)
    return 0 if result.ok else 1


if __name__ == "__main__":
    entry()
