"""pytest plugin: a regression corpus and HLO modules as test items.

Registered through the `pytest11` entry point, so installing the package
is enough; it does nothing until it is given paths, with the ini option
`hlo2penguin_corpus` or the flag `--hlo2penguin-corpus PATH` (repeatable):

- a `*.jaxexport` in a corpus folder (the `hlo2penguin regress` layout: it
  holds `inputs/`, `expected/` or `goldens/`) gives one item per module and
  dialect, `<program>:<module>[<dialect>]`, judged as `regress` judges its
  row (`read_program` + `check_program`, run once per program);
- any other module file (`*.txt`, `*.hlo`, `*.pb`, `*.jaxexport`, or a file
  named outright) gives one item per dialect, `<file>[<dialect>]`: the
  chain's round trip (`pipeline.testing.assert_round_trip`), with an
  HloSnapshot's own arguments as inputs.

`--hlo2penguin-dialect` (or the ini option `hlo2penguin_dialect`) keeps
some dialects. The paths join whatever else the session collects.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["CorpusProgram", "ModuleFile"]

ALL_DIALECTS = ("stablehlo", "mhlo")  # passes.dialects.DIALECTS' order, without importing the chain here
MODULE_SUFFIXES = (".txt", ".hlo", ".pb", ".jaxexport")  # as `hlo2penguin check` reads them
CORPUS_FOLDERS = ("inputs", "expected", "goldens")  # one of them makes a folder a corpus (regress's layout)
TEXT_SUFFIXES = (".txt", ".hlo")

_ROOTS = pytest.StashKey[list]()
_DIALECTS = pytest.StashKey[tuple]()
_CHECKED = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hlo2penguin", "hlo2penguin: a corpus and HLO modules as tests")
    group.addoption("--hlo2penguin-corpus", action="append", default=[], metavar="PATH",
                    help="a regress corpus folder, or a folder or file of HLO modules, to run as tests (repeatable)")
    group.addoption("--hlo2penguin-dialect", action="append", default=[], metavar="DIALECT",
                    help=f"the dialect the items run in: {' or '.join(ALL_DIALECTS)} (repeatable; default both)")
    parser.addini("hlo2penguin_corpus", type="paths", default=[],
                  help="corpus folders, or folders or files of HLO modules, to run as tests")
    parser.addini("hlo2penguin_dialect", type="args", default=[], help="the dialects the items run in (default both)")


def pytest_configure(config: pytest.Config) -> None:
    here = Path(config.invocation_params.dir)
    # The flags take the place of the ini value, as a flag does for any ini option.
    given = [(here / p, "--hlo2penguin-corpus") for p in config.getoption("hlo2penguin_corpus")]
    given = given or [(Path(p), "hlo2penguin_corpus (ini)") for p in config.getini("hlo2penguin_corpus")]
    if not given:
        return  # not asked: the session is untouched
    dialects = config.getoption("hlo2penguin_dialect") or config.getini("hlo2penguin_dialect") or ALL_DIALECTS
    unknown = sorted(set(dialects) - set(ALL_DIALECTS))
    if unknown:
        raise pytest.UsageError(f"hlo2penguin: unknown dialect {', '.join(unknown)}; "
                                f"give {' or '.join(ALL_DIALECTS)}")
    roots = []
    for path, origin in given:
        path = Path(os.path.abspath(path))
        if not path.exists():
            raise pytest.UsageError(f"{origin}: '{path}' does not exist")
        if path.is_dir() and not any(_collectable(f) for f in _files(path)):
            raise pytest.UsageError(f"{origin}: '{path}' holds no HLO module ({', '.join(MODULE_SUFFIXES)}) "
                                    "and no corpus program (.jaxexport)")
        roots.append(path)
    config.stash[_ROOTS] = roots
    config.stash[_DIALECTS] = tuple(d for d in ALL_DIALECTS if d in dialects)
    config.stash[_CHECKED] = {}
    config.args.extend(str(p) for p in roots)  # pytest drops duplicates and paths inside another


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    roots = parent.config.stash.get(_ROOTS, None)
    if not roots:
        return None
    if file_path in roots and file_path.is_file():  # a file named outright is a module, whatever its suffix
        return _node(file_path, parent)
    if any(root in file_path.parents for root in roots) and _collectable(file_path):
        return _node(file_path, parent)
    return None


def _node(path: Path, parent: pytest.Collector) -> pytest.File:
    kind = CorpusProgram if _in_corpus(path) else ModuleFile
    return kind.from_parent(parent, path=path)


def _files(folder: Path):
    for where, _, names in os.walk(folder):
        for name in names:
            yield Path(where, name)


def _in_corpus(path: Path) -> bool:
    return path.suffix == ".jaxexport" and any((path.parent / sub).is_dir() for sub in CORPUS_FOLDERS)


def _collectable(path: Path) -> bool:
    """A module file under a folder: its suffix, and for text, HLO text (an
    XLA dump folder also holds buffer assignments and reports as *.txt), for
    a proto, a module's (XLA also dumps options and memory-usage reports as
    *.pb: skipped, as `check` skips them; a module's proto that is broken is
    collected, and its item says why)."""
    if not path.name.endswith(MODULE_SUFFIXES):
        return False
    if path.name.endswith(".pb"):
        return _holds_a_module(path)
    if not path.name.endswith(TEXT_SUFFIXES):
        return True
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return True  # unreadable: its item says so
    from pipeline.reading.lexical import looks_like_hlo

    return looks_like_hlo(head)


def _holds_a_module(path: Path) -> bool:
    from pipeline.reading import binary
    from pipeline.reading.source import kind_of

    try:
        data = path.read_bytes()
        if kind_of(data) != "proto":
            return True  # text or an artifact under a .pb name: its item says what it is
        binary.read_binary(data, str(path))
    except binary.BadBinary as err:
        return err.broken  # another message (options, a report): not a module at all
    except (OSError, ValueError):
        return True  # unreadable: its item says so
    return True


class Failed(Exception):
    """An item's verdict: the message alone is the report (no traceback)."""


