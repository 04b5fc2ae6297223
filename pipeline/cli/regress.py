"""`hlo2penguin regress [DIR]`: the chain over a corpus of exported JAX
programs, in both dialects, against goldens.

A corpus folder holds `<name>.jaxexport` artifacts (`jax.export` serialized),
`inputs/<name>.npz` and `expected/<name>.npz` (JAX's own outputs), and
`goldens/<name>.json` with the Penguin programs beside it (`pipeline.cli.goldens`).
For every module XLA dumps with control edges, and for each dialect, a row
checks: the invariant (no edge lost), numerics (the Penguin program run with
numpy equals JAX's output; "no inputs" without them, counted, a failure
with `--require-numbers`), and the golden (the edge report and a hash of the
Penguin program are what they were; a changed one prints the edges whose
fate changed and the program's diff). Numerics that fail, or turn
"unsupported: <op>", count as a regression. Exit 1 on any regression;
`--update-goldens` rewrites the goldens instead of comparing; `--junit-xml`
writes a test case per row (`pipeline.cli.regress_output`).

Each program is one task (`pipeline.cli.workers`): in this process, in `--jobs`
processes, or on a Dask cluster (`--scheduler`). Its artifact, inputs and
golden are read here and go with the task, and goldens are written here, so
a worker needs the package, not the corpus folder.

Goldens across jax releases: each record holds the report and the hash as
the jax named in its `"jax"` wrote them (and its program file), and under
`"by_jax"` what another release's XLA changed (only the fields that differ). `--update-goldens` on
the record's own jax rewrites the record; on another, only its `by_jax`
entry. The table's first line names the jax it ran with.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field

from passes.dialects import DIALECTS
from passes.errors import first_line
from pipeline.xla import versions
from pipeline.cli import goldens, regress_output, workers
from pipeline.cli.junit import write_junit
from pipeline.cli.support import (Parser, UsageError, add_option_flags, guarded, option_values,
                                  refuse_output_among_inputs, write_output)
from pipeline.verifier.report import EdgeCounts

# The repository's corpus, found from this file (pipeline/cli/regress.py), so
# `hlo2penguin regress` runs from any working directory of a clone.
REPO_CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "tests", "corpus")
DEFAULT_DIR = REPO_CORPUS
CORPUS_FILES = (".jaxexport", ".npz", ".json", ".py")  # what regress reads (and --update-goldens writes) in a corpus


@dataclass
class Row(EdgeCounts):
    program: str
    module: str
    dialect: str
    numerics: str = "n/a"   # ok | FAIL … | unsupported: op | n/a
    golden: str = "n/a"     # ok | changed … | new | updated
    error: str = ""
    jax: str = versions.JAX  # the release it ran with
    changes: list[str] = field(default_factory=list)  # each edge whose fate changed since the golden
    diff: str = ""  # the Penguin program against the golden's (unified diff), when it changed

    def as_dict(self) -> dict:
        found = {"program": self.program, "module": self.module, "dialect": self.dialect, **self.counts(),
                 "numerics": self.numerics, "golden": self.golden, "error": self.error, "jax": self.jax}
        if self.golden.startswith("changed"):  # a passing row's JSON stays as it was
            found.update(changes=self.changes, diff=self.diff)
        return found

    @property
    def unnumbered(self) -> bool:
        """Judged without numbers: the corpus has no inputs (or expected outputs) for it."""
        return self.numerics.startswith("no ")

    def explanation(self) -> str:
        """What a changed golden row prints under the table: the fate changes, then the diff."""
        return "".join(f"  {line}\n" for line in self.changes) + self.diff

    @property
    def regressed(self) -> bool:
        # A row whose numerics fail or turn unsupported (an executor rule gone)
        # is a regression like a lost edge or a changed golden.
        return bool(self.error or self.lost or self.spurious
                    or self.numerics.startswith(("FAIL", "unsupported"))
                    or self.golden.startswith("changed") or self.golden == "missing")


@dataclass
class Summary:
    rows: list[Row] = field(default_factory=list)
    require_numbers: bool = False  # `--require-numbers`: a row without numbers fails

    def failed(self, row: Row) -> bool:
        return row.regressed or (self.require_numbers and row.unnumbered)

    def totals(self) -> dict[str, int]:
        t = EdgeCounts.summed(self.rows)
        t["rows"] = len(self.rows)
        t["numerics ok"] = sum(r.numerics == "ok" for r in self.rows)
        t["unsupported"] = sum(r.numerics.startswith("unsupported") for r in self.rows)
        t["no numbers"] = sum(r.unnumbered for r in self.rows)
        t["regressions"] = sum(self.failed(r) for r in self.rows)
        return t


def programs(directory: str) -> list[str]:
    from pipeline import corpus

    try:
        names = corpus.names(directory)
    except OSError as err:
        hint = ("; this install has no corpus (it lives in a clone of the repository, under tests/corpus): "
                "give its folder as DIR" if directory == REPO_CORPUS else "")
        raise UsageError(f"cannot read corpus folder '{directory}': {err.strerror}{hint}") from None
    if not names:
        corpus_arg = shlex.quote(directory)
        own = ("; this repository's own corpus is regenerated with tests/corpus/regenerate.py"
               if directory == REPO_CORPUS else "")
        raise UsageError(f"'{directory}' holds no .jaxexport artifacts; add your JAX programs with "
                         f"hlo2penguin corpus add {corpus_arg} ..., then write their goldens with "
                         f"hlo2penguin regress {corpus_arg} --update-goldens{own}")
    return names


@dataclass
class Program:
    """What checking one program needs, read here: a worker (a Dask worker
    on another machine) needs no access to the corpus folder."""

    name: str
    artifact: bytes | None  # the .jaxexport; None if it cannot be read (`error` says why)
    inputs: list | None
    expected: list | None
    golden: dict | None
    error: str = ""


def read_program(directory: str, name: str) -> Program:
    """Program `name` of the corpus, every file checked against its artifact
    (`pipeline.corpus`): a malformed corpus is a CorpusError before any runs."""
    from pipeline import corpus

    entry = corpus.read(directory, name)
    return Program(name, entry.artifact, entry.inputs, entry.expected, entry.golden)


def check_program(program: Program, update: bool, golden_programs: dict[str, str] | None = None,
                  verify_each: bool = False) -> tuple[list[Row], dict | None]:
    """Every captured module of one program, in both dialects (one task):
    the rows, and the golden records of this run (module → dialect →
    record; None if the program could not be captured). A changed row
    says which edges' fates changed and, given the golden's program files
    (`goldens.read_programs`), how the Penguin program differs. `verify_each`
    is the chain's option of that name."""

    import pipeline
    from pipeline.reading.capture import from_export

    name, golden = program.name, program.golden
    if program.artifact is None:
        return [Row(name, "-", "-", error=program.error)], None
    rows: list[Row] = []
    fresh: dict = {}  # module → dialect → the golden record after this run
    try:
        captured = from_export(program.artifact)
    except Exception as err:  # one program's failure is a row, not the end of the run
        return [Row(name, "-", "-", error=f"capture failed: {name}.jaxexport: {err}")], None
    for captured_module in captured.modules:
        for dialect in DIALECTS:
            row = Row(name, captured_module.name, dialect)
            rows.append(row)
            try:
                result = pipeline.run(captured_module, dialect=dialect, verify_each=verify_each)
            except Exception as err:
                row.error = first_line(err, with_type=True)
                continue
            row.count(result.report)
            row.numerics = _numerics(result.module(), program.inputs, program.expected)
            record = goldens.record_of(name, captured_module.name, dialect, result.report.as_dict(),
                                       result.penguin_source)
            old = (golden or {}).get(captured_module.name, {}).get(dialect)
            fresh.setdefault(captured_module.name, {})[dialect] = _updated(old, record)
            row.golden = "updated" if update else _compare(golden, old, record)
            if row.golden.startswith("changed"):
                row.changes = goldens.fate_changes(goldens.expected(old)["report"], record["report"])
                if goldens.expected(old)["penguin_sha256"] != record["penguin_sha256"]:
                    row.diff = goldens.program_diff(old, record, golden_programs)
    return rows, fresh


