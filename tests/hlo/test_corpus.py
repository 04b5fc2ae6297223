"""Link #1 on real XLA dumps: copy insertion's control edges, from JAX programs
compiled at test time (tests/jax_programs.py)."""

from __future__ import annotations

import collections
import re
from typing import NamedTuple

import jaxlib._hlo as xla_hlo
import pytest

from imported_edges import control_dep_edges
from jax_programs import corpus
from passes.hlo import read_module, write_module
from passes.hlo.preserve_control_deps import Fate, PreserveControlDeps
from pipeline.importer import import_hlo
from pipeline.xla import canonical_text, parse_with_xla

MODULES = corpus()
WITH_EDGES = [(name, text) for name, text in MODULES if "control-predecessors" in text]


def test_corpus_has_real_control_edges():
    assert len({name.split("/")[0] for name, _ in WITH_EDGES}) >= 6


@pytest.mark.parametrize("name,text", MODULES, ids=[n for n, _ in MODULES])
def test_every_dump_round_trips_through_xla(name, text):
    assert canonical_text(write_module(read_module(text, source=name))) == canonical_text(text)


# -- the oracle: XLA's own printing of a module, read with a few regular expressions --

_COMPUTATION = re.compile(r"^(?:ENTRY )?%([^\s(]+) \(.*\{$")
_INSTRUCTION = re.compile(r"^\s+(?:ROOT )?%([^\s=]+) = .*?\b([a-z][\w-]*)\(([^)]*)\)")
_CONTROL_PREDS = re.compile(r"control-predecessors=\{([^}]*)\}")


class XlaInstruction(NamedTuple):
    computation: str
    name: str
    opcode: str
    operands: tuple[str, ...]
    control_predecessors: tuple[str, ...]
    is_control_dep: bool


def xla_printed(text: str) -> list[XlaInstruction]:
    """Every instruction of `hlo_module_from_text(text).to_string()`: XLA parses
    the text (raising if it refuses it) and prints it in its canonical form."""
    computation, out = None, []
    for line in xla_hlo.hlo_module_from_text(text).to_string().splitlines():
        header = _COMPUTATION.match(line)
        if header:
            computation = header.group(1)
            continue
        m = _INSTRUCTION.match(line)
        if m is None:
            continue
        preds = _CONTROL_PREDS.search(line)
        out.append(XlaInstruction(
            computation, m.group(1), m.group(2),
            tuple(o.strip().lstrip("%") for o in m.group(3).split(",") if o.strip()),
            tuple(p.strip().lstrip("%") for p in preds.group(1).split(",")) if preds else (),
            m.group(2) == "custom-call" and 'custom_call_target="AwsNeuronControlDep"' in line))
    return out


def xla_control_edges(text: str) -> collections.Counter:
    """(computation, predecessor, successor) for each name in each control-predecessors list."""
    return collections.Counter((i.computation, p, i.name) for i in xla_printed(text) for p in i.control_predecessors)


def xla_reified_edges(text: str, bundle: bool) -> collections.Counter:
    """The same triples read back from link #1's output as XLA prints it: each
    AwsNeuronControlDep custom-call's operands but the last are predecessors
    (with `bundle`, the elements of the tuple operand), and the non-control-dep
    instructions that read it (through chained calls) are its successors."""
    instrs = xla_printed(text)
    by_name = {(i.computation, i.name): i for i in instrs}
    readers = collections.defaultdict(list)
    for i in instrs:
        for operand in i.operands:
            readers[(i.computation, operand)].append(i)

    def successors(call: XlaInstruction) -> list[str]:
        names = []
        for reader in readers[(call.computation, call.name)]:
            names += successors(reader) if reader.is_control_dep else [reader.name]
        return names

    edges: collections.Counter = collections.Counter()
    for call in (i for i in instrs if i.is_control_dep):
        preds = list(call.operands[:-1])
        if bundle:
            assert len(preds) == 1 and by_name[(call.computation, preds[0])].opcode == "tuple", call
            preds = list(by_name[(call.computation, preds[0])].operands)
        for succ in successors(call):
            edges.update((call.computation, p, succ) for p in preds)
    return edges


@pytest.mark.parametrize("bundle", [False, True], ids=["flat", "bundle"])
@pytest.mark.parametrize("name,text", WITH_EDGES, ids=[n for n, _ in WITH_EDGES])
def test_every_edge_of_a_dump_survives_xla_import(name, text, bundle):
    module = read_module(text, source=name)
    original = xla_control_edges(text)
    result = PreserveControlDeps(bundle=bundle).run(module)
    out = write_module(module)
    parse_with_xla(out, name)
    # The report names exactly the edges XLA prints, and link #1 keeps each as it is.
    assert collections.Counter((e.computation, e.predecessor, e.successor) for e in result.edges) == original
    assert all(e.fate is Fate.PRESERVED for e in result.edges), [str(e) for e in result.edges]
    # XLA's printing of the output: no control-predecessors left; one custom-call
    # per successor, whose operands carry exactly the original edges.
    printed = xla_printed(out)
    assert not any(i.control_predecessors for i in printed)
    calls = [i for i in printed if i.is_control_dep]
    assert len(calls) == len({(c, s) for c, _, s in original})
    assert sum(len(c.operands) - 1 for c in calls) == (len(calls) if bundle else sum(original.values()))
    assert xla_reified_edges(out, bundle) == original
    # Link #2, XLA's real importer, keeps every emitted edge.
    emitted = {edge for e in result.edges for edge in e.emitted}
    assert emitted == {(p, s) for _, p, s in original}
    imported = import_hlo(out)  # link #2 keeps names despite the dumps' metadata
    assert imported.operation.verify()
    assert emitted <= control_dep_edges(imported)


def test_fates_over_the_corpus():
    totals = collections.Counter()
    expected = 0
    for name, text in WITH_EDGES:
        result = PreserveControlDeps().run(read_module(text, source=name))
        totals.update(e.fate.value for e in result.edges)
        expected += sum(xla_control_edges(text).values())
    # Every edge XLA prints across the corpus is preserved; none rerouted or dropped.
    assert expected > 0 and dict(totals) == {"preserved": expected}
