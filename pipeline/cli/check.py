"""`hlo2penguin check PATH...`: every HLO module with control edges in the
given files and folders (an `XLA_FLAGS=--xla_dump_to` folder) through the
whole chain, one row each: its edges and their fates.

Candidates are the files named, and the `*.txt` / `*.hlo` / `*.pb` /
`*.jaxexport` files under each folder (recursively), in sorted order, each
told apart by its content (`pipeline.reading.binary`): HLO text, XLA's
`*.hlo.pb` (an HloProto) and HloSnapshots, a serialized HloModuleProto, a
jax.export artifact (a row for each module with control edges it compiles
to, as `sources.from_export` captures them). A text file whose first line
(past comments, however long) is neither `HloModule …` nor the head of a
computation (`ENTRY …`, `%name (…) -> … {`: a module written as XLA's unit
tests write them), or is MLIR, is not HLO unless XLA's parser reads it; nor
is a proto of another message: XLA's buffer-assignment and memory-usage
reports and options beside the dumps, any other text. In a folder such a
file is skipped; named, it is bad input (one line: XLA's words, and for
MLIR that hlo2penguin-opt reads it). A module's proto that is broken
(truncated, corrupted), or a file named that is empty or not UTF-8, is an
error row. A module without control edges is skipped; the table's footer
counts both.

A stage XLA dumped both as text and as proto (`--xla_dump_hlo_as_text
--xla_dump_hlo_as_proto`) is checked once, as its `.txt`; an HloSnapshot
(`--xla_dump_hlo_snapshots`: the module XLA compiled, as it ran) once, as
its compilation's after_optimizations dump, or as the first snapshot of it
where there is none. The footer says so; the JSON lists them (`twins`). A module the chain
refuses (XLA's parser or importer, any `ChainError`) is a row with the
one-line error, and the run goes on. Each module is one task: in this
process, in `jobs` spawned processes, or on a Dask cluster
(`pipeline.cli.workers`).

Each row names its file (`file`: relative to the folder common to all rows)
and its stage (`stage`: what XLA's dump name says after the module's name,
`cpu_after_optimizations` or `copy-insertion.after_adding_copies`; None for
any other name). A dump holds one module at every stage it was dumped at, a
row each: the totals add them all, and the table says so. The table names
each row by its module and its stage (`CheckSummary.names`: by the file
where two rows would read the same), each cut from its front where the
width asks; the JSON has `path`, `module`, `file` and `stage`.

    summary = check(["/tmp/xla_dump"], jobs=2, dialect="mhlo")
    summary.totals(), summary.ok, summary.modules[0].lost, summary.modules[0].stage

A module with constants XLA's dump printed without their values
(`constant({...})`) has its edges checked as any other; a line under the
table names those constants and says its numbers cannot be compared
(`--xla_dump_large_constants` keeps them).

Exit status of the command: 0 ok, or nothing to check (no HLO module with
control edges found: one line on stderr says what was found); 1 if an edge
is lost, a dep edge is spurious or a module is an error row; 2 on bad
input or usage (a path that is not there, not a file or a folder, or
unreadable; a file named that is not HLO; `-o` a file check reads; a bad
option).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field

from passes.elision import elided_note
from passes.errors import ChainError, first_line
from pipeline.reading.hints import NO_CONTROL_EDGES
from pipeline.reading.dumps import snapshot_id
from pipeline.reading.text import read_path
from pipeline.reading.walk import SUFFIXES, find_modules
from pipeline.cli import workers
from pipeline.cli.check_names import from_front, name_widths
from pipeline.cli.support import (Parser, UsageError, add_chain_options, chain_options, guarded,
                                  refuse_output_among_inputs, write_output)
from pipeline.verifier.report import COUNTS, EdgeCounts

PROG = "hlo2penguin check"
WIDTH = 100      # the table's width when stdout is not a terminal (and COLUMNS is not set)
MIN_NAMES = 24   # the name columns are never narrower: past that, the line is wider than the terminal
COUNT_COLUMNS = sum(len(k) + 2 for k in COUNTS)  # each count's column and the two spaces before it


@dataclass
class ModuleRow(EdgeCounts):
    """One module: its control edges and their fates (the chain's report), or why the chain refused it."""

    path: str                # as given, or as found under a folder given
    module: str              # the name after `HloModule` (the file's name if it has none)
    file: str = ""           # `path` relative to the folder common to all rows
    stage: str | None = None  # the stage XLA's dump name says, if it is one
    error: str = ""
    compilation: tuple = ()  # what tells modules apart: (folder, dump's module id), or the file itself
    elided: list = field(default_factory=list)  # (computation, name) of each constant XLA's dump elided

    @property
    def failed(self) -> bool:
        return bool(self.error or self.lost or self.spurious)

    def as_dict(self) -> dict:
        found = {"path": self.path, "module": self.module, "file": self.file, "stage": self.stage,
                 **self.counts(), "error": self.error}
        if self.elided:  # as the report's JSON has them
            found["elided_constants"] = [{"computation": c, "name": n} for c, n in self.elided]
        return found


@dataclass
class CheckSummary:
    modules: list[ModuleRow] = field(default_factory=list)
    not_hlo: int = 0           # candidates skipped: not an HLO module
    no_control_edges: int = 0  # candidates skipped: an HLO module without control edges
    paths: list[str] = field(default_factory=list)  # the paths given
    folder: str = ""           # the folder common to the rows' files (their `file` is relative to it), if any
    twins: list[tuple[str, str]] = field(default_factory=list)  # (file not checked again, the file checked for it)

    def totals(self) -> dict[str, int]:
        totals = EdgeCounts.summed(self.modules)
        totals["errors"] = sum(bool(r.error) for r in self.modules)
        return totals

    @property
    def ok(self) -> bool:
        """No edge lost, no spurious dep edge, no module refused."""
        return not any(r.failed for r in self.modules)

    def as_dict(self) -> dict:
        return {"modules": [r.as_dict() for r in self.modules], "totals": self.totals(),
                "skipped": {"not_hlo": self.not_hlo, "no_control_edges": self.no_control_edges},
                "twins": [{"path": twin, "checked_as": kept} for twin, kept in self.twins]}

    @property
    def nothing_to_check(self) -> str | None:
        """Why there is no row, in one line (what was found), or None if there are rows."""
        if self.modules:
            return None
        files = self.not_hlo + self.no_control_edges
        if not files:
            where = ", ".join(f"'{p}'" for p in self.paths)
            return f"no .txt or .hlo file in {where}; nothing to check"
        if not self.no_control_edges:
            return f"no HLO module in {_counted(files, 'file')} ({self.not_hlo} not HLO); nothing to check"
        return (f"no HLO module with control edges in {_counted(files, 'file')} "
                f"({_counted(self.no_control_edges, 'HLO module')} without control-predecessors, "
                f"{self.not_hlo} not HLO); nothing to check; {NO_CONTROL_EDGES}")

    def table(self, width: int | None = None) -> str:
        """The rows, to fit `width` columns (the terminal's; WIDTH when stdout
        is not one): each row's module and stage (`names`), a name too long
        cut from its front (`…`), never so far that two rows read the same;
        the numbers and the errors are never cut."""
        width = width or shutil.get_terminal_size((WIDTH, 24)).columns
        t = self.totals()
        errors = any(r.error for r in self.modules)
        headers = ["module", "stage", *COUNTS, *(["error"] if errors else [])]
        total = f"total: {_counted(len(self.modules), 'row')}, {_counted(t['errors'], 'error')}"
        names = self.names()
        # The two name columns: what the counts leave of the width (never less than MIN_NAMES).
        room = max(MIN_NAMES, len(total), width - COUNT_COLUMNS)
        keeps = [_program_length(m, r) for r, (m, _) in zip(self.modules, names)]
        widths = name_widths([m for m, _ in names], [s for _, s in names], room, keeps)
        rows = [[from_front(m, widths[0], keep), from_front(s, widths[1]),
                 *(("-",) * len(COUNTS) if r.error else (getattr(r, k) for k in COUNTS)),
                 *([_with_file(r.error, r.path, r.file)] if errors else [])]
                for r, (m, s), keep in zip(self.modules, names, keeps)]
        cells = [headers] + [[str(c) for c in row] for row in rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
        if len(total) > widths[0] + 2 + widths[1]:  # the total's label spans both name columns
            widths[1] = len(total) - widths[0] - 2
        if errors:
            widths[-1] = len(headers[-1])  # the last column: its rule as wide as its header, its text whole
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
        label = total.ljust(widths[0] + 2 + widths[1])
        lines.append("  ".join([label, *(str(t[k]).ljust(w) for k, w in zip(COUNTS, widths[2:])),
                                *([""] if errors else [])]).rstrip())
        lines.insert(1, "  ".join("-" * w for w in widths))
        stages = self.stages()
        if stages:
            lines.append(f"the totals add up {_counted(len(self.modules), 'row')}: {stages}")
        if self.folder:
            lines.append(f"files under {self.folder}")
        lines += self.twin_lines()
        skipped = self.not_hlo + self.no_control_edges
        lines.append(f"skipped {skipped} file(s): {self.not_hlo} not an HLO module, "
                     f"{self.no_control_edges} without control edges")
        elided = [r for r in self.modules if r.elided]
        for r in elided:  # the edges are checked; the numbers are placeholders
            lines.append(f"{r.file}: {elided_note(r.elided)}")
        if t["lost"] or t["spurious"]:
            lines.append("each edge and its fate: hlo2penguin MODULE --emit report")
        return "\n".join(lines) + "\n"

    def names(self) -> list[tuple[str, str]]:
        """Each row's module and stage as the table names them, no two rows
        alike: the module after `HloModule` and the stage of XLA's dump name
        (`-` for a file whose name is not one). Where two rows would read the
        same (one module name compiled twice, the same stage in two folders,
        two files of one module), those rows name their module by the file
        instead: its dump name up to the stage, else the whole file."""
        names = [(r.module, r.stage or "-") for r in self.modules]
        for fallback in (_dump_prefix, lambda r: r.file):
            seen = Counter(names)
            names = [(fallback(r), stage) if seen[(m, stage)] > 1 else (m, stage)
                     for r, (m, stage) in zip(self.modules, names)]
        return names

    def twin_lines(self) -> list[str]:
        """What was checked once though dumped twice: a stage as text and as
        proto (its .txt is the row), the module an HloSnapshot holds (its
        compilation's after_optimizations dump is the row)."""
        protos = sum(snapshot_id(t) is None for t, _ in self.twins)
        snapshots = len(self.twins) - protos
        lines = []
        if protos:
            lines.append(f"{_counted(protos, 'stage')} dumped both as text and as proto: checked once, "
                         f"as the .txt")
        if snapshots:
            lines.append(f"{_counted(snapshots, 'snapshot')} (the module XLA ran): checked once, as its "
                         f"compilation's after_optimizations dump (or first snapshot)")
        return lines

    def stages(self) -> str | None:
        """`1 module at 8 stages`, `4 modules at 3 stages each`, `3 modules at 1 to 4 stages`
        when a module is a row at more than one stage; None when each module is one row."""
        per_module: dict[tuple, int] = {}
        for r in self.modules:
            per_module[r.compilation] = per_module.get(r.compilation, 0) + 1
        if len(per_module) == len(self.modules):
            return None
        low, high = min(per_module.values()), max(per_module.values())
        modules = _counted(len(per_module), "module")
        if low == high:
            return f"{modules} at {high} stages" + (" each" if len(per_module) > 1 else "")
        return f"{modules} at {low} to {high} stages"


def _counted(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _program_length(shown: str, row: ModuleRow) -> int:
    """How much of the end of a row's module name is the program's name, never cut:
    the module (`jit_loop`, also at the end of its dump prefix), else the file's name."""
    if shown.endswith(row.module):
        return len(row.module)
    return len(os.path.basename(shown))


def _dump_prefix(row: ModuleRow) -> str:
    """`run1/module_0004.jit_loop`: the row's file up to its stage (and pass counter), or the file."""
    if row.stage and row.file.endswith(SUFFIXES):
        base = os.path.splitext(row.file)[0]
        if base.endswith("." + row.stage):
            return re.sub(r"\.\d{4}$", "", base[:-len(row.stage) - 1])
    return row.file


def _with_file(error: str, path: str, file: str) -> str:
    """The error naming its module's file as the table does (`file`, relative
    to the folder under the table): `run1/bad.txt:5:18: XLA's parser: …`."""
    return f"{file}:{error[len(path) + 1:]}" if error.startswith(f"{path}:") else error



def common_folder(paths: list[str]) -> str:
    """The folder holding all of `paths`, as they are written (relative if
    they are), or '' if they share none but the file system's root."""
    folders = [os.path.dirname(os.path.normpath(p)) for p in paths]
    try:
        common = os.path.commonpath(folders) if folders else ""
    except ValueError:  # absolute and relative paths mixed
        common = os.path.commonpath([os.path.abspath(f) for f in folders])
    return "" if os.path.dirname(common) == common else common  # '' or '/': the paths as given


def check_module(path: str, module: str, data: bytes | None, options: dict) -> ModuleRow:
    """One task: the module at `path` (its text `data`, or read here) through the whole chain."""
    import pipeline

    row = ModuleRow(path, module)
    try:
        result = pipeline.run(read_path(path) if data is None else data, source_name=path, **options)
    except ChainError as err:  # XLA's parser or importer refused it, …: this row, not the run
        row.error = first_line(err)
        return row
    except Exception as err:  # a bug in the chain: said on this module's row, the others still run
        row.error = f"internal error ({type(err).__name__}: {first_line(err)}); please report it with the input"
        return row
    row.count(result.report)
    row.elided = list(result.report.elided)
    return row


def check(paths, *, jobs: int | None = None, scheduler: str | None = None, progress: bool = False,
          **chain_options) -> CheckSummary:
    """Every HLO module with control edges under `paths` through
    `pipeline.run(module, **chain_options)`; one row per module, in sorted
    order. `jobs` local processes (default: every core) or the Dask
    scheduler at `scheduler`; `progress`: a tqdm bar on stderr."""
    from pipeline.chain.options import Options

    Options(**chain_options)  # an unknown dialect or scope fails before any module is read
    candidates, not_hlo, no_edges, twins = find_modules(paths)
    # A Dask worker may be another machine: it gets the text; a local process reads the file itself.
    tasks = [(c.path, c.module, c.data if c.data is not None else read_path(c.path) if scheduler else None,
              chain_options) for c in candidates]
    with workers.progress_bar(len(tasks), enabled=progress, unit="module") as bar:
        rows = workers.run(check_module, tasks, jobs=jobs or os.cpu_count() or 1, scheduler=scheduler,
                           on_done=lambda i: bar.update(1))
    folder = common_folder([c.path for c in candidates])
    for row, c in zip(rows, candidates):
        row.file = os.path.relpath(c.path, folder) if folder else c.path
        row.stage, row.compilation = c.stage, c.compilation
    return CheckSummary(rows, not_hlo, no_edges, [os.fspath(p) for p in paths], folder, twins)


def build_parser() -> Parser:
    p = Parser(prog=PROG, description=(
        "Run every HLO module with control edges in the given files and folders (an XLA --xla_dump_to "
        "folder: its *.txt, *.hlo, *.pb and *.jaxexport files, told apart by content; a stage dumped both as "
        "text and as proto is checked once) through the chain, and table each module's control edges and "
        "their fates: a row per module and stage (a name too long cut from its front). Exit 0 if every "
        "edge is carried, or if there is nothing to check (no HLO module with control edges: one line on "
        "stderr says what was found); 1 if an edge is lost, a dep edge is spurious or a module is an error "
        "row (the chain refuses it, or a file named is empty or not UTF-8); 2 on bad input: a path that "
        "does not exist, is not a file or a folder, or cannot be read, a file named that is not HLO, an -o "
        "that check reads, or a bad option."))
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="an HLO module (text, *.hlo.pb, a snapshot, a jax.export artifact), or a folder of them")
    p.add_argument("--json", action="store_true",
                   help="JSON: {\"modules\": [{\"path\", \"module\", \"file\", \"stage\", counts, \"error\"}, ...], "
                        "\"totals\": {...}, \"skipped\": {...}, \"twins\": [{\"path\", \"checked_as\"}, ...]}; a module "
                        "whose constants XLA's dump elided has \"elided_constants\": [{\"computation\", \"name\"}, ...]")
    p.add_argument("--jobs", type=int, metavar="N", help="modules in N parallel processes (default: every core)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the modules on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:8786)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the table (or JSON) here instead of standard output (never a file check reads: "
                        "one named, or a *.txt, *.hlo, *.pb or *.jaxexport in a folder given)")
    p.add_argument("--junit-xml", metavar="XML",
                   help="also write JUnit XML here, for a CI server: a test case per module and stage (classname "
                        "its file), a failure where an edge is lost or a dep edge spurious, an error where the "
                        "chain refuses the module")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    add_chain_options(p)
    return p



def main(argv: list[str]) -> int:
    return guarded(PROG, lambda: _main(argv))


def _main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs takes a whole number of at least 1")
    if args.jobs is not None and args.scheduler is not None:
        raise UsageError("give --jobs (local processes) or --scheduler (a Dask cluster), not both")
    refuse_output_among_inputs(args.output, args.paths, reads=lambda path: path.endswith(SUFFIXES))
    refuse_output_among_inputs(args.junit_xml, args.paths, reads=lambda path: path.endswith(SUFFIXES), what="--junit-xml")
    if args.junit_xml is not None and args.output is not None and \
            os.path.abspath(args.junit_xml) == os.path.abspath(args.output):
        raise UsageError("--junit-xml and -o name the same file: give each its own")
    summary = check(args.paths, jobs=args.jobs, scheduler=args.scheduler,
                    progress=sys.stderr.isatty() and not args.quiet, **chain_options(args))
    if args.junit_xml is not None:
        from pipeline.cli.junit import check_cases, write_junit

        write_junit(args.junit_xml, PROG, check_cases(summary))
    if summary.nothing_to_check:  # a gate passes on a program without control edges, and says so
        print(f"{PROG}: {summary.nothing_to_check}", file=sys.stderr)
        if args.json:
            write_output(args.output, json.dumps(summary.as_dict(), indent=2) + "\n")
        return 0
    write_output(args.output, json.dumps(summary.as_dict(), indent=2) + "\n" if args.json else summary.table())
    return 0 if summary.ok else 1
