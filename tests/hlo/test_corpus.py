"""Link #1 on real XLA dumps: copy insertion's control edges, from JAX programs
compiled at test time (tests/jax_programs.py); and on the checked-in corpora
(tests/xla_style, tests/pipeline_dumps, tests/newer_xla).

The oracle is XLA's own reading of a module (`link1_helpers.XlaModule`): of
the input as XLA parses it, and of link #1's output as XLA reads its proto
back. Neither looks at link #1's view of the module.
"""

from __future__ import annotations

import collections

import jaxlib._hlo as xla_hlo
import pytest

from imported_edges import control_dep_edges
from jax_programs import corpus
from link1_helpers import XlaModule, assert_only_edges_changed, run
from passes.control_dep import HAS_CONTROL_DEPS
from passes.hlo.preserve_control_deps import Fate, PreserveControlDeps
from passes.hlo.view import view_of
from pipeline.xla import isolated as xla
from paths import TESTS

MODULES = corpus()
WITH_EDGES = [(name, text) for name, text in MODULES if "control-predecessors" in text]

FILES = [f"{d}/{p.name}" for d in ("xla_style", "pipeline_dumps", "newer_xla")
         for p in sorted((TESTS / d).glob("*.hlo"))]


def test_corpus_has_real_control_edges():
    assert len({name.split("/")[0] for name, _ in WITH_EDGES}) >= 6


@pytest.mark.parametrize("name,text", MODULES, ids=[n for n, _ in MODULES])
def test_link1_changes_a_dump_only_where_it_has_edges(name, text):
    before = XlaModule.of_text(text, name)
    out = run(text, source=name)
    assert out.result.changed == bool(before.control_edges())
    if not before.control_edges():
        # Left alone: XLA prints link #1's output exactly as it prints the input.
        assert out.result.edges == [] and out.xla.text == before.text
    assert_only_edges_changed(before, out.xla)


@pytest.mark.parametrize("bundle", [False, True], ids=["flat", "bundle"])
@pytest.mark.parametrize("name,text", WITH_EDGES, ids=[n for n, _ in WITH_EDGES])
def test_every_edge_of_a_dump_survives_xla_import(name, text, bundle):
    original = XlaModule.of_text(text, name).control_edges()
    out = run(text, bundle=bundle, source=name)  # XLA reads the output back
    result = out.result
    # The report names exactly the edges XLA reads, and link #1 keeps each as it is.
    assert collections.Counter((e.computation, e.predecessor, e.successor) for e in result.edges) == original
    assert all(e.fate is Fate.PRESERVED for e in result.edges), [str(e) for e in result.edges]
    # XLA's reading of the output: no control predecessor left; one custom-call
    # per successor, whose operands carry exactly the original edges.
    printed = out.xla
    assert not printed.control_edges() and "control-predecessors" not in printed.text
    calls = printed.calls()
    assert len(calls) == len({(c, s) for c, _, s in original})
    assert sum(len(c.operands) - 1 for c in calls) == (len(calls) if bundle else sum(original.values()))
    assert printed.reified_edges(bundle) == original
    assert_only_edges_changed(XlaModule.of_text(text, name), printed, bundle)
    # Link #2, XLA's real importer, keeps every emitted edge.
    emitted = {edge for e in result.edges for edge in e.emitted}
    assert emitted == {(p, s) for _, p, s in original}
    imported = out.imported()  # link #2 keeps names despite the dumps' metadata
    assert imported.operation.verify()
    assert emitted <= control_dep_edges(imported)


def test_fates_over_the_corpus():
    totals = collections.Counter()
    expected = 0
    for name, text in WITH_EDGES:
        result = PreserveControlDeps().run(view_of(xla.parse(text, name)))
        totals.update(e.fate.value for e in result.edges)
        expected += sum(XlaModule.of_text(text, name).control_edges().values())
    # Every edge XLA reads across the corpus is preserved; none rerouted or dropped.
    assert expected > 0 and dict(totals) == {"preserved": expected}


def xla_reads_its_own_parse(parsed) -> bool:
    try:
        xla_hlo.HloModule.from_serialized_hlo_module_proto(parsed.serialized())
    except Exception:  # jaxlib's own error type
        return False
    return True


@pytest.mark.parametrize("bundle", [False, True], ids=["flat", "bundle"])
@pytest.mark.parametrize("name", FILES)
def test_xla_reads_link1_output_of_every_checked_in_dump(name, bundle):
    """Each edge of the input is in the report (names as written), and each
    one kept is an AwsNeuronControlDep operand feeding what the report says,
    in a module XLA reads back. `pipeline.xla.isolated.parse` makes newer XLA's `%t#i`
    operands explicit where this jaxlib's parser needs it."""
    text = (TESTS / name).read_text()
    parsed = xla.parse(text, name)
    if not xla_reads_its_own_parse(parsed):
        # gpu_pipelined_p2p_loop: a recv-done reading its recv through a
        # get-tuple-element, which XLA prints and parses but not reads from its proto.
        pytest.skip("XLA does not read back its own proto of this input")
    edges = collections.Counter(parsed.control_edges())
    before = XlaModule(parsed.serialized())
    out = run(text, bundle=bundle, source=name, parse=xla.parse)
    assert collections.Counter((e.computation, e.predecessor, e.successor) for e in out.result.edges) == edges
    kept = [e for e in out.result.edges if e.fate is not Fate.DROPPED]
    assert all(e.emitted for e in kept) and not any(e.emitted for e in out.result.edges if e not in kept)
    assert not out.xla.control_edges()
    assert set(out.reified_edges(bundle)) == {(e.computation, p, s) for e in kept for p, s in e.emitted}
    assert (HAS_CONTROL_DEPS in out.xla.frontend_attributes) == bool(kept)
    assert_only_edges_changed(before, out.xla, bundle)
