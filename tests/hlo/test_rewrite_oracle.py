"""Link #1's one rewrite against XLA: on every corpus, the JAX dumps,
synthetic modules, seeded mutants and random orders of edges, XLA reads the
output back (its proto, then its printing, which XLA's parser must read
again), the output is the input with its control edges made data and
nothing else changed, and the calls carry exactly the edges link #1 says it
kept, each edge of the input once in its account: a preserved edge as
itself, a rerouted one through what it names, a dropped one with a reason.

The common case (a successor that takes its edges at its own operand 0,
from predecessors that stand for themselves) searches nothing: no index
of readers is made for a module made only of it.
"""

from __future__ import annotations

import collections
import random
from pathlib import Path

import pytest

from bench.synthetic import many_predecessors, synthetic_hlo
from differential_hlo import make_mutants
from jax_programs import corpus
from link1_helpers import XlaModule, assert_only_edges_changed, run
from passes.control_dep import Fate
from passes.errors import ChainError
from passes.hlo import ir
from pipeline.xla import isolated
from pipeline.xla.isolated import readable_text
from pipeline.xla import native

TESTS = Path(__file__).resolve().parent.parent
FILES = sorted(p for d in ("xla_style", "pipeline_dumps", "newer_xla") for p in (TESTS / d).glob("*.hlo"))


def assert_link1_against_xla(text: str, bundle: bool) -> collections.Counter:
    """Link #1 on `text`, judged by XLA's reading of its input and output; the fates counted."""
    parsed = native.read(text)
    edges = collections.Counter(parsed.control_edges())  # names as written
    before = XlaModule(parsed.serialized())
    out = run(text, bundle=bundle)  # raises unless XLA reads the output back and parses its printing
    account = out.result.edges
    assert collections.Counter((e.computation, e.predecessor, e.successor) for e in account) == edges
    for e in account:
        if e.fate is Fate.PRESERVED:
            assert e.emitted == ((e.predecessor, e.successor),), str(e)  # the edge of the input, as it is
        elif e.fate is Fate.REROUTED:
            assert e.emitted and e.reason, str(e)
        else:
            assert e.fate is Fate.DROPPED and not e.emitted and e.reason, str(e)
    assert not out.xla.control_edges() and "control-predecessors" not in out.xla.text
    kept = {(e.computation, p, s) for e in account for p, s in e.emitted}
    assert set(out.reified_edges(bundle)) == kept
    assert_only_edges_changed(before, out.xla, bundle)
    assert out.result.changed == bool(edges)
    return collections.Counter(e.fate for e in account)


def _readable(text: str) -> str | None:
    """`text` as XLA's parser reads it, if XLA also reads back its own proto of it."""
    try:
        text = readable_text(text)
        # A mutant may crash XLA (newer jaxlib segfaults on some): XLA's child reads it, its proto and its
        # printing first, and this process only what XLA has shown it survives.
        data = isolated.parse(text, isolate=True).serialized()
        isolated.parse(isolated.print_module(data, isolate=True), isolate=True)
        XlaModule(native.read(text).serialized())
    except ChainError:
        return None
    except Exception:  # jaxlib's own error type: e.g. a recv-done reading its recv through a get-tuple-element
        return None
    return text


class _Searches:
    """How many computations built the index of readers (a search)."""

    def __init__(self, monkeypatch):
        self.count = 0
        real = ir.Readers.__init__

        def counting(users, *args):
            self.count += 1
            real(users, *args)

        monkeypatch.setattr(ir.Readers, "__init__", counting)


@pytest.mark.parametrize("bundle", [False, True], ids=["plain", "bundle"])
def test_the_corpora(bundle):
    fates = collections.Counter()
    for path in FILES:
        text = _readable(path.read_text())
        if text is not None and "control-predecessors" in text:
            fates += assert_link1_against_xla(text, bundle)
    assert fates[Fate.PRESERVED] >= 200 and fates[Fate.REROUTED] >= 10 and fates[Fate.DROPPED] >= 10, fates


def test_the_jax_dumps(monkeypatch):
    searches = _Searches(monkeypatch)
    fates = collections.Counter()
    for _, text in corpus():
        if "control-predecessors" in text:
            fates += assert_link1_against_xla(text, bundle=True)
    assert set(fates) == {Fate.PRESERVED} and searches.count == 0  # copy insertion's edges: the common case


