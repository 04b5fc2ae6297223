"""What became of each HLO control edge: the verdict of `pipeline.verifier.verify`,
the report `pipeline.run` returns and the CLIs print.

One vocabulary of fates (`passes.control_dep.Fate`, shared with link #1's
own account): preserved, rerouted, dropped, lost; and beside them the dep
edges of the program no HLO edge accounts for (spurious).

A line names the block where its edge lives as a picture of the program
titles that block's panel (`printer.penguin.titles.block_title`), XLA's
name of the computation in brackets:

    %while.16 (while): body [%region_2.10]: %copy.3 -> %copy.5: preserved
    func @main [%main.5]: %while.16 -> %copy.7: rerouted (...)

The machine-readable form (`as_dict`, the JSON) keeps XLA's name as
`computation`, and the block's name beside it as `block`.
"""

from __future__ import annotations

import enum
import html
from dataclasses import dataclass, field

from passes.control_dep import Fate
from passes.elision import elided_note

FATES = tuple(f.value for f in Fate)


class Loss(enum.Enum):
    """Why an edge the verifier found lost is lost, as the chain's blame
    (`pipeline.chain.blame`) finds it: each names the link to blame."""

    NOT_REIFIED = (2, "link #1 skipped: XLA's importer drops control-predecessors")
    DROPPED = (1, "link #1 dropped it")
    NOT_ORDERED = (1, "link #1's dep edges are in the program but do not order the pair")
    NOT_IMPORTED = (2, "the imported module does not carry link #1's dep edges")
    NOT_FLATTENED = (3, "link #3 skipped: the predecessor stayed bundled in a tuple operand")
    STILL_BUNDLED = (3, "the predecessor is still bundled in a tuple operand after link #3")
    NOT_PRINTED = (4, "delivered to the printer, missing from the program")

    def __init__(self, link: int, meaning: str):
        self.link, self.meaning = link, meaning


class Spurious(enum.Enum):
    """Why the program has a dep edge no HLO control edge accounts for, as
    the verifier sees it."""

    UNACCOUNTED = "unaccounted"    # nothing the verifier can say more
    BUNDLED_TUPLE = "bundled"      # its predecessor is a tuple op: the predecessors it bundles were never flattened


# The columns of a module's edge counts (`hlo2penguin check`, `regress`): its HLO control edges, by fate, and the
# program's spurious dep edges.
COUNTS = ("edges", *FATES, "spurious")


@dataclass(kw_only=True)
class EdgeCounts:
    """A module's edge counts, `COUNTS` by name, for the rows of a table of
    modules (`hlo2penguin check`'s, `regress`'s): set from a report, summed
    over rows."""

    edges: int = 0
    preserved: int = 0
    rerouted: int = 0
    dropped: int = 0
    lost: int = 0
    spurious: int = 0

    def count(self, report: Report) -> None:
        """Take the counts of `report`."""
        for key, value in report.totals().items():
            setattr(self, key, value)

    def counts(self) -> dict[str, int]:
        return {key: getattr(self, key) for key in COUNTS}

    @staticmethod
    def summed(rows) -> dict[str, int]:
        """Each count summed over `rows`."""
        return {key: sum(getattr(r, key) for r in rows) for key in COUNTS}


@dataclass(frozen=True)
class EdgeReport:
    """One HLO control edge and what became of it in the Penguin program.
    `fate` and `reason` are the verifier's; `emitted` and `link1` are link
    #1's own account (the dep edges it meant to emit, its fate and reason),
    shown beside and never trusted; `carried` are the program's dep edges
    that carry it; `lost_at` names the link to blame for a lost edge.
    `computation` is XLA's name of the computation that holds the edge;
    `block` what the report calls it (`where`)."""

    computation: str
    predecessor: str
    successor: str
    fate: Fate
    emitted: tuple[tuple[str, str], ...] = ()
    reason: str = ""
    lost_at: str | None = None
    carried: tuple[tuple[str, str], ...] = ()
    link1: str = ""
    loss: Loss | None = None  # why it is lost, where the chain placed it (`lost_at` names that link)
    block: str = ""  # the block that holds it, as the pictures title it (`printer.penguin.titles`)

    @property
    def where(self) -> str:
        """The block that holds the edge, as a picture of the program titles
        it (`%while.16 (while): body [%region_2.10]`); XLA's name of the
        computation where the report has no block for it."""
        return self.block or f"%{self.computation}"

    def __str__(self) -> str:
        text = f"{self.where}: %{self.predecessor} -> %{self.successor}: {self.fate}"
        if self.lost_at:
            text += f" at {self.lost_at}"
        text += f" ({self.reason})" if self.reason else ""
        if self.fate == Fate.LOST and self.link1:
            text += f" [link #1 said: {self.link1}]"
        return text

    def as_dict(self) -> dict:
        return {"computation": self.computation, "block": self.where, "predecessor": self.predecessor,
                "successor": self.successor, "fate": str(self.fate),
                "emitted": [list(e) for e in self.emitted], "reason": self.reason, "lost_at": self.lost_at,
                "carried": [list(e) for e in self.carried], "link1": self.link1}


