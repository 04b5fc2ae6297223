"""The chain's blame reads each edge's cause as a value (`Loss`, `Spurious`),
not the words of a message: on real runs the cause and the link agree, and
the blame moves with the value when the wording changes."""

from __future__ import annotations

import dataclasses

import pipeline
from pipeline.chain.blame import LINKS, _placed_spurious
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.verifier.report import Loss, Report, Spurious, SpuriousEdge


def test_without_link_3_the_lost_edge_and_the_tuple_dep_edges_carry_their_causes():
    report = pipeline.run(EXAMPLE_HLO, flatten=False, isolate=False).report
    assert [(e.predecessor, e.successor, e.loss) for e in report.lost] == [("loop", "scale", Loss.NOT_FLATTENED)]
    assert {(s.predecessor, s.cause, s.at) for s in report.spurious} == {("loop:tuple", Spurious.BUNDLED_TUPLE, LINKS[3])}


def test_without_link_1_each_lost_edge_is_not_reified_and_blamed_on_the_importer():
    report = pipeline.run(EXAMPLE_HLO, reify=False, isolate=False).report
    assert report.lost and {e.loss for e in report.lost} == {Loss.NOT_REIFIED}
    assert {e.lost_at for e in report.lost} == {LINKS[2]}


def test_a_kept_edge_has_no_loss_and_an_unrelated_dep_edge_no_cause():
    report = pipeline.run(EXAMPLE_HLO, isolate=False).report
    assert report.ok and all(e.loss is None for e in report.edges)
    # The verifier alone, on an added dep edge between unrelated ops: spurious, cause unknown, no link.
    extra = pipeline.verify(EXAMPLE_HLO, pipeline.run(EXAMPLE_HLO, isolate=False).penguin_source
                            + "module.add_dep_edge(copy_x, copy_buf)\n")
    assert [(s.cause, s.at) for s in extra.spurious] == [(Spurious.UNACCOUNTED, None)]


def test_every_loss_names_a_link_of_the_chain():
    assert {loss.link for loss in Loss} <= set(LINKS)
    assert all(loss.meaning for loss in Loss)


def test_the_blame_follows_the_cause_not_the_words():
    worded = SpuriousEdge("main", "t", "s", reason="the predecessors it bundles were never flattened")
    caused = SpuriousEdge("main", "t", "s", reason="said some other way", cause=Spurious.BUNDLED_TUPLE)
    placed = _placed_spurious(Report(spurious=[worded, caused])).spurious
    assert [s.at for s in placed] == [None, LINKS[3]]
    assert placed[1] == dataclasses.replace(caused, at=LINKS[3])
