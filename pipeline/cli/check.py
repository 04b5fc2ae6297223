"""`hlo2penguin check PATH...`: every HLO module with control edges in the
given files and folders (an `XLA_FLAGS=--xla_dump_to` folder) through the
whole chain, one row each: its edges and their fates.

Candidates are the files named, and the `*.txt` / `*.hlo` files under each
folder (recursively), in sorted order. In a folder, a file whose first
line is neither `HloModule …` nor the head of a computation (`ENTRY …`,
`%name (…) -> … {`: a module written as XLA's unit tests write them) is
skipped: XLA's buffer-assignment and memory-usage reports beside the dumps,
any other text. A file named is read as HLO whatever it starts with. A module without any
`control-predecessors=` is skipped; the table's footer counts both. A module the chain
refuses (XLA's parser or importer, any `ChainError`) is a row with the
one-line error, and the run goes on. Each module is one task: in this
process, in `jobs` spawned processes, or on a Dask cluster
(`pipeline.cli.workers`).

    summary = check(["/tmp/xla_dump"], jobs=2, dialect="mhlo")
    summary.totals(), summary.ok, summary.modules[0].lost

Exit status of the command: 0 ok; 1 if an edge is lost, a dep edge is
spurious or a module is an error row; 2 on bad input or usage.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field

from passes.errors import ChainError, first_line
from pipeline.cli import workers
from pipeline.cli.support import Parser, UsageError, add_chain_options, chain_options, guarded
from pipeline.verifier.report import COUNTS, EdgeCounts
from pipeline.chain.sources import hlo_module_name, looks_like_hlo, read_path

PROG = "hlo2penguin check"
SUFFIXES = (".txt", ".hlo")
CONTROL_PREDECESSORS = b"control-predecessors="


@dataclass
class ModuleRow(EdgeCounts):
    """One module: its control edges and their fates (the chain's report), or why the chain refused it."""

    path: str
    module: str
    error: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.error or self.lost or self.spurious)

    def as_dict(self) -> dict:
        return {"path": self.path, "module": self.module, **self.counts(), "error": self.error}


@dataclass
class CheckSummary:
    modules: list[ModuleRow] = field(default_factory=list)
    not_hlo: int = 0           # candidates skipped: not an HLO module
    no_control_edges: int = 0  # candidates skipped: an HLO module without control edges

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
                "skipped": {"not_hlo": self.not_hlo, "no_control_edges": self.no_control_edges}}

    def table(self) -> str:
        headers = ["module", *COUNTS, "error"]
        rows = [[r.path, *(("-",) * len(COUNTS) if r.error else (getattr(r, k) for k in COUNTS)),
                 _without_path(r.error, r.path)] for r in self.modules]
        t = self.totals()
        rows.append([f"total: {len(self.modules)} modules, {t['errors']} errors", *(t[k] for k in COUNTS), ""])
        cells = [headers] + [[str(c) for c in row] for row in rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        skipped = self.not_hlo + self.no_control_edges
        lines.append(f"skipped {skipped} file(s): {self.not_hlo} not an HLO module, "
                     f"{self.no_control_edges} without control edges")
        if t["lost"] or t["spurious"]:
            lines.append("each edge and its fate: hlo2penguin MODULE --emit report")
        return "\n".join(lines) + "\n"


def _without_path(error: str, path: str) -> str:
    """The error after its module's path (the row names it): `5:18: XLA's parser: …`."""
    return error[len(path) + 1:].lstrip() if error.startswith(f"{path}:") else error


@dataclass(frozen=True)
class Candidate:
    path: str
    module: str  # the name after `HloModule`


def find_modules(paths) -> tuple[list[Candidate], int, int]:
    """The HLO modules with control edges under `paths`, and how many
    candidates were skipped as not HLO and as without control edges.
    UsageError for a path that does not exist or holds no HLO module."""
    files: list[tuple[str, bool]] = []  # (path, named by the user)
    for path in map(os.fspath, paths):
        if os.path.isdir(path):
            found = []
            for folder, _, names in os.walk(path):
                found += [os.path.join(folder, n) for n in names if n.endswith(SUFFIXES)]
            files += [(f, False) for f in sorted(found)]
        elif os.path.exists(path):
            files.append((path, True))  # named: a candidate whatever its suffix and first line
        else:
            raise UsageError(f"cannot read input '{path}': No such file or directory; "
                             "give HLO text files or XLA dump folders (--xla_dump_to)")
    modules, not_hlo, no_edges, seen = [], 0, 0, set()
    for path, named in files:
        if os.path.realpath(path) in seen:  # named twice, or a file inside a folder also named
            continue
        seen.add(os.path.realpath(path))
        data = read_path(path)
        head = data[:4096].decode("utf-8", "replace")
        if not named and not looks_like_hlo(head):
            not_hlo += 1
        elif CONTROL_PREDECESSORS not in data:
            no_edges += 1
        else:
            modules.append(Candidate(path, hlo_module_name(head) or os.path.basename(path)))
    if not modules:
        where = ", ".join(f"'{os.fspath(p)}'" for p in paths)
        what = (f"no HLO module with control edges in {where} ({not_hlo} not HLO, {no_edges} without "
                "control-predecessors)" if files else f"no .txt or .hlo file in {where}")
        raise UsageError(f"{what}; give HLO text files or a folder XLA dumped to (--xla_dump_to)")
    return modules, not_hlo, no_edges


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
    return row


def check(paths, *, jobs: int | None = None, scheduler: str | None = None, progress: bool = False,
          **chain_options) -> CheckSummary:
    """Every HLO module with control edges under `paths` through
    `pipeline.run(module, **chain_options)`; one row per module, in sorted
    order. `jobs` local processes (default: every core) or the Dask
    scheduler at `scheduler`; `progress`: a tqdm bar on stderr."""
    from pipeline.chain.options import Options

    Options(**chain_options)  # an unknown dialect or scope fails before any module is read
    candidates, not_hlo, no_edges = find_modules(paths)
    # A Dask worker may be another machine: it gets the text; a local process reads the file itself.
    tasks = [(c.path, c.module, read_path(c.path) if scheduler else None, chain_options) for c in candidates]
    with workers.progress_bar(len(tasks), enabled=progress, unit="module") as bar:
        rows = workers.run(check_module, tasks, jobs=jobs or os.cpu_count() or 1, scheduler=scheduler,
                           on_done=lambda i: bar.update(1))
    return CheckSummary(rows, not_hlo, no_edges)


def build_parser() -> Parser:
    p = Parser(prog=PROG, description=(
        "Run every HLO module with control edges in the given files and folders (an XLA --xla_dump_to "
        "folder: its *.txt and *.hlo files) through the chain, and table each module's control edges and "
        "their fates. Exit 1 if an edge is lost, a dep edge is spurious or the chain refuses a module; "
        "2 on bad input."))
    p.add_argument("paths", nargs="+", metavar="PATH", help="an HLO text file, or a folder of them")
    p.add_argument("--json", action="store_true", help="JSON: {\"modules\": [...], \"totals\": {...}, ...}")
    p.add_argument("--jobs", type=int, metavar="N", help="modules in N parallel processes (default: every core)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the modules on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:8786)")
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
    summary = check(args.paths, jobs=args.jobs, scheduler=args.scheduler,
                    progress=sys.stderr.isatty() and not args.quiet, **chain_options(args))
    sys.stdout.write(json.dumps(summary.as_dict(), indent=2) + "\n" if args.json else summary.table())
    return 0 if summary.ok else 1
