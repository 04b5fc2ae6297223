"""`hlo2penguin regress [DIR]`: the chain over a corpus of exported JAX
programs, in both dialects, against goldens.

A corpus folder holds `<name>.jaxexport` artifacts (`jax.export` serialized),
`inputs/<name>.npz` and `expected/<name>.npz` (JAX's own outputs), and
`goldens/<name>.json`. For every module XLA dumps with control edges, and for
each dialect, a row checks: the invariant (no edge lost), numerics (the
Penguin program run with numpy equals JAX's output), and the golden (the edge
report and a hash of the Penguin program are what they were). Numerics that
fail, or turn "unsupported: <op>", count as a regression. Exit 1 on any
regression; `--update-goldens` rewrites the goldens instead of comparing.

Each program is one task (`pipeline.cli.workers`): in this process, in `--jobs`
processes, or on a Dask cluster (`--scheduler`). Its artifact, inputs and
golden are read here and go with the task, and goldens are written here, so
a worker needs the package, not the corpus folder.

Goldens across jax releases: each record holds the report and the hash as
the jax named in its `"jax"` wrote them, and under `"by_jax"` what another
release's XLA changed (only the fields that differ). `--update-goldens` on
the record's own jax rewrites the record; on another, only its `by_jax`
entry. The table's first line names the jax it ran with.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field

from passes.dialects import DIALECTS
from passes.errors import first_line
from pipeline.xla import versions
from pipeline.cli import workers
from pipeline.cli.support import Parser, UsageError, guarded, refuse_output_among_inputs, write_output
from pipeline.verifier.report import EdgeCounts

# The repository's corpus, found from this file (pipeline/cli/regress.py), so
# `hlo2penguin regress` runs from any working directory of a clone.
REPO_CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "tests", "corpus")
DEFAULT_DIR = REPO_CORPUS
CORPUS_FILES = (".jaxexport", ".npz", ".json")  # what regress reads (and --update-goldens writes) in a corpus


@dataclass
class Row(EdgeCounts):
    program: str
    module: str
    dialect: str
    numerics: str = "n/a"   # ok | FAIL … | unsupported: op | n/a
    golden: str = "n/a"     # ok | changed … | new | updated
    error: str = ""
    jax: str = versions.JAX  # the release it ran with

    def as_dict(self) -> dict:
        return {"program": self.program, "module": self.module, "dialect": self.dialect, **self.counts(),
                "numerics": self.numerics, "golden": self.golden, "error": self.error, "jax": self.jax}

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

    def totals(self) -> dict[str, int]:
        t = EdgeCounts.summed(self.rows)
        t["rows"] = len(self.rows)
        t["numerics ok"] = sum(r.numerics == "ok" for r in self.rows)
        t["unsupported"] = sum(r.numerics.startswith("unsupported") for r in self.rows)
        t["regressions"] = sum(r.regressed for r in self.rows)
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
        raise UsageError(f"'{directory}' holds no .jaxexport artifacts: add one with 'hlo2penguin corpus add "
                         f"{directory} SOURCE' (the repository's corpus: regenerate it with "
                         "tests/corpus/regenerate.py)")
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


def check_program(program: Program, update: bool) -> tuple[list[Row], dict | None]:
    """Every captured module of one program, in both dialects (one task):
    the rows, and the golden records of this run (module → dialect →
    record; None if the program could not be captured)."""

    import pipeline
    from pipeline.chain.sources import from_export

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
                result = pipeline.run(captured_module, dialect=dialect)
            except Exception as err:
                row.error = first_line(err, with_type=True)
                continue
            row.count(result.report)
            row.numerics = _numerics(result.module(), program.inputs, program.expected)
            record = {"report": result.report.as_dict(),
                      "penguin_sha256": hashlib.sha256(result.penguin_source.encode()).hexdigest()}
            old = (golden or {}).get(captured_module.name, {}).get(dialect)
            fresh.setdefault(captured_module.name, {})[dialect] = _updated(old, record)
            row.golden = "updated" if update else _compare(golden, old, record)
    return rows, fresh


def write_golden(directory: str, program: Program, fresh: dict) -> None:
    """`--update-goldens`: the program's golden file with this run's records."""
    # Modules this jax does not dump keep their records (another release dumps them).
    kept = {m: d for m, d in (program.golden or {}).items() if m not in fresh and any(
        r.get("jax") != versions.JAX for r in d.values())}
    golden_path = os.path.join(directory, "goldens", f"{program.name}.json")
    os.makedirs(os.path.dirname(golden_path), exist_ok=True)
    with open(golden_path, "w", encoding="utf-8") as f:
        json.dump({**kept, **fresh}, f, indent=1, sort_keys=True)
        f.write("\n")


def _numerics(module, inputs, expected) -> str:
    if inputs is None or expected is None:
        return "n/a"
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


_GOLDEN_FIELDS = ("report", "penguin_sha256")


def _expected(old: dict) -> dict:
    """What a golden record expects of this jax: its own fields, with what
    this release's XLA changed in their place."""
    return {**{k: old[k] for k in _GOLDEN_FIELDS}, **old.get("by_jax", {}).get(versions.JAX, {})}


