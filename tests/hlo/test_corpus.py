"""Link #1 on real XLA dumps: copy insertion's control edges, from JAX programs
compiled at test time (tests/jax_programs.py)."""

from __future__ import annotations

import collections

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


@pytest.mark.parametrize("bundle", [False, True], ids=["flat", "bundle"])
@pytest.mark.parametrize("name,text", WITH_EDGES, ids=[n for n, _ in WITH_EDGES])
def test_every_edge_of_a_dump_survives_xla_import(name, text, bundle):
    module = read_module(text, source=name)
    expected = {(p, s) for _, p, s in module.control_edges()}
    result = PreserveControlDeps(bundle=bundle).run(module)
    out = write_module(module)
    parse_with_xla(out, name)
    assert {(e.predecessor, e.successor) for e in result.edges} == expected
    emitted = {edge for e in result.edges for edge in e.emitted}
    imported = import_hlo(out)  # link #2 keeps names despite the dumps' metadata
    assert imported.operation.verify()
    assert emitted <= control_dep_edges(imported)
    assert all(e.fate is not Fate.DROPPED for e in result.edges), [str(e) for e in result.edges]


def test_fates_over_the_corpus(capsys):
    totals = collections.Counter()
    for name, text in WITH_EDGES:
        result = PreserveControlDeps().run(read_module(text, source=name))
        totals.update(e.fate.value for e in result.edges)
        totals["modules"] += 1
    with capsys.disabled():
        print(f"\nlink #1 over {totals['modules']} dumps with edges (of {len(MODULES)}): "
              f"{totals['preserved']} preserved, {totals['rerouted']} rerouted, {totals['dropped']} dropped")
    assert totals["preserved"] > 0