@pytest.mark.parametrize("seed", range(3))
def test_synthetic_modules_are_the_common_case_and_search_nothing(seed, monkeypatch):
    searches = _Searches(monkeypatch)
    fates = assert_link1_against_xla(synthetic_hlo(4000, seed=seed), bundle=True)
    fates += assert_link1_against_xla(synthetic_hlo(2000, seed=seed, edge_share=0.5), bundle=False)
    fates += assert_link1_against_xla(many_predecessors(600), bundle=True)
    assert fates[Fate.PRESERVED] > 1000 and searches.count == 0


def test_mutants():
    """Seeded edits of the corpora that XLA still reads: renamed, reordered,
    shapes dropped, edges deleted or duplicated."""
    checked = 0
    for _, _, text in make_mutants(300, seed=7):
        text = _readable(text)
        if text is not None and "control-predecessors" in text:
            for bundle in (False, True):
                assert_link1_against_xla(text, bundle)
            checked += 1
    assert checked >= 100


def test_one_uncommon_successor_searches_and_the_rest_stay_the_common_case(monkeypatch):
    """A `*-done` successor (its operand is pinned: the edge goes to its
    readers) needs a search; the successors beside it keep their edges at
    their own operand 0."""
    searches = _Searches(monkeypatch)
    text = """\
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] add(p, p)
  b = f32[4] multiply(a, a), control-predecessors={a}
  s = (f32[4], f32[4]) copy-start(b)
  d = f32[4] copy-done(s), control-predecessors={b}
  ROOT n = f32[4] negate(d)
}
"""
    fates = assert_link1_against_xla(text, bundle=True)
    assert fates == {Fate.PRESERVED: 1, Fate.REROUTED: 1} and searches.count == 1
    out = run(text)
    assert {(e.predecessor, e.successor): e.emitted for e in out.result.edges} == {
        ("a", "b"): (("a", "b"),), ("b", "d"): (("b", "n"),)}
    assert searches.count == 2
    assert assert_link1_against_xla(text.replace(", control-predecessors={b}", ""), bundle=True) == {
        Fate.PRESERVED: 1}
    assert searches.count == 2


def test_random_orders_of_edges():
    """Predecessors listed in any order, repeated across successors, some
    tuple-shaped and some parameters (the implied ones)."""
    rng = random.Random(11)
    for _ in range(20):
        lines = ["HloModule m", "", "ENTRY e {", "  p = f32[2] parameter(0)", "  q = f32[2] parameter(1)"]
        values = ["p", "q"]
        for i in range(30):
            a, b = rng.choice(values), rng.choice(values)
            if rng.random() < 0.2:
                lines.append(f"  t{i} = (f32[2], f32[2]) tuple({a}, {b})")
                lines.append(f"  g{i} = f32[2] get-tuple-element(t{i}), index={rng.randrange(2)}")
                values.append(f"g{i}")
                continue
            line = f"  v{i} = f32[2] add({a}, {b})"
            preds = rng.sample([v for v in values] + [ln.split()[0] for ln in lines if ln.startswith("  t")],
                               k=min(len(values), rng.randint(0, 4)))
            if preds:
                line += ", control-predecessors={" + ", ".join(dict.fromkeys(preds)) + "}"
            lines.append(line)
            values.append(f"v{i}")
        lines += [f"  ROOT r = f32[2] negate({values[-1]})", "}"]
        assert_link1_against_xla("\n".join(lines) + "\n", bundle=rng.random() < 0.5)


def test_a_successor_without_an_operand_hands_its_edges_to_every_reader():
    """%k (a constant) is read by %m1, %m2 and, through a tuple and a
    get-tuple-element, %m3: each must come after %a in the output."""
    text = """\
HloModule readers

ENTRY e {
  x = f32[4] parameter(0)
  a = f32[4] negate(x)
  k = f32[4] constant({1, 2, 3, 4}), control-predecessors={a}
  m1 = f32[4] multiply(x, k)
  m2 = f32[4] add(k, x)
  t = (f32[4], f32[4]) tuple(k, x)
  g = f32[4] get-tuple-element(t), index=0
  m3 = f32[4] negate(g)
  ROOT r = (f32[4], f32[4], f32[4]) tuple(m1, m2, m3)
}
"""
    for bundle in (False, True):
        assert assert_link1_against_xla(text, bundle) == {Fate.REROUTED: 1}
        out = run(text, bundle=bundle)
        assert set(out.reified_edges(bundle)) == {("e", "a", m) for m in ("m1", "m2", "m3")}
