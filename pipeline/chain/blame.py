"""Which link lost an edge: the verifier's report of a run, with each lost
edge placed at the link after which link #1's dep edges are no longer all
there, and each spurious edge at the link that made it."""

from __future__ import annotations

import dataclasses

from passes.control_dep import Fate
from pipeline.reading.parsed import Parsed, decode_proto
from pipeline.chain.delivered import visible_edges
from pipeline.verifier.inputs import HloRead
from pipeline.verifier.report import Loss, Report, Spurious
from pipeline.verifier.verify import verify

LINKS = {1: "link #1 (preserve-control-deps)", 2: "link #2 (XLA's importer)",
         3: "link #3 (flatten-control-dep-tuple-operands)", 4: "link #4 (printer)"}


def as_read(parsed: Parsed, read_proto: bytes) -> HloRead:
    """The proof's reading of the module as read (`read_proto`, XLA's parse
    before link #1 edited it; the names as written are `parsed`'s)."""
    return HloRead.of(Parsed(decode_proto(read_proto), parsed.names, parsed.text, parsed.source))


def blamed_report(program, parsed: Parsed, read_proto: bytes, where: str, link1, renamed: dict, imported, mlir,
                  names, options, hlo_read: HloRead | None = None) -> Report:
    """The verifier's report (`pipeline.verifier.verify`: from the original
    HLO, `read_proto` or its reading `hlo_read` made already (`as_read`),
    and the built `program` alone), with the link to blame
    for each lost edge: the one after which link #1's dep edges (`link1`, a
    `PreserveResult`, None where link #1 was skipped) are no longer all
    there, looked for in link #1's dep edges (its `send-done`s and
    `recv-done`s `renamed` to the send or recv the importer makes them),
    link #2's output (`imported`) and link #3's (`mlir`, the live module,
    read through `names`)."""
    o = options
    fates = ({(e.computation, e.predecessor, e.successor): e for e in link1.edges}
             if link1 is not None else None)
    # judged against the module as read (the names as written are the same)
    report = verify(hlo_read or as_read(parsed, read_proto), program, source=where, link1=fates)
    if not any(edge.fate == Fate.LOST for edge in report.edges):
        return _placed_spurious(report)
    program_edges = program.dep_edges()
    after_import = imported.edges(through_tuples=True)  # what link #2 delivered
    names.restore(mlir)  # the run is over: the live module may take its HLO locations
    after_flatten = visible_edges(mlir, through_tuples=False)  # what the printer saw
    for index, edge in enumerate(report.edges):
        if edge.fate != Fate.LOST:
            continue
        key = (edge.computation, edge.predecessor, edge.successor)
        link1 = fates.get(key) if fates is not None else None
        if link1 is None:  # link #1 skipped: the importer drops control-predecessors
            loss, why = Loss.NOT_REIFIED, "control-predecessors are not data"
        elif link1.fate is Fate.DROPPED:
            loss, why = Loss.DROPPED, f"link #1 dropped it: {link1.reason}"
        else:
            comp = edge.computation
            expected = [(comp, renamed.get((comp, p), p), s) for p, s in link1.emitted]
            missing = [e for e in expected if e not in program_edges]
            missing_text = ", ".join(f"%{p} -> %{s}" for _, p, s in missing)
            if not missing:
                loss, why = Loss.NOT_ORDERED, "link #1's dep edges do not order them"
            elif any(e not in after_import for e in missing):
                loss, why = Loss.NOT_IMPORTED, f"the imported module does not carry it: {missing_text}"
            elif not o.flatten:
                loss, why = (Loss.NOT_FLATTENED,
                             f"the predecessor stayed bundled in a tuple operand (link #3 skipped): {missing_text}")
            elif any(e not in after_flatten for e in missing):
                loss, why = Loss.STILL_BUNDLED, (f"the predecessor is still bundled in a tuple operand after link #3 "
                                                 f"(scope={o.scope}; a function outside it keeps its tuples: "
                                                 f"try scope=all): {missing_text}")
            else:
                loss, why = (Loss.NOT_PRINTED,
                             f"the importer delivered it but the program has no such dep edge: {missing_text}")
        report.edges[index] = dataclasses.replace(edge, lost_at=LINKS[loss.link], loss=loss,
                                                  reason=f"{why}; {edge.reason}" if edge.reason else why)
    return _placed_spurious(report)


def _placed_spurious(report: Report) -> Report:
    """A dep edge from a tuple op is link #3's: the tuple should have been flattened."""
    report.spurious = [dataclasses.replace(e, at=LINKS[3]) if e.cause is Spurious.BUNDLED_TUPLE else e
                       for e in report.spurious]
    return report