def write_golden(directory: str, program: Program, fresh: dict) -> None:
    """`--update-goldens`: the program's golden file with this run's records."""
    # Modules this jax does not dump keep their records (another release dumps them).
    kept = {m: d for m, d in (program.golden or {}).items() if m not in fresh and any(
        r.get("jax") != versions.JAX for r in d.values())}
    golden_path = os.path.join(directory, "goldens", f"{program.name}.json")
    os.makedirs(os.path.dirname(golden_path), exist_ok=True)
    records = {**kept, **fresh}
    goldens.write_programs(directory, program.name, records)  # takes the program texts out of the records
    with open(golden_path, "w", encoding="utf-8") as f:
        json.dump(records, f, indent=1, sort_keys=True)
        f.write("\n")


def _numerics(module, inputs, expected) -> str:
    # Said in the row and counted in the total, never skipped in silence (`--require-numbers` fails it).
    if inputs is None:
        return "no inputs"
    if expected is None:
        return "no expected outputs"
    from pipeline.testing import differences

    try:
        got = module.execute(*inputs)
    except NotImplementedError as err:  # UnsupportedOp: "unsupported op X (instruction …)"
        op = re.search(r"op ([\w.]+)", str(err))
        return f"unsupported: {op.group(1) if op else err}"
    except Exception as err:
        return f"FAIL: {first_line(err, with_type=True)}"
    found = differences(got, expected, "JAX's")
    return f"FAIL: {found[0]}" if found else "ok"