def _updated(old: dict | None, record: dict) -> dict:
    """The golden record once this run's `record` is written into it."""
    if old is None or old.get("jax", versions.JAX) == versions.JAX:
        new = {**record, "jax": versions.JAX}
        if old and old.get("by_jax"):
            new["by_jax"] = old["by_jax"]
        return new
    new = {k: v for k, v in old.items() if k != "by_jax"}
    by_jax = {v: d for v, d in old.get("by_jax", {}).items() if v != versions.JAX}
    changed = {k: record[k] for k in _GOLDEN_FIELDS if record[k] != old[k]}
    if changed:
        by_jax[versions.JAX] = changed
    if by_jax:
        new["by_jax"] = by_jax
    return new


def _compare(golden: dict | None, old: dict | None, record: dict) -> str:
    if golden is None or old is None:
        return "missing"
    expected = _expected(old)
    if expected["report"] != record["report"]:
        return "changed: edge report"
    if expected["penguin_sha256"] != record["penguin_sha256"]:
        return "changed: penguin program"
    return "ok"


def _load_json(path: str):
    from pipeline import corpus

    return corpus.read_golden(path)


def _load_npz(path: str, key: str = "arg"):
    from pipeline import corpus

    return corpus.read_npz(path, key)


def run(directory: str, update: bool = False, jobs: int = 1, progress=None, scheduler: str | None = None) -> Summary:
    """Every program of the corpus at `directory`, one task each: in this
    process, in `jobs` spawned processes, or on the Dask scheduler at
    `scheduler`. `progress(done, total, program)` is called as each ends."""
    names = programs(directory)
    loaded = [read_program(directory, name) for name in names]
    done = 0

    def tick(i: int) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, len(names), names[i])

    results = workers.run(check_program, [(p, update) for p in loaded], jobs=jobs, scheduler=scheduler,
                          on_done=tick)
    summary = Summary()
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
                 f"{t['numerics ok']} ok, {t['unsupported']} unsupported", f"{t['regressions']} regressions"])
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
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    return parser


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
    refuse_output_among_inputs(args.output, [args.directory], reads=lambda path: path.endswith(CORPUS_FILES))
    total = len(programs(args.directory))
    jobs = args.jobs or os.cpu_count() or 1  # as check: the programs are independent
    with workers.progress_bar(total, enabled=sys.stderr.isatty() and not args.quiet, unit="program") as bar:
        summary = run(args.directory, args.update_goldens, jobs, lambda *_: bar.update(1), args.scheduler)
    write_output(args.output, "".join(json.dumps(r.as_dict()) + "\n" for r in summary.rows) if args.json
                 else table(summary))
    return 1 if summary.totals()["regressions"] else 0
