"""What a run of the chain gives back: `ChainResult` (the program, the
report, the MLIR after links #2 and #3 printed on demand, a Jupyter view)."""

from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from passes.hlo.preserve_control_deps import PreserveResult
from pipeline.chain.delivered import visible_edges
from pipeline.verifier.program import AsPrinted, run_program
from pipeline.verifier.report import Report
from pipeline.xla.worker import XlaWorker
from pipeline.xla.importer import HloNames
from pipeline.xla.isolated import print_module, with_module_config
from printer.penguin import Module as PenguinModule


class Snapshot:
    """An MLIR module as it stood after a link, printed on first use: a
    30k-instruction module takes 0.03 s to clone and 0.6 s to print, and most
    runs never look. Edges it carries (`visible_edges`) are read on demand too."""

    def __init__(self, operation: ir.Operation, debug_info: bool, names: HloNames | None = None):
        self.operation, self.debug_info = operation, debug_info
        self._names = names  # the module is at its key locations: restored on first use
        self._text: str | None = None

    def _restored(self) -> ir.Operation:
        if self._names is not None:
            self._names.restore(self.operation)
            self._names = None
        return self.operation

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self._restored().get_asm(enable_debug_info=self.debug_info)
        return self._text

    def edges(self, through_tuples: bool) -> set[tuple[str | None, str, str]]:
        return visible_edges(self._restored(), through_tuples)


class Reimported:
    """The module after link #2 where the chain kept no copy of it (link #3
    rewrites it in place; keeping a copy of a 300k-instruction module cost
    the chain 2.3 s and the module's memory again, and only a run that loses
    an edge or prints the MLIR reads it): link #2 again, on link #1's
    output, on first use (XLA's importer gives the same module for the same
    proto)."""

    def __init__(self, proto: bytes, text: str | None, where: str, dialect: str, isolate: bool, debug_info: bool):
        self._args = proto, text, where, dialect, isolate
        self.debug_info = debug_info
        self._snapshot: Snapshot | None = None

    def _imported(self) -> Snapshot:
        if self._snapshot is None:
            from pipeline.reading.parsed import Parsed
            from pipeline.xla.importer import import_keyed

            proto, text, where, dialect, isolate = self._args
            mlir, names = import_keyed(Parsed.from_serialized(proto, text, where), dialect, isolate=isolate,
                                       source_name=where, consume=True)
            self._snapshot = Snapshot(mlir.operation, self.debug_info, names)
        return self._snapshot

    @property
    def text(self) -> str:
        return self._imported().text

    def edges(self, through_tuples: bool) -> set[tuple[str | None, str, str]]:
        return self._imported().edges(through_tuples)