class _Item(pytest.Item):
    def __init__(self, *, dialect: str, **kwargs):
        super().__init__(**kwargs)
        self.dialect = dialect

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (Failed, AssertionError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        # Not the bare name: pytest would print its dots as "::" (as for a Python test's domain).
        return self.path, None, f"[hlo2penguin] {self.name}"


class ModuleFile(pytest.File):
    """A file of one HLO module (text, proto, HloSnapshot, jax.export
    artifact outside a corpus): one item per dialect."""

    def collect(self):
        for dialect in self.config.stash[_DIALECTS]:
            yield RoundTrip.from_parent(self, name=f"{self.path.name}[{dialect}]", dialect=dialect)


class RoundTrip(_Item):
    def runtest(self) -> None:
        from passes.errors import first_line
        from pipeline.testing import assert_round_trip

        try:
            assert_round_trip(str(self.path), dialect=self.dialect)
        except AssertionError:
            raise
        except Exception as err:  # the chain's refusal, one line: the module is the item's verdict
            raise Failed(f"{self.path.name}: the chain refuses it: {first_line(err, with_type=True)}") from None


class CorpusProgram(pytest.File):
    """A program of a corpus: one item per module XLA dumps with control
    edges, and dialect (the rows of `hlo2penguin regress`)."""

    def collect(self):
        from pipeline.reading.capture import from_export

        name = self.path.name[: -len(".jaxexport")]
        try:
            modules = [m.name for m in from_export(self.path.read_bytes()).modules]
        except Exception:  # regress's row says why: the item runs it
            modules = ["-"]
        if modules == ["-"]:
            yield CorpusRow.from_parent(self, name=f"{name}:capture", program=name, module="-", dialect="-")
        for module in modules if modules != ["-"] else ():
            for dialect in self.config.stash[_DIALECTS]:
                yield CorpusRow.from_parent(self, name=f"{name}:{module}[{dialect}]", program=name,
                                            module=module, dialect=dialect)


class CorpusRow(_Item):
    def __init__(self, *, program: str, module: str, **kwargs):
        super().__init__(**kwargs)
        self.program, self.module = program, module

    def runtest(self) -> None:
        rows, fresh, golden = _checked(self.config, self.path.parent, self.program)
        row = next((r for r in rows if r.module == self.module and r.dialect == self.dialect), None)
        if row is None and rows and rows[0].module == "-":
            row = rows[0]  # the program itself could not be read or captured
        if row is None:
            raise Failed(f"{self.program}: regress made no row for {self.module} in {self.dialect}")
        if row.regressed:
            raise Failed(describe(row, fresh, golden))


def _checked(config: pytest.Config, folder: Path, name: str):
    """(rows, this run's golden records, the golden) of one program, checked once per session."""
    from pipeline.cli.goldens import read_programs
    from pipeline.cli.regress import check_program, read_program

    cache = config.stash[_CHECKED]
    key = (folder, name)
    if key not in cache:
        program = read_program(str(folder), name)
        rows, fresh = check_program(program, False, read_programs(str(folder), program.golden))
        cache[key] = rows, fresh or {}, program.golden or {}
    return cache[key]


def describe(row, fresh: dict, golden: dict) -> str:
    """Why regress judges `row` a regression, a line each: the error, the
    lost and spurious edges (with the link), numerics, what the golden says
    that this run does not."""
    if row.module == "-":
        return f"{row.program}: {row.error}"
    lines = [f"{row.program} {row.module} [{row.dialect}]: a regression "
             f"({row.edges} edges: {row.preserved} preserved, {row.rerouted} rerouted, {row.dropped} dropped, "
             f"{row.lost} lost, {row.spurious} spurious)"]
    if row.error:
        return lines[0] + f"\n  the chain refuses it: {row.error}"
    record = _this_jax(fresh.get(row.module, {}).get(row.dialect))
    report = record.get("report", {})
    lines += [f"  lost: {_edge(e)}" for e in report.get("edges", []) if e.get("fate") == "lost"]
    lines += [f"  spurious: {_where(s)}: %{s['predecessor']} -> %{s['successor']}"
              + (f" at {s['at']}" if s.get("at") else "") for s in report.get("spurious", [])]
    if row.numerics.startswith(("FAIL", "unsupported")):
        lines.append(f"  numerics: {row.numerics}")
    if row.golden == "missing":
        lines.append(f"  golden: none for this module and dialect in goldens/{row.program}.json "
                     "(`hlo2penguin regress --update-goldens DIR` writes it)")
    elif row.golden.startswith("changed"):  # regress's own account: each edge whose fate changed, the program's diff
        lines.append(f"  golden: {row.golden}")
        lines += [f"  {line}" for line in row.explanation().rstrip("\n").splitlines()]
    return "\n".join(lines)


def _where(e: dict) -> str:
    """The block of a report's edge, as the verifier names it (`EdgeReport.where`); XLA's name of its
    computation in a report that names no block (a golden's)."""
    return e.get("block") or (f"%{e['computation']}" if e.get("computation") else "")


def _edge(e: dict) -> str:
    """An edge of a report's dict as the verifier prints it (`EdgeReport.__str__`)."""
    text = f"{_where(e)}: %{e['predecessor']} -> %{e['successor']}: {e['fate']}"
    text += f" at {e['lost_at']}" if e.get("lost_at") else ""
    text += f" ({e['reason']})" if e.get("reason") else ""
    return text + (f" [link #1 said: {e['link1']}]" if e.get("fate") == "lost" and e.get("link1") else "")


def _this_jax(record: dict | None) -> dict:
    """A golden record's fields as this jax reads them (its `by_jax` entry in
    place): regress writes this run's report there when another jax wrote the record."""
    if not record:
        return {}
    try:
        from pipeline.cli.regress import _expected

        return _expected(record)
    except Exception:  # another golden format: the record's own fields
        return record
