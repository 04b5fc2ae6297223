"""Each blame a user can be shown (`Loss`), produced by a real chain that
really loses the edge at that link: the real XLA parser, link #1, XLA's
importer, link #3 and the printer, run step by step (`pipeline.chain.steps`),
with one link surgically broken where no input makes it fail. The verifier,
which reads only the HLO and the executed program, finds the edge lost;
the blame names the link and says why.

The surgeries:
- between link #1 and link #2, a predecessor taken off link #1's control-dep
  call (the importer is handed a module that does not carry that edge);
- the same, with link #1's own account forgetting it too (link #1 emits dep
  edges that are all in the program but do not order the pair);
- after link #4, a dep edge's line taken out of the printed program.
"""

from __future__ import annotations

import pytest

from passes.control_dep import CONTROL_DEP_TARGET, Fate
from pipeline.chain.blame import LINKS
from pipeline.chain.options import Options
from pipeline.chain.steps import Work, run_step, steps
from pipeline.verifier.report import Loss

DIALECTS = ["stablehlo", "mhlo"]

# One HLO edge t -> s that link #1 carries as two dep edges, a -> s and b -> s (t is a tuple: no op after import).
TUPLE_PREDECESSOR = """\
HloModule tuple_predecessor

ENTRY main {
  x = f32[4] parameter(0)
  a = f32[4] negate(x)
  b = f32[4] exponential(x)
  t = (f32[4], f32[4]) tuple(a, b)
  s = f32[4] sine(x), control-predecessors={t}
  u = f32[4] add(s, a)
  ROOT r = f32[4] add(u, b)
}
"""

# A successor that cannot take an operand and that nothing reads: link #1 drops the edge.
NO_CARRIER = """\
HloModule no_carrier

ENTRY main {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  s = f32[4] custom-call(), custom_call_target="Poke", custom_call_has_side_effect=true, control-predecessors={n}
  ROOT r = f32[4] add(n, x)
}
"""

# Two edges in a function main calls: with --bundle, link #1 bundles their predecessors in a tuple.
IN_A_CALLEE = """\
HloModule in_a_callee

helper {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] exponential(p)
  s = f32[4] sine(p), control-predecessors={a, b}
  u = f32[4] add(s, a)
  ROOT r = f32[4] add(u, b)
}

ENTRY main {
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x), to_apply=helper
}
"""


def run_broken(hlo: str, surgeries: dict | None = None, **options):
    """The chain's steps, in this process, with `surgeries[step name](work)` after that step."""
    options = Options(isolate=False, **options)
    work = Work(hlo, options)
    for step in steps(options):
        run_step(step, work)
        if surgeries and step.name in surgeries:
            surgeries[step.name](work)
    return work.result()


def untie(predecessor: str, *, from_account: bool = False):
    """After link #1: take `predecessor` off link #1's control-dep call in its
    output (and, with `from_account`, out of link #1's own record of the
    dep edges it emitted)."""

    def surgery(work: Work) -> None:
        [call] = [i for c in work.parsed.proto.computations for i in c.instructions
                  if i.opcode == "custom-call" and i.custom_call_target == CONTROL_DEP_TARGET]
        [comp] = [c for c in work.parsed.proto.computations if call in c.instructions]
        [pid] = [i.id for i in comp.instructions if i.name == predecessor]
        kept = [o for o in call.operand_ids if o != pid]
        assert len(kept) == len(call.operand_ids) - 1
        del call.operand_ids[:]
        call.operand_ids.extend(kept)
        if from_account:
            work.link1.edges[:] = [e._replace(emitted=tuple(d for d in e.emitted if d[0] != predecessor))
                                   for e in work.link1.edges]

    return surgery


def unprint(predecessor: str, successor: str):
    """After link #4: the printed program without the dep edge `predecessor -> successor`."""

    def surgery(work: Work) -> None:
        lines = work.penguin_source.splitlines(keepends=True)
        mark = f"src={predecessor}, dst={successor},"
        kept = [line for line in lines if mark not in line]
        assert len(kept) == len(lines) - 1, mark
        work.penguin_source = "".join(kept)

    return surgery


def lost_edges(result) -> list:
    report = result.report
    assert not report.ok
    return [e for e in report.edges if e.fate == Fate.LOST]