@dataclass(repr=False)
class ChainResult:
    """What `pipeline.run` gives back: `penguin_source`, `report` (None
    with check=False), and each link's output whatever `check` says: `hlo`
    (link #1), `mlir` (link #2), `flat_mlir` (link #3), each printed on
    first use. `repr` is one line: the source, the dialect, the verdict and
    the edge counts."""

    source: str
    dialect: str
    _hlo: bytes | str        # after link #1: XLA's serialized module, printed on first use
    _imported: Snapshot | Reimported | None
    _flattened: Snapshot | None
    penguin_source: str      # link #4
    report: Report | None    # None with check=False
    _module: PenguinModule | None = None
    link1: PreserveResult | None = None  # link #1's own account (None with reify=False)
    _text: str | None = None             # the HLO text read
    _proto: bytes = b""                  # `_hlo` as it was, once printed
    # XLA's parse of the input as read, before link #1 (serialized; empty with check=False).
    read_proto: bytes = b""
    # What `assert_round_trip` compared the program's numbers with (None: no numbers compared).
    numerics: str | None = None

    def __repr__(self) -> str:
        if self.report is None:
            verdict = "not checked (check=False)" if self.penguin_source else "stopped before link #4"
            counts = ""
        else:
            verdict = "ok" if self.report.ok else "NOT OK"
            counts = ", " + ", ".join(f"{k}={v}" for k, v in self.report.totals().items())
            counts += f", dep_edges={self.report.dep_edges}"
        return f"<ChainResult {self.source!r} dialect={self.dialect!r}: {verdict}{counts}>"

    @property
    def hlo(self) -> str:
        """The module after link #1, as XLA prints it (XLA's names)."""
        if isinstance(self._hlo, bytes):
            self._proto = self._hlo
            self._hlo = with_module_config(print_module(self._hlo, self.source), self._text) if self._hlo else ""
        return self._hlo

    @property
    def hlo_proto(self) -> bytes:
        """The module after link #1, XLA's serialized HloModuleProto (b"" where
        the chain stopped after link #1: it keeps XLA's printing alone)."""
        return self._hlo if isinstance(self._hlo, bytes) else self._proto

    @property
    def mlir(self) -> str:
        """The module after link #2 ("" where the chain stopped before it)."""
        return self._imported.text if self._imported is not None else ""

    @property
    def flat_mlir(self) -> str | None:
        """The module after link #3 (None with flatten=False, or where the chain stopped before it)."""
        return self._flattened.text if self._flattened is not None else None

    def module(self) -> PenguinModule:
        """Run the emitted program; its module-level `module`."""
        if self._module is None:
            self._module = build_graph(self.penguin_source, self.source)
        return self._module

    def explore(self, *, port: int | None = None, side_by_side: bool = True, select: str = ""):
        """Model Explorer on localhost showing the HLO as given beside the
        Penguin program, control and dep edges as overlays coloured by fate
        (`pipeline.explorer.explore`; the `explorer` extra): a `Served`,
        which Jupyter shows in the notebook; `.close()` stops it."""
        from pipeline.explorer import explore

        return explore(self, port=port, side_by_side=side_by_side, select=select)

    def _repr_html_(self) -> str:
        """Jupyter's view: the input and dialect, the report's table of edges
        and fates, and the Penguin program, collapsed."""
        import html

        verdict = "" if self.report is None else (" · ok" if self.report.ok else " · <strong>not ok</strong>")
        head = (f"<p><strong>hlo2penguin</strong> <code>{html.escape(self.source)}</code>, "
                f"dialect <code>{html.escape(self.dialect)}</code>{verdict}</p>")
        report = (self.report._repr_html_() if self.report is not None
                  else "<p><em>No report: the program was not run (check=False, or the chain stopped "
                       "early).</em></p>")
        return f"<div>{head}{report}{_source_details(self.penguin_source)}</div>"


_DETAILS_LINES = 2_000  # a program can run to 490k lines (see `build_graph`): a notebook keeps its start


def _source_details(source: str) -> str:
    """The Penguin program in a collapsed <details>, cut after _DETAILS_LINES
    lines; nothing before link #4 wrote one."""
    import html

    if not source:
        return ""
    lines = source.splitlines(keepends=True)
    if len(lines) > _DETAILS_LINES:
        source = ("".join(lines[:_DETAILS_LINES])
                  + f"… {len(lines) - _DETAILS_LINES} more line(s): see result.penguin_source")
    return (f"<details><summary>Penguin program ({len(lines)} lines)</summary>"
            f"<pre>{html.escape(source)}</pre></details>")


def program_filename(source: str) -> str:
    """The name a program made from `source` runs under (in tracebacks)."""
    return f"<penguin program from {source}>"


def build_graph(penguin_source: str, source: str = "<penguin>", helper: XlaWorker | None = None,
                as_printed: AsPrinted | None = None) -> PenguinModule:
    """The Penguin graph a program builds: the program run (`pipeline.verifier.program`,
    the verifier's loader too), its module-level `module`. Nothing is computed
    (`Module.execute` computes the graph's numbers). `helper`: XLA's child, which compiles half of a long program
    meanwhile; `as_printed`: what it compiled of the program while link #4 printed it."""
    return run_program(penguin_source, program_filename(source), helper, as_printed)["module"]