# The goldens' record logic lives in pipeline.cli.goldens; these names stay for callers of regress.
_expected = goldens.expected
_updated = goldens.updated
_compare = goldens.compare


def run(directory: str, update: bool = False, jobs: int = 1, progress=None, scheduler: str | None = None,
        require_numbers: bool = False, verify_each: bool = False) -> Summary:
    """Every program of the corpus at `directory`, one task each: in this
    process, in `jobs` spawned processes, or on the Dask scheduler at
    `scheduler`. `progress(done, total, program)` is called as each ends.
    With `require_numbers`, a row without inputs counts as a regression;
    `verify_each` is the chain's option of that name."""
    names = programs(directory)
    loaded = [read_program(directory, name) for name in names]
    done = 0

    def tick(i: int) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, len(names), names[i])

    # The golden programs go with the task (as the artifact does), for the diff of a changed row.
    tasks = [(p, update, goldens.read_programs(directory, p.golden), verify_each) for p in loaded]
    results = workers.run(check_program, tasks, jobs=jobs, scheduler=scheduler, on_done=tick)
    summary = Summary(require_numbers=require_numbers)
    for program, (rows, fresh) in zip(loaded, results):
        summary.rows += rows
        if update and fresh is not None:
            write_golden(directory, program, fresh)
    return summary


def table(summary: Summary) -> str:
    headers = ["program", "module", "dialect", "edges", "preserved", "rerouted", "dropped", "lost", "spurious",
               "numerics", "golden"]
    rows = [[r.program, _short(r.module, r.program), r.dialect, r.edges, r.preserved, r.rerouted, r.dropped, r.lost, r.spurious,
             r.numerics if not r.error else "-", r.golden if not r.error else r.error] for r in summary.rows]
    t = summary.totals()
    rows.append(["total", f"{len({r.program for r in summary.rows})} programs", f"{t['rows']} rows",
                 t["edges"], t["preserved"], t["rerouted"], t["dropped"], t["lost"], t["spurious"],
                 f"{t['numerics ok']} ok, {t['unsupported']} unsupported"
                 + (f", {t['no numbers']} no numbers" if t["no numbers"] else ""), f"{t['regressions']} regressions"])
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return f"jax {versions.JAX}, jaxlib {versions.JAXLIB}\n" + "\n".join(lines) + "\n"