@dataclass(frozen=True)
class SpuriousEdge:
    """A dep edge of the program that no HLO control edge accounts for."""

    computation: str | None
    predecessor: str
    successor: str
    reason: str = ""
    at: str | None = None  # the link to blame, where the chain knows
    cause: Spurious = Spurious.UNACCOUNTED
    block: str = ""  # the block that holds its successor, as the pictures title it (`printer.penguin.titles`)

    @property
    def where(self) -> str:
        """The block that holds the dep edge's successor, as a picture titles
        it; XLA's name of its computation where the report has no block."""
        return self.block or (f"%{self.computation}" if self.computation else "")

    def __str__(self) -> str:
        why = "a dep edge of the program that no HLO control edge accounts for"
        return (f"{self.where}: %{self.predecessor} -> %{self.successor}: spurious"
                + (f" at {self.at}" if self.at else "") + f" ({why}" + (f"; {self.reason})" if self.reason else ")"))

    def as_dict(self) -> dict:
        return {"computation": self.computation, "block": self.where, "predecessor": self.predecessor,
                "successor": self.successor, "reason": self.reason, "at": self.at}


@dataclass
class Report:
    edges: list[EdgeReport] = field(default_factory=list)
    dep_edges: int = 0  # dep edges in the executed program
    spurious: list[SpuriousEdge] = field(default_factory=list)
    # What a reader of the report should know about its names (a computation
    # whose definitions could not be matched with XLA's: XLA's names there).
    notes: list[str] = field(default_factory=list)
    # (computation, name) of each constant XLA's dump printed without its values
    # (`constant({...})`, `pipeline.reading.elided`): the edges are judged as ever, the
    # numbers cannot be compared.
    elided: list[tuple[str, str]] = field(default_factory=list)

    def count(self, fate: str) -> int:
        return sum(1 for e in self.edges if e.fate == fate)

    @property
    def lost(self) -> list[EdgeReport]:
        return [e for e in self.edges if e.fate == Fate.LOST]

    @property
    def ok(self) -> bool:
        """No edge lost and no spurious dep edge: what `--check` asks."""
        return not self.lost and not self.spurious

    def totals(self) -> dict[str, int]:
        return {"edges": len(self.edges), **{f: self.count(f) for f in FATES}, "spurious": len(self.spurious)}

    def summary(self) -> str:
        t = self.totals()
        text = (f"{t['edges']} HLO control edge(s): {t['preserved']} preserved, {t['rerouted']} rerouted, "
                f"{t['dropped']} dropped, {t['lost']} lost; {self.dep_edges} dep edge(s) in the Penguin program")
        text += f", {t['spurious']} spurious" if self.spurious else ""
        return text + (f"; {len(self.elided)} constant(s) elided by XLA's dump: its numbers cannot be compared"
                       if self.elided else "")

    def lines(self) -> list[str]:
        return ([str(e) for e in self.edges] + [str(s) for s in self.spurious]
                + [f"note: {n}" for n in self.notes] + ([f"note: {elided_note(self.elided)}"] if self.elided else []))

    def as_dict(self) -> dict:
        found = {"totals": self.totals(), "dep_edges": self.dep_edges, "edges": [e.as_dict() for e in self.edges],
                 "spurious": [s.as_dict() for s in self.spurious]}
        if self.notes:
            found["notes"] = list(self.notes)
        if self.elided:
            found["elided_constants"] = [{"computation": c, "name": n} for c, n in self.elided]
        return found

    def _repr_html_(self) -> str:
        """Jupyter's view: a table of every edge and its fate (lost ones in
        red, with the link to blame and why), each in its block named as the
        report's lines name it (`EdgeReport.where`), then the spurious dep edges;
        the summary line is the caption; the constants XLA's dump elided
        under it. Every name is escaped."""
        rows = [_html_row(f"fate-{e.fate}", e.where, f"%{e.predecessor}", f"%{e.successor}",
                          str(e.fate), e.lost_at or "",
                          e.reason + (f" [link #1 said: {e.link1}]" if e.fate == Fate.LOST and e.link1 else ""))
                for e in self.edges]
        if not self.edges:
            rows.append(f'<tr><td colspan="6"{_CELL}><em>no HLO control edge</em></td></tr>')
        spurious = [_html_row("spurious", s.where, f"%{s.predecessor}",
                              f"%{s.successor}", "spurious", s.at or "",
                              "no HLO control edge accounts for it" + (f"; {s.reason}" if s.reason else ""))
                    for s in self.spurious]
        if spurious:
            spurious.insert(0, f'<tr><th colspan="6"{_CELL}>dep edges of the program that no HLO control '
                               'edge accounts for</th></tr>')
        head = "".join(f"<th{_CELL}>{h}</th>" for h in _COLUMNS)
        return (f'<table class="hlo2penguin-report">'
                f'<caption style="caption-side:top;text-align:left">{html.escape(self.summary())}</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
                + (f'<tbody class="spurious">{"".join(spurious)}</tbody>' if spurious else "") + "</table>"
                + (f'<p class="elided">{html.escape(elided_note(self.elided))}</p>' if self.elided else ""))


_COLUMNS = ("block", "predecessor", "successor", "fate", "lost at", "why")
_CELL = ' style="text-align:left"'  # Jupyter right-aligns table cells by default
# A failing row stands out by colour and by a bold fate (which survives any sanitizer).
_MARKED = {"fate-lost": "background:#fdd;color:#900", "spurious": "background:#fff3cd;color:#7a4b00"}


def _html_row(kind: str, *cells: str) -> str:
    style = _MARKED.get(kind)
    tds = [html.escape(c) for c in cells]
    if style:
        tds[3] = f"<strong>{tds[3]}</strong>"
    attrs = f' class="{kind}"' + (f' style="{style}"' if style else "")
    return f"<tr{attrs}>" + "".join(f"<td{_CELL}>{td}</td>" for td in tds) + "</tr>"