def assert_blamed(edge, loss: Loss, why: str) -> None:
    assert edge.loss is loss
    assert edge.lost_at == LINKS[loss.link]
    assert edge.reason.startswith(why), edge.reason
    assert f": lost at {LINKS[loss.link]} ({why}" in str(edge)  # the line the report and the CLI show


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_chain_as_it_is_loses_none_of_these_edges(dialect):
    for hlo, options in ((TUPLE_PREDECESSOR, {}), (IN_A_CALLEE, {"bundle": True})):
        assert run_broken(hlo, dialect=dialect, **options).report.ok


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_partial_import_loss_is_blamed_on_the_importer(dialect):
    # a -> s is imported (and lost later, by the printer); b -> s never reaches the importer's output.
    # The first link after which link #1's dep edges are not all there is link #2.
    result = run_broken(TUPLE_PREDECESSOR, {"link #1": untie("b"), "link #4": unprint("a", "s")}, dialect=dialect)
    [edge] = lost_edges(result)
    assert (edge.predecessor, edge.successor) == ("t", "s")
    assert_blamed(edge, Loss.NOT_IMPORTED, "the imported module does not carry it: %a -> %s, %b -> %s")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_import_loss_of_every_dep_edge_is_blamed_on_the_importer(dialect):
    result = run_broken(TUPLE_PREDECESSOR, {"link #1": untie("b")}, dialect=dialect)
    [edge] = lost_edges(result)
    assert_blamed(edge, Loss.NOT_IMPORTED, "the imported module does not carry it: %b -> %s")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_dep_edge_missing_from_the_printed_program_is_blamed_on_the_printer(dialect):
    result = run_broken(TUPLE_PREDECESSOR, {"link #4": unprint("b", "s")}, dialect=dialect)
    [edge] = lost_edges(result)
    assert (edge.predecessor, edge.successor) == ("t", "s")
    assert_blamed(edge, Loss.NOT_PRINTED, "the importer delivered it but the program has no such dep edge: %b -> %s")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_dep_edges_that_do_not_order_the_pair_are_blamed_on_link_1(dialect):
    # Link #1 emits a -> s alone for t -> s: every dep edge it emitted is in the program, and b is not ordered.
    result = run_broken(TUPLE_PREDECESSOR, {"link #1": untie("b", from_account=True)}, dialect=dialect)
    [edge] = lost_edges(result)
    assert edge.emitted == (("a", "s"),) and ("main", "a", "s") in result.module().dep_edges()
    assert_blamed(edge, Loss.NOT_ORDERED, "link #1's dep edges do not order them")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_edge_link_1_drops_is_blamed_on_link_1(dialect):
    [edge] = lost_edges(run_broken(NO_CARRIER, dialect=dialect))
    assert (edge.predecessor, edge.successor, edge.link1.split(":")[0]) == ("n", "s", "dropped")
    assert_blamed(edge, Loss.DROPPED, "link #1 dropped it: %s is a custom-call, which cannot take an operand, "
                                      "and it has no user to carry the edge")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_tuple_link_3_leaves_outside_its_scope_is_blamed_on_link_3(dialect):
    edges = lost_edges(run_broken(IN_A_CALLEE, dialect=dialect, bundle=True, scope="main"))
    assert [(e.computation, e.predecessor, e.successor) for e in edges] == [("helper", "a", "s"), ("helper", "b", "s")]
    for edge, p in zip(edges, "ab"):
        assert_blamed(edge, Loss.STILL_BUNDLED, "the predecessor is still bundled in a tuple operand after link #3 "
                                                "(scope=main; a function outside it keeps its tuples: try scope=all): "
                                                f"%{p} -> %s")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_tuple_left_by_skipping_link_3_is_blamed_on_link_3(dialect):
    edges = lost_edges(run_broken(IN_A_CALLEE, dialect=dialect, bundle=True, flatten=False))
    assert [e.predecessor for e in edges] == ["a", "b"]
    for edge, p in zip(edges, "ab"):
        assert_blamed(edge, Loss.NOT_FLATTENED,
                      f"the predecessor stayed bundled in a tuple operand (link #3 skipped): %{p} -> %s")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_edge_without_link_1_is_blamed_on_the_importer(dialect):
    [edge] = lost_edges(run_broken(TUPLE_PREDECESSOR, dialect=dialect, reify=False))
    assert_blamed(edge, Loss.NOT_REIFIED, "control-predecessors are not data")


def test_every_class_of_the_enum_has_its_test_here():
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    assert all(f"Loss.{loss.name}," in source for loss in Loss)