def _short(module: str, program: str) -> str:
    """`jit_<program>:<stage>` → `<stage>`: the program column says the rest."""
    prefix = f"jit_{program}:"
    return module[len(prefix):] if module.startswith(prefix) else module


def build_parser(prog: str = "hlo2penguin regress") -> Parser:
    parser = Parser(prog=prog, description="Run the chain over a corpus of jax.export artifacts and compare with goldens.")
    parser.add_argument("directory", nargs="?", default=DEFAULT_DIR, metavar="DIR",
                        help="corpus folder (default: the repository's tests/corpus, found from the package's own "
                             "files, whatever the working directory)")
    parser.add_argument("--update-goldens", action="store_true", help="rewrite the goldens instead of comparing")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="programs in N parallel processes (default: every core, as check)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run the programs on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:8786)")
    parser.add_argument("--json", action="store_true", help="one JSON object per row instead of the table")
    parser.add_argument("-o", "--output", metavar="OUT", help="write the table (or JSON) here instead of standard output")
    parser.add_argument("--require-numbers", action="store_true",
                        help="a row without inputs (no inputs/<name>.npz) fails, as a regression (exit 1)")
    parser.add_argument("--junit-xml", metavar="XML",
                        help="also write JUnit XML here, for a CI server: a test case per row (program, module and "
                             "stage, dialect), a failure with its reasons, the fate changes and the diff")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    add_option_flags(parser, _verify_each())  # the chain's option, as `hlo2penguin` has it
    return parser


def _verify_each():
    from passes.options import options
    from pipeline.chain.options import Options

    return [o for o in options(Options) if o.name == "verify_each"]


def main(argv: list[str], prog: str = "hlo2penguin regress") -> int:
    parser = build_parser(prog)
    return guarded(prog, lambda: _main(parser, argv))


def _main(parser, argv: list[str]) -> int:
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs takes a whole number of at least 1")
    if args.jobs is not None and args.scheduler is not None:
        raise UsageError("give --jobs (local processes) or --scheduler (a Dask cluster), not both")
    # The corpus's artifacts, inputs, expected outputs and goldens are never the table's file.
    reads = lambda path: path.endswith(CORPUS_FILES)  # noqa: E731
    refuse_output_among_inputs(args.output, [args.directory], reads=reads)
    refuse_output_among_inputs(args.junit_xml, [args.directory], reads=reads, what="--junit-xml")
    if args.junit_xml is not None and args.output is not None and \
            os.path.abspath(args.junit_xml) == os.path.abspath(args.output):
        raise UsageError("--junit-xml and -o name the same file: give each its own")
    total = len(programs(args.directory))
    jobs = args.jobs or os.cpu_count() or 1  # as check: the programs are independent
    with workers.progress_bar(total, enabled=sys.stderr.isatty() and not args.quiet, unit="program") as bar:
        summary = run(args.directory, args.update_goldens, jobs, lambda *_: bar.update(1), args.scheduler,
                      require_numbers=args.require_numbers, **option_values(args, _verify_each()))
    if args.junit_xml is not None:
        write_junit(args.junit_xml, parser.prog, regress_output.junit_cases(summary))
    write_output(args.output, "".join(json.dumps(r.as_dict()) + "\n" for r in summary.rows) if args.json
                 else table(summary) + regress_output.explanations(summary))
    for hint in regress_output.hints(summary, args.directory, args.require_numbers):
        print(f"{parser.prog}: {hint}", file=sys.stderr)
    return 1 if summary.totals()["regressions"] else 0
